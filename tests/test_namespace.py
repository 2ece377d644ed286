"""The whole NumPy namespace under gpupy: every public name of numpy (and of
its submodules) is reachable from gpupy; what gpupy implements runs on the
device, the rest is NumPy's with GpuArrays flushed in and array results
wrapped back; NumPy's own functions and ufuncs accept GpuArrays; GpuArrays,
ndarrays and scalars mix in every order.

Tests that compute run once per available driver (the `gpu` fixture, in
fallback mode "raise": whatever falls back is asked for explicitly with
gp.fallback_mode("silent")).
"""

import importlib
import inspect
import operator
import pickle
import sys
import types
import warnings

import numpy as np
import pytest

import gpupy as gp
from gpupy import _fallback, _submodules

PUBLIC = sorted(n for n in dir(np) if not n.startswith("_"))
SUBMODULES = sorted(n for n in PUBLIC if isinstance(getattr(np, n), types.ModuleType))
EXPECTED_POLICY = {
    "random": "wrap", "linalg": "wrap", "fft": "wrap", "polynomial": "wrap", "lib": "wrap", "emath": "wrap",
    "char": "wrap", "strings": "wrap", "rec": "wrap", "ma": "flush", "testing": "read",
    "exceptions": "same", "dtypes": "same", "typing": "same", "ctypeslib": "same", "f2py": "same", "core": "same",
}


def fallbacks():
    return gp.stats()["fallbacks_by_function"]


def f32(values):
    return np.asarray(values, dtype=np.float32)


# --- every name ----------------------------------------------------------------------------------

class TestEveryName:
    def test_every_public_numpy_name_exists(self):
        missing = [n for n in PUBLIC if not hasattr(gp, n)]
        assert missing == []

    def test_dir_lists_them(self):
        assert set(PUBLIC) <= set(dir(gp))

    def test_star_import_binds_numpys_names(self):
        ns = {}
        exec("from gpupy import *", ns)
        assert set(np.__all__) - {"__array_namespace_info__"} <= set(ns)
        assert ns["max"] is gp.max and ns["linalg"] is gp.linalg and ns["gpufloat32"] is np.float32

    @pytest.mark.parametrize("name", PUBLIC)
    def test_kind_of_each_name(self, name):
        value, ours = getattr(np, name), getattr(gp, name)
        if isinstance(value, types.ModuleType):
            assert isinstance(ours, types.ModuleType) and ours.__name__ == f"gpupy.{name}"
        elif isinstance(value, np.ufunc):
            assert callable(ours) and ours is not value
            assert isinstance(ours, gp.ufunc) or ours is gp._registry.FUNCTIONS.get(value)
        elif isinstance(value, type):
            expected = {"ndarray": gp.GpuArray, "ufunc": gp._ufuncs.ufunc}.get(name, value)
            if name == "vectorize":
                assert issubclass(ours, np.vectorize)
            else:
                assert ours is expected
        elif name in ("r_", "c_"):
            assert ours is not value and gp.is_fallback(ours)  # index helpers giving GpuArrays
        elif name in ("mgrid", "ogrid"):
            assert ours is not value and not gp.is_fallback(ours)  # NumPy's grid, a host placement
        elif callable(value):
            assert callable(ours)
        else:
            assert ours is value  # constants, np.newaxis, np.s_, ...

    def test_classes_and_constants_are_numpys(self):
        assert gp.ndarray is gp.GpuArray
        assert gp.pi is np.pi and gp.inf is np.inf and gp.newaxis is None and gp.e is np.e
        for name in ("float32", "int64", "bool", "dtype", "generic", "floating", "errstate", "finfo", "matrix"):
            assert getattr(gp, name) is getattr(np, name)
        assert isinstance(gp.sin, gp.ufunc) and isinstance(gp.gcd, gp.ufunc)

    def test_device_and_host_ufuncs(self):
        assert not gp.is_fallback(gp.sin) and not gp.is_fallback(gp.add)
        assert gp.abs is gp.absolute and gp.mod is gp.remainder and gp.true_divide is gp.divide
        assert gp.acos is gp.arccos and gp.bitwise_not is gp.invert and gp.pow is gp.power
        for name in ("gcd", "lcm", "ldexp", "frexp", "heaviside", "nextafter", "spacing"):
            assert gp.is_fallback(getattr(gp, name)), name
            assert "NumPy on the CPU" in repr(getattr(gp, name))
        for name in ("degrees", "radians", "conjugate", "divmod", "modf"):
            assert not gp.is_fallback(getattr(gp, name)), name
            assert "NumPy" not in repr(getattr(gp, name))

    def test_functions_pickle_as_themselves(self):
        for f in (gp.median, gp.sum, gp.linalg.inv, gp.random.rand, gp.random.default_rng, gp.gcd, gp.degrees,
                  gp.conjugate, gp.vectorize, gp.result_type):
            assert pickle.loads(pickle.dumps(f)) is f

    def test_gpupy_implementations_answer_for_numpy(self):
        # np.f(gpu_array) reaches the very function gpupy.f is.
        for name in ("sum", "concatenate", "where", "zeros_like", "copyto", "result_type", "median"):
            impl = gp._registry.FUNCTIONS.get(getattr(np, name)) or gp._registry.WRAPPERS.get(getattr(np, name))
            # (gpupy.f may be the implementation wrapped by the hand-over to
            # other array libraries, _deferral.deferring)
            assert impl is inspect.unwrap(getattr(gp, name)), name


