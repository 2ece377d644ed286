"""Array creation. Index-based arrays (arange, linspace, indices,
fromfunction) are index expressions computed on the device: nothing is
uploaded for them."""

import operator

import numpy as np

from . import _core
from ._array_api import check_device
from ._convert import array, asarray, ascontiguousarray, asfortranarray, is_supported
from ._core import GpuArray
from ._fallback import call_numpy, from_numpy

gpufloat32 = np.float32  # the thesis's name for the device's float type

# numpy.array and numpy.asarray for gpupy live in the base layer (_convert),
# which every section coerces its operands with; these are their aliases.
asanyarray = asarray


_PYTHON_NUMBERS = (int, float, bool)


def full(shape, fill_value, dtype=None, order="C", *, like=None, device=None):
    check_device(device)
    if type(fill_value) in _PYTHON_NUMBERS and dtype is not None:
        # The common call: none of the checks below.
        return _filled(shape, fill_value, dtype)
    if isinstance(fill_value, GpuArray) or np.ndim(fill_value) != 0:
        return call_numpy("full", (shape, fill_value), {"dtype": dtype, "order": order}, reason="its fill value is not a scalar")
    dtype = np.array(fill_value).dtype if dtype is None else np.dtype(dtype)
    if not is_supported(dtype):
        return np.full(shape, fill_value, dtype=dtype)
    try:
        return _core.full(shape, fill_value, dtype)
    except OverflowError:
        return _core.full(shape, _numpys_fill_value(fill_value, dtype), dtype)


def _filled(shape, value, dtype):
    """full(shape, value, dtype) for a Python number value and a dtype
    given: the core's call first (zeros in a loop), NumPy's array for a
    dtype gpupy cannot hold, NumPy's error for a bad argument."""
    try:
        return _core.full(shape, value, dtype)
    except TypeError:
        return np.full(shape, value, dtype)
    except OverflowError:
        return _core.full(shape, _numpys_fill_value(value, dtype), dtype)


def _numpys_fill_value(value, dtype):
    """What NumPy's full stores for a Python int beyond the dtype's range:
    NumPy 2.0 wraps it around (as a C cast), later releases raise
    OverflowError. NumPy's full of one element says which."""
    return np.full(1, value, dtype)[0]


def zeros(shape, dtype=float, order="C", *, like=None, device=None):
    check_device(device)
    return _filled(shape, 0, float if dtype is None else dtype)  # dtype=None is float64, as in NumPy


def ones(shape, dtype=None, order="C", *, like=None, device=None):
    check_device(device)
    return _filled(shape, 1, float if dtype is None else dtype)


def empty(shape, dtype=float, order="C", *, like=None, device=None):
    check_device(device)
    # Zeros: as cheap as uninitialised memory, and deterministic.
    return _filled(shape, 0, float if dtype is None else dtype)


def _like_shape(a, shape):
    if shape is not None:
        return shape
    return a.shape if isinstance(a, GpuArray) else np.shape(a)


def _like_dtype(a, dtype):
    if dtype is not None:
        return dtype
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


def _laid_out_like(make, a, order, shape):
    """make(shape) laid out as NumPy's *_like lays out a new array: in a's
    own memory order for "K" (and "A", "F" as they say) where the shape is
    a's number of dimensions, else in C order."""
    shape = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)
    if not isinstance(a, GpuArray) or len(shape) != a.ndim or a.ndim < 2:
        return make(shape)
    axes = _core.layout_order(a, order)
    if axes == list(range(a.ndim)):
        return make(shape)
    return make(tuple(shape[d] for d in axes)).transpose(np.argsort(axes).tolist())


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_device(device)
    return _laid_out_like(lambda s: full(s, fill_value, _like_dtype(a, dtype)), a, order, _like_shape(a, shape))


def _filled_like(a, value, dtype, shape, order):
    if type(a) is GpuArray and shape is None and (a.ndim < 2 or _core.in_order(a, "C")) and order in ("K", "C", "A"):
        # `np.zeros_like(x)` in a loop: the core's fill with x's shape and dtype.
        return _filled(a.shape, value, a.dtype if dtype is None else dtype)
    return full_like(a, value, dtype, order=order, shape=shape)


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_device(device)
    return _filled_like(a, 0, dtype, shape, order)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_device(device)
    return _filled_like(a, 1, dtype, shape, order)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_device(device)
    return _filled_like(prototype, 0, dtype, shape, order)


def _index(shape, axis, dtype):
    return _core.index_array(shape, axis, dtype)


