"""Advanced indexing on the device: integer-array keys (`a[I, J]`,
`a[I, :]`, `a[2:, [0, 3]]`, ...) and numpy.take become one GATHER node
of the array's storage, whose index -- the storage position of each result
element -- is an int64 expression of the index arrays, fused with them and
with what uses the result. Out-of-range indices raise NumPy's IndexError at
the call, as in NumPy: the indices are checked on the device first (one
small reduction), never read outside the array. Keys of other forms
(boolean masks, None, an index array with non-integer values) return None
here and NumPy indexes them."""

import numpy as np

from . import _core
from ._convert import asarray as _as_gpu
from ._core import GpuArray
from ._fallback import call_numpy
from ._registry import function, hooks, implements

_FULL = slice(None)


def _expanded(key, ndim):
    """The key as one entry per dimension (Ellipsis and the missing trailing
    dimensions as full slices), or None for forms handled by NumPy."""
    key = key if isinstance(key, tuple) else (key,)
    ellipses = [n for n, k in enumerate(key) if k is Ellipsis]
    if len(ellipses) > 1:
        return None
    if ellipses:
        at = ellipses[0]
        key = key[:at] + (_FULL,) * (ndim - len(key) + 1) + key[at + 1:]
    if len(key) > ndim:
        return None
    return key + (_FULL,) * (ndim - len(key))


def _index_array(k):
    """An index entry as a GpuArray of integers, or None (a mask, None, ...)."""
    if k is None or isinstance(k, (bool, np.bool_)):
        return None
    g = _as_gpu(k)
    if not isinstance(g, GpuArray) or g.dtype.kind not in "iu":
        return None
    return g


def gather(a, key):
    """a[key] for integer-array keys as a GATHER on the device, or None."""
    key = _expanded(key, a.ndim)
    if key is None:
        return None
    arrays, basic = {}, []
    for d, k in enumerate(key):
        if isinstance(k, slice):
            basic.append(k)
            continue
        g = _index_array(k)
        if g is None:
            return None
        arrays[d] = g
        basic.append(_FULL)
    if not arrays:
        return None
    # Slices first, as a view (they keep their places in the result).
    v = a[tuple(basic)] if any(s != _FULL for s in basic) else a
    axes = sorted(arrays)
    index = [arrays[d] for d in axes]
    try:
        shape = np.broadcast_shapes(*[g.shape for g in index])
    except ValueError:
        _raise_numpys_error(a.shape, v.dtype, key)
    _check_bounds(a.shape, v, axes, index, key)
    # NumPy's rule: adjacent index arrays put their broadcast shape where
    # they stand; separated ones put it first.
    rest = [d for d in range(v.ndim) if d not in arrays]
    adjacent = axes == list(range(axes[0], axes[-1] + 1))
    lead = [d for d in rest if d < axes[0]] if adjacent else []
    trail = [d for d in rest if d not in lead]
    result_shape = tuple(v.shape[d] for d in lead) + shape + tuple(v.shape[d] for d in trail)
    if 0 in result_shape:
        return function("empty")(result_shape, v.dtype)
    offset, _, strides = v._view
    nd = len(result_shape)
    at = len(lead)  # where the broadcast shape starts in the result

    def placed(x, first, count):
        """x (of `count` dims) as dims first..first+count-1 of the result."""
        return x.reshape((1,) * first + x.shape + (1,) * (nd - first - count))

    position = None
    for d, g in zip(axes, index):
        n = v.shape[d]
        i = g.astype(np.int64)
        term = function("where")(i < 0, i + n, i) * strides[d]
        term = placed(function("broadcast_to")(term, shape), at, len(shape))
        position = term if position is None else position + term
    for r, d in enumerate(lead + trail):
        spot = r if r < at else r + len(shape)
        term = placed(function("arange")(v.shape[d], dtype=np.int64) * strides[d], spot, 1)
        position = position + term
    return _core.gather(v, function("broadcast_to")(position + offset, result_shape))


def _check_bounds(shape, v, axes, index, key):
    """NumPy's IndexError if an index is outside its axis of v (the array
    of `shape` after the key's slices): checked on the device (one
    reduction), the message from NumPy's own indexing of that shape."""
    outside = None
    for d, g in zip(axes, index):
        n = v.shape[d]
        bad = g >= n if g.dtype.kind == "u" else (g < -n) | (g >= n)
        outside = bad if outside is None else outside | bad  # (they broadcast together)
    if bool(outside.any()):
        _raise_numpys_error(shape, v.dtype, key)


def _raise_numpys_error(shape, dtype, key):
    """Raises the IndexError NumPy gives for `key` into an array of `shape`
    (indexing a broadcast scalar of that shape: no memory)."""
    host_key = tuple(np.asarray(k) if isinstance(k, GpuArray) else k for k in key)
    np.broadcast_to(np.empty((), dtype), shape)[host_key]
    raise IndexError(f"index out of bounds for an array of shape {shape}")  # (NumPy raised first)


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    g = _as_gpu(a)
    if out is None and mode == "raise" and isinstance(g, GpuArray) and np.ndim(indices):
        if axis is None:
            got = gather(g.reshape(-1), (indices,))
        else:
            if not isinstance(axis, (int, np.integer)):
                raise TypeError(f"'{type(axis).__name__}' object cannot be interpreted as an integer")
            ax = int(axis)
            if not -g.ndim <= ax < g.ndim:
                raise np.exceptions.AxisError(ax, g.ndim)
            got = gather(g, (_FULL,) * (ax % g.ndim) + (indices,))
        if got is not None:
            return got
    return call_numpy("take", (a, indices), dict(axis=axis, out=out, mode=mode),
                      reason="take with out=, mode=, one index or indices that are not integers")


hooks["gather"] = gather
