"""Pickling gpupy arrays without copies (GpuArray.__reduce_ex__,
_convert.from_pickle): with protocol 5 the evaluated bytes leave as one
out-of-band buffer that is the array's own host memory, and the array
unpickled from a buffer uses that buffer in place -- read-only buffers
are copied at the first write, never written. This is how dask.distributed
moves gpupy chunks between processes (docs/dask.md).
"""

import copy
import pickle

import numpy as np
import pytest

import gpupy as gp


def dumps_out_of_band(g):
    buffers = []
    data = pickle.dumps(g, protocol=5, buffer_callback=buffers.append)
    return data, buffers


def test_protocol_5_sends_the_arrays_own_bytes(gpu):
    g = gp.arange(100_000, dtype=np.float32) * 2  # lazy: evaluated by the pickling
    data, buffers = dumps_out_of_band(g)
    assert len(buffers) == 1 and len(data) < 1000
    sent = np.frombuffer(buffers[0].raw(), np.float32)
    assert sent.nbytes == g.nbytes
    assert np.shares_memory(sent, g.__array__())  # no copy on the sending side


@pytest.mark.parametrize("writable", [True, False], ids=["writable buffer", "read-only buffer"])
def test_an_unpickled_array_uses_the_received_buffer(gpu, writable):
    g = gp.arange(50_000, dtype=np.int32)
    data, buffers = dumps_out_of_band(g)
    received = bytearray(buffers[0].raw()) if writable else bytes(buffers[0].raw())
    back = pickle.loads(data, buffers=[received])
    assert type(back) is gp.GpuArray and back.dtype == np.int32 and back.shape == (50_000,)
    assert np.shares_memory(back.__array__(), np.frombuffer(received, np.int32))  # no copy on the receiving side
    gp.reset_stats()
    back[3] = -7
    assert int(back[3]) == -7 and int(back[4]) == 4 and int(g[3]) == 3
    if not writable:
        # bytes lent read-only are never written: the write copied them
        assert np.frombuffer(received, np.int32)[3] == 3 and gp.stats()["write_copies"] == 1
    assert int((back + 1).sum()) == int(np.arange(50_000, dtype=np.int64).sum()) + 50_000 - 10


def test_an_export_of_an_unpickled_read_only_array_is_a_copy(gpu):
    data, buffers = dumps_out_of_band(gp.ones(1000, np.float32))
    received = bytes(buffers[0].raw())
    back = pickle.loads(data, buffers=[received])
    exported = np.asarray(back)  # the buffer protocol's writable export
    exported[0] = 5
    assert float(back[0]) == 5.0 and np.frombuffer(received, np.float32)[0] == 1.0


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
@pytest.mark.parametrize("case", ["strided", "reversed", "0-d", "empty", "bool", "uint8 2-d", "multi-block", "scalar"])
def test_every_kind_of_array_round_trips(gpu, protocol, case):
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    g, want = {
        "strided": (gp.asarray(base)[:, ::2], base[:, ::2]),
        "reversed": (gp.asarray(base)[::-1, ::-3], base[::-1, ::-3]),
        "0-d": (gp.asarray(np.float32(2.5)), np.asarray(np.float32(2.5))),
        "empty": (gp.zeros((0, 3), np.int16), np.zeros((0, 3), np.int16)),
        "bool": (gp.arange(7) % 3 == 0, np.arange(7) % 3 == 0),
        "uint8 2-d": (gp.asarray(base.astype(np.uint8)).T, base.astype(np.uint8).T),
        "multi-block": (gp.arange(5000, dtype=np.float32) * 0.5, np.arange(5000, dtype=np.float32) * 0.5),
        "scalar": (gp.asarray(base).sum(), base.sum()),
    }[case]
    if case == "multi-block":
        previous = gp.block_size()
        gp.set_block_size(256)
    try:
        back = pickle.loads(pickle.dumps(g, protocol=protocol))
    finally:
        if case == "multi-block":
            gp.set_block_size(previous)
    assert type(back) is gp.GpuArray and back.dtype == want.dtype and back.shape == want.shape
    np.testing.assert_array_equal(np.asarray(back), want)
    assert back._is_scalar == (case == "scalar")  # a scalar result stays one
    assert copy.deepcopy(g).shape == want.shape


def test_dask_distributed_serializes_a_chunk_without_copies(gpu):
    protocol = pytest.importorskip("distributed.protocol")
    g = gp.arange(20_000, dtype=np.float64) / 3
    header, frames = protocol.serialize(g)
    assert header["serializer"] == "pickle" and len(frames) == 2
    assert np.shares_memory(np.frombuffer(frames[1], np.float64), g.__array__())
    back = protocol.deserialize(header, frames)
    assert type(back) is gp.GpuArray and np.shares_memory(back.__array__(), np.frombuffer(frames[1], np.float64))
    np.testing.assert_array_equal(np.asarray(back), np.arange(20_000) / 3)


def test_random_draws_pickle_as_the_functions_they_are():
    # gpupy.random's draws are C objects (one number: NumPy's own call);
    # they pickle by reference, as functions and methods do.
    for f in (gp.random.randint, gp.random.random, gp.random.Generator.integers, gp.random.RandomState.randint):
        assert pickle.loads(pickle.dumps(f)) is f
    rng = gp.random.default_rng(3)
    draw = pickle.loads(pickle.dumps(rng.integers))
    assert draw(0, 100) == np.random.default_rng(3).integers(0, 100)
