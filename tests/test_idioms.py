"""Real NumPy idioms on GpuArrays, compared with NumPy doing the same on
ndarrays: grids and joins, masks, printing, pickling, the container
protocols (len, in, iteration, .flat, tolist), truth values, conversions,
copies, format strings, functions that write into their arguments, and
ndarray's methods.

Each test runs once per available driver (`gpu` fixture, fallback mode
"raise"). Where gpupy has a device version the idiom must run with zero
fallbacks; where it does not yet, it runs in "silent" mode and must be
counted under its NumPy name (so this file notices when one moves to the
device).
"""

import copy
import operator
import pickle

import numpy as np
import pytest

import gpupy as gp


def fallbacks():
    return gp.stats()["fallbacks_by_function"]


def f32(values):
    return np.asarray(values, dtype=np.float32)


def same(got, expected, gpu_array=True):
    """got (a GpuArray unless gpu_array=False) has expected's type, shape,
    dtype and values."""
    if gpu_array:
        assert isinstance(got, gp.GpuArray), type(got)
    expected = np.asarray(expected)
    host = np.asarray(got)
    assert host.shape == expected.shape and host.dtype == expected.dtype, (host.shape, host.dtype, expected.dtype)
    np.testing.assert_array_equal(host, expected)


def idiom(name, run):
    """Runs run(); zero fallbacks if gpupy.<name> is on the device, else
    exactly the visible fallback `name`."""
    gp.reset_stats()
    if gp.is_fallback(getattr(gp, name)):
        with gp.fallback_mode("silent"):
            result = run()
        assert name in fallbacks(), fallbacks()
    else:
        result = run()
        assert fallbacks() == {}, fallbacks()
    return result


# --- grids, selections, joins --------------------------------------------------------------------

class TestGridsAndJoins:
    def test_linspace(self, gpu):
        same(idiom("linspace", lambda: gp.linspace(-1, 1, 5)), np.linspace(-1, 1, 5))
        same(idiom("linspace", lambda: gp.linspace(0, 1, 4, endpoint=False, dtype=np.float32)),
             np.linspace(0, 1, 4, endpoint=False, dtype=np.float32))
        y, step = idiom("linspace", lambda: gp.linspace(0, 10, 6, retstep=True))
        ny, nstep = np.linspace(0, 10, 6, retstep=True)
        same(y, ny)
        assert step == nstep

    def test_linspace_with_array_endpoints(self, gpu):
        lo, hi = gp.asarray(f32([0, 10])), gp.asarray(f32([1, 20]))
        with gp.fallback_mode("silent"):
            got = np.linspace(lo, hi, 3)
        same(got, np.linspace(f32([0, 10]), f32([1, 20]), 3))

    def test_meshgrid(self, gpu):
        x, y = f32([1, 2, 3]), f32([10, 20])
        gx, gy = gp.asarray(x), gp.asarray(y)
        for kwargs in ({}, {"indexing": "ij"}, {"sparse": True}):
            got = idiom("meshgrid", lambda: np.meshgrid(gx, gy, **kwargs))
            want = np.meshgrid(x, y, **kwargs)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                same(g, w)

    def test_where(self, gpu):
        a = f32([-2, -1, 0, 1, 2])
        g = gp.asarray(a)
        same(idiom("where", lambda: np.where(g > 0, g, 0)), np.where(a > 0, a, 0))
        same(idiom("where", lambda: np.where(g > 0, a * 10, g)), np.where(a > 0, a * 10, a))
        same(idiom("where", lambda: gp.where(a < 0, -1.5, g)), np.where(a < 0, -1.5, a))
        with gp.fallback_mode("silent"):
            (idx,) = np.where(g > 0)  # one argument: nonzero
        same(idx, np.where(a > 0)[0])

    def test_clip(self, gpu):
        a = f32([-2, -1, 0, 1, 2])
        g = gp.asarray(a)
        same(idiom("clip", lambda: np.clip(g, -1, 1)), np.clip(a, -1, 1))
        same(idiom("clip", lambda: g.clip(min=0)), a.clip(min=0))
        same(idiom("clip", lambda: np.clip(g, f32([0, 0, 0, 0, 0]), 1.5)), np.clip(a, f32([0] * 5), 1.5))

    def test_concatenate_and_stack(self, gpu):
        a = np.arange(6, dtype=np.float32).reshape(2, 3)
        g = gp.asarray(a)
        same(idiom("concatenate", lambda: np.concatenate([g, a, g])), np.concatenate([a, a, a]))
        same(idiom("concatenate", lambda: np.concatenate([g, g], axis=1)), np.concatenate([a, a], axis=1))
        same(idiom("concatenate", lambda: np.concatenate([a, g], axis=None)), np.concatenate([a, a], axis=None))
        same(idiom("stack", lambda: np.stack([g, g])), np.stack([a, a]))
        same(idiom("stack", lambda: np.stack([g, a], axis=-1)), np.stack([a, a], axis=-1))
        same(idiom("vstack", lambda: np.vstack([g, a])), np.vstack([a, a]))
        same(idiom("hstack", lambda: np.hstack([g, g])), np.hstack([a, a]))

    def test_reductions_of_idioms(self, gpu):
        a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
        g = gp.asarray(a)
        for name, args in (("sum", {}), ("sum", {"axis": 0}), ("max", {"axis": 1}), ("mean", {}), ("any", {}),
                           ("all", {"axis": 0}), ("argmax", {})):
            got = idiom(name, lambda: getattr(np, name)(g, **args))
            want = getattr(np, name)(a, **args)
            assert np.asarray(got).dtype == np.asarray(want).dtype
            np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)

    def test_reductions_of_0d_arrays(self, gpu):
        for value in (np.array(True), np.array(2.5, np.float32), np.array(-3, np.int64)):
            g = gp.asarray(value)
            for name in ("all", "any", "sum", "max", "min", "prod"):
                got = idiom(name, lambda: getattr(np, name)(g))
                want = getattr(np, name)(value)
                assert np.asarray(got).dtype == np.asarray(want).dtype and np.asarray(got) == want, name


