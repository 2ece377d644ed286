"""Advanced indexing on the device.

Integer-array keys (`a[I, J]`, `a[I, :]`, `a[2:, [0, 3]]`, ...),
numpy.take and take_along_axis become one GATHER node of the array's
storage, whose index -- the storage position of each result element -- is
an int64 expression of the index arrays, fused with them and with what uses
the result. Out-of-range indices raise NumPy's IndexError at the call, as
in NumPy: the indices are checked on the device first (one small
reduction), never read outside the array.

Data-dependent shapes -- boolean masks (`a[mask]`), nonzero, flatnonzero,
argwhere, one-argument where, compress, extract -- and searchsorted are a
prefix sum and a binary search: the count of true elements is the prefix
sum's last value (read back: the result's shape depends on it), and the
k-th true element is where the prefix sum first reaches k + 1, found by
log2(n) fused gathers per result element. Where that placement loses
(_placement.data_dependent_shapes_on_host: a CPU renderer) they run in
NumPy as a host placement.

Writes are selects: the array (or the key's slices of it) becomes
where(written, new value, old value) through the ordinary write path. A
mask's values are gathered by rank (the prefix sum); through integer arrays,
where the last of several writes to an element wins, the written positions
are sorted stably (gpupy/_sorting.py) and each element searches for its last
write. numpy.add.at of integers and bincount sum the sorted writes with a
prefix sum.

Keys of other forms (None in a key, masks mixed with other entries, index
arrays of other dtypes) return None here and NumPy indexes them."""

import operator

import numpy as np

from . import _core
from ._axes import normalize_axis
from ._primitives import nan_last_less, read_at
from ._convert import asarray as _as_gpu
from ._convert import stored_as
from ._core import GpuArray
from ._fallback import call_numpy
from ._placement import data_dependent_shapes_on_host, run_on_host, write_on_host
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


def gather(a, key, numpy_layout=True):
    """a[key] for integer-array keys and boolean masks on the device (or,
    for masks where that placement loses, in NumPy), or None. Laid out as
    NumPy's indexing lays out its result, or in C order (numpy.take's)."""
    mask = _mask_key(a, key)
    if mask is not None:
        if data_dependent_shapes_on_host():
            return run_on_host("__getitem__", operator.getitem, (a, mask), {})
        return _masked(a, mask)
    target = _IntegerKey.parse(a, key)
    if target is None:
        return None
    target.check_bounds()
    return target.gathered(numpy_layout)


def _rows_at(a, rows):
    """a[rows] for int64 `rows` inside a's first axis by construction (a
    mask's positions, ranks): the gather without the check."""
    return _IntegerKey.parse(a, (rows,)).gathered()