# --- submodules ----------------------------------------------------------------------------------

class TestSubmodules:
    def test_the_policies_are_as_documented(self):
        assert SUBMODULES == sorted(EXPECTED_POLICY)
        assert {n: _submodules.policy(n) for n in SUBMODULES} == EXPECTED_POLICY

    @pytest.mark.parametrize("name", SUBMODULES)
    def test_every_name_of_every_submodule(self, name):
        module = importlib.import_module(f"gpupy.{name}")
        assert gp.__dict__[name] is module and sys.modules[f"gpupy.{name}"] is module
        numpy_module = getattr(np, name)
        # Every name NumPy's module has, deprecated ones too: reading one
        # (numpy.char.chararray in NumPy 2.5) warns from NumPy itself.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            self._check_names(name, module, numpy_module)

    def _check_names(self, name, module, numpy_module):
        for attr in (a for a in dir(numpy_module) if not a.startswith("_")):
            value, ours = getattr(numpy_module, attr), getattr(module, attr)
            if isinstance(value, types.ModuleType) and value.__name__.startswith("numpy."):
                assert isinstance(ours, types.ModuleType) and ours.__name__ == f"gpupy.{name}.{attr}"
            elif EXPECTED_POLICY[name] == "same" or isinstance(value, type) or not callable(value):
                if not (name == "random" and attr in ("Generator", "RandomState")):
                    # (numpy.f2py makes a new `test` object at each access)
                    fresh = getattr(numpy_module, attr) is not value
                    assert ours is value or (fresh and type(ours) is type(value)), f"{name}.{attr}"
            else:
                assert callable(ours), f"{name}.{attr}"
        assert set(a for a in dir(numpy_module) if not a.startswith("_")) <= set(dir(module))

    def test_wrapped_functions_are_fallbacks_or_gpupys(self):
        assert gp.is_fallback(gp.fft.fft) and gp.is_fallback(gp.random.rand)
        assert gp.fft.fft.__module__ == "gpupy.fft" and gp.fft.fft.__name__ == "fft"
        assert gp.fft.fft.__wrapped__ is np.fft.fft
        # numpy.linalg is gpupy's: LAPACK on the host is a placement, not a fallback.
        assert not gp.is_fallback(gp.linalg.inv)
        assert gp.linalg.inv.__module__ == "gpupy.linalg" and gp.linalg.inv.__name__ == "inv"
        assert gp.linalg.inv.__wrapped__ is np.linalg.inv

    def test_import_statements_at_any_depth(self):
        import gpupy.linalg as la
        import gpupy.polynomial.chebyshev as cheb
        from gpupy.lib.stride_tricks import sliding_window_view
        from gpupy.random import default_rng

        assert la is gp.linalg and cheb is gp.polynomial.chebyshev and default_rng is gp.random.default_rng
        assert sliding_window_view is gp.lib.stride_tricks.sliding_window_view
        # Mirrors never load NumPy's source files a second time under gpupy's name.
        for mod_name, module in list(sys.modules.items()):
            if mod_name.startswith("gpupy.") and not mod_name.startswith("gpupy._"):
                assert isinstance(module, _submodules._MirrorModule), mod_name
        assert gp.emath.__name__ == "gpupy.emath"
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("gpupy.no_such_module")
        with pytest.raises(AttributeError, match="has no attribute"):
            gp.no_such_name  # noqa: B018
        with pytest.raises(AttributeError):
            gp.linalg.no_such_name  # noqa: B018

    def test_pass_through_modules(self):
        assert gp.exceptions.AxisError is np.exceptions.AxisError
        assert gp.linalg.LinAlgError is np.linalg.LinAlgError
        assert gp.dtypes.Float32DType is np.dtypes.Float32DType
        assert gp.ctypeslib.as_array is np.ctypeslib.as_array
        assert gp.testing.assert_raises is np.testing.assert_raises
        assert gp.polynomial.Polynomial is np.polynomial.Polynomial