# --- comparisons of whole arrays -----------------------------------------------------------------

LOGIC_A = np.array([1.0, np.nan, np.inf, -np.inf, 1e-9, 2.0, -0.0, 5.0])
LOGIC_B = np.array([1.0, np.nan, np.inf, np.inf, 0.0, 2.0000001, 0.0, 5.1])
LOGIC_CASES = {
    "isclose": lambda xp, a, b: xp.isclose(a, b),
    "isclose_equal_nan": lambda xp, a, b: xp.isclose(a, b, equal_nan=True),
    "isclose_tolerances": lambda xp, a, b: xp.isclose(a, b, rtol=0.05, atol=0),
    "isclose_scalar": lambda xp, a, b: xp.isclose(a, 5.0),
    "isclose_scalar_first": lambda xp, a, b: xp.isclose(2, b),
    "isclose_int": lambda xp, a, b: xp.isclose(a[4:].astype(np.int32), b[4:].astype(np.int64), atol=1),
    "isclose_0d": lambda xp, a, b: xp.isclose(a[5:6].reshape(()), b[5:6].reshape(())),
    "allclose": lambda xp, a, b: xp.allclose(a, b),
    "allclose_finite": lambda xp, a, b: xp.allclose(a[4:6], b[4:6]),
    "allclose_equal_nan": lambda xp, a, b: xp.allclose(a[:3], b[:3], equal_nan=True),
    "array_equal": lambda xp, a, b: xp.array_equal(a, a),
    "array_equal_nan": lambda xp, a, b: xp.array_equal(a, a, equal_nan=True),
    "array_equal_shapes": lambda xp, a, b: xp.array_equal(a, a[:3]),
    "array_equal_ints": lambda xp, a, b: xp.array_equal(a[4:].astype(np.int8), [0, 2, 0, 5], equal_nan=True),
    "array_equiv": lambda xp, a, b: xp.array_equiv(a[4:], a[4:].reshape(1, 4)),
    "array_equiv_no": lambda xp, a, b: xp.array_equiv(a[4:], a[:3]),
    "isposinf": lambda xp, a, b: xp.isposinf(a),
    "isneginf": lambda xp, a, b: xp.isneginf(b),
    "isreal": lambda xp, a, b: xp.isreal(a),
    "iscomplex": lambda xp, a, b: xp.iscomplex(a),
    "real_if_close": lambda xp, a, b: xp.real_if_close(a),
}


class TestLogic:
    @pytest.mark.parametrize("dtype", [np.float32, np.float64])
    @pytest.mark.parametrize("case", sorted(LOGIC_CASES))
    def test_like_numpy_on_the_device(self, gpu, case, dtype):
        a, b = LOGIC_A.astype(dtype), LOGIC_B.astype(dtype)
        want = LOGIC_CASES[case](np, a, b)
        for xp in (gp, np):  # gpupy's function, and NumPy's reaching it by __array_function__
            got = LOGIC_CASES[case](xp, gp.asarray(a), gp.asarray(b))
            if isinstance(want, np.ndarray):
                same(got, want)
            else:
                assert got == want and type(got) is type(want), (got, want)
        assert fallbacks() == {}