class _IntegerKey:
    """An integer-array key applied to an array: its slices taken as a view
    (`view`), the index arrays broadcast, and NumPy's result shape."""

    @classmethod
    def parse(cls, a, key):
        """The parsed key, or None for forms NumPy handles."""
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
        return cls(a, key, arrays, basic)

    def __init__(self, a, key, arrays, basic):
        # Slices first, as a view (they keep their places in the result).
        self.view = v = a[tuple(basic)] if any(s != _FULL for s in basic) else a
        self.axes = sorted(arrays)
        self.index = [arrays[d] for d in self.axes]
        try:
            self.broadcast = np.broadcast_shapes(*[g.shape for g in self.index])
        except ValueError:
            _raise_numpys_error(a.shape, v.dtype, key)
        self._checked_against = (a.shape, key)
        # NumPy's rule: adjacent index arrays put their broadcast shape where
        # they stand; separated ones put it first.
        rest = [d for d in range(v.ndim) if d not in arrays]
        adjacent = self.axes == list(range(self.axes[0], self.axes[-1] + 1))
        self.lead = [d for d in rest if d < self.axes[0]] if adjacent else []
        self.trail = [d for d in rest if d not in self.lead]
        self.shape = (tuple(v.shape[d] for d in self.lead) + self.broadcast +
                      tuple(v.shape[d] for d in self.trail))

    def check_bounds(self):
        """NumPy's IndexError if an index is outside its axis."""
        shape, key = self._checked_against
        _check_bounds(shape, self.view, self.axes, self.index, key)

    def gathered(self, numpy_layout=True):
        """The elements the key reads: a GATHER of the view's storage. With
        `numpy_layout`, laid out as NumPy lays out an indexing result --
        the index arrays' broadcast dimensions first in memory, then the
        sliced ones in the view's own memory order -- so that the same
        reshapes of it are views; else in C order (numpy.take's)."""
        if 0 in self.shape:
            return function("empty")(self.shape, self.view.dtype)
        offset, _, strides = self.view._view
        positions = self.positions(strides, offset)
        rest = self.lead + self.trail  # the view's sliced axes, as they stand in the result
        if not numpy_layout or not rest:
            return _core.gather(self.view, positions)
        at, count = len(self.lead), len(self.broadcast)
        spots = [r if r < at else r + count for r in range(len(rest))]
        sliced = self.view[tuple(0 if d in self.axes else _FULL for d in range(self.view.ndim))]
        memory = list(range(at, at + count)) + [spots[k] for k in _core.order_of(sliced)]
        if memory == list(range(len(self.shape))):
            return _core.gather(self.view, positions)
        stored = _core.gather(self.view, positions.transpose(memory))
        return stored.transpose(np.argsort(memory).tolist())

    def written_positions(self):
        """The positions the key writes, flat in the view's C order."""
        v = self.view
        c_strides = [int(np.prod(v.shape[d + 1:], dtype=np.int64)) for d in range(v.ndim)]
        return self.positions(c_strides, 0).reshape(-1)

    def positions(self, strides, offset):
        """Where each result element lies (int64, the result's shape): offset
        + the sum of its coordinates in the view times `strides` (the
        storage's to read, C-order ones to write)."""
        v, shape, nd = self.view, self.broadcast, len(self.shape)
        at = len(self.lead)  # where the broadcast shape starts in the result

        def placed(x, first, count):
            """x (of `count` dims) as dims first..first+count-1 of the result."""
            return x.reshape((1,) * first + x.shape + (1,) * (nd - first - count))

        position = None
        for d, g in zip(self.axes, self.index):
            n = v.shape[d]
            i = g.astype(np.int64)
            term = function("where")(i < 0, i + n, i) * strides[d]
            term = placed(function("broadcast_to")(term, shape), at, len(shape))
            position = term if position is None else position + term
        for r, d in enumerate(self.lead + self.trail):
            spot = r if r < at else r + len(shape)
            term = placed(function("arange")(v.shape[d], dtype=np.int64) * strides[d], spot, 1)
            position = position + term
        return function("broadcast_to")(position + offset, self.shape)


def _check_bounds(shape, v, axes, index, key):
    """NumPy's IndexError if an index is outside its axis of v (the array
    of `shape` after the key's slices): checked on the device (one
    reduction), the message from NumPy's own indexing of that shape. An
    index whose bounds the graph proves inside its axis (clipped, built by
    `indices` or `arange`) needs no check: the pass would evaluate it for
    nothing."""
    outside = None
    for d, g in zip(axes, index):
        n = v.shape[d]
        if _proven_inside(g, n):
            continue
        bad = g >= n if g.dtype.kind == "u" else (g < -n) | (g >= n)
        outside = bad if outside is None else outside | bad  # (they broadcast together)
    if outside is not None and bool(outside.any()):
        _raise_numpys_error(shape, v.dtype, key)


def _proven_inside(g, n):
    """Whether every index of g is within an axis of n elements (-n ... n - 1),
    as the graph proves without evaluating it."""
    bounds = _core.value_bounds(g) if isinstance(g, GpuArray) else None
    return bounds is not None and -n <= bounds[0] and bounds[1] <= n - 1


