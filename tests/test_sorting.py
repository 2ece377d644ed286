"""Sorting on the device (gpupy/_sorting.py): numpy.sort, numpy.argsort,
ndarray.sort, numpy.median and numpy.unique on a bitonic network of fused
compare-and-exchange stages.
NumPy's stable sort is the oracle -- values, positions, NaN last, the order
of equal zeros of both signs -- on both drivers, with the device forced and
as placed by cost (on a CPU renderer: NumPy, as a host placement)."""
import re

import numpy as np
import pytest

import gpupy as gp

RNG = np.random.default_rng(11)
SHAPES = [(1,), (2,), (5,), (16,), (37,), (4, 7), (3, 4, 5), (0,), (2, 0)]
DTYPES = ["bool", "uint8", "int16", "int32", "int64", "float32", "float64"]


@pytest.fixture(params=["device", "auto"])
def placement(request):
    previous = gp.set_placement(request.param)
    yield request.param
    gp.set_placement(previous)


def with_ties(shape, dtype):
    """Few distinct values; floats with NaNs and zeros of both signs."""
    a = RNG.integers(-4, 4, shape).astype(dtype)
    if np.dtype(dtype).kind == "f" and a.size:
        flat = a.reshape(-1)
        flat[::3] = np.nan
        flat[1::4] = -0.0
        flat[2::5] = 0.0
    return a


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_sort_and_argsort_are_numpys_stable_sort(gpu, placement, shape, dtype):
    a = with_ties(shape, dtype)
    g = gp.asarray(a)
    gp.reset_stats()
    for axis in (-1, 0, None):
        gpu.assert_same(gp.sort(g, axis=axis, kind="stable"), np.sort(a, axis=axis, kind="stable"))
        gpu.assert_same(gp.argsort(g, axis=axis, kind="stable"), np.argsort(a, axis=axis, kind="stable"))
    assert gp.stats()["fallbacks"] == 0


def test_the_default_kind_on_distinct_values(gpu, placement):
    a = RNG.standard_normal((3, 50)).astype(np.float32)
    gpu.assert_same(gp.sort(gp.asarray(a)), np.sort(a))
    gpu.assert_same(gp.argsort(gp.asarray(a), axis=0), np.argsort(a, axis=0))


def test_views(gpu):
    a = with_ties((6, 9), np.float64)
    for view in (lambda x: x[::-1, 1::2], lambda x: x.T, lambda x: x[2:4]):
        gpu.assert_same(gp.sort(view(gp.asarray(a)), kind="stable"), np.sort(view(a), kind="stable"))
        gpu.assert_same(gp.argsort(view(gp.asarray(a)), axis=0, kind="stable"),
                        np.argsort(view(a), axis=0, kind="stable"))


def test_the_method_sorts_in_place(gpu, placement):
    a = with_ties((5, 6), np.float32)
    g = gp.asarray(a)
    v = g[1:4]  # a view sees the sorted values
    g.sort(axis=0, kind="stable")
    a.sort(axis=0, kind="stable")
    gpu.assert_same(g, a)
    gpu.assert_same(v, a[1:4])
    gpu.assert_same(gp.asarray(a).argsort(kind="stable"), a.argsort(kind="stable"))


def test_with_the_device_forced_every_stage_is_an_evaluation(gpu):
    previous = gp.set_placement("device")
    try:
        x = RNG.standard_normal(1000).astype(np.float32)
        gp.reset_stats()
        gpu.assert_same(gp.sort(gp.asarray(x)), np.sort(x))
        stats = gp.stats()
        stages = 10 * 11 // 2  # 1000 values padded to 2**10
        # values and positions (floats carry them: equal zeros keep their order)
        assert stats["evaluations"] + stats["host_engine_evaluations"] >= 2 * stages
        assert stats["fallbacks"] == 0 and stats["host_placements"] == 0
    finally:
        gp.set_placement(previous)


def test_errors_are_numpys(gpu, silent_fallback):
    g, a = gp.asarray(np.arange(6.0).reshape(2, 3)), np.arange(6.0).reshape(2, 3)
    for xp, x in ((np, a), (gp, g)):
        with pytest.raises(np.exceptions.AxisError):
            xp.sort(x, axis=2)
        with pytest.raises(np.exceptions.AxisError):
            xp.argsort(x, axis=-3)
        with pytest.raises(ValueError):
            xp.sort(x, kind="bogus")
        with pytest.raises(np.exceptions.AxisError):
            xp.sort(x[0, 0] if xp is np else gp.asarray(np.float64(1.0)))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (2,), (7,), (8,), (4, 5), (3, 4, 6)], ids=str)
