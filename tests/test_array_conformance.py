"""GpuArray against ndarray, on every driver: operators and NumPy 2's
promotion rules (NEP 50), where, creation functions, attributes, scalar
indexing, conversions and protocols (__array__, buffer, repr/str, astype,
tolist, copy, len, iteration), and the exception classes raised on bad
input (wrong shapes, bad indices, unknown dtypes, wrong types).

NumPy is the oracle: each case is written once as a function of the module
(`xp`) and run with numpy and with gpupy.
"""

import contextlib
import copy
import operator
import warnings

import numpy as np
import pytest

import gpupy as gp

ALL_DTYPES = tuple(np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                         "uint64", "float16", "float32", "float64"))
F32 = np.float32


def public_class(exc):
    """The most derived class of exc that users can name (a builtin or one
    of numpy.exceptions; NumPy's UFuncTypeError family is private)."""
    for cls in type(exc).__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions"):
            return cls
    return Exception


def outcome(fn, *args):
    """(result, None) or (None, exception) of fn(*args) with NumPy's
    floating-point warnings silenced."""
    try:
        with np.errstate(all="ignore"):
            return fn(*args), None
    except Exception as exc:  # noqa: BLE001 -- compared by the caller
        return None, exc


def check_same_behaviour(gpu, fn, *, message=True, ulp=0, gpu_array=True, path="device"):
    """fn(np) and fn(gp) agree: same values/dtype/shape, or the same
    exception class (and message, unless message=False).

    path "device": gpupy must do it without NumPy (fallback mode "raise").
    path "host"/"numpy": gpupy hands (part of) it to NumPy, so "raise" mode
    must refuse with FallbackError and "silent" mode must agree with NumPy
    and count the fallback."""
    expected, np_exc = outcome(fn, np)
    if path in ("host", "numpy") and np_exc is not None:
        # bad input for NumPy: the error class is compared in "silent"
        # mode (the tests of bad input check "raise" mode on their own)
        gp.set_fallback("silent")
        try:
            got, gp_exc = outcome(lambda: _materialise(fn(gp)))
        finally:
            gp.set_fallback("raise")
    elif path in ("host", "numpy"):
        _, gp_exc = outcome(lambda: _materialise(fn(gp)))
        assert isinstance(gp_exc, gp.FallbackError), f"expected a FallbackError in mode 'raise', got {gp_exc!r}"
        gp.set_fallback("silent")
        gp.reset_stats()
        try:
            got, gp_exc = outcome(lambda: _materialise(fn(gp)))
        finally:
            gp.set_fallback("raise")
        assert gp.stats()["fallbacks"] >= 1
    else:
        got, gp_exc = outcome(lambda: _materialise(fn(gp)))
    if np_exc is not None:
        assert gp_exc is not None, f"NumPy raised {type(np_exc).__name__}: {np_exc}; gpupy returned {got!r}"
        assert isinstance(gp_exc, public_class(np_exc)), (
            f"gpupy raised {type(gp_exc).__name__}: {gp_exc}; NumPy {type(np_exc).__name__}: {np_exc}")
        if message:
            assert str(gp_exc) == str(np_exc)
        return
    if gp_exc is not None:
        raise gp_exc
    result, _ = got
    # What a device that flushes float32 subnormals may return instead
    # (conftest.assert_same): fn on the operands as it reads them.
    flushed = outcome(fn, gpu.flushing_numpy)[0] if gpu.flushes_float32 else None
    if isinstance(expected, tuple):
        assert isinstance(result, tuple) and len(result) == len(expected)
        flushed = flushed if isinstance(flushed, tuple) and len(flushed) == len(expected) else (None,) * len(expected)
        for r, e, f in zip(result, expected, flushed):
            _compare_one(gpu, r, e, ulp, gpu_array, f)
    else:
        _compare_one(gpu, result, expected, ulp, gpu_array, flushed)


def _materialise(value):
    """Forces evaluation (so that errors raised at evaluation count) and
    keeps the value."""
    items = value if isinstance(value, tuple) else (value,)
    for v in items:
        if isinstance(v, gp.GpuArray):
            np.asarray(v)
    return value, None


def _comparable(flushed, expected):
    """`flushed` as assert_same's flushed= for `expected`, or None."""
    if flushed is None:
        return None
    flushed = np.asarray(flushed)
    return flushed if flushed.shape == np.shape(expected) and flushed.dtype == np.asarray(expected).dtype else None


def _compare_one(gpu, got, expected, ulp, gpu_array, flushed=None):
    if isinstance(expected, np.ndarray):
        gpu.assert_same(got, expected, ulp=ulp, gpu_array=gpu_array, flushed=_comparable(flushed, expected))
    elif isinstance(expected, np.generic):
        assert type(got) is type(expected), f"{type(got).__name__} != numpy's {type(expected).__name__}"
        gpu.assert_same(np.asarray(got), np.asarray(expected), ulp=ulp, gpu_array=False,
                        flushed=_comparable(flushed, expected))
    else:
        assert type(got) is type(expected)
        assert got == expected or (got != got and expected != expected)  # NaN matches NaN


def specials(dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return np.array([False, True, True, False])
    if dt.kind == "f":
        fi = np.finfo(dt)
        return np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, 0.5, np.nan, np.inf, -np.inf, fi.max, -fi.max,
                         fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal, 7.0, -7.0, 100.0, 1e-3], dtype=dt)
    info = np.iinfo(dt)
    vals = [0, 1, -1, 2, -2, 3, 7, -7, 100, -100, info.max, info.min, info.max - 1, info.min + 1, 5, 6]
    return np.array([v for v in vals if info.min <= v <= info.max], dtype=dt)


# --- operators ------------------------------------------------------------------------------------

BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "<": operator.lt, "<=": operator.le,
          ">": operator.gt, ">=": operator.ge, "==": operator.eq, "!=": operator.ne, "&": operator.and_,
          "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
UNARY = {"-": operator.neg, "+": operator.pos, "abs": abs, "~": operator.invert}
UFUNC_OF = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide", "//": "floor_divide", "%": "remainder",
            "**": "power", "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal", "==": "equal",
            "!=": "not_equal", "&": "bitwise_and", "|": "bitwise_or", "^": "bitwise_xor", "<<": "left_shift",
            ">>": "right_shift"}
UNARY_UFUNC_OF = {"-": "negative", "+": "positive", "abs": "absolute", "~": "invert"}


def path_of(gpu, ufunc_name, *operands):
    p = gpu.expected_path(ufunc_name, operands)
    return "device" if p == "error" else p


def _operands(dt):
    a = specials(dt)
    b = np.roll(a, 3)
    if dt.kind in "iu":
        b = np.where(b == 0, 3, b).astype(dt)  # keep division off zero where NumPy would warn-and-0 anyway
    return a, b


def _ulp_for(op_name, dt):
    # ** with a float exponent is power(), a transcendental function (see
    # test_ufunc_conformance.MEASURED_ULP: at most 1 ulp measured + margin)
    return 2 if op_name == "**" and np.dtype(dt).kind == "f" else 0


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("op_name", list(BINARY))
def test_binary_operator_same_dtype(gpu, op_name, dtype):
    op = BINARY[op_name]
    a, b = _operands(dtype)
    if op_name == "**" and dtype.kind in "iub":
        b = np.abs(b % 5).astype(dtype)
    if op_name in ("<<", ">>") and dtype.kind in "iu":
        b = (np.abs(b) % (dtype.itemsize * 8)).astype(dtype)
    check_same_behaviour(gpu, lambda xp: op(xp.asarray(a), xp.asarray(b)), message=False,
                         ulp=_ulp_for(op_name, dtype), path=path_of(gpu, UFUNC_OF[op_name], a, b))