# --- results -------------------------------------------------------------------------------------

class TestResults:
    def test_array_results_of_device_dtypes_are_gpuarrays(self, gpu):
        with gp.fallback_mode("silent"):
            r = gp.random.rand(3)
            assert isinstance(r, gp.GpuArray) and r.dtype == np.float64 and r.shape == (3,)
            i = gp.random.randint(0, 5, size=4)
            assert isinstance(i, gp.GpuArray) and i.dtype == np.int64
            f = gp.fft.fftfreq(4)
            assert isinstance(f, gp.GpuArray)
            np.testing.assert_array_equal(np.asarray(f), np.fft.fftfreq(4))
            m = gp.median(gp.asarray(f32([3, 1, 2])))
            assert m == 2

    def test_results_the_device_cannot_hold_stay_numpys(self, gpu):
        g = gp.asarray(f32([1, 2, 3, 4]))
        with gp.fallback_mode("silent"):
            spectrum = gp.fft.fft(g)
            assert type(spectrum) is np.ndarray and spectrum.dtype == np.complex64
            np.testing.assert_allclose(spectrum, np.fft.fft(f32([1, 2, 3, 4])))
            assert gp.strings.upper(["ab"]).dtype == np.dtype("<U2")  # (numpy.char: deprecated in NumPy 2.5)
            with pytest.warns(PendingDeprecationWarning):
                assert type(gp.asmatrix(g)) is np.matrix
            masked = gp.ma.masked_greater(g, 2)
            assert isinstance(masked, np.ma.MaskedArray) and masked.count() == 2

    def test_tuples_lists_and_namedtuples(self, gpu):
        g = gp.asarray(np.arange(6.0).reshape(2, 3))
        with gp.fallback_mode("silent"):
            svd = gp.linalg.svd(g)
            assert type(svd).__name__ == "SVDResult" and all(isinstance(x, gp.GpuArray) for x in svd)
            np.testing.assert_allclose(np.asarray(svd.S), np.linalg.svd(np.arange(6.0).reshape(2, 3)).S)
            counts, edges = gp.histogram(g, bins=3)
            assert isinstance(counts, gp.GpuArray) and isinstance(edges, gp.GpuArray)
            uc = gp.unique_counts(gp.asarray([1, 1, 2]))
            assert type(uc).__name__ == "UniqueCountsResult"
            np.testing.assert_array_equal(np.asarray(uc.counts), [2, 1])
            parts = gp.array_split(g.ravel(), 4)
            assert isinstance(parts, list) and all(isinstance(p, gp.GpuArray) for p in parts)

    def test_gpuarrays_inside_containers_are_flushed(self, gpu):
        g = gp.asarray(f32([1, -2]))
        flushed = _fallback.to_numpy({"a": g, "b": [g, (g, 3)], "c": "text"})
        assert type(flushed["a"]) is np.ndarray and type(flushed["b"][1][0]) is np.ndarray
        assert flushed["b"][1][1] == 3 and flushed["c"] == "text"
        with gp.fallback_mode("silent"):
            blocked = gp.block([[g, g], [g, g]])
            np.testing.assert_array_equal(np.asarray(blocked), np.block([[f32([1, -2])] * 2] * 2))
            chosen = np.select([g > 0, g < 0], [g, -g * 10])
            assert isinstance(chosen, gp.GpuArray)
            np.testing.assert_array_equal(np.asarray(chosen), f32([1, 20]))
            total = gp.einsum("i,i->", g, g)
            assert float(total) == 5

    def test_numpy_views_come_back_as_views(self, gpu):
        base = np.arange(12.0).reshape(3, 4)
        g = gp.asarray(base)
        with gp.fallback_mode("silent"):
            r = np.rot90(g)
            w = gp.lib.stride_tricks.as_strided(g, shape=(2, 2), strides=(8 * 4, 8))
        assert isinstance(r, gp.GpuArray) and r._owner_id == g._owner_id and w._owner_id == g._owner_id
        np.testing.assert_array_equal(np.asarray(r), np.rot90(base))
        np.testing.assert_array_equal(np.asarray(w), [[0, 1], [4, 5]])
        r[0, 0] = -1  # reaches g, as through NumPy's view
        w[1, 1] = -5
        expected = base.copy()
        np.rot90(expected)[0, 0] = -1
        expected[1, 1] = -5
        np.testing.assert_array_equal(np.asarray(g), expected)
        assert fallbacks().keys() == {"rot90", "lib.stride_tricks.as_strided"}


