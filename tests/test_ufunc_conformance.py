"""Every elementwise ufunc gpupy exposes, against NumPy, on every driver.

For each ufunc and each dtype a GpuArray can hold, the operands are the
dtype's special values (NaN, +-inf, +-0, denormals, extremes, INT_MIN, ...;
every pair of them for binary ufuncs) followed by random values over the
ufunc's natural domain. The expected outcome follows from NumPy's own loop
choice and the driver's declared capabilities (conftest.declared_tables):

* NumPy has no loop: gpupy raises the same exception class;
* the loop's dtypes are ones gpupy holds and the driver declares the op:
  the work runs on the device (fallback mode "raise" proves it) and the
  result equals NumPy's -- bit for bit, or within a measured ulp bound for
  the transcendental functions;
* otherwise gpupy must refuse in "raise" mode (FallbackError) and, in
  "silent" mode, give NumPy's result and count the fallback.

The layouts test repeats every ufunc in float32 (int32 for the integer-only
ones) over 0-d, empty, strided, negative-stride, transposed, broadcast,
Python-scalar and multi-block operands.
"""

import numpy as np
import pytest

import gpupy as gp

# Every dtype a GpuArray can hold (src/dtypes.def).
ALL_DTYPES = tuple(np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                         "uint64", "float16", "float32", "float64"))


def holdable(dtype):
    return np.dtype(dtype) in ALL_DTYPES


UFUNCS = list(gp._core.ufunc_names())
ARITY = {name: gp._core.ufunc_arity(name) for name in UFUNCS}

# Functions evaluated by polynomial kernels (GLSL) or the C library
# (software driver) rather than one correctly rounded IEEE operation:
# compared within an ulp bound. Everything else must be bit-exact.
TRANSCENDENTAL = {"cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
                  "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh", "tanh",
                  "arcsinh", "arccosh", "arctanh", "power"}

# Maximum distance to NumPy in ulps of the result dtype, measured with this
# file's operands (specials + 1500 random values per function, seeds
# fixed) on Mesa 22.3.6 llvmpipe / LLVM 15, NumPy 2.4, x86-64 with AVX2;
# the bound asserted is the measured maximum plus one ulp of margin
# (MARGIN), so a regression of two ulps fails. A function missing from a
# table must be exact. Only pairs the driver declares are listed: the rest
# run in NumPy and are exact by construction.
MEASURED_ULP = {
    ("opengl", "float32"): {
        "arccos": 1, "arccosh": 1, "arcsin": 2, "arcsinh": 1, "arctan": 1, "arctan2": 2, "arctanh": 1, "cbrt": 2,
        "cos": 1, "cosh": 2, "exp": 2, "exp2": 1, "expm1": 2, "hypot": 0, "log": 1, "log10": 2, "log1p": 2,
        "log2": 1, "logaddexp": 1, "logaddexp2": 2, "power": 1, "sin": 1, "sinh": 1, "tan": 2, "tanh": 1},
    ("software", "float32"): {
        "arccos": 2, "arccosh": 1, "arcsin": 2, "arcsinh": 1, "arctan": 1, "arctan2": 2, "arctanh": 1, "cbrt": 2,
        "cos": 1, "cosh": 2, "exp": 2, "exp2": 1, "expm1": 2, "hypot": 0, "log": 1, "log10": 2, "log1p": 2,
        "log2": 1, "logaddexp": 0, "logaddexp2": 0, "power": 1, "sin": 1, "sinh": 2, "tan": 2, "tanh": 2},
    ("software", "float64"): {
        "arccos": 1, "arccosh": 1, "arcsin": 1, "arcsinh": 1, "arctan": 0, "arctan2": 1, "arctanh": 1, "cbrt": 2,
        "cos": 0, "cosh": 1, "exp": 1, "exp2": 1, "expm1": 1, "hypot": 0, "log": 0, "log10": 1, "log1p": 1,
        "log2": 0, "logaddexp": 0, "logaddexp2": 0, "power": 1, "sin": 0, "sinh": 1, "tan": 1, "tanh": 2},
}
MARGIN = 1

# NumPy is not consistent with itself: its SIMD loops (contiguous operands)
# and its scalar C-library loops (e.g. negative strides, which is how the
# core hands a reversed view to NumPy) differ by up to 2 ulps for these
# functions in float32 and float64 -- measured on this file's operands,
# np.f(x) against np.f(x[::-1].copy()[::-1]), NumPy 2.4 on x86-64 (AVX2).
# Where gpupy hands the work to NumPy, that is the bound.
NUMPY_LAYOUT_ULP = 2


