"""gpupy arrays as Dask chunks (gpupy/_dask.py, docs/dask.md): gpupy is one
of Dask's chunk types with the dispatch functions Dask needs, Dask's
operations on gpupy chunks give gpupy chunks, a chain of blockwise tasks is
one fused gpupy expression per chunk, the "gpupy" array backend creates
gpupy chunks, and a LocalCluster of spawned worker processes computes with
gpupy in each worker.

Dask comes with the `interop` extra (pip install '.[interop]'), which CI
installs; without it these tests are skipped.
"""

import numpy as np
import pytest

import gpupy as gp
from fresh_python import run_python

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

CHUNKS = (16, 12)


def integer_valued(shape, seed=0, nan_at=None):
    """float64 integers (and a NaN): sums of them are exact on every device,
    so results compare exactly with NumPy's however the terms are grouped."""
    values = np.random.default_rng(seed).integers(-50, 50, shape).astype(np.float64)
    if nan_at is not None:
        values[nan_at] = np.nan
    return values


def both(values, chunks=CHUNKS):
    """The same values as a NumPy-chunked and a gpupy-chunked dask array."""
    return da.from_array(values, chunks=chunks), da.from_array(gp.asarray(values), chunks=chunks, asarray=False)


def test_gpupy_is_a_chunk_type_with_its_size():
    from dask.array.core import is_valid_chunk_type
    from dask.sizeof import sizeof

    assert is_valid_chunk_type(gp.GpuArray)
    g = gp.zeros((100, 10), np.float32)
    assert sizeof(g) == g.nbytes == 4000


@pytest.mark.parametrize("order", ["gpupy first", "dask first"])
def test_gpupy_registers_whichever_is_imported_first(order):
    """`import gpupy` does not import Dask; Dask learns gpupy as soon as both are imported."""
    first, second = ("gpupy", "dask.array") if order == "gpupy first" else ("dask.array", "gpupy")
    code = f"""
import sys
import {first}
assert ("dask" in sys.modules) == ({first!r} == "dask.array"), "import gpupy imported dask"
import {second}
import gpupy, dask.array
from dask.array.core import is_valid_chunk_type
assert is_valid_chunk_type(gpupy.GpuArray)
x = dask.array.from_array(gpupy.arange(6.0), chunks=3, asarray=False)
assert type((x + 1).compute()).__name__ == "GpuArray"
print("ok")
"""
    proc = run_python(["-c", code])
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


# Dask operations whose result Dask derives from its chunks: every chunk
# and the result are gpupy arrays, the values NumPy-chunked Dask's.
OPERATIONS = {
    "elementwise": lambda d, i: (d * 2 - 1) ** 2 / 4,
    "mixed with gpupy": lambda d, i: d + gp.arange(d.shape[1], dtype=np.float64),
    "sum axis": lambda d, i: d.sum(axis=0),
    "nansum": lambda d, i: da.nansum(d, axis=1),
    "nanstd": lambda d, i: da.nanstd(d, axis=0),
    "var": lambda d, i: i.var(),
    "mean": lambda d, i: i.mean(),
    "nanmean": lambda d, i: da.nanmean(d),
    "max": lambda d, i: d.max(axis=1),
    "nanmax": lambda d, i: da.nanmax(d),
    "prod": lambda d, i: ((i > 0) + 1.0).prod(axis=0),
    "matmul": lambda d, i: i.T @ i,
    "tensordot": lambda d, i: da.tensordot(i, i, axes=([0], [0])),
    "einsum": lambda d, i: da.einsum("ij,ij->j", i, i),
    "dot": lambda d, i: i.dot(i.T),
    "concatenate": lambda d, i: da.concatenate([d, i], axis=1),
    "stack": lambda d, i: da.stack([d, i]),
    "transpose and slice": lambda d, i: d.T[::2, 1:],
    "rechunk": lambda d, i: d.rechunk((30, 7)),
    "where": lambda d, i: da.where(d > 0, d, -d),
    "isnan": lambda d, i: da.isnan(d).sum(),
    "cumsum": lambda d, i: i.cumsum(axis=0),
    "cumprod": lambda d, i: ((i > 0) + 1.0).cumprod(axis=1),
    "percentile": lambda d, i: da.percentile(i.ravel(), [10, 50, 90]),
    "histogram": lambda d, i: da.histogram(i, bins=10, range=(-50, 50))[0],
    "bincount": lambda d, i: da.bincount((i + 50).astype(np.int64).ravel(), minlength=100),
    "count_nonzero": lambda d, i: da.count_nonzero(i),
    "any": lambda d, i: (i > 40).any(axis=0),
    "map_overlap": lambda d, i: i.map_overlap(lambda b: b * 2, depth=1, boundary="reflect"),
    "diff": lambda d, i: da.diff(i, axis=0),
    "roll": lambda d, i: da.roll(i, 3, axis=1),
    "take": lambda d, i: i[[1, 5, 30, 2]],
    "mask": lambda d, i: i[i > 5],
    "topk": lambda d, i: da.topk(i.ravel(), 5),
    "nan_to_num": lambda d, i: da.nan_to_num(d),
    "digitize": lambda d, i: da.digitize(i, np.array([-10.0, 0.0, 25.0])),
    "isin": lambda d, i: da.isin(i, [1.0, 2.0, 7.0]),
    "linalg norm": lambda d, i: da.linalg.norm(i, axis=1),
    "average": lambda d, i: da.average(i, axis=0, weights=da.ones(60, chunks=16) * 2),
}


