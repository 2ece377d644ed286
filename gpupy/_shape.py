"""Shape functions: views where NumPy gives views (and where strided
arithmetic can express the result: flip, broadcast_to, diagonal, split),
lazy nodes for the rest (joins, repeat, tile, roll), all evaluated on the
device."""

import functools
import operator

import numpy as np
from numpy._core import umath as _umath

from . import _core
from ._axes import normalize_axis
from ._convert import asarray as _as_gpu
from ._convert import is_supported, stored_as
from ._core import GpuArray
from ._creation import arange, zeros
from ._fallback import call_numpy
from ._placement import host_function, placement_counts
from ._reductions import sum as _sum
from ._registry import implements


def _all_gpu(arrays):
    """The arrays as GpuArrays, or None if one has a dtype gpupy can't hold."""
    out = [_as_gpu(a) for a in arrays]
    return out if all(isinstance(a, GpuArray) for a in out) else None


def _reshaped(a, shape):
    """a viewed with `shape`: lazily on the device, or in NumPy for an
    ndarray of a dtype gpupy cannot hold (e.g. a float16 fallback result)."""
    return a._reshape(shape) if isinstance(a, GpuArray) else np.reshape(a, shape)


def _broadcast(a, shape):
    return a._broadcast_to(shape) if isinstance(a, GpuArray) else np.broadcast_to(a, shape)


def _numpy_for_host_dtypes(numpy_function):
    """Decorator: the function's array argument, if gpupy cannot hold its
    dtype (complex, float16, ... results of NumPy), goes to NumPy's own
    function: the array is NumPy's, handed through."""

    def decorate(func):
        @functools.wraps(func)
        def dispatch(a, *args, **kwargs):
            if not isinstance(_as_gpu(a), GpuArray):
                return numpy_function(a, *args, **kwargs)
            return func(a, *args, **kwargs)

        return dispatch

    return decorate


def _result_dtype(arrays, dtype):
    return np.dtype(dtype) if dtype is not None else np.result_type(*[a.dtype for a in arrays])


@implements(np.concatenate)
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    if dtype is None and out is None and axis is not None and arrays and all(type(a) is GpuArray for a in arrays):
        # gpupy arrays of one dtype (`np.concatenate([x, y])` in a loop): no
        # promotion or casting check to make (a gpupy array's dtype object is
        # one per dtype, so `is` compares them).
        first = arrays[0].dtype
        if all(a.dtype is first for a in arrays):
            return _core.concatenate(arrays, axis, first)
    gpu = _all_gpu(arrays)
    if gpu is None or not arrays:
        return call_numpy("concatenate", (arrays,), dict(axis=axis, out=out, dtype=dtype, casting=casting),
                          reason="gpupy cannot hold the dtypes" if arrays else "there are no arrays")
    if axis is None:
        gpu = [a.reshape(-1) for a in gpu]
        axis = 0
    dt = _result_dtype(gpu, dtype)
    for a in gpu:
        if not np.can_cast(a.dtype, dt, casting=casting):
            raise TypeError(f"Cannot cast array data from {a.dtype!r} to {dt!r} according to the rule {casting!r}")
    result = _core.concatenate(gpu, axis, dt)
    if out is not None:
        out[...] = result
        return out
    return result