SCALARS = {
    "int": 3, "negative_int": -2, "big_int": 300, "huge_int": 2 ** 40, "float": 2.5, "bool": True,
    "np_float64": np.float64(2.5), "np_int8": np.int8(3), "np_float32": np.float32(0.5),
}
SCALAR_OPS = ["+", "-", "*", "/", "//", "%", "**", "<", "==", "&", "<<"]


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("scalar", list(SCALARS))
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("op_name", SCALAR_OPS)
def test_operator_with_scalar_nep50(gpu, op_name, dtype, scalar, side):
    """NEP 50: Python scalars are weak (int8 array + 3 stays int8; float32
    array + 2.5 stays float32; out-of-range Python ints raise
    OverflowError), NumPy scalars (np.float64 included, although it
    subclasses float) are not."""
    op = BINARY[op_name]
    s = SCALARS[scalar]
    a, _ = _operands(dtype)
    if op_name in ("<<", "**") and dtype.kind in "iu":
        a = np.abs(a % 9).astype(dtype)
    operands = (a, s) if side == "right" else (s, a)

    def fn(xp):
        x = xp.asarray(a)
        return op(x, s) if side == "right" else op(s, x)

    check_same_behaviour(gpu, fn, message=False, ulp=_ulp_for(op_name, np.result_type(a, s)),
                         path=path_of(gpu, UFUNC_OF[op_name], *operands))


@pytest.mark.parametrize("exponent", [np.float64(0.5), np.float32(0.5), np.float64(2.0), np.float32(-1.0),
                                      np.float64(1.0), np.float64(0.0), np.int16(2), np.float64(3.0), 0.5, 2])
@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=str)
def test_power_by_a_scalar_has_numpys_dtype(gpu, silent_fallback, dtype, exponent):
    """`a ** s` with s one of 1, -1, 0, 0.5, 2: NumPy 2.0 computes it by a
    unary op on a (sqrt, square, ...) in a's dtype whatever s's, later NumPy
    promotes; gpupy follows the NumPy in use (np.power never shortcuts).
    Values within power's bound: NumPy 2.0's np.power(a, 0.5) is its powf,
    an ulp from the square root gpupy computes (1.5 ** 0.5 in float32)."""
    a = np.array([0.25, 1.5, 4.0], dtype)
    check_same_behaviour(gpu, lambda xp: xp.asarray(a) ** exponent, ulp=_ulp_for("**", dtype))
    check_same_behaviour(gpu, lambda xp: xp.power(xp.asarray(a), exponent), ulp=_ulp_for("**", dtype))


def test_negative_integer_power_raises(gpu):
    """NumPy refuses integer arrays to negative integer powers with
    ValueError; a known negative exponent is bad input, not work to hand
    to NumPy, so the error is the same in fallback mode "raise"."""
    check_same_behaviour(gpu, lambda xp: xp.asarray(np.arange(1, 4)) ** -1)


@pytest.mark.parametrize("op_name", ["+", "/", "<", "*", "//", "%", "==", "&", ">>"])
def test_binary_operator_dtype_matrix(gpu, op_name):
    """Every pair of dtypes promotes as NumPy 2 promotes, and the values
    computed in the promoted dtype (operands converted in the same shader)
    are NumPy's."""
    op = BINARY[op_name]
    for d1 in ALL_DTYPES:
        for d2 in ALL_DTYPES:
            a, _ = _operands(d1)
            _, b = _operands(d2)
            if op_name == ">>" and d2.kind in "iu":
                # shifts from -2 to 6: NumPy defines negative and too-wide
                # shifts (0, or -1 for negative numbers shifted right)
                b = (b % 9).astype(d2) - (2 if d2.kind == "i" else 0)
            n = min(len(a), len(b))
            try:
                check_same_behaviour(gpu, lambda xp: op(xp.asarray(a[:n]), xp.asarray(b[:n])), message=False,
                                     path=path_of(gpu, UFUNC_OF[op_name], a[:n], b[:n]))
            except (AssertionError, pytest.fail.Exception) as exc:
                pytest.fail(f"{d1} {op_name} {d2}: operands {a[:n]!r}, {b[:n]!r}\n{exc}", pytrace=False)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("op_name", list(UNARY))
def test_unary_operator(gpu, op_name, dtype):
    v = specials(dtype)
    check_same_behaviour(gpu, lambda xp: UNARY[op_name](xp.asarray(v)), message=False,
                         path=path_of(gpu, UNARY_UFUNC_OF[op_name], v))


def test_mixed_gpu_and_numpy_operands(gpu):
    ha, hb = np.arange(6, dtype=F32), np.linspace(-1, 1, 6).astype(np.float64)
    a = gp.asarray(ha)
    for got, expected in [(a + hb, ha + hb), (hb + a, hb + ha), (hb * a[::-1], hb * ha[::-1]),
                          (a + [1, 2, 3, 4, 5, 6], ha + [1, 2, 3, 4, 5, 6]), (np.float64(2) * a, np.float64(2) * ha),
                          (a < hb, ha < hb), (np.sin(a), np.sin(ha))]:
        gpu.assert_same(got, expected, ulp=1)


def test_zero_d_arrays_are_not_weak(gpu):
    """A 0-d array takes part in promotion as an array (NEP 50)."""
    ha = np.arange(4, dtype=F32)
    z = np.array(2.0)  # float64, 0-d
    gpu.assert_same(gp.asarray(ha) + gp.asarray(z), ha + z)
    i8 = ha.astype(np.int8)
    gpu.assert_same(gp.asarray(i8) + gp.asarray(np.array(3, np.int64)), i8 + np.array(3))


def test_comparison_with_out_of_range_python_int(gpu, silent_fallback):
    for dt in (np.int8, np.uint8, np.uint64):
        ha = specials(dt)
        for s in (300, -1, 2 ** 70):
            check_same_behaviour(gpu, lambda xp: xp.asarray(ha) < s)
            check_same_behaviour(gpu, lambda xp: xp.asarray(ha) == s)


def test_python_float_keeps_float32(gpu):
    a = gp.asarray(np.ones(3, F32))
    for r in (a + 1.5, 1.5 * a, a / 3.0, a ** 2.0, gp.maximum(a, 0.1), gp.arctan2(0.5, a)):
        assert r.dtype == np.float32
    # 1e300 becomes float32's infinity, with NumPy's cast warning.
    with pytest.warns(RuntimeWarning, match="overflow encountered in cast"):
        r = a - 1e300
    assert r.dtype == np.float32
    gpu.assert_same(r, np.ones(3, F32) - np.float32(np.inf))
    assert (a + np.float64(1.5)).dtype == np.float64


# --- where ----------------------------------------------------------------------------------------

def test_where_values_and_broadcasting(gpu):
    c = np.array([True, False, True, False, False, True])
    x = np.arange(6, dtype=F32)
    y = -np.arange(6, dtype=F32)
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c), xp.asarray(x), xp.asarray(y)))
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c[::-1]), xp.asarray(x)[::2].reshape(3, 1),
                                                    xp.asarray(y)))
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(x) > 2, xp.asarray(x), 0.5))
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(x) > 2, 1, 2.5))
    check_same_behaviour(gpu, lambda xp: xp.where(True, xp.asarray(x), xp.asarray(y)))


@pytest.mark.parametrize("cond_dtype", ALL_DTYPES, ids=str)
def test_where_condition_truthiness(gpu, cond_dtype):
    """Any dtype is a condition: nonzero is true, NaN is true, -0.0 false."""
    c = specials(cond_dtype)
    x = np.arange(len(c), dtype=np.int32)
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c), xp.asarray(x), -1))


def test_where_dtype_matrix(gpu):
    c = np.array([True, False, True, False])
    for d1 in ALL_DTYPES:
        for d2 in ALL_DTYPES:
            x, y = specials(d1)[:4], specials(d2)[-4:]
            check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c), xp.asarray(x), xp.asarray(y)))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("scalar", [1000, -1, 2.5, True, 2 ** 65])
def test_where_with_python_scalar(gpu, dtype, scalar):
    """np.where converts a weak Python scalar to the array's dtype."""
    c = np.array([True, False, False, True])
    x = specials(dtype)[:4]
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c), xp.asarray(x), scalar), message=False)
    check_same_behaviour(gpu, lambda xp: xp.where(xp.asarray(c), scalar, xp.asarray(x)), message=False)


# --- creation -------------------------------------------------------------------------------------