# Where Dask makes the result's meta with NumPy itself, whatever the chunks
# (a reduction to a scalar takes its meta from `x[()]`, a NumPy scalar as
# in NumPy; these build theirs from NumPy's functions).
NUMPY_META = {"percentile", "histogram", "mask"}


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_dask_operations_on_gpupy_chunks(gpu, name):
    values = integer_valued((60, 40), nan_at=(3, 4))
    d_np, d_gp = both(values)
    i_np, i_gp = both(np.nan_to_num(values))
    want = OPERATIONS[name](d_np, i_np).compute(scheduler="threads")
    result = OPERATIONS[name](d_gp, i_gp)
    got = result.compute(scheduler="threads")
    assert type(got) is gp.GpuArray
    if result.ndim and name not in NUMPY_META:
        assert type(result._meta) is gp.GpuArray
    # Integer-valued sums are exact; means, moments and norms of them are
    # one division or square root of exact sums (3 and 5 ulps on the
    # device, docs/accuracy.md) composed a few times: 1e-12 relative.
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, equal_nan=True)
    assert got.dtype == want.dtype


def test_arg_reductions_and_unique_give_numpys_results(gpu):
    """Dask keeps their partial results in structured arrays, which only
    NumPy holds: the values are right and NumPy's."""
    values = integer_valued((60, 40))
    d_np, d_gp = both(values)
    for op in (lambda d: d.argmax(axis=0), lambda d: da.nanargmin(d, axis=1), lambda d: da.unique(d)):
        np.testing.assert_array_equal(np.asarray(op(d_gp).compute(scheduler="threads")),
                                      op(d_np).compute(scheduler="threads"))


def test_mixing_a_dask_array_and_a_gpupy_array_gives_a_dask_array(gpu):
    values = integer_valued((8, 6))
    _, d_gp = both(values, chunks=(4, 3))
    g = gp.asarray(values)
    for result in (d_gp + g, g + d_gp, gp.maximum(g, d_gp), gp.where(d_gp > 0, g, 0)):
        assert isinstance(result, da.Array) and type(result._meta) is gp.GpuArray
    np.testing.assert_array_equal(np.asarray((g * d_gp).compute(scheduler="threads")), values * values)


def test_the_dispatch_functions_are_gpupys(gpu):
    from dask.array import dispatch

    a, b = gp.arange(6.0).reshape(2, 3), gp.arange(6.0, 12.0).reshape(2, 3)
    lookup = lambda table: table.dispatch(gp.GpuArray)  # noqa: E731
    checks = [
        (lookup(dispatch.concatenate_lookup)([a, b], axis=1), np.concatenate([np.asarray(a), np.asarray(b)], axis=1)),
        (lookup(dispatch.tensordot_lookup)(a, b, axes=([1], [1])), np.tensordot(np.asarray(a), np.asarray(b), ([1], [1]))),
        (lookup(dispatch.einsum_lookup)("ij,ij->i", a, b), np.einsum("ij,ij->i", np.asarray(a), np.asarray(b))),
        (lookup(dispatch.take_lookup)(a, [2, 0], axis=1), np.take(np.asarray(a), [2, 0], axis=1)),
        (lookup(dispatch.divide_lookup)(a, gp.asarray([1, 2, 4]), dtype=np.float32),
         np.divide(np.asarray(a), [1, 2, 4], dtype=np.float32)),
        (lookup(dispatch.numel_lookup)(a, axis=1, keepdims=True), np.full((2, 1), 3.0)),
        (lookup(dispatch.nannumel_lookup)(gp.asarray([1.0, np.nan, 2.0])), 2),
        (lookup(dispatch.percentile_lookup)(gp.arange(11.0), [10, 50])[0], np.percentile(np.arange(11.0), [10, 50])),
    ]
    for got, want in checks:
        assert isinstance(got, gp.GpuArray)
        np.testing.assert_array_equal(np.asarray(got), want)
        assert np.asarray(got).dtype == np.asarray(want).dtype
    empty = lookup(dispatch.empty_lookup)((2, 3), dtype=np.int32)
    assert isinstance(empty, gp.GpuArray) and empty.shape == (2, 3) and empty.dtype == np.int32
    host = lookup(dispatch.to_numpy_dispatch)(a)
    assert type(host) is np.ndarray and host.flags.writeable
    host[0, 0] = 99  # a copy: the gpupy array is not changed
    assert float(a[0, 0]) == 0.0
    assert gp.stats()["fallbacks"] == 0


