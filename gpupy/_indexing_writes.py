"""Writing by index on the device: `a[key] = value` for masks and
integer-array keys, numpy.put, place, putmask, ufunc.at and bincount.

Writes are selects: the array (or the key's slices of it) becomes
where(written, new value, old value) through the ordinary write path. A
mask's values are gathered by rank (the prefix sum); through integer arrays,
where the last of several writes to an element wins, the written positions
are sorted stably (gpupy/_sorting.py) and each element searches for its last
write (the binary search of _indexing_reads.py). numpy.add.at of integers
and bincount sum the sorted writes with a prefix sum.

Keys of other forms return False here and NumPy writes them."""

import numpy as np

from . import _core
from ._convert import asarray as _as_gpu
from ._convert import stored_as
from ._core import GpuArray
from ._creation import arange, full, ones
from ._fallback import call_numpy
from ._indexing_reads import IntegerKey, binary_search, mask_key, rows_at
from ._placement import data_dependent_shapes_on_host, run_on_host, write_on_host
from ._primitives import read_at
from ._reductions import argmax, cumsum
from ._registry import implements
from ._shape import broadcast_to, clip
from ._sorting import argsort


def scatter(a, key, value):
    """a[key] = value for a boolean mask over a's leading dimensions or an
    integer-array key, as NumPy writes it: the array (or the key's slices of
    it) becomes a select of the new values and its own. True if done; False
    leaves it to NumPy.

    Through a mask, on the device: one fused select for a single value, and
    for an array of values a gather at each element's rank among the masked
    ones (a prefix sum) -- or, where data-dependent work is placed on the
    host, NumPy's masked assignment. Through integer arrays, where several writes may
    land on one element and the last one wins: the written positions sorted
    stably, and for each element of the array a binary search for the last
    write to it -- placed like the other data-dependent work (NumPy on a CPU
    renderer, as a host placement)."""
    if not a.flags.writeable:
        return False
    mask = mask_key(a, key)
    if mask is None:
        return _scatter_through_integers(a, key, value)
    tail = a.shape[mask.ndim:]
    spread = mask.reshape(mask.shape + (1,) * len(tail))
    v = _assigned_values(a.dtype, value)
    if v is None:
        return False
    if not isinstance(v, GpuArray):  # one value
        a[...] = _core.where(spread, v, a)
        return True
    if data_dependent_shapes_on_host():
        # The ranks are a prefix sum, its count read back at once: on a CPU
        # renderer that is several evaluations for what NumPy's masked
        # assignment does in one pass (Mandelbrot's `z[inside] = ...` in a
        # loop: nine host-engine evaluations per write). NumPy writes it, as
        # it reads masks there.
        write_on_host("__setitem__", a, key, value)
        return True
    ranks = cumsum(mask.reshape(-1), dtype=np.int64)
    count = int(ranks[-1]) if ranks.size else 0
    _numpy_accepts_mask_assignment(a.shape, mask.shape, count, v.shape)
    if count == 0 or 0 in tail:  # no element selected (NumPy then takes any empty value it accepted)
        return True
    target = (count,) + tail
    values = broadcast_to(v.reshape(_without_leading_units(v.shape, len(target))), target)
    rank = _core.ufunc("maximum", ranks - 1, 0).reshape(mask.shape)
    a[...] = _core.where(spread, rows_at(values, rank), a)
    return True


def _without_leading_units(shape, ndim):
    """A value's shape with the leading unit dimensions beyond `ndim`
    dropped, as NumPy's assignment drops them."""
    while len(shape) > ndim and shape[0] == 1:
        shape = shape[1:]
    return shape


def _numpy_accepts_mask_assignment(shape, mask_shape, count, value_shape):
    """Raises what NumPy raises for assigning a value of `value_shape`
    through a mask of `mask_shape` with `count` true elements into an array
    of `shape`: the same assignment on stand-ins of those shapes (a
    writable one-byte array seen with zero strides, a mask true at its first
    `count` elements, a broadcast value), which NumPy checks by shapes and
    count alone."""
    stand_in = np.lib.stride_tricks.as_strided(np.zeros(1, np.uint8), shape, (0,) * len(shape), writeable=True)
    marks = np.zeros(mask_shape, bool)
    marks.reshape(-1)[:count] = True
    stand_in[marks] = np.broadcast_to(np.zeros((), np.uint8), value_shape)