CREATION = {
    "array_list": lambda xp: xp.array([[1, 2, 3], [4, 5, 6]]),
    "array_float_list": lambda xp: xp.array([1.5, -2, 3]),
    "array_bool_list": lambda xp: xp.array([True, False]),
    "array_mixed_list": lambda xp: xp.array([1, 2.5, True]),
    "array_dtype": lambda xp: xp.array([1, 2, 3], dtype=np.float32),
    "array_dtype_str": lambda xp: xp.array([1, 2, 300], dtype="uint16"),
    "array_ndmin": lambda xp: xp.array([1, 2], ndmin=3),
    "array_scalar": lambda xp: xp.array(3.5),
    "array_empty_list": lambda xp: xp.array([]),
    "array_of_gpu": lambda xp: xp.array(xp.array([1.0, 2.0], dtype=np.float32), dtype=np.int16),
    "array_nested_empty": lambda xp: xp.array([[], []], dtype=np.int8),
    "array_numpy_scalar": lambda xp: xp.array(np.float32(1.25)),
    "array_big_uint": lambda xp: xp.array([2 ** 64 - 1], dtype=np.uint64),
    "asarray_list": lambda xp: xp.asarray([[1.0], [2.0]], dtype=np.float32),
    "asarray_ndarray_view": lambda xp: xp.asarray(np.arange(12).reshape(3, 4)[::-1, 1::2]),
    "asarray_dtype": lambda xp: xp.asarray(np.arange(4, dtype=np.int64), dtype=np.float32),
    "zeros": lambda xp: xp.zeros((2, 3)),
    "zeros_int": lambda xp: xp.zeros(4, dtype=np.int32),
    "zeros_0d": lambda xp: xp.zeros(()),
    "zeros_empty": lambda xp: xp.zeros((0, 3), dtype=np.uint8),
    "ones": lambda xp: xp.ones(5),
    "ones_bool": lambda xp: xp.ones((2, 2), dtype=bool),
    "ones_f32": lambda xp: xp.ones([3], np.float32),
    "full_int": lambda xp: xp.full(3, 7),
    "full_float": lambda xp: xp.full((2, 2), 2.5),
    "full_bool": lambda xp: xp.full(2, True),
    "full_np_scalar": lambda xp: xp.full(3, np.float32(1.5)),
    "full_dtype": lambda xp: xp.full((2, 3), 255, dtype=np.uint8),
    "full_out_of_range": lambda xp: xp.full(3, -1, dtype=np.uint8),
    "full_nan": lambda xp: xp.full(2, np.nan, dtype=np.float32),
    "full_cast": lambda xp: xp.full(3, 2.9, dtype=np.int16),
    "arange_stop": lambda xp: xp.arange(5),
    "arange_start_stop_step": lambda xp: xp.arange(2, 20, 3),
    "arange_negative_step": lambda xp: xp.arange(10, -5, -3),
    "arange_float": lambda xp: xp.arange(0, 1, 0.1),
    "arange_float_negative": lambda xp: xp.arange(1.5, -2.0, -0.25),
    "arange_float32": lambda xp: xp.arange(0, 2, 0.1, dtype=np.float32),
    "arange_float32_start": lambda xp: xp.arange(-3.3, 3, 0.7, dtype=np.float32),
    "arange_int_float_stop": lambda xp: xp.arange(0, 5.5),
    "arange_dtype_int8": lambda xp: xp.arange(-5, 5, dtype=np.int8),
    "arange_dtype_uint8": lambda xp: xp.arange(250, 256, dtype=np.uint8),
    "arange_empty": lambda xp: xp.arange(5, 2),
    "arange_float_dtype_int": lambda xp: xp.arange(0.5, 5, 1.5, dtype=np.int32),
    "arange_large": lambda xp: xp.arange(0, 100000, 7),
    "arange_big_int64": lambda xp: xp.arange(2 ** 40, 2 ** 40 + 10),
    "arange_zero_step": lambda xp: xp.arange(0, 5, 0),
    "arange_np_scalars": lambda xp: xp.arange(np.int16(3), np.int16(9)),
    "arange_float32_scalars": lambda xp: xp.arange(np.float32(0.5), np.float32(4)),
    "linspace": lambda xp: xp.linspace(0, 1, 7),
    "linspace_no_endpoint": lambda xp: xp.linspace(-2, 5, 9, endpoint=False),
    "linspace_retstep": lambda xp: xp.linspace(1, 2, 5, retstep=True),
    "linspace_num_0": lambda xp: xp.linspace(0, 1, 0),
    "linspace_num_1": lambda xp: xp.linspace(3, 4, 1),
    "linspace_num_1_retstep": lambda xp: xp.linspace(3, 4, 1, retstep=True),
    "linspace_dtype_int": lambda xp: xp.linspace(-5, 5, 11, dtype=np.int32),
    "linspace_dtype_int_fraction": lambda xp: xp.linspace(-2, 3, 8, dtype=np.int64),
    "linspace_float32": lambda xp: xp.linspace(0, 1, 50, dtype=np.float32),
    "linspace_reversed": lambda xp: xp.linspace(10, -10, 13),
    "linspace_same": lambda xp: xp.linspace(2, 2, 4),
    "linspace_negative_num": lambda xp: xp.linspace(0, 1, -1),
    "linspace_large": lambda xp: xp.linspace(-1e3, 1e3, 10001),
    "linspace_float32_endpoints": lambda xp: xp.linspace(np.float32(0.1), np.float32(0.7), 6),
    "fromfunction": lambda xp: xp.fromfunction(lambda i, j: i * 10 + j, (3, 4)),
    "fromfunction_int": lambda xp: xp.fromfunction(lambda i, j: i - j, (3, 3), dtype=int),
    "fromfunction_f32": lambda xp: xp.fromfunction(lambda i: i * 0.5, (5,), dtype=np.float32),
    "fromfunction_bool": lambda xp: xp.fromfunction(lambda i, j: i == j, (3, 3)),
    "zeros_like": lambda xp: xp.zeros_like(xp.asarray(np.ones((2, 3), np.int16))),
    "zeros_like_numpy": lambda xp: xp.zeros_like(np.ones((2, 3), np.float32)),
    "ones_like_dtype": lambda xp: xp.ones_like(xp.asarray(np.ones(4, np.int8)), dtype=np.float32),
    "ones_like_shape": lambda xp: xp.ones_like(xp.asarray(np.ones(4, np.uint16)), shape=(2, 2)),
    "full_like_cast": lambda xp: xp.full_like(xp.asarray(np.arange(4)), 3.7),
    "full_like_float": lambda xp: xp.full_like(xp.asarray(np.ones(3, F32)), 1 / 3),
    "full_like_view": lambda xp: xp.full_like(xp.asarray(np.ones((3, 4), F32)).T[::2], 7),
    "empty_like_shape_dtype": lambda xp: xp.empty_like(xp.asarray(np.ones(3)), dtype=np.int8, shape=(0, 2)),
    "zeros_negative": lambda xp: xp.zeros(-1),
    "ones_negative_dim": lambda xp: xp.ones((2, -3)),
    "full_negative": lambda xp: xp.full((-2,), 1.0),
    "zeros_bad_dtype": lambda xp: xp.zeros(3, dtype="foo"),
    "array_bad_dtype": lambda xp: xp.array([1, 2], dtype="float17"),
    "ones_float_shape": lambda xp: xp.ones(2.5),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation(gpu, name):
    check_same_behaviour(gpu, CREATION[name], message=False)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_empty_shape_and_dtype(gpu, dtype):
    """empty's values are undefined in NumPy: only shape and dtype agree."""
    for shape in (4, (2, 3), (), (0,)):
        e, n = gp.empty(shape, dtype=dtype), np.empty(shape, dtype=dtype)
        assert isinstance(e, gp.GpuArray)
        assert e.shape == n.shape and e.dtype == n.dtype
        assert np.asarray(e).shape == n.shape
    e = gp.empty_like(gp.asarray(np.ones((3, 2), dtype)))
    assert e.shape == (3, 2) and e.dtype == dtype
    assert gp.empty(3).dtype == np.float64


def test_asarray_returns_the_same_gpu_array(gpu):
    a = gp.asarray(np.arange(3, dtype=F32))
    assert gp.asarray(a) is a
    assert gp.asarray(a, dtype=np.float32) is a
    b = gp.asarray(a, dtype=np.float64)
    assert b is not a and b.dtype == np.float64


def test_the_array_object(gpu):
    # GpuArray is a CPython type holding its C++ value inline: a Python
    # subclass gets its own instances, weak references work and die with
    # the array, and an array dropped releases its value (its weak
    # reference's callback runs at once, with no cycle collection).
    import gc
    import weakref

    class Tagged(gp.ndarray):
        tag = "mine"

    t = Tagged((2, 3), dtype=np.int16)
    assert type(t) is Tagged and isinstance(t, gp.ndarray) and t.tag == "mine"
    assert t.shape == (2, 3) and t.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(t + 1), np.ones((2, 3), np.int16))
    t.note = "subclass instances have a __dict__"
    assert t.note.startswith("subclass")
    with pytest.raises(AttributeError):
        gp.zeros(2).note = "the base type has none"
    dropped = []
    gc.disable()
    try:
        a = gp.arange(5.0)[1:]
        r = weakref.ref(a, lambda _: dropped.append(True))
        assert r() is a
        del a
        assert dropped == [True] and r() is None
    finally:
        gc.enable()
    with pytest.raises(TypeError):
        hash(gp.zeros(2))
    with pytest.raises(TypeError):
        gp.ndarray((2,), dtype=np.complex64)  # a dtype gpupy cannot hold


