"""Writing through exports, and NumPy's array interface.

A buffer export of a gpupy array is the array's own host bytes, writable as
an ndarray's: a C library writing into it writes into the array. While an
export is alive those bytes are the array's value: expressions built on the
array take a snapshot (they see the values they were built from), gpupy's
writes go into the bytes (the exporter sees them), and nothing of the array
stays cached on a device. See docs/ecosystem.md, "Writing through exports".
"""

import ctypes

import numpy as np
import pytest

import gpupy as gp

ALL_DTYPES = tuple(np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                         "uint64", "float16", "float32", "float64"))

BIG = 1 << 15  # above the eager threshold: lazy nodes, not NumPy at once


def _writable_contiguous_buffer(obj):
    """Asks obj for a writable C-contiguous buffer (PyBUF_WRITABLE, as a
    C library that writes does), through CPython's API."""
    view = (ctypes.c_byte * 128)()  # room for a Py_buffer
    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.c_void_p, ctypes.c_int]
    PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND, PyBUF_STRIDES, PyBUF_C = 0x1, 0x4, 0x8, 0x18, 0x38
    if get(obj, ctypes.addressof(view), PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C) == 0:
        ctypes.pythonapi.PyBuffer_Release.argtypes = [ctypes.c_void_p]
        ctypes.pythonapi.PyBuffer_Release(ctypes.addressof(view))


def same(got, expected):
    np.testing.assert_array_equal(np.asarray(got), expected, strict=True)


# --- the buffer protocol ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_a_write_through_numpy_asarray_reaches_the_array(gpu, dtype):
    g = gp.asarray(np.arange(12).reshape(3, 4).astype(dtype))
    h = np.asarray(g)
    assert h.flags.writeable
    h[1, 2] = 1
    expected = np.arange(12).reshape(3, 4).astype(dtype)
    expected[1, 2] = 1
    same(g, expected)


@pytest.mark.parametrize("key", [np.s_[:, ::2], np.s_[::-1, 1:3], np.s_[1], np.s_[...]],
                         ids=["strided", "reversed", "row", "whole"])
def test_a_write_through_a_view_reaches_its_array(gpu, key):
    g = gp.zeros((4, 6))
    h = np.asarray(g[key])
    h[...] = 7
    expected = np.zeros((4, 6))
    expected[key] = 7
    same(g, expected)


def test_a_strided_view_exports_its_strides(gpu):
    m = memoryview(gp.zeros((4, 4))[:, ::2])
    assert not m.readonly and m.shape == (4, 2) and m.strides == (32, 16)


def test_contiguous_bytes_of_a_strided_view_are_a_read_only_copy_or_an_error(gpu):
    v = gp.arange(8.)[::2]
    assert bytes(v) == np.arange(8.)[::2].tobytes()  # contiguous, read-only: a copy is fine
    with pytest.raises((BufferError, TypeError), match="lost|not writable|not C contiguous"):
        (ctypes.c_double * 4).from_buffer(v)  # contiguous and writable: a copy would lose the write
    with pytest.raises(BufferError, match="lost"):
        _writable_contiguous_buffer(v)


def test_ctypes_writes_into_a_contiguous_array(gpu):
    b = gp.zeros(4)
    (ctypes.c_double * 4).from_buffer(b)[2] = 3.5
    same(b, np.array([0, 0, 3.5, 0]))


def test_read_only_arrays_export_read_only(gpu):
    r = gp.broadcast_to(gp.arange(3.), (2, 3))
    assert memoryview(r).readonly
    with pytest.raises((BufferError, TypeError)):
        (ctypes.c_double * 6).from_buffer(r)
    with pytest.raises(BufferError, match="read-only"):
        _writable_contiguous_buffer(r)
    s = gp.arange(4.).sum()  # a scalar result is immutable, as NumPy's scalars
    assert memoryview(s).readonly


@pytest.mark.parametrize("make", [lambda: gp.zeros((8, 8)), lambda: gp.zeros((8, 8)).T,
                                  lambda: gp.zeros((8, 16))[:, ::2], lambda: gp.zeros((8, 8))[::-1]],
                         ids=["contiguous", "transposed", "strided", "reversed"])
def test_scipy_writes_its_output_into_a_gpupy_array(gpu, make):
    ndimage = pytest.importorskip("scipy.ndimage")
    x = np.random.default_rng(1).random((8, 8))
    out = make()
    ndimage.gaussian_filter(x, 1, output=out)
    np.testing.assert_allclose(np.asarray(out), ndimage.gaussian_filter(x, 1), rtol=1e-15)


# --- what happens while an export is alive ----------------------------------------------------

@pytest.mark.parametrize("placement", ["device", "host"])
def test_expressions_see_the_values_they_were_built_from(gpu, placement):
    old = gp.get_placement()
    gp.set_placement(placement)
    try:
        host = np.arange(BIG, dtype=np.float64)
        g = gp.array(host)
        before = g * 2  # built before the export: keeps the old values (copy-on-write)
        h = np.asarray(g)
        snapshots, reused = gp.stats()["export_snapshots"], gp.stats()["snapshots_reused"]
        during = g + 100  # built while the export is alive: a snapshot
        total = g.sum()  # the bytes unchanged: the same snapshot
        assert gp.stats()["export_snapshots"] == snapshots + 1
        assert gp.stats()["snapshots_reused"] == reused + 1
        h[0] = -1e9
        same(before, host * 2)
        same(during, host + 100)
        assert float(total) == host.sum()
        changed = host.copy()
        changed[0] = -1e9
        same(g, changed)
        assert float(g.sum()) == changed.sum()  # built after the write: sees it
    finally:
        gp.set_placement(old)