def _assigned_values(dtype, value):
    """The value NumPy assigns through a mask or index arrays, converted as
    that setitem converts: a Python number as one element of `dtype`
    (NumPy's errors for one out of range), a NumPy scalar or an array cast
    as arrays are (unsafely: np.uint8(255) into int8 is -1, where `a[...] =`
    would raise) -- a 0-d ndarray or a GpuArray; None for what gpupy cannot
    hold."""
    if np.ndim(value) == 0 and not isinstance(value, GpuArray):
        if isinstance(value, (np.generic, np.ndarray)):
            return np.asarray(value).astype(dtype)
        return stored_as(value, dtype)
    v = _as_gpu(value)
    return v.astype(dtype) if isinstance(v, GpuArray) else None


def _scatter_through_integers(a, key, value):
    target = IntegerKey.parse(a, key)
    if target is None:
        return False
    if data_dependent_shapes_on_host():
        write_on_host("__setitem__", a, key, value)
        return True
    v = target.view
    values = _assigned_values(v.dtype, value)
    if values is None:
        return False
    shape = _without_leading_units(values.shape, len(target.shape))
    try:
        if len(shape) > len(target.shape):
            raise ValueError
        np.broadcast_shapes(shape, target.shape)
    except ValueError:
        raise ValueError(f"shape mismatch: value array of shape {values.shape} could not be broadcast to indexing "
                         f"result of shape {target.shape}") from None
    target.check_bounds()  # (after the shape, as NumPy)
    if 0 in target.shape:
        return True
    written = target.written_positions()
    new = broadcast_to(values.reshape(shape), target.shape).reshape(-1)
    order = argsort(written, kind="stable")
    ordered = read_at(written, order)
    element = arange(v.size, dtype=np.int64)
    last = binary_search(ordered, element, "right") - 1  # the last write at or before each element
    at = _core.ufunc("maximum", last, 0)
    hit = (last >= 0) & (read_at(ordered, at) == element)
    v[...] = _core.where(hit, read_at(new, read_at(order, at)), v.reshape(-1)).reshape(v.shape)
    return True


def _segment_totals(written, addends, length):
    """For each position 0..length-1, the sum (int64, wrapping) of the
    addends written there: the writes sorted, their prefix sums, and a
    binary search for each position's run of writes."""
    order = argsort(written, kind="stable")
    ordered = read_at(written, order)
    sums = cumsum(read_at(addends, order), dtype=np.int64)
    element = arange(length, dtype=np.int64)
    first = binary_search(ordered, element, "left")
    end = binary_search(ordered, element, "right")
    upto = read_at(sums, _core.ufunc("maximum", end - 1, 0))
    before = _core.where(first > 0, read_at(sums, _core.ufunc("maximum", first - 1, 0)), 0)
    return _core.where(end > first, upto - before, 0)


def _at_target(name, func, a, indices, b, operands):
    """The positions ufunc.at(a, indices, b) writes (NumPy's IndexError for
    one out of range, its ValueError for operands that do not broadcast to
    them); False for a key gpupy leaves to NumPy; True once done -- by
    NumPy's `func` as a host placement (a CPU renderer), or as there is
    nothing to write."""
    target = IntegerKey.parse(a, indices if isinstance(indices, tuple) else (indices,))
    if target is None:
        return False
    target.check_bounds()
    if data_dependent_shapes_on_host():
        run_on_host(name, func, (a, indices, b), {})
        return True
    np.broadcast_shapes(operands.shape, target.shape)
    return True if 0 in target.shape else target


# ufunc.at applies its writes to an element one after another, in the order
# written: an element written more often than this takes that many fused
# steps, beyond which NumPy's loop is the better way.
_MAX_REPEATS_IN_ORDER = 64