@pytest.mark.parametrize("xp", [np, gp], ids=["numpy", "gpupy"])
def test_shape_attribute_set_and_delete(gpu, xp):
    # The attributes are C getters and setters: NumPy's behaviour for
    # setting a shape in place, an incompatible one, and deleting it, and
    # NumPy 2.5's DeprecationWarning for setting it where NumPy gives it.
    a = xp.arange(6.0)
    deprecated = np.lib.NumpyVersion(np.__version__) >= "2.5.0"
    with pytest.warns(DeprecationWarning, match="Setting the shape") if deprecated else contextlib.nullcontext():
        a.shape = (2, 3)
    assert a.shape == (2, 3) and a.ndim == 2 and a.size == 6 and a.strides == (24, 8)
    assert a.T.shape == (3, 2) and a.dtype == np.float64 and a.itemsize == 8 and a.nbytes == 48
    with warnings.catch_warnings(), pytest.raises(AttributeError, match="Incompatible shape|cannot reshape"):
        warnings.simplefilter("ignore", DeprecationWarning)
        a.T.shape = (6,)
    with pytest.raises(AttributeError, match="Cannot delete array shape"):
        del a.shape
    with pytest.raises(AttributeError):
        a.ndim = 3


def test_array_copies_its_input(gpu):
    host = np.arange(4, dtype=F32)
    a = gp.array(host)
    host[0] = 100
    assert a[0] == 0
    b = gp.array(a)
    a[1] = -1
    assert b[1] == 1
    gpu.assert_same(b, np.arange(4, dtype=F32))


def test_arange_multi_block(gpu):
    gp.set_block_size(7)
    check_same_behaviour(gpu, lambda xp: xp.arange(3, 200, 2, dtype=np.float32)[::-3])
    check_same_behaviour(gpu, lambda xp: xp.linspace(-1, 1, 101)[50:])


# --- attributes -----------------------------------------------------------------------------------

def _attribute_arrays(xp):
    base = xp.asarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    return {
        "contiguous": base,
        "expression": base * 2 + 1,
        "zero_d": xp.asarray(np.float64(3.0)),
        "empty": xp.zeros((0, 5), dtype=np.int16),
        "slice": base[:, 1:, ::2],
        "negative": base[::-1, :, ::-3],
        "transpose": base.T,
        "transpose_axes": base.transpose(1, 0, 2),
        "newaxis": base[:, None, 1],
        "integer_index": base[1],
        "reshape": base.reshape(6, 4),
        "reshape_of_view": base[1].reshape(2, 6),
        "broadcast": xp.broadcast_to(base[0, 0], (3, 4)),
        "bool": base > 3,
        "uint64": xp.asarray(np.arange(5, dtype=np.uint64))[::2],
        "int8_expr": xp.asarray(np.arange(5, dtype=np.int8)) * 2,
        "ellipsis": base[..., 1],
    }


@pytest.mark.parametrize("attr", ["shape", "ndim", "size", "dtype", "strides", "itemsize", "nbytes"])
@pytest.mark.parametrize("which", sorted(_attribute_arrays(np)))
def test_attributes(gpu, which, attr):
    g = _attribute_arrays(gp)[which]
    n = _attribute_arrays(np)[which]
    assert getattr(g, attr) == getattr(n, attr)
    assert type(getattr(g, attr)) is type(getattr(n, attr))


# --- indexing -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_scalar_indexing(gpu, dtype):
    host = np.resize(specials(dtype), 12).reshape(3, 4)
    a = gp.asarray(host)
    e = a * 1 if dtype != np.bool_ else a & True  # an expression as well as an array
    for key in [(0, 0), (2, 3), (-1, -1), (1, -4), (-3, 2)]:
        for g in (a, e):
            got, expected = g[key], host[key]
            assert type(got) is type(expected)
            assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()
    assert type(a[1][2]) is type(host[1][2]) and a[1][2] == host[1][2] or np.isnan(host[1][2])
    z = gp.asarray(np.array(host[0, 1]))
    assert type(z[()]) is type(host[0, 1])
    assert isinstance(z[...], gp.GpuArray) and z[...].shape == ()
    assert z.item() == host[0, 1].item() or np.isnan(host[0, 1])


def test_item_and_scalar_conversions(gpu):
    a = gp.asarray(np.array([[1.5, 2.5], [3.5, -4.5]], F32))
    assert a.item(3) == -4.5 and type(a.item(3)) is float
    assert a.item(1, 0) == 3.5
    assert float(a[1, 0]) == 3.5 and type(float(a[1, 0])) is float
    assert float(a[1:2, 0][0, ...]) == 3.5
    assert int(gp.asarray(np.array(7, np.int8))) == 7
    assert bool(gp.asarray(np.array([0.0]))) is False
    check_same_behaviour(gpu, lambda xp: int(xp.asarray(np.array([7], np.int8))), message=False)
    check_same_behaviour(gpu, lambda xp: float(xp.asarray(np.array([[7.5]]))), message=False)
    assert operator.index(gp.asarray(np.array(5, np.uint8))) == 5
    assert [10, 20, 30][gp.asarray(np.array(1, np.int32))] == 20
    for fn in (lambda xp: float(xp.asarray(np.ones(2))), lambda xp: bool(xp.asarray(np.ones(2))),
               lambda xp: bool(xp.zeros(0)), lambda xp: operator.index(xp.asarray(np.array(1.0))),
               lambda xp: xp.asarray(np.ones(2)).item(4)):
        check_same_behaviour(gpu, fn, message=False)


BAD_INDICES = {
    "out_of_range": lambda a: a[5],
    "out_of_range_negative": lambda a: a[-6],
    "out_of_range_2d": lambda a: a[1, 9],
    "too_many": lambda a: a[0, 0, 0],
    "float": lambda a: a[1.5],
    "string": lambda a: a["x"],
    "two_ellipses": lambda a: a[..., ...],
    "float_in_tuple": lambda a: a[1, 2.0],
    "none_out_of_range": lambda a: a[None, 7],
    "setitem_out_of_range": lambda a: a.__setitem__(10, 1.0),
    "setitem_too_many": lambda a: a.__setitem__((0, 0, 0), 1.0),
    "zero_d_index": lambda a: a[0][0][0],
}


@pytest.mark.parametrize("name", sorted(BAD_INDICES))
def test_bad_index_raises_index_error(gpu, name):
    """IndexError with NumPy's message, in fallback mode "raise" too (a bad
    index is an error, not work to hand to NumPy)."""
    host = np.arange(15, dtype=F32).reshape(5, 3)
    check_same_behaviour(gpu, lambda xp: BAD_INDICES[name](xp.asarray(host.copy()) if xp is gp else host.copy()))