def _arange_length(start, stop, step):
    """The number of elements of arange(start, stop, step), computed in
    float64 as NumPy does, with NumPy's errors for lengths it cannot
    compute (NaN) or hold (infinite, or beyond the largest intp)."""
    with np.errstate(all="ignore"):
        length = np.ceil((np.float64(stop) - np.float64(start)) / np.float64(step))
    if np.isnan(length):
        raise ValueError("arange: cannot compute length")
    if not -2.0 ** 63 <= length < 2.0 ** 63:
        raise ValueError("Maximum allowed size exceeded")
    return max(0, int(length))


def arange(start_or_stop, stop=None, step=None, dtype=None, *, like=None, device=None):
    """Like numpy.arange, as an index expression: start + i * step."""
    check_device(device)
    if stop is None:
        start, stop = 0, start_or_stop
    else:
        start = start_or_stop
    if step is None:
        step = 1
    args = [a for a in (start, stop, step) if a is not None]
    if (dtype is not None and not is_supported(np.dtype(dtype))) or any(
            isinstance(a, (str, bytes, np.datetime64, np.timedelta64)) for a in args):
        # Dates, times, strings: a NumPy array handed through, like any
        # dtype gpupy cannot hold.
        return np.arange(start, stop, step, dtype=dtype)
    if any(isinstance(a, (complex, np.complexfloating)) or np.ndim(a) != 0 for a in args):
        return call_numpy("arange", (start, stop, step), {"dtype": dtype}, reason="its arguments are complex or arrays")
    if step == 0:
        raise ZeroDivisionError("division by zero")
    if dtype is None:
        # NumPy's arange works with Python numbers: float64 if any argument
        # is a float, else int64 (np.float32 and np.int8 arguments too).
        inexact = any(isinstance(a, (float, np.floating)) for a in args)
        result_dtype = np.dtype(np.float64 if inexact else np.int64)
    else:
        result_dtype = np.dtype(dtype)
    length = _arange_length(start, stop, step)
    if not is_supported(result_dtype):
        return np.arange(start, stop, step, dtype=result_dtype)
    i = _index((length,), 0, result_dtype)
    if length == 0:
        return i
    # NumPy stores v0 = dtype(start) and v1 = dtype(start + step), then
    # fills v0 + i*delta in the dtype with delta = v1 - v0.
    t = result_dtype.type
    v0 = t(start)
    v1 = t(start + step)
    with np.errstate(over="ignore"):
        delta = t(v1 - v0)
    if v0 == 0 and delta == 1:
        return i
    values = i * delta + v0
    if length > 1 and t(v0 + delta) != v1:
        values = _core.where(i == 1, v1, values)
    return values


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """Like numpy.linspace, computed as an index expression."""
    check_device(device)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    if np.ndim(start) != 0 or np.ndim(stop) != 0 or isinstance(start, GpuArray) or isinstance(stop, GpuArray):
        return call_numpy("linspace", (start, stop, num, endpoint, retstep, dtype, axis), {},
                          reason="its endpoints are arrays")
    div = (num - 1) if endpoint else num
    dt = np.result_type(start, stop, 1.0)
    if not is_supported(dt):
        return call_numpy("linspace", (start, stop, num, endpoint, retstep, dtype, axis), {},
                          reason=f"gpupy cannot hold its dtype, {dt}")
    start_a = np.asarray(start, dtype=dt)
    stop_a = np.asarray(stop, dtype=dt)
    delta = np.subtract(stop_a, start_a, dtype=dt.type)
    y = _index((num,), 0, dt)
    if div > 0:
        step = delta / div
        if step == 0:
            y = (y / div) * delta
        else:
            y = y * step
    else:
        step = np.nan
        y = y * delta
    y = y + start_a[()]
    if endpoint and num > 1:
        y = _core.where(_index((num,), 0, np.int64) == num - 1, stop_a[()], y)
    if dtype is not None:
        if np.issubdtype(dtype, np.integer):
            y = _core.ufunc("floor", y)
        y = y.astype(dtype)
    return (y, step) if retstep else y


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """Calls function with one index expression per axis (as NumPy does
    with numpy.indices), so the result is computed on the device."""
    shape = tuple(shape)
    args = [_index(shape, axis, dtype) for axis in range(len(shape))]
    return function(*args, **kwargs)


def copy(a, order="K", subok=False):
    return array(a, copy=True, order=order)


def frombuffer(*args, **kwargs):
    """numpy.frombuffer: a view of the buffer's memory, as NumPy's."""
    return from_numpy(np.frombuffer(*args, **kwargs))