# IEEE 754 leaves the sign of maximum(+0, -0) open, and NumPy's own loops
# answer differently in their SIMD body and scalar tail, so these compare
# zeros by value.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin"}


# float16: NumPy and gpupy both compute in float32 and round to float16
# (NumPy with its own float32 functions): two roundings of values within a
# few float32 ulps of the exact result differ only where it lies that close
# to a float16 midpoint, by the step across it. Derived, not measured.
FLOAT16_MATH_ULP = 1


def ulp_bound(driver, name, dtype):
    if name not in TRANSCENDENTAL:
        return 0
    if np.dtype(dtype) == np.float16:
        return FLOAT16_MATH_ULP
    measured = MEASURED_ULP.get((driver, np.dtype(dtype).name), {})
    return measured.get(name, 0) + MARGIN if name in measured else 0


# --- operands -------------------------------------------------------------------------------------

def float_specials(dt):
    fi = np.finfo(dt)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 7.5, -7.5,
              0.1, np.pi, -np.pi, 100.0, -100.0, 1e10, -1e10, fi.max, -fi.max, fi.tiny, -fi.tiny,
              fi.smallest_subnormal, -fi.smallest_subnormal, fi.tiny / 3, 16777217.0]
    if dt == np.float16:  # (1e10 and 16777217 are its infinities; these are inside its range)
        values += [2049.0, -4097.0, 65504.0 / 3]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(dt)


def int_specials(dt):
    if dt == np.bool_:
        return np.array([False, True])
    info = np.iinfo(dt)
    values = [0, 1, -1, 2, -2, 3, -3, 7, 100, -100, info.bits - 1, info.bits, info.bits + 1,
              info.max, info.max - 1, info.min, info.min + 1]
    return np.array(sorted({v for v in values if info.min <= v <= info.max}), dtype=dt)


def specials(dt):
    dt = np.dtype(dt)
    return float_specials(dt) if dt.kind == "f" else int_specials(dt)


# Random operands: uniform over (-s, s) where the function has a natural
# range, else magnitudes spread over many binades.
DOMAIN = {"arcsin": 1.0, "arccos": 1.0, "arctanh": 1.0, "exp": 90.0, "exp2": 130.0, "expm1": 90.0, "sinh": 90.0,
          "cosh": 90.0, "tanh": 10.0, "sin": 100.0, "cos": 100.0, "tan": 100.0, "power": 8.0, "logaddexp": 100.0,
          "logaddexp2": 150.0}
N_RANDOM = 1500


def random_values(name, dt, n, rng):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if name in ("left_shift", "right_shift", "power"):
            return rng.integers(max(info.min, -3), min(info.max, info.bits + 3), n, endpoint=True).astype(dt)
        return rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    scale = DOMAIN.get(name)
    with np.errstate(over="ignore"):  # (float16 operands: beyond 65504, infinities)
        if scale is not None:
            return rng.uniform(-scale, scale, n).astype(dt)
        lo, hi = (-17, 11) if dt == np.float16 else (-40, 40)  # float16: 2^-24 to 65504
        magnitude = np.exp(rng.uniform(lo, hi, n))
        return (magnitude * rng.choice([-1.0, 1.0], n)).astype(dt)


def operands(name, dt, seed=1234):
    """NumPy operands for ufunc `name` with all operands of dtype dt."""
    dt = np.dtype(dt)
    rng = np.random.default_rng(seed + UFUNCS.index(name) * 31 + ALL_DTYPES.index(dt))
    s = specials(dt)
    arity = ARITY[name]
    if arity == 1:
        cols = [np.concatenate([s, random_values(name, dt, N_RANDOM, rng)])]
    else:
        cols = [np.concatenate([np.repeat(s, len(s)), random_values(name, dt, N_RANDOM, rng)]),
                np.concatenate([np.tile(s, len(s)), random_values(name, dt, N_RANDOM, rng)])]
    if name == "power" and dt.kind in "iu":
        # NumPy raises for negative integer exponents (gpupy sends those
        # powers to NumPy); powers of big bases wrap, which is fine.
        cols[1] = np.abs(cols[1] % 40).astype(dt)
    if name == "reciprocal" and dt.kind in "iu":
        # 1 / 0 converted to an integer is undefined in C: NumPy's answer
        # is the CPU's conversion of inf, not a semantic one.
        cols[0] = np.where(cols[0] == 0, 1, cols[0]).astype(dt)
    return cols


# --- checking one call ---------------------------------------------------------------------------

def public_class(exc):
    for cls in type(exc).__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions"):
            return cls
    return Exception