# --- boolean masks -------------------------------------------------------------------------------

class TestMasks:
    def test_boolean_mask_read(self, gpu):
        a = f32([-2, 3, -1, 4])
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            same(g[g > 0], a[a > 0])
            same(g[a > 0], a[a > 0])
            same(g[[True, False, True, False]], a[[True, False, True, False]])
        # Gathered on the device, or placed in NumPy by cost: never a fallback.
        assert fallbacks() == {}

    def test_boolean_mask_write(self, gpu):
        a = f32([-2, 3, -1, 4])
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            g[g < 0] = 0
            a[a < 0] = 0
            same(g, a)
            g[g > 3] = g[g > 3] * 10
            a[a > 3] = a[a > 3] * 10
        same(g, a)
        assert "__setitem__" not in fallbacks()  # a select on the device (gpupy/_indexing_writes.py)

    def test_mask_write_into_a_view(self, gpu):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            view = g[1:, ::2]
            view[view > 5] = -1
        a[1:, ::2][a[1:, ::2] > 5] = -1
        same(g, a)


# --- printing ------------------------------------------------------------------------------------

PRINTED = [
    np.array(3.5), np.array(7, np.int8), np.array(True), np.zeros(0, np.float32), np.zeros((2, 0)),
    np.arange(5, dtype=np.uint64), f32([0.1, 1e-9, 123456.7]), np.array([1 / 3, 2 / 3, np.nan, -np.inf]),
    np.arange(24).reshape(2, 3, 4) - 12, np.array([[True, False], [False, True]]), np.arange(2000.0),
    np.array([2**63 + 5], np.uint64), np.array([-0.0, 0.0]),
]


class TestPrinting:
    @pytest.mark.parametrize("a", PRINTED, ids=[f"{x.dtype}{x.shape}" for x in PRINTED])
    def test_repr_and_str_are_numpys(self, gpu, a):
        g = gp.asarray(a)
        assert repr(g) == repr(a)
        assert str(g) == str(a)
        assert f"{g}" == f"{a}"

    def test_printoptions_are_respected(self, gpu):
        a = np.array([1 / 3, 2e-8, 12345.678])
        g = gp.asarray(a)
        with np.printoptions(precision=2, suppress=True):
            assert repr(g) == repr(a) and str(g) == str(a)
        with gp.printoptions(threshold=3, edgeitems=1):
            assert repr(gp.arange(10)) == repr(np.arange(10))
        saved = np.get_printoptions()
        try:
            gp.set_printoptions(precision=1)
            assert str(g) == str(a) == "[3.3e-01 2.0e-08 1.2e+04]"
        finally:
            np.set_printoptions(**saved)
        assert fallbacks() == {}

    def test_format_strings(self, gpu):
        g0, n0 = gp.asarray(np.float32(2 / 3)), np.float32(2 / 3)
        assert f"{g0:.3f}" == f"{n0:.3f}" == "0.667"
        assert f"{gp.asarray(np.array(42)):>5d}" == f"{np.array(42):>5d}"
        assert "{} {!r}".format(gp.arange(3), gp.arange(3)) == "{} {!r}".format(np.arange(3), np.arange(3))
        with pytest.raises(TypeError) as ours:
            f"{gp.arange(3.0):.2f}"
        with pytest.raises(TypeError) as numpys:
            f"{np.arange(3.0):.2f}"
        assert str(ours.value) == str(numpys.value)


# --- pickling, copies ----------------------------------------------------------------------------

class TestPicklingAndCopies:
    @pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
    def test_pickle_round_trip(self, gpu, protocol):
        cases = [(gp.asarray(a), a) for a in (np.arange(6, dtype=np.int16).reshape(2, 3), np.array(2.5),
                                              f32([1, -0.0, np.nan]), np.array([True, False]))]
        cases.append((gp.asarray(np.arange(10.0))[::-3], np.arange(10.0)[::-3]))  # a strided view
        for g, a in cases:
            back = pickle.loads(pickle.dumps(g, protocol=protocol))
            same(back, a)
            assert np.array_equal(np.signbit(np.asarray(back)), np.signbit(a))
        lazy = gp.asarray(f32([1, 2])) * 3 + 1
        same(pickle.loads(pickle.dumps(lazy, protocol=protocol)), f32([4, 7]))
        assert fallbacks() == {}

    def test_copy_and_deepcopy_are_independent(self, gpu):
        g = gp.asarray(f32([1, 2, 3]))
        shallow, deep = copy.copy(g), copy.deepcopy({"x": [g]})["x"][0]
        for c in (shallow, deep):
            assert isinstance(c, gp.GpuArray) and c._owner_id != g._owner_id
        shallow[0] = 10
        deep[1] = 20
        g[2] = 30
        same(g, f32([1, 2, 30]))
        same(shallow, f32([10, 2, 3]))
        same(deep, f32([1, 20, 3]))

    def test_copy_method_and_order(self, gpu):
        g = gp.asarray(np.arange(6.0).reshape(2, 3))
        for order in ("C", "F", "A", "K"):
            c = g.copy(order=order)
            same(c, np.arange(6.0).reshape(2, 3))
            assert c._owner_id != g._owner_id