def test_median(gpu, placement, shape, dtype):
    a = (RNG.standard_normal(shape) * 10).astype(dtype)
    if np.dtype(dtype).kind == "f" and a.size > 3:
        a.reshape(-1)[3] = np.nan  # its slice's median is NaN
    gp.reset_stats()
    for axis in (None, 0, -1):
        for keepdims in (False, True):
            # A 0-d median is NumPy's scalar; placed on the host, so is
            # gpupy's (on the device, a 0-d array, as its other reductions).
            want = np.median(a, axis=axis, keepdims=keepdims)
            gpu.assert_same(gp.median(gp.asarray(a), axis=axis, keepdims=keepdims), want, gpu_array=np.ndim(want) > 0)
    assert gp.stats()["fallbacks"] == 0


def test_median_of_an_even_length_does_not_overflow_an_odd_one(gpu, placement):
    big = np.array([3e38, 3e38, 3e38], np.float32)  # (a + a) / 2 would be inf
    gpu.assert_same(gp.median(gp.asarray(big)), np.median(big), gpu_array=False)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float32", "float64"])
@pytest.mark.parametrize("shape", [(1,), (7,), (4, 5), (3, 4, 6)], ids=str)
def test_unique(gpu, placement, shape, dtype):
    a = with_ties(shape, dtype)
    g = gp.asarray(a)
    gp.reset_stats()
    for kwargs in ({}, dict(return_index=True, return_inverse=True, return_counts=True),
                   dict(return_counts=True, equal_nan=False)):
        got, want = gp.unique(g, **kwargs), np.unique(a, **kwargs)
        for x, y in zip(got if kwargs else (got,), want if kwargs else (want,)):
            # Which zero stands for a run of -0.0 and 0.0 follows the sort:
            # NumPy's default kind does not promise it.
            gpu.assert_same(x, y, zero_sign=bool(kwargs.get("return_index")))
    assert gp.stats()["fallbacks"] == 0


QUANTILE_QS = [50, 0, 100, 33.3, np.float64(25), [10, 90.5], np.array([0.0, 50, 100]), [[5, 50], [95, 100]]]


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
@pytest.mark.parametrize("dtype", ["bool", "int8", "int32", "float32", "float64"])
@pytest.mark.parametrize("shape, axis", [((7,), None), ((5, 6), 0), ((5, 6), 1), ((4, 3, 2), -1), ((1,), None)],
                         ids=str)
def test_percentile_and_quantile(gpu, placement, shape, axis, dtype, method):
    """NumPy's values, dtypes (a Python number q is weak: float32 stays
    float32; a NumPy one is not) and shapes, NaN where a slice holds one."""
    h = (np.random.default_rng(len(shape)).standard_normal(shape) * 5).astype(dtype)
    if h.dtype.kind == "f" and h.ndim == 2:
        h[1, 2] = np.nan
    g = gp.asarray(h)
    if dtype == "bool" and method in ("linear", "midpoint"):  # NumPy interpolates with `-`, refused for bool
        for m in (np, gp):
            with pytest.raises(TypeError):
                m.percentile(h if m is np else g, 50, axis=axis, method=method)
        return
    for q in QUANTILE_QS:
        for keepdims in (False, True):
            with np.errstate(invalid="ignore"):
                want = np.percentile(h, q, axis=axis, method=method, keepdims=keepdims)
                got = np.asarray(gp.percentile(g, q, axis=axis, method=method, keepdims=keepdims))
                want_q = np.quantile(h, np.true_divide(q, 100), axis=axis, method=method, keepdims=keepdims)
                got_q = np.asarray(gp.quantile(g, np.true_divide(q, 100), axis=axis, method=method,
                                               keepdims=keepdims))
            for w, r in ((want, got), (want_q, got_q)):
                w = np.asarray(w)
                assert r.shape == w.shape and r.dtype == w.dtype, (q, keepdims, r.dtype, w.dtype)
                np.testing.assert_array_equal(r, w)


