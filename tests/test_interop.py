"""gpupy next to the libraries NumPy users use: what NumPy hands
to pandas, xarray and dask objects (NEP 13 ufuncs and operators, NEP 18
functions), gpupy hands over too, so the result is theirs, index and
coordinates intact; and SciPy, scikit-image, matplotlib, Pillow and
array-api-compat take gpupy arrays as they take ndarrays.

The libraries come with the `interop` extra (pip install '.[interop]'),
which CI installs; a test whose library is missing is skipped.
"""

import numpy as np
import pytest

import gpupy as gp


def _pandas():
    return pytest.importorskip("pandas")


# --- pandas -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [lambda xp, s, g: xp.sin(s), lambda xp, s, g: xp.log(s + 2),
                                  lambda xp, s, g: g + s, lambda xp, s, g: s + g, lambda xp, s, g: g * s,
                                  lambda xp, s, g: g > s, lambda xp, s, g: s == g, lambda xp, s, g: xp.add(g, s),
                                  lambda xp, s, g: xp.maximum(s, g), lambda xp, s, g: xp.round(s, 1),
                                  lambda xp, s, g: xp.cumsum(s), lambda xp, s, g: xp.clip(s, 0, 1),
                                  lambda xp, s, g: xp.sum(s), lambda xp, s, g: xp.mean(s),
                                  lambda xp, s, g: xp.abs(s)],
                         ids=["sin", "log", "g+s", "s+g", "g*s", "g>s", "s==g", "add", "maximum", "round", "cumsum",
                              "clip", "sum", "mean", "abs"])
def test_pandas_series_get_what_numpy_gives(gpu, call):
    pd = _pandas()
    s = pd.Series([0.5, -1.25, 2.0], index=["a", "b", "c"])
    got = call(gp, s, gp.asarray([1.0, 2.0, 3.0]))
    want = call(np, s, np.asarray([1.0, 2.0, 3.0]))
    assert type(got) is type(want)
    if isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want)
    else:
        assert got == want


def test_pandas_dataframe_ufuncs(gpu):
    pd = _pandas()
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}, index=["x", "y"])
    pd.testing.assert_frame_equal(gp.log(df), np.log(df))
    pd.testing.assert_frame_equal(gp.sqrt(df) + gp.asarray([1.0, 2.0]), np.sqrt(df) + np.asarray([1.0, 2.0]))


def test_gpupy_arrays_become_pandas_columns(gpu):
    pd = _pandas()
    df = pd.DataFrame({"x": gp.arange(4.0), "y": gp.arange(4) * 2})
    assert list(df["x"]) == [0.0, 1.0, 2.0, 3.0] and df["y"].dtype == np.int64


def test_in_place_with_a_series_writes_the_gpupy_array(gpu):
    pd = _pandas()
    g = gp.asarray([1.0, 2.0, 3.0])
    g += pd.Series([1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(g), [2.0, 3.0, 4.0])


# --- xarray -----------------------------------------------------------------------------------

def test_xarray_keeps_its_coordinates(gpu):
    xr = pytest.importorskip("xarray")
    da = xr.DataArray(np.arange(3.0), dims="t", coords={"t": [10, 20, 30]})
    g = gp.asarray([1.0, 2.0, 3.0])
    for got, want in [(g + da, np.asarray([1.0, 2.0, 3.0]) + da), (da * g, da * np.asarray([1.0, 2.0, 3.0])),
                      (gp.sin(da), np.sin(da)), (gp.sum(da), np.sum(da))]:
        assert isinstance(got, xr.DataArray)
        xr.testing.assert_allclose(got, want)
        assert list(got.coords) == list(want.coords)


# --- dask ------------------------------------------------------------------------------------

def test_dask_arrays_stay_dask_arrays(gpu):
    da = pytest.importorskip("dask.array")
    np.add(gp.ones(2), [1, 2])  # a list met first as a ufunc operand: still looked into as a function argument
    n = np.arange(6.0)
    d = da.from_array(n, chunks=3)
    g = gp.asarray(n)
    for got, want in [(g + d, n + n), (d + g, n + n), (gp.sin(d), np.sin(n)), (gp.sum(d), n.sum()),
                      (gp.concatenate([d, d]), np.concatenate([n, n])), (gp.where(d > 2, d, 0), np.where(n > 2, n, 0))]:
        assert isinstance(got, da.Array), type(got)
        np.testing.assert_allclose(np.asarray(got.compute()), want)


# --- libraries that read and write arrays ------------------------------------------------------

def test_scipy_and_skimage_take_gpupy_arrays(gpu):
    ndimage = pytest.importorskip("scipy.ndimage")
    transform = pytest.importorskip("skimage.transform")
    morphology = pytest.importorskip("skimage.morphology")
    n = np.random.default_rng(0).random((16, 16))
    g = gp.asarray(n)
    np.testing.assert_allclose(ndimage.gaussian_filter(g, 1.5), ndimage.gaussian_filter(n, 1.5))
    np.testing.assert_allclose(transform.rotate(g, 30), transform.rotate(n, 30))
    np.testing.assert_array_equal(morphology.dilation(g > 0.5), morphology.dilation(n > 0.5))
    out = gp.empty_like(g)
    ndimage.gaussian_filter(g, 1, output=out)
    np.testing.assert_allclose(np.asarray(out), ndimage.gaussian_filter(n, 1))


def test_matplotlib_draws_gpupy_arrays(gpu, silent_fallback, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = gp.linspace(0, 6, 50)
    fig, ax = plt.subplots()
    (line,) = ax.plot(x, gp.sin(x))
    ax.imshow(gp.arange(12.0).reshape(3, 4))
    ax.set_xlim(0, x.max())
    fig.savefig(tmp_path / "plot.png")
    plt.close(fig)
    np.testing.assert_allclose(line.get_ydata(), np.sin(np.linspace(0, 6, 50)))
    assert (tmp_path / "plot.png").stat().st_size > 0


def test_array_api_compat_knows_gpupy(gpu):
    compat = pytest.importorskip("array_api_compat")
    g = gp.arange(3.0)
    assert compat.array_namespace(g) is gp
    assert compat.device(g) == g.device
    assert compat.is_array_api_obj(g)


def test_the_call_is_handed_over_only_for_arguments_numpy_would_dispatch_on():
    # Every gpupy function passes through _core.handover: arguments no
    # library can claim -- arrays, numbers, strings, functions (NumPy
    # looks for __array_function__ on an argument's type) -- go straight
    # to gpupy's implementation; anything else is looked at by `decide`,
    # which may hand the call to NumPy's function (and so to the library).
    looked = []

    def decide(args, keyword_values):
        looked.append(args)
        return True

    call = gp._core.handover(lambda *a, **k: "gpupy", lambda *a, **k: "numpy", decide)
    for plain in ([gp.zeros(2), np.zeros(2), np.float32(1), 2.5, 3, "s", None, slice(1), ...],
                  [lambda x: x, abs, gp.zeros(2).sum, print, [1.0, gp.zeros(1)]]):
        assert call(*plain) == "gpupy" and not looked

    class Claims:
        def __array_function__(self, func, types, args, kwargs):
            return "library"

    assert call(lambda x: x, Claims()) == "numpy" and len(looked) == 1
    assert call(like=Claims()) == "numpy" and len(looked) == 2
    # fromfunction with a function and a shape: gpupy's, without the look.
    got = gp.fromfunction(lambda i, j: i + j, (2, 3), dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(got), np.fromfunction(lambda i, j: i + j, (2, 3), dtype=np.float32))