def _raise_numpys_error(shape, dtype, key):
    """Raises the IndexError NumPy gives for `key` into an array of `shape`
    (indexing a broadcast scalar of that shape: no memory)."""
    host_key = tuple(np.asarray(k) if isinstance(k, GpuArray) else k for k in key)
    np.broadcast_to(np.empty((), dtype), shape)[host_key]
    raise IndexError(f"index out of bounds for an array of shape {shape}")  # (NumPy raised first)


# --- data-dependent shapes: a prefix sum and a binary search --------------------------------------

def _mask_key(a, key):
    """The key as a boolean GpuArray if it is one mask over a's leading
    dimensions, else None."""
    if isinstance(key, tuple):
        if len(key) != 1:
            return None
        key = key[0]
    if isinstance(key, (bool, np.bool_)) or key is None:
        return None
    if isinstance(key, GpuArray):
        m = key
    elif isinstance(key, (np.ndarray, list)):
        m = np.asarray(key)
        if m.dtype != np.bool_:
            return None
        m = _as_gpu(m)
    else:
        return None
    if m.dtype != np.bool_ or m.ndim == 0 or m.ndim > a.ndim or m.shape != a.shape[:m.ndim]:
        return None
    return m


def _binary_search(ordered, values, side):
    """numpy.searchsorted(ordered, values, side) for 1-D `ordered` (a
    GpuArray): log2(n) + 1 steps of one fused expression, each a gather."""
    n = ordered.shape[0]
    lo = function("zeros")(values.shape, np.int64)
    hi = function("full")(values.shape, n, np.int64)
    if n == 0:
        return lo
    for _ in range(n.bit_length()):
        active = lo < hi
        mid = (lo + hi) >> 1
        x = read_at(ordered, function("minimum")(mid, n - 1))
        right = nan_last_less(x, values) if side == "left" else ~nan_last_less(values, x)
        lo = function("where")(active & right, mid + 1, lo)
        hi = function("where")(active & ~right, mid, hi)
    return lo


def _true_positions(mask):
    """The flat positions of mask's true elements (int64, in order)."""
    flat = mask.reshape(-1)
    if flat.size == 0:
        return function("zeros")(0, np.int64)
    counts = function("cumsum")(flat, dtype=np.int64)
    count = int(counts[-1])  # the result's shape: read back
    return _binary_search(counts, function("arange")(1, count + 1, dtype=np.int64), "left")


def _masked(a, mask):
    """a[mask], mask a boolean GpuArray over a's leading dimensions."""
    rows = a.reshape((int(np.prod(mask.shape, dtype=np.int64)),) + a.shape[mask.ndim:])
    return _rows_at(rows, _true_positions(mask))


def _nonzero_on_device(a):
    positions = _true_positions(a.astype(bool) if a.dtype != np.bool_ else a)
    coords, rest = [], positions
    for d in reversed(range(a.ndim)):
        n = a.shape[d]
        coords.append(rest % n if d else rest)
        rest = rest // n
    return tuple(reversed(coords))


@implements(np.nonzero)
def nonzero(a):
    g = _as_gpu(a)
    if not isinstance(g, GpuArray) or g.ndim == 0:
        return call_numpy("nonzero", (a,), {}, reason="the array is 0-d or of a dtype gpupy cannot hold")
    if data_dependent_shapes_on_host():
        return run_on_host("nonzero", np.nonzero, (g,), {})
    return _nonzero_on_device(g)


@implements(np.flatnonzero)
def flatnonzero(a):
    return nonzero(_as_gpu(a).reshape(-1))[0]


@implements(np.argwhere)
def argwhere(a):
    g = _as_gpu(a)
    if not isinstance(g, GpuArray) or g.ndim == 0:
        return call_numpy("argwhere", (a,), {}, reason="the array is 0-d or of a dtype gpupy cannot hold")
    return function("stack")(nonzero(g), axis=1)


@implements(np.compress)
def compress(condition, a, axis=None, out=None):
    cond = _as_gpu(np.asarray(condition) if isinstance(condition, list) else condition)
    g = _as_gpu(a)
    if out is not None or not isinstance(g, GpuArray) or not isinstance(cond, GpuArray) or cond.ndim != 1:
        return call_numpy("compress", (condition, a), dict(axis=axis, out=out),
                          reason="out= is given or the condition is not 1-D")
    positions = nonzero(cond)[0]
    return take(g, positions, axis=axis)