@pytest.mark.parametrize("name", sorted(BAD_INDICES))
def test_bad_index_raises_index_error_silent(gpu, silent_fallback, name):
    host = np.arange(15, dtype=F32).reshape(5, 3)
    check_same_behaviour(gpu, lambda xp: BAD_INDICES[name](xp.asarray(host.copy()) if xp is gp else host.copy()))


BASIC_INDICES = [np.s_[1], np.s_[-1], np.s_[1:4], np.s_[::-1], np.s_[::-2, 1], np.s_[..., 0], np.s_[None],
                 np.s_[:, None, ::2], np.s_[3:1], np.s_[-100:100], np.s_[1, ...], np.s_[np.int64(2)],
                 np.s_[np.uint8(1), -2], np.s_[()], np.s_[..., None], np.s_[4:0:-2, ::-1]]


@pytest.mark.parametrize("key", BASIC_INDICES, ids=repr)
def test_basic_indexing_matches_numpy(gpu, key):
    host = (np.arange(15, dtype=F32) - 7).reshape(5, 3)
    check_same_behaviour(gpu, lambda xp: (xp.asarray(host) * 2)[key])


# --- conversions and protocols --------------------------------------------------------------------

def _protocol_arrays():
    base = np.arange(24, dtype=F32).reshape(4, 6) - 11.5
    return {
        "f32": base,
        "f32_view": base[::-1, 1::2],
        "f64": base.astype(np.float64) / 3,
        "bool": base > 0,
        "int8": base.astype(np.int8),
        "uint8": (base * 10).astype(np.int64).astype(np.uint8),
        "int16": base.astype(np.int16) * 1000,
        "uint16": base.astype(np.int32).astype(np.uint16),
        "int32": base.astype(np.int32) * 100000,
        "uint32": base.astype(np.int64).astype(np.uint32),
        "int64": base.astype(np.int64) * 10 ** 12,
        "uint64": base.astype(np.int64).astype(np.uint64),
        "zero_d": np.array(1.25, F32),
        "empty": np.zeros((0, 3), F32),
        "specials": np.array([np.nan, -np.inf, np.inf, -0.0, 0.0, 1e-45, 3.4e38, 1e-7], F32),
        "specials_f64": np.array([np.nan, -np.inf, 5e-324, -0.0, 1e300, 1 / 3], np.float64),
        "long": np.arange(2000, dtype=F32) / 7,
        "wide_2d": np.arange(400, dtype=np.int32).reshape(20, 20),
        "3d": np.arange(60, dtype=np.int16).reshape(3, 4, 5)[:, ::-1],
    }


PROTOCOL_ARRAYS = _protocol_arrays()


def _gp(name):
    host = PROTOCOL_ARRAYS[name]
    if name == "f32_view":
        return gp.asarray(PROTOCOL_ARRAYS["f32"])[::-1, 1::2]
    return gp.asarray(host) * 1 if host.dtype != np.bool_ else gp.asarray(host) | False


def _host(name, gpu):
    """The values _gp(name) holds: PROTOCOL_ARRAYS[name], with float32
    subnormals flushed where the device flushes them in its `* 1`."""
    host = PROTOCOL_ARRAYS[name]
    return host if name == "f32_view" or not gpu.flushes_float32 else gpu.flush_subnormals(host)


def _np(name, gpu):
    """NumPy's result of the expression _gp(name) evaluates (a scalar for 0-d)."""
    host = _host(name, gpu)
    if name == "f32_view":
        return host
    return host * 1 if host.dtype != np.bool_ else host | False


@pytest.mark.parametrize("name", sorted(PROTOCOL_ARRAYS))
def test_repr_and_str(gpu, name):
    g, n = _gp(name), _np(name, gpu)
    assert repr(g) == repr(n)
    assert str(g) == str(n)


def test_repr_follows_print_options(gpu):
    n = np.linspace(0, 1, 7).astype(F32)
    g = gp.asarray(n)
    with np.printoptions(precision=2, suppress=True):
        assert repr(g) == repr(n)
    with np.printoptions(threshold=3, edgeitems=1):
        assert str(g) == str(n)


def test_format(gpu):
    assert format(gp.asarray(np.array(1 / 3, F32)), ".3f") == format(np.array(1 / 3, F32), ".3f")
    assert f"{gp.asarray(np.float64(2.5)) * 2}" == f"{np.float64(2.5) * 2}"


@pytest.mark.parametrize("name", sorted(PROTOCOL_ARRAYS))
def test_array_protocol(gpu, name):
    g, n = _gp(name), _host(name, gpu)
    got = np.asarray(g)
    assert type(got) is np.ndarray
    assert got.dtype == n.dtype and got.shape == n.shape
    assert gpu.bytes_of(got) == gpu.bytes_of(n)
    assert gpu.bytes_of(np.array(g, dtype=np.float64)) == gpu.bytes_of(n.astype(np.float64))
    c = np.array(g, copy=True)
    c[...] = 0
    assert gpu.bytes_of(np.asarray(g)) == gpu.bytes_of(n)


@pytest.mark.parametrize("name", sorted(PROTOCOL_ARRAYS))
def test_buffer_protocol(gpu, name):
    g, n = _gp(name), _host(name, gpu)
    m, mn = memoryview(g), memoryview(np.asarray(_np(name, gpu)))  # a strided view exports strided bytes, as NumPy's
    assert m.format == mn.format
    assert m.itemsize == mn.itemsize
    assert m.shape == mn.shape
    assert m.ndim == mn.ndim
    assert gpu.bytes_of(m.tobytes(), n.dtype) == gpu.bytes_of(n)
    assert gpu.bytes_of(bytes(g), n.dtype) == gpu.bytes_of(n)
    assert m.c_contiguous == mn.c_contiguous and m.strides == mn.strides


@pytest.mark.parametrize("name", sorted(PROTOCOL_ARRAYS))
def test_tolist(gpu, name):
    g, n = _gp(name), _host(name, gpu)
    got, expected = g.tolist(), n.tolist()
    assert repr(got) == repr(expected)  # repr: NaN-safe, and tells 1 from 1.0 from True


@pytest.mark.parametrize("name", sorted(PROTOCOL_ARRAYS))
def test_len_and_iteration(gpu, name):
    g, n = _gp(name), _host(name, gpu)
    check_same_behaviour(gpu, lambda xp: len(g if xp is gp else n), message=True)
    if n.ndim == 0:
        check_same_behaviour(gpu, lambda xp: list(g if xp is gp else n), message=True)
        return
    rows = list(g)
    assert len(rows) == len(n)
    for r, e in zip(rows, n):
        if n.ndim == 1:
            assert type(r) is type(e)
            assert gpu.bytes_of(np.asarray(r)) == gpu.bytes_of(np.asarray(e))
        else:
            gpu.assert_same(r, e)


def test_protocols_of_multi_block_views(gpu):
    """repr, tolist, bytes and __array__ of views that cross many blocks."""
    gp.set_block_size(7)
    host = (np.arange(120, dtype=F32) / 7 - 3).reshape(10, 12)
    g = gp.asarray(host)
    for key in (np.s_[::-1, ::-1], np.s_[1::3, ::-5], np.s_[::-2]):
        gv, nv = (g * 1)[key], (host * F32(1))[key]
        assert repr(gv) == repr(nv)
        assert str(gv.T) == str(nv.T)
        assert repr(gv.tolist()) == repr(nv.tolist())
        assert bytes(gv) == nv.tobytes()
        assert np.asarray(gv).tobytes() == nv.tobytes()
        assert [repr(r.tolist()) for r in gv] == [repr(r.tolist()) for r in nv]


def test_pickle_round_trip(gpu):
    import pickle

    host = np.arange(12, dtype=np.int16).reshape(3, 4)[::-1, 1::2]
    g = gp.asarray(np.arange(12, dtype=np.int16).reshape(3, 4))[::-1, 1::2] * 3
    back = pickle.loads(pickle.dumps(g))
    gpu.assert_same(back, host * np.int16(3))


