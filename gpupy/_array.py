"""Python-level methods of GpuArray: printing, iteration, NumPy's
protocols (__array_ufunc__, __array_function__), pickling, and the array
methods built on the rest of the package."""

import numpy as np

from . import _core
from ._core import GpuArray
from ._fallback import call_numpy, from_numpy, note_fallback, to_numpy

# numpy function -> gpupy implementation, for __array_function__.
_FUNCTIONS = {}


def implements(*numpy_functions):
    """Registers a gpupy function as the implementation of NumPy functions."""

    def register(func):
        for f in numpy_functions:
            _FUNCTIONS[f] = func
        return func

    return register


def _repr(self):
    return repr(np.asarray(self))


def _str(self):
    return str(np.asarray(self))


def _format(self, spec):
    return format(np.asarray(self)[()] if self.ndim == 0 else np.asarray(self), spec)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    if self.ndim == 1:
        # One evaluation for all elements, then plain NumPy scalars.
        yield from np.asarray(self)
        return
    for i in range(self.shape[0]):
        yield self[i]


def _tolist(self):
    return np.asarray(self).tolist()


def _reshape(self, *shape, order="C", copy=None):
    if len(shape) == 1:
        shape = shape[0]
    if order == "C":
        result = self._reshape(shape)
    elif order == "F":
        target = (shape,) if isinstance(shape, int) else tuple(shape)
        result = self.T._reshape(target[::-1]).T
    else:
        raise ValueError("order must be one of 'C', 'F', 'A' (gpupy supports 'C' and 'F')")
    return result.copy() if copy else result


def _ravel(self, order="C"):
    return _reshape(self, -1, order=order)


def _flatten(self, order="C"):
    return _reshape(self, -1, order=order).copy()


def _squeeze(self, axis=None):
    if axis is None:
        axes = [i for i, n in enumerate(self.shape) if n == 1]
    else:
        axes = [axis] if np.ndim(axis) == 0 else list(axis)
        axes = [_norm_axis(a, self.ndim) for a in axes]
        for a in axes:
            if self.shape[a] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    shape = [n for i, n in enumerate(self.shape) if i not in axes]
    return self._reshape(tuple(shape))


def _norm_axis(axis, ndim):
    if axis < -ndim or axis >= ndim:
        raise np.exceptions.AxisError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else axis


def _swapaxes(self, axis1, axis2):
    axes = list(range(self.ndim))
    a, b = _norm_axis(axis1, self.ndim), _norm_axis(axis2, self.ndim)
    axes[a], axes[b] = axes[b], axes[a]
    return self.transpose(axes)


def _reduce_ex(self, protocol):
    from ._creation import array

    return (array, (np.array(self),))


def _copy_protocol(self, *args):
    return self.copy()


def _flat(self):
    return np.asarray(self).flat


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy's ufuncs on GpuArrays (np.sin(g), ndarray + g) stay on the device."""
    from . import _namespace

    gp = _namespace.UFUNCS.get(ufunc.__name__)
    if gp is not None:
        target = gp if method == "__call__" else getattr(gp, method, None)
        if target is not None:
            return target(*inputs, **kwargs)
    return call_numpy(f"{ufunc.__name__}.{method}" if method != "__call__" else ufunc.__name__,
                      inputs, kwargs, func=getattr(ufunc, method) if method != "__call__" else ufunc,
                      reason="ufunc gpupy does not implement")


def _array_function(self, func, types, args, kwargs):
    """numpy.f(g) calls gpupy's f where gpupy has one, else NumPy's."""
    impl = _FUNCTIONS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    return call_numpy(func.__name__, args, kwargs, func=func, reason="function gpupy does not implement")


def _advanced_getitem(self, key):
    note_fallback("__getitem__", "advanced indexing runs in NumPy")
    return from_numpy(np.asarray(self)[to_numpy(key)])


def _advanced_setitem(self, key, value):
    note_fallback("__setitem__", "advanced indexing runs in NumPy")
    host = np.array(self)
    host[to_numpy(key)] = to_numpy(value)
    self[...] = host


_orig_astype = GpuArray.astype


def install():
    """Adds the Python-level methods to the C++ GpuArray class."""
    cls = GpuArray
    cls.__repr__ = _repr
    cls.__str__ = _str
    cls.__format__ = _format
    cls.__iter__ = _iter
    cls.tolist = _tolist
    cls.reshape = _reshape
    cls.ravel = _ravel
    cls.flatten = _flatten
    cls.squeeze = _squeeze
    cls.swapaxes = _swapaxes
    cls.flat = property(_flat)
    cls.__reduce_ex__ = _reduce_ex
    cls.__copy__ = _copy_protocol
    cls.__deepcopy__ = _copy_protocol
    cls.__array_ufunc__ = _array_ufunc
    cls.__array_function__ = _array_function
    cls.__array_priority__ = 100
    cls.astype = lambda self, dtype, order="K", casting="unsafe", subok=True, copy=True: (
        _astype_impl(self, dtype, casting, copy))
    _core._set_advanced_indexing(_advanced_getitem, _advanced_setitem)


def _astype_impl(self, dtype, casting, copy):
    if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {self.dtype!r} to {np.dtype(dtype)!r} "
                        f"according to the rule {casting!r}")
    return _orig_astype(self, dtype, copy)