@implements(np.extract)
def extract(condition, arr):
    return take(_as_gpu(arr).reshape(-1), nonzero(_as_gpu(condition).reshape(-1))[0])


@implements(np.searchsorted)
def searchsorted(a, v, side="left", sorter=None):
    g = _as_gpu(a)
    if sorter is not None or not isinstance(g, GpuArray) or g.ndim != 1:
        return call_numpy("searchsorted", (a, v), dict(side=side, sorter=sorter),
                          reason="a sorter is given or the array is not 1-D")
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right' (got {side!r})")
    if data_dependent_shapes_on_host():
        return run_on_host("searchsorted", np.searchsorted, (g, v), dict(side=side))
    values = _as_gpu(v)
    if not isinstance(values, GpuArray):
        return call_numpy("searchsorted", (a, v), dict(side=side), reason="gpupy cannot hold the dtype of the values")
    found = _binary_search(g, values, side)
    return found if np.ndim(v) else found[()]


@implements(np.take_along_axis)
def take_along_axis(arr, indices, axis=-1):
    g, idx = _as_gpu(arr), _as_gpu(indices)
    if axis is None:
        g, axis = g.reshape(-1), 0
    if not isinstance(g, GpuArray) or not isinstance(idx, GpuArray) or idx.dtype.kind not in "iu":
        return call_numpy("take_along_axis", (arr, indices), dict(axis=axis),
                          reason="the indices are not integers")
    if idx.ndim != g.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    ax = normalize_axis(axis, g.ndim)
    # NumPy's own construction: an arange on every other axis, shaped to
    # broadcast against the indices.
    key = []
    for d in range(g.ndim):
        if d == ax:
            key.append(idx)
        else:
            key.append(function("arange")(g.shape[d]).reshape([-1 if e == d else 1 for e in range(g.ndim)]))
    return gather(g, tuple(key))


# --- writes: a select -------------------------------------------------------------------------------

def scatter(a, key, value):
    """a[key] = value for a boolean mask over a's leading dimensions or an
    integer-array key, as NumPy writes it: the array (or the key's slices of
    it) becomes a select of the new values and its own. True if done; False
    leaves it to NumPy.

    Through a mask, on the device: one fused select for a single value, and
    for an array of values a gather at each element's rank among the masked
    ones (a prefix sum). Through integer arrays, where several writes may
    land on one element and the last one wins: the written positions sorted
    stably, and for each element of the array a binary search for the last
    write to it -- placed like the other data-dependent work (NumPy on a CPU
    renderer, as a host placement)."""
    if not a.flags.writeable:
        return False
    mask = _mask_key(a, key)
    if mask is None:
        return _scatter_through_integers(a, key, value)
    tail = a.shape[mask.ndim:]
    spread = mask.reshape(mask.shape + (1,) * len(tail))
    v = _assigned_values(a.dtype, value)
    if v is None:
        return False
    if not isinstance(v, GpuArray):  # one value
        a[...] = function("where")(spread, v, a)
        return True
    ranks = function("cumsum")(mask.reshape(-1), dtype=np.int64)
    count = int(ranks[-1]) if ranks.size else 0
    _numpy_accepts_mask_assignment(a.shape, mask.shape, count, v.shape)
    if count == 0 or 0 in tail:  # no element selected (NumPy then takes any empty value it accepted)
        return True
    target = (count,) + tail
    values = function("broadcast_to")(v.reshape(_without_leading_units(v.shape, len(target))), target)
    rank = function("maximum")(ranks - 1, 0).reshape(mask.shape)
    a[...] = function("where")(spread, _rows_at(values, rank), a)
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
    target = _IntegerKey.parse(a, key)
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
    new = function("broadcast_to")(values.reshape(shape), target.shape).reshape(-1)
    order = function("argsort")(written, kind="stable")
    ordered = read_at(written, order)
    element = function("arange")(v.size, dtype=np.int64)
    last = _binary_search(ordered, element, "right") - 1  # the last write at or before each element
    at = function("maximum")(last, 0)
    hit = (last >= 0) & (read_at(ordered, at) == element)
    v[...] = function("where")(hit, read_at(new, read_at(order, at)), v.reshape(-1)).reshape(v.shape)
    return True