@implements(np.stack)
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [_as_gpu(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {tuple(np.shape(a)) for a in arrays}
    if len(shapes) != 1:
        raise ValueError("all input arrays must have the same shape")
    nd = arrays[0].ndim + 1
    ax = normalize_axis(axis, nd)
    expanded = [expand_dims(a, ax) for a in arrays]
    return concatenate(expanded, axis=ax, out=out, dtype=dtype, casting=casting)


def _atleast(a, n):
    a = _as_gpu(a)
    if a.ndim >= n:
        return a
    if n == 1:
        return a.reshape(1)
    if n == 2:
        return a.reshape((1,) * (2 - a.ndim) + a.shape)
    # atleast_3d: (N,) -> (1, N, 1); (M, N) -> (M, N, 1)
    if a.ndim == 0:
        return a.reshape(1, 1, 1)
    if a.ndim == 1:
        return a.reshape(1, a.shape[0], 1)
    return a.reshape(a.shape + (1,))


@implements(np.atleast_1d)
def atleast_1d(*arys):
    res = [_atleast(a, 1) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.atleast_2d)
def atleast_2d(*arys):
    res = [_atleast(a, 2) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.atleast_3d)
def atleast_3d(*arys):
    res = [_atleast(a, 3) for a in arys]
    return res[0] if len(res) == 1 else tuple(res)


@implements(np.vstack)
def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([_atleast(a, 2) for a in tup], axis=0, dtype=dtype, casting=casting)


@implements(np.hstack)
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [_atleast(a, 1) for a in tup]
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype, casting=casting)


@implements(np.dstack)
def dstack(tup):
    return concatenate([_atleast(a, 3) for a in tup], axis=2)


@implements(np.column_stack)
def column_stack(tup):
    arrs = []
    for a in tup:
        a = _as_gpu(a)
        arrs.append(a.reshape(-1, 1) if a.ndim < 2 else a)
    return concatenate(arrs, axis=1)


@implements(np.append)
def append(arr, values, axis=None):
    arr, values = _as_gpu(arr), _as_gpu(values)
    if axis is None:
        return concatenate([arr.reshape(-1), values.reshape(-1)], axis=0)
    return concatenate([arr, values], axis=axis)


# insert, delete and resize: NumPy's own on the host values, counted as
# host placements. Their work is one copy of the array with elements
# added, left out or repeated; NumPy does that at memory speed, where the
# same array as a lazy join of slices would cost a node per piece and an
# evaluation to read it back. Their index arguments (scalars, slices,
# lists, boolean masks, negative and out-of-range positions) are NumPy's
# to interpret.
_insert_on_host = host_function("insert", np.insert)
_delete_on_host = host_function("delete", np.delete)
implements(np.resize)(host_function("resize", np.resize))
_placed = placement_counts()
_NUMBERS = (int, float, bool)


# A loop that inserts into or deletes from a large 1-D array one element
# at a time (an array-backed container) takes the short way below: NumPy's
# own steps for one position (the same empty array and slice copies as
# numpy.insert and numpy.delete, the value converted by the same
# numpy.array call), without their argument handling, which costs more
# than the copies of a small array. Any other call -- an index out of
# range included, for NumPy's error -- is NumPy's function itself.

@implements(np.insert)
def insert(arr, obj, values, axis=None):
    if (type(arr) is GpuArray and type(obj) is int and type(values) in _NUMBERS and arr.ndim == 1
            and (axis is None or (type(axis) is int and -1 <= axis <= 0)) and -arr.shape[0] <= obj <= arr.shape[0]):
        _placed["insert"] += 1
        host = arr.__array__()
        index = obj + host.shape[0] if obj < 0 else obj
        values = np.array(values, copy=None, ndmin=1, dtype=host.dtype)
        new = np.empty(host.shape[0] + 1, host.dtype)
        new[:index] = host[:index]
        new[index:index + 1] = values
        new[index + 1:] = host[index:]
        return _core.array_from_numpy(new)
    return _insert_on_host(arr, obj, values, axis)


@implements(np.delete)
def delete(arr, obj, axis=None):
    if (type(arr) is GpuArray and type(obj) is int and arr.ndim == 1
            and (axis is None or (type(axis) is int and -1 <= axis <= 0)) and -arr.shape[0] <= obj < arr.shape[0]):
        _placed["delete"] += 1
        host = arr.__array__()
        index = obj + host.shape[0] if obj < 0 else obj
        new = np.empty(host.shape[0] - 1, host.dtype)
        new[:index] = host[:index]
        new[index:] = host[index + 1:]
        return _core.array_from_numpy(new)
    return _delete_on_host(arr, obj, axis)


@implements(np.transpose)
def transpose(a, axes=None):
    return _as_gpu(a).transpose(axes)


@implements(np.moveaxis)
def moveaxis(a, source, destination):
    a = _as_gpu(a)
    src = [normalize_axis(s, a.ndim) for s in (source if np.ndim(source) else [source])]
    dst = [normalize_axis(d, a.ndim) for d in (destination if np.ndim(destination) else [destination])]
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return a.transpose(order)


@implements(np.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    if shape is None:
        shape = newshape
    a = _as_gpu(a)
    if copy is None:  # (an ndarray's reshape before NumPy 2.1 has no copy=)
        return a.reshape(shape, order=order)
    return a.reshape(shape, order=order, copy=copy)


@implements(np.ravel)
def ravel(a, order="C"):
    return _as_gpu(a).ravel(order)


@implements(np.squeeze)
def squeeze(a, axis=None):
    return _as_gpu(a).squeeze(axis)


@implements(np.broadcast_to)
def broadcast_to(array, shape, subok=False):
    return _broadcast(_as_gpu(array), shape)


@implements(np.broadcast_arrays)
def broadcast_arrays(*args, subok=False):
    arrays = [_as_gpu(a) for a in args]
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return tuple(_broadcast(a, shape) for a in arrays)


@implements(np.expand_dims)
def expand_dims(a, axis):
    a = _as_gpu(a)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    nd = a.ndim + len(axes)
    norm = sorted(normalize_axis(ax, nd) for ax in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis")
    shape = list(a.shape)
    for ax in norm:
        shape.insert(ax, 1)
    return _reshaped(a, tuple(shape))


@implements(np.swapaxes)
def swapaxes(a, axis1, axis2):
    return _as_gpu(a).swapaxes(axis1, axis2)


_REVERSED = slice(None, None, -1)
_REVERSE_ALL = [(), (_REVERSED,), (_REVERSED, _REVERSED), (_REVERSED,) * 3, (_REVERSED,) * 4]


@implements(np.flip)
def flip(m, axis=None):
    if axis is None and type(m) is GpuArray and m.ndim < len(_REVERSE_ALL):
        return m[_REVERSE_ALL[m.ndim]]  # np.flip(y[:k]) in a loop: one view, nothing else
    m = _as_gpu(m)
    axes = range(m.ndim) if axis is None else [normalize_axis(ax, m.ndim) for ax in (axis if np.ndim(axis) else [axis])]
    key = [slice(None)] * m.ndim
    for ax in axes:
        key[ax] = slice(None, None, -1)
    return m[tuple(key)]


@implements(np.fliplr)
def fliplr(m):
    m = _as_gpu(m)
    if m.ndim < 2:
        raise ValueError("Input must be >= 2-d.")
    return m[:, ::-1]


@implements(np.flipud)
def flipud(m):
    m = _as_gpu(m)
    if m.ndim < 1:
        raise ValueError("Input must be >= 1-d.")
    return m[::-1]


@implements(np.roll)
@_numpy_for_host_dtypes(np.roll)
def roll(a, shift, axis=None):
    a = _as_gpu(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    pairs = np.broadcast(shift, axis)
    if pairs.nd > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    # One read of `a` with every axis's shift (repeated axes add up), so a
    # torus stencil's rolls all read the same array in one pass.
    shifts = [0] * a.ndim
    for s, ax in pairs:
        shifts[normalize_axis(ax, a.ndim)] += int(s)
    # NumPy fills an empty_like(a): the result keeps a's memory order.
    if all(n == 0 or s % n == 0 for s, n in zip(shifts, a.shape)):
        return a.copy(order="K")
    axes = _core.order_of(a)
    if axes == list(range(a.ndim)):
        return _core.roll(a, shifts)
    return _core.roll(a.transpose(axes), [shifts[d] for d in axes]).transpose(np.argsort(axes).tolist())


def _width_pairs(x, ndim, name, as_index):
    """numpy.pad's per-axis (before, after) pairs from its broadcastable
    forms: one number, one pair, or one pair per axis."""
    x = np.asarray(x)
    if as_index:
        if x.dtype.kind != "i":  # as NumPy: not even unsigned
            raise TypeError(f"`{name}` must be of integral type.")
        x = x.astype(np.intp)
    if x.ndim < 3 and x.size == 1:
        pairs = [(x.item(), x.item())] * ndim
    elif x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        b, e = x.ravel().tolist()
        pairs = [(b, e)] * ndim
    else:
        pairs = [tuple(p) for p in np.broadcast_to(x, (ndim, 2)).tolist()]
    if as_index and any(v < 0 for p in pairs for v in p):
        raise ValueError("index can't contain negative values")
    return pairs


_PAD_KEYWORDS = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "reflect": {"reflect_type"},
                 "symmetric": {"reflect_type"}, "empty": set()}


@implements(np.pad)
@_numpy_for_host_dtypes(np.pad)
def pad(array, pad_width, mode="constant", **kwargs):
    a = _as_gpu(array)
    if callable(mode) or mode not in _PAD_KEYWORDS or kwargs.get("reflect_type", "even") != "even":
        return call_numpy("pad", (a, pad_width, mode), kwargs, reason=f"gpupy does not pad with mode {mode!r} and {kwargs or 'its defaults'} on the device")
    unsupported = set(kwargs) - _PAD_KEYWORDS[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    widths = _width_pairs(pad_width, a.ndim, "pad_width", as_index=True)
    before, after = [b for b, _ in widths], [e for _, e in widths]
    shape = tuple(n + b + e for n, b, e in zip(a.shape, before, after))
    # NumPy pads a Fortran-ordered array into a Fortran-ordered result: the
    # remapped read is made of the transpose, then viewed back.
    fortran = a.ndim > 1 and _core.in_order(a, "F") and not _core.in_order(a, "C")

    def remapped(edge):  # one remapped read of `a`
        if fortran:
            return _core.pad(a.T, before[::-1], after[::-1], edge).T
        return _core.pad(a, before, after, edge)

    if mode not in ("constant", "empty"):
        return remapped(mode)
    # Constant: the inside is `a` (read clamped, so every position reads
    # inside it), the pads are the values, set axis by axis as NumPy does
    # (a later axis's value wins in the corners); one fused expression.
    values = _width_pairs(kwargs.get("constant_values", 0), a.ndim, "constant_values", as_index=False)
    if a.size:
        out = remapped("edge")
    else:
        out = zeros(shape[::-1], a.dtype).T if fortran else zeros(shape, a.dtype)
    for axis, (n, b, e) in enumerate(zip(a.shape, before, after)):
        if b == 0 and e == 0:
            continue
        position = arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(a.ndim)])
        low, high = (stored_as(v, a.dtype) for v in values[axis])
        out = _core.where(position < b, low, _core.where(position >= b + n, high, out))
    return out


@implements(np.repeat)
@_numpy_for_host_dtypes(np.repeat)
def repeat(a, repeats, axis=None):
    a = _as_gpu(a)
    if np.ndim(repeats) != 0:
        return call_numpy("repeat", (a, repeats), dict(axis=axis), reason="the repeat counts differ per element")
    r = int(repeats)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    ax = normalize_axis(axis, a.ndim)
    if r < 0 and a.shape[ax]:  # (NumPy checks the count of each element repeated: none of an empty axis)
        raise ValueError("negative dimensions are not allowed")
    r = max(r, 0)
    shape = list(a.shape)
    shape[ax] *= r
    div = [1] * a.ndim
    div[ax] = max(r, 1)
    return _core.remap(a, tuple(shape), div, [0] * a.ndim)


@implements(np.tile)
@_numpy_for_host_dtypes(np.tile)
def tile(A, reps):
    A = _as_gpu(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    nd = max(len(reps), A.ndim)
    reps = (1,) * (nd - len(reps)) + reps
    src = A.reshape((1,) * (nd - A.ndim) + A.shape)
    shape = tuple(n * r for n, r in zip(src.shape, reps))
    if src.size == 0:
        # As NumPy's: the empty array reshaped to the result's shape, where
        # a negative count leaves a negative length, reshape's unknown one.
        return src.reshape(shape)
    if min(reps) < 0:
        raise ValueError("negative dimensions are not allowed")
    return _core.remap(src, shape, [1] * nd, list(src.shape))


@implements(np.round, np.around)
def round(a, decimals=0, out=None):  # noqa: A001 (numpy.round's name)
    """numpy.round with NumPy's own steps (multiply by 10**decimals, round
    half to even, divide back, each in the array's float dtype; integers
    and booleans are their own rounding), on the device."""
    g = _as_gpu(a)
    decimals = operator.index(decimals)
    if not isinstance(g, GpuArray) or (g.dtype.kind in "iu" and decimals < 0) or g.dtype.kind == "b":
        return call_numpy("round", (a, decimals), dict(out=out), reason="the array is not of floats or integers, "
                          "or integers are rounded to a negative number of decimals")
    if g.dtype.kind in "iu":
        result = g.copy(order="K")  # NumPy's copy keeps the layout (then a reshape is a view where NumPy's is)
    elif decimals >= 0:
        factor = 10.0 ** decimals
        result = _core.ufunc("divide", _core.ufunc("rint", _core.ufunc("multiply", g, factor)), factor)
    else:
        factor = 10.0 ** -decimals
        result = _core.ufunc("multiply", _core.ufunc("rint", _core.ufunc("divide", g, factor)), factor)
    if out is not None:
        out[...] = result
        return out
    return result


around = round


@implements(np.clip)
def clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue, max=np._NoValue, **kwargs):
    lo = a_min if a_min is not np._NoValue else (min if min is not np._NoValue else None)
    hi = a_max if a_max is not np._NoValue else (max if max is not np._NoValue else None)
    g = _as_gpu(a)
    if kwargs or not isinstance(g, GpuArray):
        return call_numpy("clip", (a, lo, hi), dict(out=out, **kwargs),
                          reason="gpupy does not handle these arguments or this dtype on the device")
    # As NumPy's ndarray.clip: a Python int bound beyond an integer dtype's
    # range clips nothing (NEP 50 leaves no value-based promotion); one bound
    # is maximum or minimum; both are NumPy's clip ufunc -- minimum(maximum(a,
    # lo), hi), NaN propagating -- in the loop dtype it resolves for all three.
    info = np.iinfo(g.dtype) if g.dtype.kind in "iu" else None
    beyond_the_dtype = info is not None and any(type(b) is int and not info.min <= b <= info.max for b in (lo, hi))
    given = {name: value for name, value in (("a_min", a_min), ("a_max", a_max), ("min", min), ("max", max))
             if value is not np._NoValue}
    if given and ((lo is None and hi is None) or beyond_the_dtype):
        # Bounds NumPy's releases judge differently (NumPy 2.0 refuses both
        # None, and Python ints beyond the dtype's range): its verdict on an
        # empty stand-in. (No bounds at all is the Array API's clip(x).)
        np.clip(np.empty(0, g.dtype), **given)
    if info is not None:
        lo = None if type(lo) is int and lo <= info.min else lo
        hi = None if type(hi) is int and hi >= info.max else hi
    if lo is None and hi is None:
        return _core.ufunc("positive", g, out=out)
    if lo is None:
        return _core.ufunc("minimum", g, hi, out=out)
    if hi is None:
        return _core.ufunc("maximum", g, lo, out=out)
    loop = _umath.clip.resolve_dtypes((g.dtype, _signature(lo), _signature(hi), None))
    if not all(is_supported(t) for t in loop):
        return call_numpy("clip", (a, lo, hi), dict(out=out), reason="its loop's dtype is not one gpupy holds")
    return _core.ufunc("minimum", _core.ufunc("maximum", g.astype(loop[0], copy=False), lo), hi, out=out)


def _signature(x):
    """How NumPy's type resolution sees an operand: Python int and float
    are weak (NEP 50), anything else has its dtype."""
    if type(x) in (int, float):
        return type(x)
    return x.dtype if isinstance(x, (GpuArray, np.ndarray, np.generic)) else np.asarray(x).dtype


@implements(np.meshgrid)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    xs = [_as_gpu(x).reshape(-1) for x in xi]
    nd = len(xs)
    out = []
    for i, x in enumerate(xs):
        shape = [1] * nd
        shape[i] = x.shape[0]
        out.append(x.reshape(shape))
    if indexing == "xy" and nd > 1:
        out[0] = out[0].reshape((1, -1) + (1,) * (nd - 2))
        out[1] = out[1].reshape((-1, 1) + (1,) * (nd - 2))
    if not sparse:
        full = np.broadcast_shapes(*[o.shape for o in out])
        out = [_broadcast(o, full) for o in out]
    if copy:
        out = [o.copy() for o in out]
    return tuple(out)


def indices(dimensions, dtype=int, sparse=False):
    """numpy.indices: one index expression per axis (computed on the
    device), stacked unless sparse."""
    dimensions = tuple(dimensions)
    if sparse:
        result = []
        for axis, n in enumerate(dimensions):
            shape = [1] * len(dimensions)
            shape[axis] = n
            result.append(_core.index_array(tuple(shape), axis, dtype))
        return tuple(result)
    return stack([_core.index_array(dimensions, axis, dtype) for axis in range(len(dimensions))])


@implements(np.diff)
@_numpy_for_host_dtypes(np.diff)
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    a = _as_gpu(a)
    if prepend is not np._NoValue or append is not np._NoValue:
        return call_numpy("diff", (a, n), dict(axis=axis, prepend=prepend, append=append), reason="prepend= or append= is given")
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = normalize_axis(axis, a.ndim)
    for _ in range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[ax] = slice(1, None)
        lo[ax] = slice(None, -1)
        op = "not_equal" if a.dtype == np.bool_ else "subtract"
        a = _core.ufunc(op, a[tuple(hi)], a[tuple(lo)])
    return a


@implements(np.diagonal)
@_numpy_for_host_dtypes(np.diagonal)
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = _as_gpu(a)
    ax1, ax2 = normalize_axis(axis1, a.ndim), normalize_axis(axis2, a.ndim)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    off, shape, strides = a._view
    n1, n2 = shape[ax1], shape[ax2]
    if offset >= 0:
        length = max(0, min(n1, n2 - offset))
        start = off + offset * strides[ax2] if length else off
    else:
        length = max(0, min(n1 + offset, n2))
        start = off - offset * strides[ax1] if length else off
    rest = [i for i in range(a.ndim) if i not in (ax1, ax2)]
    new_shape = tuple(shape[i] for i in rest) + (length,)
    new_strides = tuple(strides[i] for i in rest) + (strides[ax1] + strides[ax2],)
    return _core.view_as(a, start, new_shape, new_strides)


@implements(np.trace)
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype, out=out)


def _triangle(m, k, lower):
    """NumPy's tril (lower) and triu: m where tri(N, M, k) holds, resp.
    where tri(N, M, k - 1) does not, zeros elsewhere, over the last two
    axes (a 1-d m is a row repeated into an N x N result, as in NumPy).
    The mask compares a column of row numbers with a row of shifted
    column numbers, both small arrays in host memory: the whole is NumPy's
    own eager work at small sizes and one fused pass at large ones."""
    m = _as_gpu(m)
    name = "tril" if lower else "triu"
    if m.ndim == 0:
        return call_numpy(name, (m, k), {}, reason="the array is 0-d, which NumPy refuses")
    if not isinstance(k, (int, np.integer)):
        # (NumPy builds tri's columns with an integer arange of a float k.)
        return call_numpy(name, (m, k), {}, reason="the diagonal offset is not an integer")
    rows, cols = m.shape[-2:] if m.ndim >= 2 else (m.shape[-1], m.shape[-1])
    shift = k if lower else k - 1
    row_numbers = _as_gpu(np.arange(rows)[:, None])
    inside = row_numbers >= _as_gpu(np.arange(-shift, cols - shift))  # tri(rows, cols, shift)
    zero = zeros(1, m.dtype)
    return _core.where(inside, m, zero) if lower else _core.where(inside, zero, m)


@implements(np.tril)
@_numpy_for_host_dtypes(np.tril)
def tril(m, k=0):
    return _triangle(m, k, True)


@implements(np.triu)
@_numpy_for_host_dtypes(np.triu)
def triu(m, k=0):
    return _triangle(m, k, False)


def _split_points(n, indices_or_sections, strict):
    if np.ndim(indices_or_sections) == 0:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and n % sections:
            raise ValueError("array split does not result in an equal division")
        base, extra = divmod(n, sections)
        sizes = [base + 1] * extra + [base] * (sections - extra)
        points, acc = [], 0
        for s in sizes[:-1]:
            acc += s
            points.append(acc)
        return points
    return [int(i) for i in indices_or_sections]


def _split(a, indices_or_sections, axis, strict):
    a = _as_gpu(a)
    ax = normalize_axis(axis, a.ndim)
    n = a.shape[ax]
    bounds = [0] + _split_points(n, indices_or_sections, strict) + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        key = [slice(None)] * a.ndim
        key[ax] = slice(lo, hi)
        out.append(a[tuple(key)])
    return out


@implements(np.split)
def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, True)


@implements(np.array_split)
def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, False)


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


# Names gpupy exports from this module (as NumPy functions of the same name).
PUBLIC = (
    "concatenate",
    "stack",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "vstack",
    "hstack",
    "dstack",
    "column_stack",
    "append",
    "transpose",
    "moveaxis",
    "reshape",
    "ravel",
    "squeeze",
    "broadcast_to",
    "broadcast_arrays",
    "expand_dims",
    "swapaxes",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "pad",
    "repeat",
    "tile",
    "clip",
    "round",
    "around",
    "meshgrid",
    "indices",
    "diff",
    "diagonal",
    "trace",
    "split",
    "array_split",
    "shape",
    "ndim",
    "size",
)
