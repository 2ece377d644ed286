"""histogram, digitize, interp and isin on the device (gpupy/_binning.py),
and nan_to_num and nanargmin/nanargmax (which Dask's reductions call per
chunk): NumPy's values, dtypes and errors, with the device forced and with
the host placement a CPU renderer gets, and no fallback.
"""

import numpy as np
import pytest

import gpupy as gp

RNG = np.random.default_rng(1)
DATA = {
    "float64": RNG.standard_normal(1000) * 3,
    "float32": (RNG.standard_normal(1000) * 3).astype(np.float32),
    "int32": RNG.integers(-50, 50, 1000).astype(np.int32),
    "uint8": RNG.integers(0, 255, 1000).astype(np.uint8),
    "int16 wide": RNG.integers(-30000, 30000, 500).astype(np.int16),
    "specials": np.r_[RNG.standard_normal(50), np.nan, np.inf, -np.inf, 0.0, -0.0],
    "empty": np.zeros(0),
    "2-d": RNG.standard_normal((20, 30)),
    "constant": np.full(10, 3.0),
    "on the edges": np.array([0.0, 1, 2, 10, 10.0, 5, 9.999999, 1e-300, 2.5, 7.5]),
}
BINS = [1, 7, 64, 65, 200, np.array([-2.0, -1, 0, 0, 1, 2.5]), [0, 1, 2], np.array([3.0])]
RANGES = [None, (0, 10), (-1.5, 2.5), (5, 5), (3, 1), (0, np.inf)]


@pytest.fixture(params=["device", "host"])
def placement(request):
    previous = gp.set_placement(request.param)
    yield request.param
    gp.set_placement(previous)


def same(call, *host, exact=True, tolerance=None):
    """call(np, *host) and call(gp, *device copies): equal values, dtypes
    and shapes (within `tolerance` where not exact), or the same error."""
    try:
        want, numpy_error = call(np, *host), None
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        want, numpy_error = None, e
    device = [gp.asarray(x) if isinstance(x, np.ndarray) else x for x in host]
    if numpy_error is not None:
        with pytest.raises(type(numpy_error)) as raised:
            call(gp, *device)
        assert str(raised.value) == str(numpy_error)
        return
    got = call(gp, *device)
    for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert isinstance(g, gp.GpuArray) or np.ndim(w) == 0
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        if exact:
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=0, atol=tolerance(w), equal_nan=True)


@pytest.mark.parametrize("data", sorted(DATA))
def test_histogram_counts_as_numpy(gpu, placement, data):
    for bins in BINS:
        for limits in RANGES:
            same(lambda xp, a: xp.histogram(a, bins=bins, range=limits), DATA[data])
    assert gp.stats()["fallbacks"] == 0


@pytest.mark.parametrize("data", ["float64", "int32", "specials", "empty"])
def test_histogram_density_and_weights(gpu, placement, data):
    a = DATA[data]
    weights = RNG.random(a.shape)
    # density divides exact counts by exact widths and the total: three
    # divisions of 3 ulps each (docs/accuracy.md), with margin.
    # (An empty array's density is 0 / 0: NaN, which NumPy warns about.)
    relative = lambda w: 16 * np.finfo(np.float64).eps * np.nanmax(np.abs(w), initial=0)  # noqa: E731
    with np.errstate(invalid="ignore"):
        same(lambda xp, x: xp.histogram(x, bins=9, density=True), a, exact=False, tolerance=relative)
        same(lambda xp, x: xp.histogram(x, bins=[-1, 0, 1, 5], density=True), a, exact=False, tolerance=relative)
    # Weights are summed in float64 in another order than NumPy's: n terms
    # of at most 1 err by n ulps of the sum.
    summed = lambda w: a.size * np.finfo(np.float64).eps * max(1.0, np.max(np.abs(w), initial=0))  # noqa: E731
    same(lambda xp, x, w: xp.histogram(x, bins=9, range=(-3, 3), weights=w), a, weights, exact=False, tolerance=summed)
    same(lambda xp, x, w: xp.histogram(x, bins=[-1, 0, 1, 5], weights=w), a, (weights * 10).astype(np.int64))
    assert gp.stats()["fallbacks"] == 0