# --- containers ----------------------------------------------------------------------------------

class TestContainerProtocols:
    def test_len(self, gpu):
        assert len(gp.zeros((4, 2))) == 4 and len(gp.zeros(0)) == 0
        with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
            len(gp.asarray(np.array(1.0)))

    def test_in(self, gpu):
        g = gp.asarray(np.arange(6).reshape(2, 3))
        assert 4 in g and 7 not in g and 2.0 in g
        assert gp.asarray(np.array([3, 4, 5])) in g  # NumPy: (g == value).any()
        for value in ("a", None, object(), [0, 1, 2], 3.0):
            assert (value in g) == (value in np.arange(6).reshape(2, 3)), value
        assert (2 in gp.asarray(np.array(2))) and (3 not in gp.asarray(np.array(2)))
        assert fallbacks() == {}

    def test_iteration(self, gpu):
        a = f32([1.5, 2.5, 3.5])
        items = list(gp.asarray(a))
        assert items == list(a) and all(type(x) is np.float32 for x in items)
        rows = list(gp.asarray(np.arange(6).reshape(3, 2)))
        assert len(rows) == 3 and all(isinstance(r, gp.GpuArray) for r in rows)
        same(rows[2], [4, 5])
        with pytest.raises(TypeError, match="iteration over a 0-d array"):
            iter(gp.asarray(np.array(1.0))).__next__()
        x, y = gp.asarray(f32([7, 8]))
        assert (x, y) == (7, 8)
        assert fallbacks() == {}

    def test_tolist(self, gpu):
        for a in (np.arange(6).reshape(2, 3), f32([0.5, 1]), np.array([True, False]), np.array(3.25),
                  np.array([2**64 - 1], np.uint64)):
            got = gp.asarray(a).tolist()
            assert got == a.tolist()
            assert type(got) is type(a.tolist())
            first = got
            while isinstance(first, list):
                first = first[0]
            expected_first = a.tolist()
            while isinstance(expected_first, list):
                expected_first = expected_first[0]
            assert type(first) is type(expected_first)


class TestFlat:
    def test_read(self, gpu):
        a = np.arange(12.0).reshape(3, 4)
        g = gp.asarray(a)
        assert list(g.flat) == list(a.flat) and len(g.flat) == 12
        assert g.flat[5] == a.flat[5] and g.flat[-1] == a.flat[-1]
        same(g.flat[2:9:3], a.flat[2:9:3])
        same(np.array(g.flat), np.array(a.flat), gpu_array=False)
        same(g.T.flat[1:4], a.T.flat[1:4])
        same(g.flat.copy(), a.flat.copy())
        assert g.flat.base is g
        with pytest.raises(IndexError, match="index 12 is out of bounds for size 12"):
            g.flat[12]
        assert fallbacks() == {}

    def test_write(self, gpu):
        a = np.arange(12.0).reshape(3, 4)
        g = gp.asarray(a)
        for target in (a, g):
            target.flat[5] = -5
            target.flat[-1] = -1
            target.flat[1:3] = [10, 20]
            target.flat[6:8] = 99
        same(g, a)
        assert fallbacks() == {}

    def test_write_through_a_transposed_view(self, gpu):
        a = np.arange(6.0).reshape(2, 3)
        g = gp.asarray(a)
        g.T.flat[1] = 50
        a.T.flat[1] = 50
        same(g, a)

    def test_fancy_and_repeated_writes_fall_back_visibly(self, gpu):
        a = np.arange(8.0)
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            g.flat[[0, 3]] = 7
            g.flat[4:8] = [1, 2]  # repeated to fill, as NumPy does
            g.T.flat[1:3] = 0  # non-contiguous views have no 1-d view of their own
        a.flat[[0, 3]] = 7
        a.flat[4:8] = [1, 2]
        a.T.flat[1:3] = 0
        same(g, a)
        assert fallbacks()["flat.__setitem__"] == 2

    def test_assigning_flat(self, gpu):
        g = gp.zeros((2, 2))
        g.flat = 3
        same(g, np.full((2, 2), 3.0))