def ufunc_at(ufunc, a, indices, b):
    """numpy.<ufunc>.at(a, indices, b) for a binary device ufunc: NumPy
    applies the writes to an element one after another in the order
    written, rounding (and casting back to a's dtype) after each. On the
    device: the writes sorted stably by position; round r applies, to every
    element written more than r times, its r-th write -- so each element
    sees its writes in NumPy's order and rounds as NumPy does. Integer and
    boolean add.at is one sum instead (add_at). True if done; False leaves
    it to NumPy (another form, or an element written more than
    _MAX_REPEATS_IN_ORDER times)."""
    if ufunc.__name__ == "add" and add_at(a, indices, b):
        return True
    if not isinstance(a, GpuArray) or not a.flags.writeable or a.dtype.kind not in "biuf":
        return False
    # A Python number is weak (NEP 50): it takes a's dtype, as in NumPy.
    operands = _as_gpu(stored_as(b, a.dtype) if type(b) in (bool, int, float) else b)
    if not isinstance(operands, GpuArray) or operands.dtype.kind not in "biuf":
        return False
    try:
        loop = np.dtype(ufunc._np.resolve_dtypes((a.dtype, operands.dtype, None))[2])
    except (TypeError, ValueError):  # no loop, or a cast NumPy refuses: NumPy's error
        return False
    if not np.can_cast(loop, a.dtype, "same_kind"):
        return False
    target = _at_target(ufunc.__name__ + ".at", ufunc._np.at, a, indices, b, operands)
    if not isinstance(target, IntegerKey):
        return target
    v = target.view
    written = target.written_positions()
    order = argsort(written, kind="stable")
    ordered = read_at(written, order)
    values = read_at(broadcast_to(operands, target.shape).reshape(-1), order)
    element = arange(v.size, dtype=np.int64)
    first = binary_search(ordered, element, "left")
    count = binary_search(ordered, element, "right") - first
    repeats = int(count.max())
    if repeats > _MAX_REPEATS_IN_ORDER:
        return False
    current = v.reshape(-1)
    last = ordered.size - 1
    for r in range(repeats):
        w = read_at(values, _core.ufunc("minimum", first + r, last))
        step = ufunc(current.astype(loop), w.astype(loop)).astype(a.dtype)
        current = _core.where(count > r, step, current)
    v[...] = current.reshape(v.shape)
    return True


def add_at(a, indices, b):
    """numpy.add.at(a, indices, b) for integer and boolean arrays: each
    element's total of the values added to it (sums of integers wrap as
    NumPy's repeated additions do; for booleans, whether any was true).
    True if done; False for other dtypes (floats add in the order written,
    which sums of a prefix sum cannot reproduce: ufunc_at)."""
    if not isinstance(a, GpuArray) or a.dtype.kind not in "biu" or not a.flags.writeable:
        return False
    addends = _as_gpu(b)
    if not isinstance(addends, GpuArray) or addends.dtype.kind not in "biu":
        return False
    target = _at_target("add.at", np.add.at, a, indices, b, addends)
    if not isinstance(target, IntegerKey):
        return target
    v = target.view
    written = target.written_positions()
    values = broadcast_to(addends, target.shape).reshape(-1).astype(np.int64)
    totals = _segment_totals(written, values, v.size).reshape(v.shape)
    if a.dtype == np.bool_:
        v[...] = v | (totals != 0)
    else:
        v[...] = (v.astype(np.int64) + totals).astype(a.dtype)
    return True


def _cycled(values, count):
    """The first `count` elements of 1-D `values` repeated (NumPy's put,
    place and putmask repeat a short value array)."""
    n = values.size
    if n == count:
        return values
    return read_at(values, arange(count, dtype=np.int64) % n)


def _flat_key(a, positions):
    """The index arrays that reach a's elements at flat C-order `positions`."""
    key, rest = [], positions
    for size in reversed(a.shape[1:]):
        key.insert(0, rest % size)
        rest = rest // size
    return tuple([rest] + key)