def test_histogram_errors_are_numpys(gpu):
    a = DATA["float64"]
    for kwargs in [dict(bins=0), dict(bins=-3), dict(bins=[[1, 2]]), dict(bins=[3, 1, 2]), dict(range=(2, 1)),
                   dict(range=(0, np.nan)), dict(bins=2.5), dict(weights=np.ones(3))]:
        same(lambda xp, x: xp.histogram(x, **kwargs), a)
    same(lambda xp, x: xp.histogram(x), DATA["specials"])  # the range found is not finite


@pytest.mark.parametrize("data", sorted(DATA))
def test_digitize_isin_nan_to_num_and_nanarg(gpu, placement, data):
    a = DATA[data]
    for bins in [np.array([-1.0, 0, 2, 5]), np.array([5.0, 2, 0, -1]), np.array([1, 3, 2]), np.array([0.5])]:
        for right in (False, True):
            same(lambda xp, x: xp.digitize(x, bins, right=right), a)
    for tests in [np.array([0, 1, 3, 7, np.nan, 2.0]), np.array([-1, 3], np.int32), np.zeros(0)]:
        same(lambda xp, x: xp.isin(x, tests), a)
        same(lambda xp, x: xp.isin(x, tests, invert=True), a)
    same(lambda xp, x: xp.nan_to_num(x), a)
    same(lambda xp, x: xp.nan_to_num(x, nan=-1, posinf=5, neginf=-5), a)
    if a.size:
        same(lambda xp, x: xp.nanargmin(x), a)
        same(lambda xp, x: xp.nanargmax(x, axis=0), a)
    assert gp.stats()["fallbacks"] == 0


INTERPOLATIONS = [
    (np.array([-1.0, 0, 2, 5]), np.array([3.0, -1, 2, 7])),
    (np.array([0.0, 1, 1, 2]), np.array([0.0, 1, 5, 2])),  # a repeated point
    (np.array([2.0]), np.array([4.0])),
    (np.array([-np.inf, 0, 1]), np.array([0.0, 1, 2])),
    (np.array([0.0, 1, 2]), np.array([np.inf, 1, np.inf])),
]


@pytest.mark.parametrize("data", sorted(DATA))
def test_interp_is_numpys(gpu, placement, data):
    for xp_, fp in INTERPOLATIONS:
        finite = fp[np.isfinite(fp)]
        # y0 + slope * (x - x0): a division of 3 ulps and correctly rounded
        # +, -, x, each term at most 2 max|fp| (docs/accuracy.md).
        bound = lambda w: 16 * np.finfo(np.float64).eps * max(np.max(np.abs(finite), initial=0), 9.0)  # noqa: E731
        same(lambda xp, x: xp.interp(x, xp_, fp), DATA[data], exact=False, tolerance=bound)
        same(lambda xp, x: xp.interp(x, xp_, fp, left=-9, right=9), DATA[data], exact=False, tolerance=bound)
    assert gp.stats()["fallbacks"] == 0


def test_scalar_and_error_forms(gpu):
    same(lambda xp, a, b: xp.interp(2.5, a, b), np.array([1.0, 2, 3]), np.array([3.0, 2, 0]))
    same(lambda xp, a: xp.isin(3, a), np.array([1, 3]))
    same(lambda xp, a: xp.digitize(2.5, a), np.array([1.0, 2, 3]))
    same(lambda xp, a: xp.nanargmin(a, axis=1), np.array([[1.0, np.nan], [np.nan, np.nan]]))
    same(lambda xp, a: xp.interp(a, [1.0, 2], [1.0]), np.array([1.0]))
    same(lambda xp, a: xp.interp(a, [], []), np.array([1.0]))
    same(lambda xp, a: xp.digitize(a, [1.0, 3, 2]), np.array([1.0]))
    x = gp.asarray([np.nan, np.inf, 1.0])
    assert gp.nan_to_num(x, copy=False) is x and x.tolist() == [0.0, np.finfo(np.float64).max, 1.0]