# --- random --------------------------------------------------------------------------------------

class TestRandom:
    def test_generator_streams_equal_numpys(self, gpu):
        with gp.fallback_mode("silent"):
            rng = gp.random.default_rng(42)
            ref = np.random.default_rng(42)
            assert isinstance(rng, np.random.Generator) and isinstance(rng, gp.random.Generator)
            for draw in (lambda r: r.random(5), lambda r: r.normal(size=(2, 3)), lambda r: r.integers(0, 9, 4),
                         lambda r: r.choice(10, 3), lambda r: r.permutation(5)):
                got, want = draw(rng), draw(ref)
                assert isinstance(got, gp.GpuArray) and got.dtype == want.dtype
                np.testing.assert_array_equal(np.asarray(got), want)
            x = rng.random()
            assert isinstance(x, float) and x == ref.random()

    def test_generator_pickles_and_spawns(self, gpu):
        with gp.fallback_mode("silent"):
            rng = gp.random.default_rng(7)
            rng.random(3)
            clone = pickle.loads(pickle.dumps(rng))
            assert type(clone) is gp.random.Generator
            np.testing.assert_array_equal(np.asarray(clone.random(4)), np.asarray(rng.random(4)))
            children = rng.spawn(2)
            assert all(type(c) is gp.random.Generator for c in children)
            assert gp.random.default_rng(rng) is rng
            assert type(gp.random.default_rng(np.random.default_rng(1))) is gp.random.Generator
            assert type(gp.random.Generator(gp.random.PCG64(1))) is gp.random.Generator

    def test_legacy_functions_share_numpys_global_state(self, gpu):
        with gp.fallback_mode("silent"):
            gp.random.seed(3)
            a = gp.random.rand(4)
            np.random.seed(3)
            np.testing.assert_array_equal(np.asarray(a), np.random.rand(4))
            rs = gp.random.RandomState(5)
            np.testing.assert_array_equal(np.asarray(rs.randn(3)), np.random.RandomState(5).randn(3))
            clone = pickle.loads(pickle.dumps(rs))
            np.testing.assert_array_equal(np.asarray(clone.rand(2)), np.asarray(rs.rand(2)))

    def test_one_value_draws_are_numpys_own_calls_counted_as_placements(self, gpu):
        # A loop drawing one number per step (a maze, a random walk) pays
        # NumPy's cost: NumPy's own call and result, a host placement; an
        # array of draws is still made by NumPy and handed over (a fallback).
        gp.reset_stats()
        with gp.fallback_mode("raise"):
            draws = (lambda m: m.randint(0, 10), lambda m: m.randint(5), lambda m: m.random(),
                     lambda m: m.normal(1.0, 2.0), lambda m: m.uniform(high=3), lambda m: m.choice(7),
                     lambda m: m.randint(0, 10, dtype=np.int16), lambda m: m.randint(0, 10, None))
            # (gpupy's legacy draws share NumPy's global state: one stream each, one after the other)
            gp.random.seed(11)
            got = [draw(gp.random) for draw in draws]
            np.random.seed(11)
            want = [draw(np.random) for draw in draws]
            assert [type(g) for g in got] == [type(w) for w in want] and got == want
            rng, ref = gp.random.default_rng(5), np.random.default_rng(5)
            for draw in (lambda r: r.integers(0, 9), lambda r: r.random(), lambda r: r.standard_normal(),
                         lambda r: r.choice(4)):
                got, want = draw(rng), draw(ref)
                assert type(got) is type(want) and got == want
            with pytest.raises(gp.FallbackError):
                gp.random.randint(0, 10, size=3)  # an array: made by NumPy, a fallback
            with pytest.raises(gp.FallbackError):
                rng.integers(0, 9, 2)
            with pytest.raises(gp.FallbackError):
                gp.random.normal(gp.zeros(3))  # a gpupy array argument broadcasts
        s = gp.stats()
        assert s["fallbacks"] == 0
        placed = s["host_placements_by_function"]
        assert placed["random.randint"] == 4 and placed["random.Generator.integers"] == 1
        assert placed["random.Generator.random"] == 1 and placed["random.choice"] == 1

    def test_shuffles_write_back(self, gpu):
        with gp.fallback_mode("silent"):
            g = gp.arange(10)
            gp.random.seed(1)
            gp.random.shuffle(g)
            expected = np.arange(10)
            np.random.seed(1)
            np.random.shuffle(expected)
            np.testing.assert_array_equal(np.asarray(g), expected)
            h = gp.arange(8).reshape(4, 2)
            gp.random.default_rng(2).shuffle(h)
            expected = np.arange(8).reshape(4, 2)
            np.random.default_rng(2).shuffle(expected)
            np.testing.assert_array_equal(np.asarray(h), expected)
            p = gp.random.default_rng(3).permuted(gp.arange(6), out=None)
            assert sorted(np.asarray(p).tolist()) == list(range(6))