def test_quantile_of_integers_by_an_integer_q_takes_an_element(gpu, placement):
    h = np.arange(10, dtype=np.int32)
    for q in (1, 0, [0, 1]):
        got, want = np.asarray(gp.quantile(gp.asarray(h), q)), np.quantile(h, q)
        assert got.dtype == want.dtype == np.int32
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [
    lambda m, a: m.percentile(a, 101), lambda m, a: m.percentile(a, [-1, 50]), lambda m, a: m.quantile(a, 1.5),
    lambda m, a: m.percentile(a, 50, axis=2), lambda m, a: m.percentile(a, 50, method="foo"),
    lambda m, a: m.percentile(a, [[[10, 20]]]),
], ids=["above", "below", "quantile", "axis", "method", "q-3d"])
def test_percentile_errors_are_numpys(gpu, silent_fallback, call):
    h = np.arange(12.0).reshape(3, 4)
    with pytest.raises(Exception) as want:
        call(np, h)
    with pytest.raises(type(want.value)):
        call(gp, gp.asarray(h))


def test_percentile_on_the_device_is_a_sort(gpu):
    previous = gp.set_placement("device")
    try:
        h = np.random.default_rng(3).standard_normal((16, 16))
        gp.reset_stats()
        got = gp.percentile(gp.asarray(h), [25, 75], axis=1)
        np.testing.assert_array_equal(np.asarray(got), np.percentile(h, [25, 75], axis=1))
        s = gp.stats()
        assert s["fallbacks"] == 0 and s["host_placements"] == 0 and s["evaluations"] >= 10  # log2(16) (+1) / 2 stages
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("kth", [0, 3, -1, [1, 5]], ids=str)
@pytest.mark.parametrize("axis", [-1, 0, None], ids=str)
@pytest.mark.parametrize("dtype", ["int32", "float32", "float64"])
def test_partition_and_argpartition(gpu, placement, kth, axis, dtype):
    """NumPy leaves the order within each side undefined: what is held is
    the partition itself -- the kth elements in their sorted places, nothing
    larger before them, nothing smaller after (NaN last) -- the same
    values as NumPy's, and argpartition's positions reading them."""
    a = (np.random.default_rng(8).standard_normal((6, 9)) * 4).astype(dtype)
    if a.dtype.kind == "f":
        a[1, 3] = np.nan
    g = gp.asarray(a)
    want = np.partition(a, kth, axis=axis)
    got = np.asarray(gp.partition(g, kth, axis=axis))
    positions = np.asarray(gp.argpartition(g, kth, axis=axis))
    assert got.shape == want.shape and got.dtype == want.dtype and positions.dtype == np.intp
    flat = a.reshape(-1) if axis is None else a
    ax = 0 if axis is None else axis
    by_position = np.take_along_axis(flat, positions, axis=ax)
    ordered = np.sort(flat, axis=ax)
    for result in (got, by_position):
        np.testing.assert_array_equal(np.sort(result, axis=ax), ordered)  # the same values
        r, o = np.moveaxis(result, ax, -1), np.moveaxis(ordered, ax, -1)
        n = r.shape[-1]
        for k in np.atleast_1d(kth):
            k = k % n
            np.testing.assert_array_equal(r[..., k], o[..., k])
            key = lambda x: np.where(np.isnan(x), np.inf, x) if x.dtype.kind == "f" else x  # noqa: E731
            assert (key(r[..., :k]) <= key(r[..., k:k + 1])).all() and (key(r[..., k + 1:]) >= key(r[..., k:k + 1])).all()


def test_partition_in_place_and_errors(gpu, placement):
    a = np.random.default_rng(9).standard_normal(10)
    g = gp.asarray(a)
    assert g.partition(4) is None
    got = np.asarray(g)
    assert got[4] == np.sort(a)[4] and (got[:4] <= got[4]).all() and (got[5:] >= got[4]).all()
    for bad, error in ((10, ValueError), (-11, ValueError), (1.5, TypeError)):
        with pytest.raises(error) as want:
            np.partition(a, bad)
        with pytest.raises(error, match=re.escape(str(want.value))):
            gp.partition(gp.asarray(a), bad)
    with pytest.raises(ValueError, match="introselect"):
        gp.partition(gp.asarray(a), 2, kind="quick")