# --- truth values and conversions ----------------------------------------------------------------

def _outcome(f):
    """f()'s value, or its exception's type and message."""
    try:
        return f()
    except Exception as exc:  # noqa: BLE001 - comparing NumPy's outcome
        return type(exc), str(exc)


class TestTruthAndConversions:
    def test_truth_value_errors_are_numpys(self, gpu):
        for a in (f32([1, 2]), np.zeros(0), np.ones((2, 2))):
            assert _outcome(lambda: bool(gp.asarray(a))) == _outcome(lambda: bool(a))
            assert isinstance(_outcome(lambda: bool(a)), tuple)
        with pytest.raises(ValueError):
            if gp.asarray(f32([1, 2])) and True:
                pass
        assert bool(gp.asarray(np.array(0.0))) is False and bool(gp.asarray(f32([3]))) is True
        assert fallbacks() == {}

    @pytest.mark.parametrize("convert", [float, int, complex, operator.index])
    def test_scalar_conversions_are_numpys(self, gpu, convert):
        for a in (np.array(2.75), np.array(7, np.int32), f32([1.5]), np.array([[3]], np.int64), f32([1, 2]),
                  np.zeros(0)):
            ours, numpys = _outcome(lambda: convert(gp.asarray(a))), _outcome(lambda: convert(a))
            assert ours == numpys, (a, ours, numpys)
            assert type(ours) is type(numpys)
        assert fallbacks() == {}

    def test_index_use(self, gpu):
        n = gp.asarray(np.array(3))
        assert list(range(n)) == [0, 1, 2] and [10, 11, 12, 13][n] == 13

    def test_numpy_asarray_and_array(self, gpu):
        a = f32([1, 2, 3])
        g = gp.asarray(a)
        h = np.asarray(g)
        assert type(h) is np.ndarray and h.dtype == np.float32
        np.testing.assert_array_equal(h, a)
        # The host view is the array's bytes, as NumPy's asarray of an
        # ndarray: a write there is a write to the array (test_exports.py).
        assert h.flags.writeable
        h[0] = 5
        same(g, np.array([5, 2, 3], np.float32))
        h[0] = 1
        c = np.array(g)
        assert c.flags.writeable
        c[0] = 5
        same(g, a)
        assert np.asarray(g, dtype=np.float64).dtype == np.float64
        np.testing.assert_array_equal(np.asarray(gp.asarray(np.arange(6).reshape(2, 3)).T),
                                      np.arange(6).reshape(2, 3).T)
        assert fallbacks() == {}

    def test_gpupy_asarray_and_array(self, gpu):
        g = gp.asarray(f32([1, 2, 3]))
        assert gp.asarray(g) is g
        c = gp.array(g)
        assert c is not g and c._owner_id != g._owner_id
        c[0] = 9
        same(g, f32([1, 2, 3]))
        assert gp.asarray(g, dtype=np.float64).dtype == np.float64
        assert gp.array(g, ndmin=3).shape == (1, 1, 3)

    def test_isinstance(self, gpu):
        g = gp.zeros(3)
        assert isinstance(g, gp.ndarray) and isinstance(g, gp.GpuArray)
        assert not isinstance(np.zeros(3), gp.ndarray)
        assert gp.ndarray[np.float32, np.dtype[np.float32]] is not None  # typing subscripts work


# --- functions that write into their arguments ---------------------------------------------------

def _both(a, action):
    """Applies action to a GpuArray copy of `a` and to `a` (NumPy); returns the GpuArray."""
    g = gp.asarray(a.copy())
    with gp.fallback_mode("silent"):
        action(g)
    action(a)
    same(g, a)
    return g