# --- NumPy's functions on GpuArrays --------------------------------------------------------------

class Foreign:
    """Another library's array-like: NumPy must let it handle mixed calls."""

    __array_priority__ = 1000

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return "foreign ufunc"

    def __array_function__(self, func, types, args, kwargs):
        return "foreign function"


class TestProtocols:
    def test_numpy_functions_reach_the_device(self, gpu):
        g = gp.asarray(f32([1, 2, 3, 4]))
        s = np.sum(g)
        assert isinstance(s, gp.GpuArray) and float(s) == 10
        assert isinstance(np.sin(g), gp.GpuArray)
        assert isinstance(np.concatenate([g, g]), gp.GpuArray)
        assert isinstance(np.zeros_like(g), gp.GpuArray) and np.zeros_like(g).dtype == np.float32
        assert isinstance(np.add(g, 1), gp.GpuArray)
        assert fallbacks() == {}

    def test_numpy_functions_gpupy_lacks_fall_back(self, gpu):
        g = gp.asarray(f32([1, 2, 3, 4]))
        with gp.fallback_mode("silent"):
            assert np.array_equal(np.union1d(gp.asarray([3, 1, 3]), gp.asarray([1])), [1, 3])
            assert isinstance(np.gcd(gp.arange(4), 2), gp.GpuArray)
            assert isinstance(np.add.outer(g, g, dtype=np.float64), gp.GpuArray)
            assert np.nanmedian(g) == 2.5
        assert set(fallbacks()) == {"union1d", "gcd", "add.outer", "nanmedian"}

    def test_foreign_array_likes_are_deferred_to(self, gpu):
        g = gp.asarray(f32([1, 2]))
        assert np.add(g, Foreign()) == "foreign ufunc"
        assert np.concatenate([g, Foreign()]) == "foreign function"

    def test_like_argument(self, gpu):
        g = gp.asarray(f32([1, 2]))
        z = np.zeros(3, like=g)
        assert isinstance(z, gp.GpuArray) and z.dtype == np.float64
        a = np.asarray([1, 2], like=g)
        assert isinstance(a, gp.GpuArray)


# --- mixing GpuArrays, ndarrays and scalars ------------------------------------------------------

BINARY = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow,
          operator.lt, operator.le, operator.eq, operator.ne, operator.gt, operator.ge]