def evaluated(result):
    """A gpupy result (or a tuple of them) with its values computed."""
    for r in result if isinstance(result, tuple) else (result,):
        if isinstance(r, gp.GpuArray):
            r.__array__()
    return result


def check_ufunc(gpu, name, gp_args, np_args):
    """Runs ufunc `name` on gpupy and NumPy operands and compares."""
    np_fn, gp_fn = getattr(np, name), getattr(gp, name)
    try:
        with np.errstate(all="ignore"):
            expected = np_fn(*np_args)
    except Exception as exc:  # noqa: BLE001
        with pytest.raises(public_class(exc)):
            with np.errstate(all="ignore"):
                np.asarray(gp_fn(*gp_args))
        return
    path = gpu.expected_path(name, np_args)
    expected = np.asarray(expected)
    if path == "device":
        # NumPy's floating-point warnings too (test_errstate.py), from
        # building and evaluating the result.
        results = []
        got_warnings = gpu.warnings_of(lambda: results.append(evaluated(gp_fn(*gp_args))))
        got = results[0]
        gpu.assert_same(got, expected, inputs=np_args, ulp=ulp_bound(gpu.name, name, expected.dtype),
                        zero_sign=name not in ZERO_SIGN_FREE, flushed=gpu.numpys_result_flushed(np_fn, *np_args))
        # NumPy's logaddexp also warns of an overflow inside (x - y) where
        # the result is finite (test_errstate.internal_overflow).
        ignore = ("overflow",) if name in ("logaddexp", "logaddexp2") else ()
        gpu.assert_warns_as_numpy(got_warnings, np_fn, *np_args, ignore=ignore)
        s = gp.stats()
        assert s["fallbacks"] == 0 and s["host_evaluations"] == 0
        return
    # Work gpupy hands to NumPy: refused in "raise" mode ...
    with pytest.raises(gp.FallbackError):
        with np.errstate(all="ignore"):
            np.asarray(gp_fn(*gp_args))
    # ... and NumPy's exact result, counted, in "silent" mode.
    gp.set_fallback("silent")
    try:
        with np.errstate(all="ignore"):
            got = gp_fn(*gp_args)
            bound = NUMPY_LAYOUT_ULP + MARGIN if name in TRANSCENDENTAL and expected.dtype.kind == "f" else 0
            gpu.assert_same(got, expected, inputs=np_args, gpu_array=holdable(expected.dtype), ulp=bound,
                            zero_sign=name not in ZERO_SIGN_FREE)
    finally:
        gp.set_fallback("raise")
    assert gp.stats()["fallbacks"] >= 1


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_matches_numpy(gpu, name, dtype):
    np_args = operands(name, dtype)
    check_ufunc(gpu, name, [gp.asarray(a) for a in np_args], np_args)


# --- layouts --------------------------------------------------------------------------------------

INT_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"}


def layout_dtype(name):
    return np.dtype(np.int32) if name in INT_ONLY else np.dtype(np.float32)


