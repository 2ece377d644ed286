"""NumPy's logic functions on the device: isclose, allclose, array_equal,
array_equiv, isposinf, isneginf, isreal, iscomplex, real_if_close, and
nan_to_num, which they make.

Each is NumPy's own formula (numpy/_core/numeric.py, lib/_type_check_impl.py,
lib/_ufunclike_impl.py) written with gpupy's ufuncs and device reductions,
so values, dtypes and NaN rules are NumPy's. Calls without a GpuArray, or
with operands the device cannot hold (complex, objects), run NumPy's
function as a counted fallback.
"""

import builtins
import warnings

import numpy as np

from . import _core
from ._convert import asarray
from ._core import GpuArray
from ._creation import zeros
from ._fallback import call_numpy
from ._reductions import all as _all
from ._registry import implements
from ._ufuncs import UFUNCS


def _operand(x):
    """x as NumPy's isclose sees it: Python int/float as they are (weak
    scalars), array-likes as GpuArrays; None if the device cannot hold it."""
    if isinstance(x, (int, float)) and not isinstance(x, np.generic):
        return x
    if isinstance(x, GpuArray):
        return x
    try:
        a = asarray(x)
    except (TypeError, ValueError):
        return None
    return a if isinstance(a, GpuArray) else None


def _any_gpu(*values):
    return builtins.any(isinstance(v, GpuArray) for v in values)


def _all_true(x):
    """bool(numpy.all(x)) for a GpuArray or a Python/NumPy scalar."""
    if isinstance(x, GpuArray):
        return builtins.bool(x) if x.ndim == 0 else builtins.bool(_all(x))
    return builtins.bool(np.all(x))


@implements(np.isclose)
def isclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    operands = [_operand(v) for v in (a, b, atol, rtol)] if _any_gpu(a, b, atol, rtol) else [None]
    if builtins.any(v is None for v in operands):
        return call_numpy("isclose", (a, b), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan},
                          reason="the device cannot hold its operands")
    x, y, atol, rtol = operands
    if isinstance(y, GpuArray):
        y = y.astype(np.result_type(y.dtype, 1.0), copy=False)
    elif isinstance(y, int):
        y = float(y)
    isfinite = UFUNCS["isfinite"]
    if not (_all_true(isfinite(atol)) and _all_true(isfinite(rtol))):
        invalid = np.geterr()["invalid"]
        message = f"One of rtol or atol is not valid, atol: {atol}, rtol: {rtol}"
        if invalid == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        elif invalid == "raise":
            raise FloatingPointError(message)
        elif invalid == "print":
            print(message)
    absolute = UFUNCS["absolute"]
    # inf - inf is NaN where both are infinite; NumPy's isclose ignores
    # that invalid value, and so does this one (errors are looked for
    # under the error state each op is built in).
    with np.errstate(invalid="ignore"):
        result = (UFUNCS["less_equal"](absolute(x - y), atol + rtol * absolute(y)) & isfinite(y)) | UFUNCS["equal"](x, y)
    if equal_nan:
        isnan = UFUNCS["isnan"]
        result = result | (isnan(x) & isnan(y))
    return result[()]


@implements(np.allclose)
def allclose(a, b, rtol=1.e-5, atol=1.e-8, equal_nan=False):
    close = isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    return _all_true(close)


def _two_arrays(name, a1, a2, kwargs):
    """(a1, a2) as GpuArrays, False if NumPy's asarray fails, None if one
    is an array the device cannot hold."""
    if not _any_gpu(a1, a2):
        return None
    try:
        a1, a2 = asarray(a1), asarray(a2)
    except Exception:  # noqa: BLE001 - NumPy answers False for anything asarray rejects
        return False
    if not (isinstance(a1, GpuArray) and isinstance(a2, GpuArray)):
        return None
    return a1, a2


@implements(np.array_equal)
def array_equal(a1, a2, equal_nan=False):
    pair = _two_arrays("array_equal", a1, a2, {})
    if pair is None:
        return call_numpy("array_equal", (a1, a2), {"equal_nan": equal_nan}, reason="the device cannot hold the arrays")
    if pair is False:
        return False
    x, y = pair
    if x.shape != y.shape:
        return False
    if not equal_nan:
        return _all_true(x == y)
    if a1 is a2:
        return True
    if x.dtype.kind in "biu" and y.dtype.kind in "biu":
        return _all_true(x == y)
    isnan = UFUNCS["isnan"]
    xnan, ynan = isnan(x), isnan(y)
    if not _all_true(xnan == ynan):
        return False
    # NumPy compares the elements that are not NaN: a1[~a1nan] == a2[~a1nan].
    return _all_true((x == y) | xnan)


@implements(np.array_equiv)
def array_equiv(a1, a2):
    pair = _two_arrays("array_equiv", a1, a2, {})
    if pair is None:
        return call_numpy("array_equiv", (a1, a2), {}, reason="the device cannot hold the arrays")
    if pair is False:
        return False
    x, y = pair
    try:
        np.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        return False
    return _all_true(x == y)


@implements(np.isposinf)
def isposinf(x, out=None):
    if not isinstance(x, GpuArray):
        return call_numpy("isposinf", (x,), {"out": out})
    return UFUNCS["logical_and"](UFUNCS["isinf"](x), ~UFUNCS["signbit"](x), out=out)


@implements(np.isneginf)
def isneginf(x, out=None):
    if not isinstance(x, GpuArray):
        return call_numpy("isneginf", (x,), {"out": out})
    return UFUNCS["logical_and"](UFUNCS["isinf"](x), UFUNCS["signbit"](x), out=out)


@implements(np.nan_to_num)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    if not isinstance(x, GpuArray) or x.dtype.kind not in "biuf":
        return call_numpy("nan_to_num", (x,), dict(copy=copy, nan=nan, posinf=posinf, neginf=neginf),
                          reason="the argument is not a gpupy array of real numbers")
    # NumPy copies the array first (laid out as np.array lays out a copy:
    # a broadcast axis fastest) and writes the replacements into it.
    target = x.copy(order="K") if copy else x
    if x.dtype.kind == "f":
        info = np.finfo(x.dtype)
        big = x.dtype.type(info.max if posinf is None else posinf)
        small = x.dtype.type(info.min if neginf is None else neginf)
        where = _core.where
        target[...] = where(UFUNCS["isnan"](x), x.dtype.type(nan), where(isposinf(x), big, where(isneginf(x), small, x)))
    return target  # integers and booleans have nothing to replace


@implements(np.isreal)
def isreal(x):
    if not isinstance(x, GpuArray):
        return call_numpy("isreal", (x,), {})
    return x.imag == 0  # device dtypes are real


@implements(np.iscomplex)
def iscomplex(x):
    if not isinstance(x, GpuArray):
        return call_numpy("iscomplex", (x,), {})
    return zeros(x.shape, bool)[()]


@implements(np.real_if_close)
def real_if_close(a, tol=100):
    if not isinstance(a, GpuArray):
        return call_numpy("real_if_close", (a,), {"tol": tol})
    return a  # already real, as NumPy returns a real input itself