INT_ONLY = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


def _operands(dtype):
    values = np.array([1, 2, 3, 4], dtype=dtype)
    return {
        "gpu": lambda: gp.asarray(values),
        "ndarray": lambda: values.copy(),
        "int": lambda: 2,
        "float": lambda: 2.0,
        "npscalar": lambda: np.dtype(dtype).type(2),
        "ndarray0d": lambda: np.array(2, dtype=dtype),
    }


def _host(x):
    return np.asarray(x) if isinstance(x, gp.GpuArray) else x


class TestMixing:
    @pytest.mark.parametrize("dtype", [np.float32, np.int32])
    def test_every_order_gives_a_gpuarray(self, gpu, dtype):
        ops = BINARY + (INT_ONLY if np.dtype(dtype).kind == "i" else [])
        kinds = _operands(dtype)
        with gp.fallback_mode("silent"):
            for op in ops:
                for left in kinds:
                    for right in kinds:
                        if "gpu" not in (left, right):
                            continue
                        if np.dtype(dtype).kind == "i" and "float" in (left, right) and op in INT_ONLY:
                            continue
                        a, b = kinds[left](), kinds[right]()
                        with np.errstate(all="ignore"):
                            want = op(_host(a), _host(b))
                            got = op(a, b)
                        where = f"{op.__name__}({left}, {right})"
                        assert isinstance(got, gp.GpuArray), where
                        assert got.dtype == want.dtype, where
                        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, err_msg=where)

    def test_arithmetic_mixes_stay_on_the_device(self, gpu):
        values = f32([1, 2, 3, 4])
        g, n = gp.asarray(values), values.copy()
        results = [g + n, n + g, n - g, g * 2, 2.5 * g, np.float32(3) * g, n / g, g < n, n >= g, g == 2,
                   np.array(2, np.float32) + g, -g + n]
        assert all(isinstance(r, gp.GpuArray) for r in results)
        m = gp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
        nm = np.ones((3, 2), np.float32)
        for r in (m @ nm, nm @ m, m @ m.T):
            assert isinstance(r, gp.GpuArray)
        np.testing.assert_array_equal(np.asarray(nm @ m), nm @ np.asarray(m))
        assert fallbacks() == {}

    def test_in_place_keeps_the_left_type(self, gpu):
        values = f32([1, 2, 3])
        g = gp.array(values)
        n = values.copy()
        g += n
        assert isinstance(g, gp.GpuArray)
        with gp.fallback_mode("silent"):
            n += g  # NumPy writes into its own array
        assert type(n) is np.ndarray
        np.testing.assert_array_equal(n, values * 3)
        m = gp.asarray(np.eye(2, dtype=np.float32))
        before = m
        m @= gp.asarray(np.full((2, 2), 2, np.float32))
        assert m is before
        np.testing.assert_array_equal(np.asarray(m), np.full((2, 2), 2))

    def test_matmul_in_place_refuses_a_cast_in_numpys_and_the_bindings_words(self, gpu):
        """`a @= b` (written in Python) checks its cast with the bindings'
        check of a ufunc's out=: one wording, NumPy's."""
        m = gp.zeros((2, 2), np.int64)
        with pytest.raises(TypeError) as ours:
            m @= gp.ones((2, 2))
        with pytest.raises(TypeError) as bindings:
            gp.multiply(gp.ones((2, 2)), 1.0, out=gp.zeros((2, 2), np.int64))
        n = np.zeros((2, 2), np.int64)
        with pytest.raises(TypeError) as numpys:
            n @= np.ones((2, 2))
        assert str(ours.value) == str(numpys.value)
        assert str(ours.value) == str(bindings.value).replace("'multiply'", "'matmul'")

    def test_divmod_on_the_device(self, gpu):
        g = gp.asarray(f32([7, -7, 5.5]))
        q, r = divmod(g, 2)
        nq, nr = divmod(f32([7, -7, 5.5]), 2)
        np.testing.assert_array_equal(np.asarray(q), nq)
        np.testing.assert_array_equal(np.asarray(r), nr)
        q, r = np.divmod(3, g)
        np.testing.assert_array_equal(np.asarray(q), np.divmod(3, f32([7, -7, 5.5]))[0])
        assert fallbacks() == {}