@pytest.mark.parametrize("write", ["partial", "element", "whole", "in_place", "fill"])
def test_gpupy_writes_reach_a_live_export(gpu, write):
    g = gp.zeros(BIG)
    h = np.asarray(g)
    if write == "partial":
        g[1:3] = 7
    elif write == "element":
        g[5] = 7
    elif write == "whole":
        g[...] = gp.ones(BIG) * 7
    elif write == "in_place":
        g += 7
    else:
        g.fill(7)
    np.testing.assert_array_equal(h, np.asarray(g))
    assert h.any()


def test_the_array_is_ordinary_again_when_the_export_ends(gpu):
    g = gp.arange(BIG, dtype=np.float32)
    h = np.asarray(g)
    h[:] = 2
    del h
    snapshots = gp.stats()["export_snapshots"]
    y = g * 3
    assert gp.stats()["export_snapshots"] == snapshots
    same(y, np.full(BIG, 6, np.float32))


# --- NumPy's array interface --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_array_interface(gpu, dtype):
    n = np.arange(12).reshape(3, 4).astype(dtype)[:, ::-1]
    g = gp.asarray(np.arange(12).reshape(3, 4).astype(dtype))[:, ::-1]  # a strided view
    interface = g.__array_interface__
    assert interface["version"] == 3 and interface["shape"] == (3, 4)
    assert interface["typestr"] == n.__array_interface__["typestr"]

    class Holder:  # only the interface, as other libraries' arrays are
        __array_interface__ = interface

    via = np.asarray(Holder())
    np.testing.assert_array_equal(via, n)
    assert not via.flags.writeable  # a strided view's interface is a copy: a write into it would be lost
    del g, interface
    np.testing.assert_array_equal(via, n)  # the bytes outlive the array they came from


def test_a_write_through_the_array_interface_reaches_the_array(gpu):
    g = gp.zeros((3, 4), np.float32)

    class Holder:
        __array_interface__ = g.__array_interface__

    via = np.asarray(Holder())
    via[1, 2] = 5
    expected = np.zeros((3, 4), np.float32)
    expected[1, 2] = 5
    same(g, expected)


@pytest.mark.parametrize("dtype, shape", [(np.uint8, (5, 7)), (np.uint8, (5, 7, 3)), (np.uint8, (5, 7, 4)),
                                          (np.int32, (5, 7)), (np.float32, (5, 7)), (np.bool_, (5, 7)),
                                          (np.uint16, (5, 7))])
def test_pillow_fromarray(gpu, dtype, shape):
    Image = pytest.importorskip("PIL.Image")
    n = (np.arange(np.prod(shape)).reshape(shape) % 200).astype(dtype)
    for g in (gp.asarray(n), gp.asarray(np.ascontiguousarray(n[::-1]))[::-1]):
        got = Image.fromarray(g)
        want = Image.fromarray(n)
        assert got.mode == want.mode and got.size == want.size
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_copies_and_whole_assignments_do_not_share_exported_bytes(gpu):
    # (found by the fuzzer: x.copy() shares x's value until a write, and a
    # write through an export is not one gpupy sees)
    g = gp.arange(BIG, dtype=np.int64)
    h = np.asarray(g)
    copied = g.copy()
    assigned = gp.zeros(BIG, np.int64)
    assigned[...] = g
    joined = gp.concatenate([g])
    h[0] = -5
    assert int(g[0]) == -5
    assert int(copied[0]) == 0 and int(assigned[0]) == 0 and int(joined[0]) == 0


@pytest.mark.parametrize("ufunc", ["equal", "add"])
def test_a_write_into_exported_bytes_still_read_by_an_expression_stays_in_them(gpu, ufunc):
    """`x.view(uint64)` exports x's bytes; `equal(x, v, out=x)` then writes
    into them while a lazy expression still reads x's old values (the
    differential fuzzer's program). The write must reach the bytes -- the
    view sees it, as NumPy's does -- and the expression keep the old values."""
    for xp in (np, gp):
        x = xp.asarray(np.arange(3, dtype=np.int64).reshape(1, 3))
        v = x.view(np.uint64)
        before = x * 10  # reads the old values, lazily in gpupy
        getattr(xp, ufunc)(x, v.astype(np.int64) if ufunc == "add" else v, out=x)
        want = np.array([[1, 1, 1]]) if ufunc == "equal" else np.array([[0, 2, 4]])
        assert np.array_equal(np.asarray(x), want), xp.__name__
        assert np.array_equal(np.asarray(v), want.astype(np.uint64)), xp.__name__
        assert (np.shares_memory if xp is np else gp.shares_memory)(x, v)
        assert np.array_equal(np.asarray(before), [[0, 10, 20]]), xp.__name__