def _pick(values, n, seed):
    """n of the operand values: specials first, then random ones."""
    values = np.asarray(values)
    k = min(n // 2, 30)
    rng = np.random.default_rng(seed)
    return np.concatenate([values[:k], rng.choice(values[k:], n - k)])


def layout_operands(name, layout):
    """(numpy operands, gpupy operands, setup) for one layout."""
    dt = layout_dtype(name)
    cols = operands(name, dt, seed=99)
    arity = ARITY[name]
    if arity == 2 and len(cols[0]) > N_RANDOM:
        # keep specials paired with specials
        cols = [c[-N_RANDOM - 200:] for c in cols]
    if layout == "zero_d":
        np_args = [np.array(c[40], dtype=dt) for c in cols]
    elif layout == "empty":
        np_args = [np.zeros(0, dt)] * arity
    elif layout == "empty_2d":
        np_args = [np.zeros((3, 0), dt), np.zeros((0,), dt)][:arity]
    elif layout == "strided":
        np_args = [_pick(c, 90, 1)[::3] for c in cols]
    elif layout == "negative_stride":
        np_args = [_pick(c, 60, 2)[::-2] for c in cols]
    elif layout == "transposed":
        np_args = [_pick(c, 48, 3).reshape(6, 8).T for c in cols]
    elif layout == "transposed_negative":
        np_args = [_pick(c, 48, 4).reshape(6, 8)[::-1, ::-3].T for c in cols]
    elif layout == "broadcast":
        if arity == 1:
            np_args = [np.broadcast_to(_pick(cols[0], 8, 5), (5, 8))]
        else:
            np_args = [_pick(cols[0], 8, 5)[:, None], _pick(cols[1], 9, 6)[::-1]]
    elif layout == "multi_block":
        np_args = [_pick(c, 100, 7 + k) for k, c in enumerate(cols)]
    elif layout in ("python_scalar_right", "python_scalar_left"):
        scalar = int(3) if dt.kind in "iu" else 2.5
        array = _pick(cols[0], 40, 9)
        np_args = [array, scalar] if layout == "python_scalar_right" else [scalar, array]
    else:
        raise AssertionError(layout)
    gp_args = []
    for a in np_args:
        if isinstance(a, (int, float)):
            gp_args.append(a)
        elif layout == "multi_block":
            # the same values, read through a negative-stride view
            gp_args.append(gp.asarray(np.ascontiguousarray(a[::-1]))[::-1])
        elif layout in ("strided", "negative_stride", "transposed", "transposed_negative", "broadcast"):
            gp_args.append(_gp_view_like(a))
        else:
            gp_args.append(gp.asarray(a))
    return np_args, gp_args


def _gp_view_like(a):
    """A gpupy view with the same geometry as NumPy view `a` of its base."""
    base = a.base if a.base is not None else a
    while base.base is not None:
        base = base.base
    g = gp.asarray(np.array(base))
    item = a.itemsize
    offset = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // item
    strides = tuple(s // item for s in a.strides)
    flat = g.reshape(-1)
    view = gp._core.view_as(flat, offset, a.shape, strides)
    assert view.shape == a.shape and view.strides == a.strides
    return view


LAYOUTS = ["zero_d", "empty", "empty_2d", "strided", "negative_stride", "transposed", "transposed_negative",
           "broadcast", "multi_block", "python_scalar_right", "python_scalar_left"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_layouts(gpu, name, layout):
    if layout.startswith("python_scalar") and ARITY[name] == 1:
        layout = "zero_d"  # a unary ufunc of a Python scalar is NumPy's business; cover 0-d again
    if layout == "multi_block":
        gp.set_block_size(7)
    np_args, gp_args = layout_operands(name, layout)
    check_ufunc(gpu, name, gp_args, np_args)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", UFUNCS)
def test_ufunc_all_dtypes_multi_block_views(gpu, name, dtype):
    """Every dtype through negative-stride views of multi-block arrays
    (block size 64; the operands span about 25 blocks), the second operand
    also strided."""
    gp.set_block_size(64)
    np_args = operands(name, dtype, seed=77)
    gp_args = [gp.asarray(np.ascontiguousarray(np_args[0][::-1]))[::-1]]
    if len(np_args) == 2:
        doubled = np.repeat(np_args[1], 2)
        gp_args.append(gp.asarray(doubled)[::2])
    check_ufunc(gpu, name, gp_args, np_args)


# --- what each driver must run itself -------------------------------------------------------------

# The expected-path logic above accepts any (op, dtype) a driver declines
# as a counted fallback; this is the floor under it, so that a driver that
# stopped declaring its ops could not pass as "everything falls back".
# DESIGN.md: float32 first; int32, uint32, bool (and float64 where the
# device has fp64) expected.
CORE_OPS = ["add", "subtract", "multiply", "floor_divide", "remainder", "negative", "absolute", "square", "sign",
            "maximum", "minimum", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
            "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
            "invert", "left_shift", "right_shift", "isnan", "isinf", "isfinite", "astype", "where"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32", "bool", "float64"])
def test_driver_runs_the_expected_ops_itself(gpu, dtype):
    dt = np.dtype(dtype)
    if dtype in ("float32", "float16"):
        # every ufunc with a float32 loop; float16 is computed in float32
        names = UFUNCS + ["astype", "where"]
    else:
        names = CORE_OPS
        if dt.kind == "f":
            # GLSL has no double fmod, so an exact float64 floor_divide and
            # remainder are not expected of every device
            names = [n for n in CORE_OPS if n not in ("floor_divide", "remainder")] + ["divide", "sqrt"]
    missing = []
    for name in names:
        if name in ARITY:
            # only ops NumPy runs in this very dtype (no promotion)
            if not _has_loop(name, dt):
                continue
            if getattr(np, name).resolve_dtypes((dt,) * ARITY[name] + (None,))[0] != dt:
                continue
        if not gpu.declares(name, dt):
            missing.append(name)
    assert not missing, f"{gpu.name} hands {dtype} {missing} to NumPy"


def _has_loop(name, dt):
    try:
        getattr(np, name).resolve_dtypes((dt,) * ARITY[name] + (None,))
        return True
    except Exception:  # noqa: BLE001
        return False