def test_flat_and_ravel(gpu):
    n = np.arange(12, dtype=F32).reshape(3, 4)[::-1, ::2]
    g = gp.asarray(np.arange(12, dtype=F32).reshape(3, 4))[::-1, ::2]
    assert list(g.flat) == list(n.flat)
    gpu.assert_same(g.ravel(), n.ravel())
    gpu.assert_same(g.flatten(), n.flatten())
    gpu.assert_same(g.ravel(order="F"), n.ravel(order="F"))


# --- astype ---------------------------------------------------------------------------------------

def _cast_source(src, dst):
    """Values of dtype src whose conversion to dst NumPy defines (C leaves
    float -> integer conversions of NaN, inf and out-of-range values
    undefined, and NumPy's result is whatever the CPU does)."""
    v = specials(src)
    if src.kind == "f" and dst.kind in "iu":
        info = np.iinfo(dst)
        with np.errstate(invalid="ignore"):
            t = np.trunc(v.astype(np.float64))
        limit = 2.0 ** (info.bits - 1 if info.min < 0 else info.bits)
        ok = np.isfinite(t) & (t >= info.min) & (t <= info.max) & (t < limit)
        v = v[ok]
        rng = np.random.default_rng(5)
        span = 6e4 if src == np.float16 else 1e6  # (float16's values end at 65504)
        lo, hi = max(info.min, -span), min(info.max, span)
        v = np.concatenate([v, rng.uniform(lo, hi, 20).astype(src)])
    return v