class TestWritesReachTheGpuArray:
    def test_copyto_on_the_device(self, gpu):
        a = np.zeros((2, 3), np.float32)
        g = gp.asarray(a)
        for args, kwargs in ((([1, 2, 3],), {}), ((7.5,), {"where": a == 0}), ((np.arange(6.0).reshape(2, 3),),
                                                                                 {"casting": "same_kind"})):
            src = args[0]
            np.copyto(g, src, **{k: (gp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in kwargs.items()})
            np.copyto(a, src, **kwargs)
            same(g, a)
        np.copyto(g, gp.asarray(f32([4, 5, 6])), where=gp.asarray([True, False, True]))
        np.copyto(a, f32([4, 5, 6]), where=[True, False, True])
        same(g, a)
        assert fallbacks() == {}
        for bad in (lambda x: np.copyto(x, np.ones(4)), lambda x: np.copyto(x.astype(np.int32), 1.5),
                    lambda x: np.copyto(x.astype(np.uint8), 300)):
            # The installed NumPy's outcome (NumPy 2.0 stores 300 into uint8
            # wrapped around; later releases raise).
            ours, numpys = _outcome(lambda: bad(g)), _outcome(lambda: bad(a))
            assert type(ours) is type(numpys) and (ours is None or ours[0] is numpys[0]), (ours, numpys)

    @pytest.mark.parametrize("name, action", [
        ("put", lambda x: np.put(x, [0, 5], [-1, -2])),
        ("put", lambda x: x.put([1], 8)),
        ("place", lambda x: np.place(x, x > 2, [10, 20])),
        ("putmask", lambda x: np.putmask(x, x > 3, -x)),
        ("fill_diagonal", lambda x: np.fill_diagonal(x, 0)),
        ("put_along_axis", lambda x: np.put_along_axis(x, np.array([[0], [1]]), 99, axis=1)),
        ("add.at", lambda x: np.add.at(x, ([0, 0, 1], [1, 1, 2]), 1)),
        ("subtract.at", lambda x: np.subtract.at(x, (0, 0), 5)),
        ("nan_to_num", lambda x: np.nan_to_num(x, copy=False, nan=-1)),
        ("ndarray.partition", lambda x: x.partition(1)),
        ("gcd", lambda x: np.gcd(x.astype(np.int64), 4, out=np.zeros(x.shape, np.int64))),
    ])
    def test_in_place_functions(self, gpu, name, action):
        a = np.array([[3, 1, np.nan], [4, 1, 5]], dtype=np.float64)
        if name == "gcd":
            a = np.array([[3, 1, 2], [4, 1, 6]], dtype=np.float64)
        gp.reset_stats()
        _both(a, action)
        # Those gpupy writes on the device are no fallbacks; NumPy's writes
        # reach the array just the same.
        on_device = name in ("put", "place", "putmask", "add.at", "subtract.at", "nan_to_num", "ndarray.partition")
        assert (name in fallbacks()) != on_device, fallbacks()

    @pytest.mark.parametrize("action", [lambda x: x.sort(axis=0), lambda x: x.sort()], ids=["axis 0", "last axis"])
    def test_sort_in_place(self, gpu, action):
        # gpupy/_sorting.py: on the device, or placed in NumPy by cost; the
        # sorted values reach the array either way, and it is no fallback.
        a = np.array([[3, 1, np.nan], [4, 1, 5]], dtype=np.float64)
        gp.reset_stats()
        _both(a, action)
        assert "ndarray.sort" not in fallbacks(), fallbacks()

    def test_out_arguments(self, gpu):
        x = gp.asarray(np.arange(6))
        out = gp.zeros(6, dtype=np.int64)
        with gp.fallback_mode("silent"):
            r = np.gcd(x, 4, out=out)
            assert r is out
            same(out, np.gcd(np.arange(6), 4))
            r = np.lcm(x, 3, out)  # positional out
            assert r is out
            same(out, np.lcm(np.arange(6), 3))
            host_out = np.zeros(6, np.int64)
            r = np.gcd(x, 6, out=host_out)  # an ndarray out stays NumPy's
            assert r is host_out
            np.testing.assert_array_equal(host_out, np.gcd(np.arange(6), 6))
            pair = (gp.zeros(3), gp.zeros(3))
            r = np.modf(gp.asarray([1.5, -2.25, 3.0]), out=pair)
            assert r[0] is pair[0] and r[1] is pair[1]
            same(pair[0], np.modf([1.5, -2.25, 3.0])[0])

    def test_writes_into_a_view_reach_the_base(self, gpu):
        a = np.arange(12.0).reshape(3, 4)
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            np.put(g[1:, 1:], [0, 4], [-7, -8])
            np.fill_diagonal(g[:, 1:], 0)
            np.copyto(g[0], 5.0)
        np.put(a[1:, 1:], [0, 4], [-7, -8])
        np.fill_diagonal(a[:, 1:], 0)
        np.copyto(a[0], 5.0)
        same(g, a)

    def test_read_only_targets_raise_like_numpy(self, gpu):
        g = gp.broadcast_to(gp.asarray(f32([1, 2])), (3, 2))
        n = np.broadcast_to(f32([1, 2]), (3, 2))
        with gp.fallback_mode("silent"):
            for action in (lambda x: np.put(x, [0], 5), lambda x: np.copyto(x, 0), lambda x: x.sort()):
                ours, numpys = _outcome(lambda: action(g)), _outcome(lambda: action(n))
                assert ours[0] is numpys[0] is ValueError, (ours, numpys)
        same(g, n)

    def test_shared_owner_sees_writes(self, gpu):
        g = gp.asarray(np.arange(5.0))
        view = g[1:4]
        with gp.fallback_mode("silent"):
            np.put(g, [2], 100)
        assert view[1] == 100


# --- ndarray methods and attributes --------------------------------------------------------------

# The ndarray attribute gpupy leaves out on purpose: `base` (a GpuArray
# view has no Python base object).
NOT_PROVIDED = {"base"}


class TestNdarrayMethods:
    def test_every_public_method_and_attribute(self):
        missing = {n for n in dir(np.ndarray) if not n.startswith("_")} - set(dir(gp.GpuArray))
        assert missing == NOT_PROVIDED

    @pytest.mark.parametrize("call", [
        lambda x: x.sum(axis=1), lambda x: x.mean(), lambda x: x.max(axis=0), lambda x: x.min(),
        lambda x: x.argmax(), lambda x: x.cumsum(), lambda x: x.prod(axis=0), lambda x: x.any(), lambda x: x.all(),
        lambda x: x.std(), lambda x: x.var(axis=1), lambda x: x.round(1), lambda x: x.clip(0, 2),
        lambda x: x.take([0, 2]), lambda x: x.repeat(2, axis=0), lambda x: x.diagonal(), lambda x: x.trace(),
        lambda x: x.compress([True, False], axis=0), lambda x: x.argsort(axis=1), lambda x: x.nonzero(),
        lambda x: x.ravel().searchsorted(1.5), lambda x: x.conj(),
        lambda x: x.dot(x.T), lambda x: x.flatten(), lambda x: x.ravel(), lambda x: x.squeeze(),
        lambda x: x.swapaxes(0, 1), lambda x: x.astype(np.int16), lambda x: x.cumprod(axis=1),
        lambda x: x.argpartition(1, axis=1), lambda x: x.mT, lambda x: x.real,
        lambda x: x.imag, lambda x: x.view(np.int64), lambda x: x.getfield(np.float64),
        lambda x: x.byteswap(), lambda x: x.transpose(1, 0), lambda x: x.reshape(3, 2),
    ])
    def test_methods_match_numpy(self, gpu, call):
        a = np.array([[0.5, 1.25, 2.0], [3.5, 0.25, 1.5]])
        g = gp.asarray(a)
        with gp.fallback_mode("silent"):
            got = call(g)
        want = call(a)
        if isinstance(want, tuple):
            for x, y in zip(got, want):
                same(x, y)
        elif np.ndim(want) == 0 and not isinstance(got, gp.GpuArray):
            assert got == want and type(got) is type(want)
        else:
            same(got, want)

    def test_real_is_a_writable_view_imag_is_read_only(self, gpu):
        g = gp.asarray(f32([1, 2]))
        g.real[0] = 5
        same(g, f32([5, 2]))
        g.real = 7
        same(g, f32([7, 7]))
        with pytest.raises(ValueError, match="read-only"):
            g.imag[0] = 1
        with pytest.raises(TypeError):
            g.imag = 1

    def test_flags(self, gpu):
        a = np.arange(6.0).reshape(2, 3)
        g = gp.asarray(a)
        e, ge = np.zeros((0, 4)), gp.zeros((0, 4))  # empty: both orders, as NumPy says
        pairs = ((g, a), (g.T, a.T), (g[:, ::2], a[:, ::2]), (g[0], a[0]), (ge[:, ::2], e[:, ::2]),
                 (ge.T[::-1], e.T[::-1]), (g.reshape(2, 1, 3).transpose(1, 0, 2), a.reshape(2, 1, 3).transpose(1, 0, 2)))
        for x, y in pairs:
            for key in ("C_CONTIGUOUS", "F_CONTIGUOUS", "FNC", "FORC"):
                assert x.flags[key] == y.flags[key], key
            assert x.flags.c_contiguous == y.flags.c_contiguous and x.flags.writeable
        assert not gp.broadcast_to(g[0], (2, 3)).flags.writeable
        with pytest.raises(ValueError):
            g.flags.c_contiguous = False
        assert np.isfortran(g.T) == np.isfortran(a.T)

    def test_buffers_and_bytes(self, gpu):
        a = np.arange(4, dtype=np.int32)
        g = gp.asarray(a)
        assert g.tobytes() == a.tobytes() and bytes(g.data) == a.tobytes()
        assert memoryview(g).tobytes() == a.tobytes()
        assert pickle.loads(g.dumps()).tolist() == a.tolist()
        assert fallbacks() == {}

    def test_resize_in_place_is_refused(self, gpu):
        with pytest.raises(ValueError, match="resize"):
            gp.zeros(3).resize(4)
        with pytest.raises(ValueError, match="cannot delete"):
            del gp.zeros(3)[0]


class TestIdiomsOfPublicPrograms:
    """Idioms seen in public NumPy programs."""

    @pytest.mark.parametrize("args, dtype", [(("2016-07", "2016-08"), "datetime64[D]"), ((0, 5), "timedelta64[h]"),
                                             ((np.datetime64("2020-01-01"), np.datetime64("2020-01-04"),
                                               np.timedelta64(1, "D")), None)])
    def test_arange_of_dates_is_numpys_array(self, gpu, args, dtype):
        got = gp.arange(*args, dtype=dtype)
        want = np.arange(*args, dtype=dtype)
        assert type(got) is np.ndarray and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)

    def test_clearing_the_writeable_flag_makes_writes_raise(self, gpu):
        z = gp.zeros(5)
        z.flags.writeable = False
        assert not z.flags.writeable and not z.flags["W"] and not z[1:].flags.writeable
        for write in (lambda: z.__setitem__(0, 1), lambda: z.__iadd__(1), lambda: gp.add(z, 1, out=z),
                      lambda: gp.copyto(z, 3.0), lambda: z[1:].__setitem__(0, 1)):
            with pytest.raises(ValueError):
                write()
        np.testing.assert_array_equal(np.asarray(z), np.zeros(5))
        z.flags["WRITEABLE"] = True
        z[0] = 2
        z.setflags(write=False)
        with pytest.raises(ValueError):
            z[1] = 3
        np.testing.assert_array_equal(np.asarray(z), [2, 0, 0, 0, 0])

    def test_a_broadcast_view_cannot_become_writeable(self, gpu):
        # NumPy 2 lets it (writes then land on shared elements); gpupy
        # refuses clearly rather than define such writes.
        b = gp.broadcast_to(gp.arange(3), (2, 3))
        with pytest.raises(ValueError, match="WRITEABLE"):
            b.flags.writeable = True
        assert not b.flags.writeable

    def test_ndarray_subclass_view_idiom(self, gpu):
        class Tagged(np.ndarray):
            pass

        x = gp.asarray([1, 2, 3]).view(Tagged)
        assert type(x) is Tagged
        np.testing.assert_array_equal(x, [1, 2, 3])

    # pandas decides by type what a group key is (its own types or an
    # np.ndarray are values; anything else a function over the index):
    # gpupy/_pandas.py teaches it gpupy arrays, whichever is imported first.
    PANDAS_GROUPBY = (
        "import numpy as np, {first}, {second}\n"
        "import gpupy as gp, pandas as pd\n"
        "d = np.arange(6.0)\n"
        "s = gp.asarray(np.array([0, 1, 0, 1, 2, 2]))\n"
        "by_series = pd.Series(d, index=list('abcdef')).groupby(s).sum()\n"
        "by_frame = pd.DataFrame({{'x': d, 'y': -d}}).groupby(s * 10).mean()\n"
        "keys = pd.Series(d).groupby([s, np.array([1, 1, 1, 2, 2, 2])]).size()\n"
        "print(by_series.to_dict(), by_frame.to_dict(), {{tuple(map(int, k)): int(v) for k, v in keys.items()}})\n"
    )

    @pytest.mark.parametrize("first, second", [("gpupy", "pandas"), ("pandas", "gpupy")])
    def test_pandas_groups_by_a_gpupy_array(self, gpu, first, second):
        pytest.importorskip("pandas")
        from fresh_python import run_python

        proc = run_python(["-c", self.PANDAS_GROUPBY.format(first=first, second=second)])
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.strip() == (
            "{0: 2.0, 1: 4.0, 2: 9.0} "
            "{'x': {0: 1.0, 10: 2.0, 20: 4.5}, 'y': {0: -1.0, 10: -2.0, 20: -4.5}} "
            "{(0, 1): 2, (1, 1): 1, (1, 2): 1, (2, 2): 2}")

    def test_pandas_groups_by_a_lazy_gpupy_array_in_process(self, gpu):
        pd = pytest.importorskip("pandas")
        d = np.arange(8.0)
        key = gp.arange(8) % 3  # lazy: evaluated when pandas reads it
        got = pd.Series(d).groupby(key).max()
        want = pd.Series(d).groupby(np.arange(8) % 3).max()
        assert got.to_dict() == want.to_dict()
