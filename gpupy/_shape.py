"""Shape functions. Views where NumPy gives views; joins run in NumPy
for now (counted as fallbacks)."""

import numpy as np

from . import _core
from ._array import implements
from ._core import GpuArray
from ._fallback import call_numpy


def _as_gpu(a):
    from ._creation import asarray

    return asarray(a)


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return call_numpy("stack", (list(arrays),), {"axis": axis, "out": out, "dtype": dtype, "casting": casting},
                      reason="joins are not lazy yet")


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    return call_numpy("concatenate", (list(arrays),), {"axis": axis, "out": out, "dtype": dtype, "casting": casting},
                      reason="joins are not lazy yet")


@implements(np.transpose)
def transpose(a, axes=None):
    return _as_gpu(a).transpose(axes)


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    return _as_gpu(a).reshape(shape, order=order, copy=copy)


@implements(np.ravel)
def ravel(a, order="C"):
    return _as_gpu(a).ravel(order)


@implements(np.squeeze)
def squeeze(a, axis=None):
    return _as_gpu(a).squeeze(axis)


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    return _as_gpu(array)._broadcast_to(shape)


@implements(np.expand_dims)
def expand_dims(a, axis):
    a = _as_gpu(a)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    nd = a.ndim + len(axes)
    norm = sorted(ax % nd if -nd <= ax < nd else _raise_axis(ax, nd) for ax in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis")
    shape = list(a.shape)
    for ax in norm:
        shape.insert(ax, 1)
    return a._reshape(tuple(shape))


def _raise_axis(ax, nd):
    raise np.exceptions.AxisError(f"axis {ax} is out of bounds for array of dimension {nd}")


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    return _as_gpu(a).swapaxes(axis1, axis2)


@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return call_numpy("where", (condition,), {}, reason="one-argument where (nonzero) runs in NumPy")
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _core.where(condition, x, y)


@implements(np.shape)
def shape(a):
    return tuple(a.shape) if isinstance(a, GpuArray) else np.shape(a)


@implements(np.ndim)
def ndim(a):
    return a.ndim if isinstance(a, GpuArray) else np.ndim(a)


@implements(np.size)
def size(a, axis=None):
    if isinstance(a, GpuArray):
        return a.size if axis is None else a.shape[axis]
    return np.size(a, axis)