@pytest.mark.parametrize("dst", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("src", ALL_DTYPES, ids=str)
def test_astype(gpu, src, dst):
    v = _cast_source(src, dst)
    check_same_behaviour(gpu, lambda xp: xp.asarray(v).astype(dst))
    check_same_behaviour(gpu, lambda xp: (xp.asarray(v)[::-1]).astype(dst)[::2])


def test_astype_float_rounding(gpu):
    """float64 -> float32 rounds to nearest even, overflows to inf and
    keeps float32 denormals; wide integers round to nearest."""
    f64 = np.array([0.1, 1 / 3, 3.4028235e38, 3.5e38, -1e39, 1e-40, 1.401298464324817e-45, 7e-46, 2 ** 24 + 1.0,
                    -0.0, np.nan, 16777217.0, 1 + 2 ** -24, 1 + 3 * 2 ** -24], np.float64)
    check_same_behaviour(gpu, lambda xp: xp.asarray(f64).astype(np.float32))
    i64 = np.array([2 ** 53 + 1, -(2 ** 63), 2 ** 63 - 1, 2 ** 24 + 1, 123456789], np.int64)
    check_same_behaviour(gpu, lambda xp: xp.asarray(i64).astype(np.float32))
    check_same_behaviour(gpu, lambda xp: xp.asarray(i64).astype(np.float64))
    u64 = np.array([2 ** 64 - 1, 2 ** 63, 2 ** 53 + 1, 1], np.uint64)
    check_same_behaviour(gpu, lambda xp: xp.asarray(u64).astype(np.float32))
    check_same_behaviour(gpu, lambda xp: xp.asarray(u64).astype(np.float64))


NEAR_LIMITS = {
    np.dtype(np.float64): [2.0 ** 31 - 1, -2.0 ** 31, 2.0 ** 31 - 0.5, 2.0 ** 63 - 1024, -2.0 ** 63, 2.0 ** 64 - 2048,
                           2.0 ** 63, 2.0 ** 53 + 2, 4294967295.0, 4294967295.7, 65535.9, -128.9, 255.9, 1e-300, -0.9],
    np.dtype(np.float32): [2.0 ** 31 - 128, -2.0 ** 31, 2.0 ** 63 - 2 ** 39, -2.0 ** 63, 2.0 ** 64 - 2 ** 40, 2.0 ** 63,
                           16777216.0, 4294967040.0, 65535.9, -128.9, 255.9, -0.9],
}


@pytest.mark.parametrize("dst", [t for t in ALL_DTYPES if t.kind in "iu"], ids=str)
@pytest.mark.parametrize("src", sorted(NEAR_LIMITS, key=str), ids=str)
def test_astype_near_integer_limits(gpu, src, dst):
    """Float -> integer conversions of the largest values the target holds
    (those NumPy defines), alone and fused after an operation."""
    v = np.array(NEAR_LIMITS[src], src)
    info = np.iinfo(dst)
    t = np.trunc(v.astype(np.float64))
    v = v[(t >= info.min) & (t <= info.max) & (t < 2.0 ** (info.bits - 1 if info.min < 0 else info.bits))]
    check_same_behaviour(gpu, lambda xp: xp.asarray(v).astype(dst))
    check_same_behaviour(gpu, lambda xp: (xp.asarray(v) * 1).astype(dst))


def test_astype_unsupported_dtype_goes_to_numpy(gpu, silent_fallback):
    v = np.array([1.5, -2.25, 65504.0, 1e5], F32)
    check_same_behaviour(gpu, lambda xp: xp.asarray(v).astype(np.float16), gpu_array=False)
    check_same_behaviour(gpu, lambda xp: xp.asarray(v).astype(np.complex64), gpu_array=False)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_arrays_of_dtypes_gpupy_does_not_hold_are_numpys_own(gpu, dtype):
    """asarray hands such an ndarray through as NumPy's asarray does, not a
    copy: views made of it (flip, a transpose) are views of the caller's
    array, and a later write into it shows through them, as in NumPy
    (found by the differential campaign: flip of modf's float16 part)."""
    for xp in (np, gp):
        h = np.arange(6).reshape(2, 3).astype(dtype)
        assert xp.asarray(h) is h
        flipped, swapped = xp.flip(h), xp.transpose(h)
        h[0, 0] = 7
        assert flipped[1, 2] == 7 and swapped[0, 0] == 7, xp.__name__
    c = np.arange(3).astype(dtype)
    assert gp.array(c) is not c and not np.shares_memory(gp.array(c), c)  # array still copies


def test_astype_options(gpu):
    a = gp.asarray(np.arange(3, dtype=F32))
    assert a.astype(np.float32, copy=False) is a
    b = a.astype(np.float32)
    assert b is not a
    a[0] = 5
    assert b[0] == 0
    check_same_behaviour(gpu, lambda xp: xp.asarray(np.arange(3.0)).astype(np.int32, casting="safe"))
    check_same_behaviour(gpu, lambda xp: xp.asarray(np.arange(3.0)).astype(np.float32, casting="same_kind"))
    check_same_behaviour(gpu, lambda xp: xp.asarray(np.arange(3.0)).astype("foo"))


# --- copy -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["method", "function", "copy_module", "deepcopy"])
def test_copy_is_independent(gpu, how):
    host = np.arange(6, dtype=F32).reshape(2, 3)
    a = gp.asarray(host.copy())
    c = {"method": lambda: a.copy(), "function": lambda: gp.copy(a), "copy_module": lambda: copy.copy(a),
         "deepcopy": lambda: copy.deepcopy(a)}[how]()
    assert isinstance(c, gp.GpuArray) and c._owner_id != a._owner_id
    a[0, 0] = 100
    c[1, 1] = -100
    expect_c = host.copy()
    expect_c[1, 1] = -100
    gpu.assert_same(c, expect_c)
    host[0, 0] = 100
    gpu.assert_same(a, host)


def test_copy_of_view_and_expression(gpu):
    host = np.arange(12, dtype=F32).reshape(3, 4)
    a = gp.asarray(host)
    gpu.assert_same(a[::-1, 1::2].copy(), host[::-1, 1::2].copy())
    gpu.assert_same((a * 2).T.copy(), (host * 2).T.copy())
    assert (a * 2).T.copy().strides == (host * 2).T.copy().strides


# --- exceptions on bad input ----------------------------------------------------------------------

BAD_INPUT = {
    "reshape_size": lambda xp: xp.asarray(np.ones(6)).reshape(4),
    "reshape_two_unknown": lambda xp: xp.asarray(np.ones(6)).reshape(-1, -1),
    "transpose_repeated": lambda xp: xp.asarray(np.ones((2, 3))).transpose(0, 0),
    "transpose_wrong_count": lambda xp: xp.asarray(np.ones((2, 3))).transpose(0),
    "transpose_axis_out_of_range": lambda xp: xp.asarray(np.ones((2, 3))).transpose(0, 2),
    "swapaxes_out_of_range": lambda xp: xp.asarray(np.ones((2, 3))).swapaxes(0, 3),
    "squeeze_non_one": lambda xp: xp.asarray(np.ones((2, 1))).squeeze(0),
    "expand_dims_out_of_range": lambda xp: xp.expand_dims(xp.asarray(np.ones(3)), 3),
    "broadcast_to_smaller": lambda xp: xp.broadcast_to(xp.asarray(np.ones((2, 3))), (3,)),
    "add_string": lambda xp: xp.add(xp.asarray(np.ones(3)), "x"),
    "operator_string": lambda xp: xp.asarray(np.ones(3)) + "x",
    "operator_object": lambda xp: xp.asarray(np.ones(3)) * object(),
    "bitwise_float": lambda xp: xp.asarray(np.ones(3, F32)) & xp.asarray(np.ones(3, F32)),
    "invert_float": lambda xp: ~xp.asarray(np.ones(3, F32)),
    "shift_float": lambda xp: xp.asarray(np.ones(3)) << 1,
    "bool_subtract": lambda xp: xp.asarray(np.ones(3, bool)) - xp.asarray(np.ones(3, bool)),
    "bool_negative": lambda xp: -xp.asarray(np.ones(3, bool)),
    "ufunc_too_many_args": lambda xp: xp.add(xp.asarray(np.ones(3)), 1, 2, 3),
    "ufunc_no_args": lambda xp: xp.sin(),
    "overflowing_python_int": lambda xp: xp.asarray(np.ones(3, np.int8)) + 300,
    "negative_python_int_unsigned": lambda xp: xp.asarray(np.ones(3, np.uint16)) * -1,
    "huge_python_int": lambda xp: xp.asarray(np.ones(3, np.int64)) + 2 ** 64,
    "unknown_dtype_astype": lambda xp: xp.asarray(np.ones(3)).astype("nope"),
    "unknown_dtype_full": lambda xp: xp.full(3, 1, dtype="nope"),
    "unknown_dtype_arange": lambda xp: xp.arange(3, dtype="nope"),
    "shape_not_int": lambda xp: xp.zeros("abc"),
    "len_of_0d": lambda xp: len(xp.asarray(np.float32(1))),
    "iter_of_0d": lambda xp: iter(xp.asarray(np.float32(1))),
    "hash": lambda xp: hash(xp.asarray(np.ones(3))),
    "where_missing_y": lambda xp: xp.where(xp.asarray(np.ones(3)) > 0, 1),
    "setitem_wrong_type": lambda xp: xp.asarray(np.ones(3)).__setitem__(0, "x"),
    "setitem_shape": lambda xp: xp.asarray(np.ones((2, 3))).__setitem__(0, np.ones(2)),
    "out_wrong_shape": lambda xp: xp.multiply(xp.asarray(np.ones(3)), 2, out=xp.zeros(4)),
    "out_wrong_type": lambda xp: xp.multiply(xp.asarray(np.ones(3)), 2, out=[0, 0, 0]),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_raises_like_numpy(gpu, name):
    """The same exception class as NumPy, in fallback mode "raise" (an
    error in the input is not work to run in NumPy)."""
    check_same_behaviour(gpu, BAD_INPUT[name], message=False)


@pytest.mark.parametrize("name", sorted(BAD_INPUT))
def test_bad_input_raises_like_numpy_silent(gpu, silent_fallback, name):
    check_same_behaviour(gpu, BAD_INPUT[name], message=False)


BAD_INPUT_MESSAGES = ["reshape_size", "reshape_two_unknown", "transpose_repeated", "transpose_wrong_count",
                      "transpose_axis_out_of_range", "swapaxes_out_of_range", "squeeze_non_one",
                      "broadcast_to_smaller", "overflowing_python_int", "negative_python_int_unsigned",
                      "unknown_dtype_astype", "unknown_dtype_full", "len_of_0d", "iter_of_0d", "where_missing_y",
                      "setitem_shape", "out_wrong_shape"]


@pytest.mark.parametrize("name", BAD_INPUT_MESSAGES)
def test_bad_input_messages_match_numpy(gpu, silent_fallback, name):
    check_same_behaviour(gpu, BAD_INPUT[name], message=True)


REDUCTION_AXES = {
    "int": 1, "negative": -1, "tuple": (0, 2), "tuple_of_one": (1,), "numpy_int": np.int64(2),
    "numpy_ints_in_tuple": (np.int32(0), 1), "out_of_range": 3, "out_of_range_in_tuple": (0, -4),
    "duplicate": (1, 1), "float": 1.0, "float_in_tuple": (0, 1.0), "list_in_tuple": ([0],),
    "bool": True, "numpy_bool": np.True_, "bool_in_tuple": (False, 2),
}
REDUCTION_FORMS = {
    "function": lambda xp, name, x, axis: getattr(xp, name)(x, axis=axis),
    "method, positional": lambda xp, name, x, axis: getattr(x, name)(axis),
    "method, keyword": lambda xp, name, x, axis: getattr(x, name)(axis=axis),
}


@pytest.mark.parametrize("form", list(REDUCTION_FORMS), ids=str)
@pytest.mark.parametrize("reduction", ["sum", "prod", "max", "min", "mean", "any", "all"])
@pytest.mark.parametrize("axis", list(REDUCTION_AXES), ids=str)
def test_reduction_axis_arguments(gpu, reduction, axis, form):
    # A reduction with an axis and nothing else takes a short path (the C
    # methods for one int axis, the function's axes normalised once per
    # spelling, then remembered): values and errors as NumPy's (a bool is
    # no axis), the second call (remembered axes) as the first.
    h = np.arange(24.0).reshape(2, 3, 4)
    call = REDUCTION_FORMS[form]
    for _ in range(2):
        check_same_behaviour(gpu, lambda xp: call(xp, reduction, xp.asarray(h), REDUCTION_AXES[axis]), message=False)


@pytest.mark.parametrize("axis", [1, -1, 3, True, np.False_, 1.0], ids=repr)
@pytest.mark.parametrize("name", ["argmax", "argmin", "cumsum", "cumprod"])
def test_arg_reduction_axis_arguments(gpu, name, axis):
    h = np.arange(24.0).reshape(2, 3, 4) % 5
    check_same_behaviour(gpu, lambda xp: getattr(xp, name)(xp.asarray(h), axis=axis), message=False)


TRIANGLE_INPUTS = {
    "row": lambda xp: xp.arange(1, 5, dtype=xp.float32),
    "square": lambda xp: xp.reshape(xp.arange(1, 17), (4, 4)),
    "wide": lambda xp: xp.reshape(xp.arange(1.0, 16.0), (3, 5)),
    "tall transposed": lambda xp: xp.reshape(xp.arange(1.0, 16.0), (3, 5)).T,
    "stack, reversed": lambda xp: xp.reshape(xp.arange(24, dtype=xp.int8), (2, 3, 4))[:, ::-1],
    "bool": lambda xp: xp.reshape(xp.arange(12), (3, 4)) % 3 == 0,
    "empty": lambda xp: xp.zeros((0, 3)),
}


@pytest.mark.parametrize("k", [0, 1, -1, 3, -7, 40])
@pytest.mark.parametrize("which", sorted(TRIANGLE_INPUTS))
@pytest.mark.parametrize("name", ["triu", "tril"])
def test_triangles_on_the_device(gpu, name, which, k):
    # tril/triu are a lazy where over a comparison of two aranges: no
    # NumPy (fallback mode "raise"), NumPy's values and dtype.
    make = TRIANGLE_INPUTS[which]
    check_same_behaviour(gpu, lambda xp: getattr(xp, name)(make(xp), k))
    check_same_behaviour(gpu, lambda xp: getattr(xp, name)(make(xp), k=np.int16(k)))


@pytest.mark.parametrize("name", ["triu", "tril"])
def test_triangles_numpy_handles(gpu, name):
    # A 0-d array (NumPy's TypeError) and a float offset (NumPy's integer
    # arange of it) are NumPy's.
    check_same_behaviour(gpu, lambda xp: getattr(xp, name)(xp.asarray(3.0)), path="numpy")
    check_same_behaviour(gpu, lambda xp: getattr(xp, name)(xp.ones((3, 4)), 1.5), path="numpy")


REDUCE_METHOD_INPUTS = {
    "0-d": lambda xp, dt: xp.asarray(np.array(3, dt)),
    "vector": lambda xp, dt: xp.asarray((np.arange(1, 11) % 4).astype(dt)),
    "reversed strided matrix": lambda xp, dt: xp.asarray((np.arange(24) % 5).astype(dt).reshape(4, 6))[::-1, ::2],
    "lazy": lambda xp, dt: xp.asarray((np.arange(12) % 3).astype(dt)) * xp.asarray(np.array(2, dt)),
    "multi-block": lambda xp, dt: xp.asarray((np.arange(3000) % 7).astype(dt)),
    "empty": lambda xp, dt: xp.asarray(np.zeros((2, 0), dt)),
}


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("which", sorted(REDUCE_METHOD_INPUTS))
@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "all", "any"])
def test_reduce_methods_without_arguments(gpu, name, which, dtype):
    # `x.sum()` and kin with no arguments are C methods (NumPy's dtype:
    # small integers widened for sum and prod); any argument, or an
    # empty array, goes to the package's method, with NumPy's errors.
    # (Results over every axis are 0-d gpupy arrays where NumPy gives
    # scalars: compared as arrays.)
    make = REDUCE_METHOD_INPUTS[which]
    check_same_behaviour(gpu, lambda xp: xp.asarray(getattr(make(xp, dtype), name)()))
    check_same_behaviour(gpu, lambda xp: xp.asarray(getattr(make(xp, dtype), name)(axis=None, keepdims=True)))
    if which not in ("0-d", "empty"):
        check_same_behaviour(gpu, lambda xp: xp.asarray(getattr(make(xp, dtype), name)(-1)))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("which", sorted(set(REDUCE_METHOD_INPUTS) - {"0-d"}))