def _segment_totals(written, addends, length):
    """For each position 0..length-1, the sum (int64, wrapping) of the
    addends written there: the writes sorted, their prefix sums, and a
    binary search for each position's run of writes."""
    order = function("argsort")(written, kind="stable")
    ordered = read_at(written, order)
    sums = function("cumsum")(read_at(addends, order), dtype=np.int64)
    element = function("arange")(length, dtype=np.int64)
    first = _binary_search(ordered, element, "left")
    end = _binary_search(ordered, element, "right")
    upto = read_at(sums, function("maximum")(end - 1, 0))
    before = function("where")(first > 0, read_at(sums, function("maximum")(first - 1, 0)), 0)
    return function("where")(end > first, upto - before, 0)


def _at_target(name, func, a, indices, b, operands):
    """The positions ufunc.at(a, indices, b) writes (NumPy's IndexError for
    one out of range, its ValueError for operands that do not broadcast to
    them); False for a key gpupy leaves to NumPy; True once done -- by
    NumPy's `func` as a host placement (a CPU renderer), or as there is
    nothing to write."""
    target = _IntegerKey.parse(a, indices if isinstance(indices, tuple) else (indices,))
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
    if not isinstance(target, _IntegerKey):
        return target
    v = target.view
    written = target.written_positions()
    order = function("argsort")(written, kind="stable")
    ordered = read_at(written, order)
    values = read_at(function("broadcast_to")(operands, target.shape).reshape(-1), order)
    element = function("arange")(v.size, dtype=np.int64)
    first = _binary_search(ordered, element, "left")
    count = _binary_search(ordered, element, "right") - first
    repeats = int(count.max())
    if repeats > _MAX_REPEATS_IN_ORDER:
        return False
    current = v.reshape(-1)
    last = ordered.size - 1
    for r in range(repeats):
        w = read_at(values, function("minimum")(first + r, last))
        step = ufunc(current.astype(loop), w.astype(loop)).astype(a.dtype)
        current = function("where")(count > r, step, current)
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
    if not isinstance(target, _IntegerKey):
        return target
    v = target.view
    written = target.written_positions()
    values = function("broadcast_to")(addends, target.shape).reshape(-1).astype(np.int64)
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
    return read_at(values, function("arange")(count, dtype=np.int64) % n)


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
            at = int(function("argmax")(bad))
            first = int(read_at(index, function("full")(1, at, np.int64))[0])
            if at and a.flags.c_contiguous:
                put(a, index[:at], _cycled(values, index.size)[:at])
            raise IndexError(f"index {first} is out of bounds for axis 0 with size {n}")
        index = function("where")(index < 0, index + n, index)
    elif mode == "wrap":
        index = index % n
    else:
        index = function("clip")(index, 0, n - 1)
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
    a[...] = function("where")(m, v, a)
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
    return _segment_totals(g.astype(np.int64), function("ones")(g.size, np.int64), length)


@implements(np.take)
def take(a, indices, axis=None, out=None, mode="raise"):
    g = _as_gpu(a)
    if out is None and mode == "raise" and isinstance(g, GpuArray) and np.ndim(indices):
        if axis is None:
            got = gather(g.reshape(-1), (indices,))
        else:
            got = gather(g, (_FULL,) * normalize_axis(axis, g.ndim) + (indices,), numpy_layout=False)
        if got is not None:
            return got
    return call_numpy("take", (a, indices), dict(axis=axis, out=out, mode=mode),
                      reason="out= or mode= is given, or the indices are one index or not integers")


hooks["gather"] = gather
hooks["ufunc_at"] = ufunc_at
hooks["scatter"] = scatter