def test_the_gpupy_backend_creates_gpupy_chunks(gpu):
    with dask.config.set({"array.backend": "gpupy"}):
        made = [da.ones((6, 4), chunks=3), da.zeros(5, chunks=2, dtype=np.int32), da.full((3, 3), 7.0, chunks=2),
                da.arange(10, chunks=4), da.empty((2, 2), chunks=1)]
        previous = gp.set_fallback("silent")  # (random numbers are drawn by NumPy, counted as fallbacks)
        try:
            drawn = da.random.RandomState(5).random_sample((6, 6), chunks=3).persist(scheduler="threads")
        finally:
            gp.set_fallback(previous)
    for x in made + [drawn]:
        assert type(x._meta) is gp.GpuArray
        assert type(x.compute(scheduler="threads")) is gp.GpuArray
    np.testing.assert_array_equal(np.asarray(made[3].compute(scheduler="threads")), np.arange(10))
    # gpupy.random draws NumPy's streams: the numbers Dask draws with NumPy.
    np.testing.assert_array_equal(np.asarray(drawn.compute(scheduler="threads")),
                                  da.random.RandomState(5).random_sample((6, 6), chunks=3).compute())
    moved = da.arange(12, chunks=5).to_backend("gpupy")
    assert type(moved._meta) is gp.GpuArray and type(moved.blocks[1].compute()) is gp.GpuArray
    back = moved.to_backend("numpy")
    assert type(back._meta) is np.ndarray and type(back.blocks[1].compute()) is np.ndarray
    np.testing.assert_array_equal(back.compute(), np.arange(12))


def test_a_blockwise_chain_is_one_fused_evaluation_per_chunk(gpu):
    """Each Dask task calls gpupy on its chunk, which builds a lazy
    expression: six blockwise operations over four chunks (24 tasks and
    more) are four evaluations, one per chunk -- with Dask's own fusion of
    the tasks and without it."""
    previous = gp.set_placement("device")
    try:
        values = np.random.default_rng(0).standard_normal((64, 48)).astype(np.float32)
        x = da.from_array(gp.asarray(values), chunks=(16, 48), asarray=False)
        y = ((gp.sin(x) * 2 + 1) ** 2 - gp.cos(x)) / 3
        assert len(dict(y.__dask_graph__())) >= 6 * 4
        want = ((np.sin(values) * 2 + 1) ** 2 - np.cos(values)) / 3
        for optimize in (True, False):
            gp.reset_stats()
            got = np.asarray(y.compute(scheduler="threads", optimize_graph=optimize))
            assert gp.stats()["evaluations"] == 4 and gp.stats()["host_engine_evaluations"] == 0
            # sin and cos are within 2 ulps of float32 (docs/accuracy.md),
            # which the square amplifies at most 6x: under 2e-6 absolute;
            # the other roundings are ulps of values under 10.
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)
    finally:
        gp.set_placement(previous)