@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "logical_or"])
def test_ufunc_reduce_and_accumulate_fold_in_numpys_dtype(gpu, name, which, dtype):
    # NumPy's add and multiply fold booleans and small integers in the
    # platform's integer (np.add.accumulate of int8 is int64, as np.cumsum),
    # the other folds in their loop's dtype; values, dtype and shape as
    # NumPy's, with a dtype asked for too.
    make = REDUCE_METHOD_INPUTS[which]
    uf = lambda xp: getattr(xp, name)  # noqa: E731
    check_same_behaviour(gpu, lambda xp: xp.asarray(uf(xp).reduce(make(xp, dtype), axis=-1)))
    check_same_behaviour(gpu, lambda xp: xp.asarray(uf(xp).accumulate(make(xp, dtype), axis=-1)))
    if name in ("add", "multiply"):
        check_same_behaviour(gpu, lambda xp: xp.asarray(uf(xp).accumulate(make(xp, dtype), axis=-1, dtype=np.int16)))


MASKED_REDUCTIONS = {
    "sum": {}, "prod": {}, "mean": {}, "nanmean": {}, "nansum": {}, "nanprod": {}, "std": {}, "var": {},
    "nanstd": {}, "nanvar": {}, "max": {"initial": -1.0}, "min": {"initial": 100.0}, "all": {}, "any": {},
    "add.reduce": {}, "multiply.reduce": {}, "maximum.reduce": {"initial": -1.0}, "subtract.reduce": {"initial": 0.0},
}


@pytest.mark.parametrize("mask_kind", ["numpy", "gpupy", "False"])
@pytest.mark.parametrize("axis", [None, 0, 1])
@pytest.mark.parametrize("name", sorted(MASKED_REDUCTIONS))
def test_reductions_with_a_where_mask(gpu, name, axis, mask_kind):
    # The masked-out elements are NaN (or True): a reduction that dropped
    # the mask on its way to NumPy gave NaN, or the wrong truth, in silence.
    values = np.array([[0.5, np.nan, 2.0], [3.0, np.nan, 5.0]])
    mask = np.array([True, False, True])

    def run(xp):
        x = xp.asarray(values if name not in ("all", "any") else ~np.isnan(values) & (values > 1))
        where = {"numpy": mask, "gpupy": xp.asarray(mask), "False": False}[mask_kind]
        fn = xp
        for part in name.split("."):
            fn = getattr(fn, part)
        with np.errstate(invalid="ignore", divide="ignore"):
            return xp.asarray(fn(x, axis=axis, where=where, **MASKED_REDUCTIONS[name]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (an empty slice's mean: both warn)
        check_same_behaviour(gpu, run, path="numpy")


@pytest.mark.parametrize("name", ["std", "var"])
def test_variance_with_a_given_mean_or_correction(gpu, name):
    values = np.arange(12.0).reshape(3, 4) ** 1.5
    centre = values.mean(axis=1, keepdims=True) + 1.0
    check_same_behaviour(gpu, lambda xp: xp.asarray(getattr(xp, name)(xp.asarray(values), axis=1, mean=xp.asarray(centre))),
                         path="numpy")
    check_same_behaviour(gpu, lambda xp: xp.asarray(getattr(xp, name)(xp.asarray(values), axis=1, correction=1)),
                         path="numpy")


@pytest.mark.parametrize("name", ["add", "maximum"])
def test_ufunc_accumulate_refuses_as_numpy(gpu, name):
    # One axis only, and never of a 0-d array: NumPy's classes and messages.
    check_same_behaviour(gpu, lambda xp: getattr(xp, name).accumulate(xp.ones((2, 3)), axis=None))
    check_same_behaviour(gpu, lambda xp: getattr(xp, name).accumulate(xp.asarray(np.array(3.0))))
    check_same_behaviour(gpu, lambda xp: getattr(xp, name).accumulate(xp.ones((2, 3)), axis=2))


def test_reduce_methods_are_c_methods_keeping_the_package_ones(gpu):
    import types
    for name in ("sum", "prod", "max", "min", "all", "any"):
        assert isinstance(getattr(gp.ndarray, name), types.MethodDescriptorType), name
    with pytest.raises(TypeError):
        gp.zeros(3).sum(1, 2, 3, 4, 5, 6, 7, 8)  # the package's signature, NumPy's error class


@pytest.mark.parametrize("name", ["zeros", "empty", "ones"])
@pytest.mark.parametrize("dtype", [None, float, "int8", np.bool_, np.complex64], ids=str)
def test_filled_creation_dtypes(gpu, name, dtype):
    # dtype=None is float64 for all three, as in NumPy (zeros and empty
    # gave int64, the dtype of their fill value); a dtype gpupy cannot hold
    # gives NumPy's array.
    want = getattr(np, name)((2, 3), dtype=dtype)
    got = getattr(gp, name)((2, 3), dtype=dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    if name != "empty":
        np.testing.assert_array_equal(np.asarray(got), want)
    assert isinstance(got, gp.ndarray) == (want.dtype != np.complex64)


@pytest.mark.parametrize("name", ["zeros_like", "empty_like", "ones_like"])
@pytest.mark.parametrize("kw", [{}, {"dtype": np.float32}, {"shape": (4,)}, {"dtype": np.complex64}], ids=str)
def test_filled_like_creation(gpu, name, kw):
    # Of a gpupy array: the core's fill with its shape and dtype (or the
    # ones asked for); a dtype gpupy cannot hold gives NumPy's array.
    h = np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::-1]
    want = getattr(np, name)(h, **kw)
    got = getattr(gp, name)(gp.asarray(h), **kw)
    assert got.dtype == want.dtype and got.shape == want.shape
    if name != "empty_like":
        np.testing.assert_array_equal(np.asarray(got), want)
    assert isinstance(got, gp.ndarray) == (want.dtype != np.complex64)