@implements(np.put)
def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v, v repeated to the length of ind, the
    last write to an element winning -- an integer-array assignment on the
    device (placed like the others). NumPy's modes: raise (negative indices
    count from the end; out of range is NumPy's IndexError), wrap, clip."""
    if mode not in ("raise", "wrap", "clip") or not isinstance(a, GpuArray) or not a.flags.writeable:
        return call_numpy("put", (a, ind, v), dict(mode=mode), reason="the mode, the array or the target is one gpupy does not take")
    index = _as_gpu(ind)
    values = _as_gpu(v)
    if not (isinstance(index, GpuArray) and index.dtype.kind in "biuf" and isinstance(values, GpuArray)):
        return call_numpy("put", (a, ind, v), dict(mode=mode), reason="gpupy cannot hold the indices or the values")
    index = index.reshape(-1).astype(np.int64)
    values = values.reshape(-1).astype(a.dtype)
    n = a.size
    if index.size == 0:
        return None
    if n == 0:  # (NumPy checks this before the values)
        raise IndexError("cannot replace elements of an empty array")
    if values.size == 0:
        return None
    if mode == "raise":
        bad = (index < -n) | (index >= n)
        if bool(bad.any()):
            # NumPy writes the elements before the first bad index, then
            # raises -- into the array itself where it is C-contiguous; into
            # a copy it then drops where not (a transposed view keeps its
            # values).
            at = int(argmax(bad))
            first = int(read_at(index, full(1, at, np.int64))[0])
            if at and a.flags.c_contiguous:
                put(a, index[:at], _cycled(values, index.size)[:at])
            raise IndexError(f"index {first} is out of bounds for axis 0 with size {n}")
        index = _core.where(index < 0, index + n, index)
    elif mode == "wrap":
        index = index % n
    else:
        index = clip(index, 0, n - 1)
    values = _cycled(values, index.size)
    if a.ndim == 0:
        a[...] = values[-1]
        return None
    a[_flat_key(a, index)] = values
    return None


def _masked_write(name, a, mask, values):
    """For place and putmask: (the mask as a bool array of a's shape, the
    values as a GpuArray), NumPy's ValueError for a mask of another size,
    or None for what NumPy does (a target gpupy cannot write, a mask or
    values it cannot hold)."""
    if not isinstance(a, GpuArray) or not a.flags.writeable:
        return None
    m, v = _as_gpu(mask), _as_gpu(values)
    if not (isinstance(m, GpuArray) and isinstance(v, GpuArray)):
        return None
    if m.size != a.size:
        raise ValueError(f"{name}: mask and data must be the same size")
    return m.astype(np.bool_).reshape(a.shape), v


@implements(np.place)
def place(arr, mask, vals):
    """numpy.place: the masked elements of arr, in order, take vals
    repeated -- a mask assignment on the device (the values gathered by
    rank)."""
    operands = _masked_write("place", arr, mask, vals)
    if operands is None:
        return call_numpy("place", (arr, mask, vals), {}, reason="gpupy cannot hold the target, the mask or the values")
    m, values = operands
    count = int(m.sum())
    if count == 0:
        return None
    if values.size == 0:
        raise ValueError("Cannot insert from an empty array!")
    arr[m] = _cycled(values.reshape(-1).astype(arr.dtype), count)
    return None


@implements(np.putmask)
def putmask(a, mask, values):
    """numpy.putmask: a.flat[n] = values.flat[n % len(values)] where the
    mask is true -- one fused select on the device."""
    operands = _masked_write("putmask", a, mask, values)
    if operands is None:
        return call_numpy("putmask", (a, mask, values), {}, reason="gpupy cannot hold the target, the mask or the values")
    m, v = operands
    if v.size == 0:
        return None
    v = _cycled(v.reshape(-1).astype(a.dtype), a.size).reshape(a.shape)
    a[...] = _core.where(m, v, a)
    return None


@implements(np.bincount)
def bincount(x, weights=None, minlength=0):
    g = _as_gpu(x)
    if weights is not None or not isinstance(g, GpuArray) or g.ndim != 1 or g.dtype.kind not in "iub" or g.size == 0:
        return call_numpy("bincount", (x,), dict(weights=weights, minlength=minlength),
                          reason="weights are given, or the array is empty or not of integers")
    if data_dependent_shapes_on_host():
        return run_on_host("bincount", np.bincount, (g,), dict(minlength=minlength))
    if g.dtype.kind == "i" and bool(g.min() < 0):
        raise ValueError("'list' argument must have no negative elements")
    length = max(int(g.max()) + 1, int(minlength))
    return _segment_totals(g.astype(np.int64), ones(g.size, np.int64), length)