def test_a_partial_result_does_not_keep_its_chunk_alive(gpu):
    """A chunk's lazy partial sum would hold the whole chunk until the last
    aggregate: Dask streaming an array larger than memory would hold all of
    it. Each task's result that keeps far more alive than itself is
    evaluated as the task ends -- by the local schedulers' task callback,
    and by dask.distributed's measuring of the result (sizeof)."""
    from dask.sizeof import sizeof

    from gpupy import _core, _dask

    chunk = 1 << 19  # float32: 2 MiB, above SETTLE_MIN_BYTES

    def make(block_info=None):
        (start, _), = block_info[None]["array-location"]
        return gp.asarray(np.random.default_rng(start).standard_normal(chunk, dtype=np.float32))

    seen = []

    def aggregate(parts, axis, keepdims):
        parts = parts if isinstance(parts, list) else [parts]
        seen.append(sum(_core.retained_host_bytes(p) for p in parts))
        return gp.sum(gp.concatenate([gp.reshape(p, (-1,)) for p in parts]), keepdims=keepdims)

    x = da.map_blocks(make, chunks=((chunk,) * 16,), dtype=np.float32, meta=gp.empty((0,), np.float32))
    for scheduler in ("threads", "sync"):
        seen.clear()
        total = da.reduction(x, lambda c, axis, keepdims: gp.sum(c, axis=axis, keepdims=keepdims), aggregate,
                             split_every=16, dtype=np.float32).compute(scheduler=scheduler)
        assert seen and max(seen) <= 16 * 4  # 16 float32 partial sums, not 32 MiB of chunks
        want = sum(np.random.default_rng(k * chunk).standard_normal(chunk, dtype=np.float32).sum(dtype=np.float64)
                   for k in range(16))
        assert abs(float(total) - want) <= 1e-3 * np.sqrt(16 * chunk)

    whole = gp.asarray(np.ones(chunk, np.float32))
    partial = whole.sum()
    del whole
    assert _core.retained_host_bytes(partial) == chunk * 4
    assert sizeof(partial) == 4 and _core.retained_host_bytes(partial) == 4
    elementwise = gp.asarray(np.ones(chunk, np.float32)) * 2  # keeps no more than itself: stays lazy, to fuse on
    assert _dask.settle(elementwise) is elementwise
    assert chunk * 4 <= _core.retained_host_bytes(elementwise) < chunk * 4 + 64  # its operand (and the constant)
    gp.reset_stats()
    np.asarray(elementwise)
    assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] == 1


def test_a_local_cluster_of_spawned_workers_computes_with_gpupy(gpu):
    """examples/dask_cluster.py's workloads on two worker processes started
    by spawn, each with its own driver (the one under test) and a device
    cache of 1 MiB: the distance map in tiles, and mean, std and histogram
    of an array eight times that cache -- NumPy's results, no fallback
    (the workers raise on one), chunks moved by pickle protocol 5."""
    distributed = pytest.importorskip("distributed")
    import os
    import sys

    import cloudpickle

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
    try:
        import dask_cluster as workloads
    finally:
        sys.path.pop(0)
    cloudpickle.register_pickle_by_value(workloads)  # the workers cannot import the example
    env = {"GPUPY_DRIVER": gp.driver(), "GPUPY_FALLBACK": "raise", "GPUPY_PLACEMENT": "device",
           "GPUPY_CACHE_BYTES": str(1 << 20)}
    with dask.config.set({"distributed.worker.multiprocessing-method": "spawn"}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                      env=env) as cluster, distributed.Client(cluster) as client:
            assert set(client.run(lambda: __import__("gpupy").driver()).values()) == {gp.driver()}
            pts = workloads.points(8, 256, seed=3)
            got = workloads.distance_map(gp, 256, 64, pts).compute()
            want = workloads.distance_map(np, 256, 64, pts).compute(scheduler="threads")
            assert type(got) is gp.GpuArray
            # sqrt is within 5 ulps on the OpenGL driver (docs/accuracy.md);
            # the squares, sums and minimum are correctly rounded or exact.
            np.testing.assert_allclose(np.asarray(got), want, rtol=8 * np.finfo(np.float32).eps, atol=0)

            size, chunk = 1 << 21, 1 << 18  # 8 MiB of float32 in 1 MiB chunks
            mean, std, counts = workloads.statistics(workloads.samples(gp, size, chunk, seed=11), 16, (-4, 4))
            np_mean, np_std, np_counts = workloads.statistics(workloads.samples(np, size, chunk, seed=11), 16, (-4, 4))
            np.testing.assert_array_equal(np.asarray(counts), np_counts)
            # float32 sums of 2^21 terms: each side within ~21 * eps32
            # relative of the exact sum (tree and pairwise summation).
            tol = 4 * 21 * np.finfo(np.float32).eps
            assert abs(float(mean) - float(np_mean)) <= tol * float(np_std)
            assert abs(float(std) - float(np_std)) <= tol * float(np_std)
            counters = client.run(lambda: dict(__import__("gpupy").stats()))
            assert all(c["fallbacks"] == 0 and c["evaluations"] > 0 for c in counters.values())


def test_the_backend_entry_point_loads_gpupy():
    """With gpupy installed, Dask finds the "gpupy" backend by its entry
    point in a program that never imports gpupy itself."""
    from importlib import metadata

    try:
        metadata.distribution("gpupy")
    except metadata.PackageNotFoundError:
        pytest.skip("gpupy is not installed (an in-place build has no entry points)")
    code = """
import sys
import dask, dask.array as da
assert "gpupy" not in sys.modules
with dask.config.set({"array.backend": "gpupy"}):
    x = da.ones((4, 4), chunks=2)
print(type(x._meta).__name__, type(x.compute()).__name__)
"""
    proc = run_python(["-c", code])
    assert proc.returncode == 0 and proc.stdout.split() == ["GpuArray", "GpuArray"], proc.stderr
