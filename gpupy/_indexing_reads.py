"""Reading by index on the device.

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

Keys of other forms (None in a key, masks mixed with other entries, index
arrays of other dtypes) return None here and NumPy indexes them. Writing
by index is _indexing_writes.py, built on the key parsing and the binary
search here."""

import operator

import numpy as np

from . import _core
from ._axes import normalize_axis
from ._convert import asarray as _as_gpu
from ._core import GpuArray
from ._creation import arange, empty, full, zeros
from ._fallback import call_numpy
from ._placement import data_dependent_shapes_on_host, run_on_host
from ._primitives import nan_last_less, read_at
from ._reductions import cumsum
from ._registry import implements
from ._shape import broadcast_to, stack

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
    mask = mask_key(a, key)
    if mask is not None:
        if data_dependent_shapes_on_host():
            return run_on_host("__getitem__", operator.getitem, (a, mask), {})
        return _masked(a, mask)
    target = IntegerKey.parse(a, key)
    if target is None:
        return None
    target.check_bounds()
    return target.gathered(numpy_layout)


def rows_at(a, rows):
    """a[rows] for int64 `rows` inside a's first axis by construction (a
    mask's positions, ranks): the gather without the check."""
    return IntegerKey.parse(a, (rows,)).gathered()


class IntegerKey:
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
            return empty(self.shape, self.view.dtype)
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
            term = _core.where(i < 0, i + n, i) * strides[d]
            term = placed(broadcast_to(term, shape), at, len(shape))
            position = term if position is None else position + term
        for r, d in enumerate(self.lead + self.trail):
            spot = r if r < at else r + len(shape)
            term = placed(arange(v.shape[d], dtype=np.int64) * strides[d], spot, 1)
            position = position + term
        return broadcast_to(position + offset, self.shape)


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

def mask_key(a, key):
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


def binary_search(ordered, values, side):
    """numpy.searchsorted(ordered, values, side) for 1-D `ordered` (a
    GpuArray): log2(n) + 1 steps of one fused expression, each a gather."""
    n = ordered.shape[0]
    lo = zeros(values.shape, np.int64)
    hi = full(values.shape, n, np.int64)
    if n == 0:
        return lo
    for _ in range(n.bit_length()):
        active = lo < hi
        mid = (lo + hi) >> 1
        x = read_at(ordered, _core.ufunc("minimum", mid, n - 1))
        right = nan_last_less(x, values) if side == "left" else ~nan_last_less(values, x)
        lo = _core.where(active & right, mid + 1, lo)
        hi = _core.where(active & ~right, mid, hi)
    return lo


def _true_positions(mask):
    """The flat positions of mask's true elements (int64, in order)."""
    flat = mask.reshape(-1)
    if flat.size == 0:
        return zeros(0, np.int64)
    counts = cumsum(flat, dtype=np.int64)
    count = int(counts[-1])  # the result's shape: read back
    return binary_search(counts, arange(1, count + 1, dtype=np.int64), "left")


def _masked(a, mask):
    """a[mask], mask a boolean GpuArray over a's leading dimensions."""
    rows = a.reshape((int(np.prod(mask.shape, dtype=np.int64)),) + a.shape[mask.ndim:])
    return rows_at(rows, _true_positions(mask))


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


@implements(np.where)
def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)  # NumPy's definition of one-argument where
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _core.where(condition, x, y)


@implements(np.flatnonzero)
def flatnonzero(a):
    return nonzero(_as_gpu(a).reshape(-1))[0]


@implements(np.argwhere)
def argwhere(a):
    g = _as_gpu(a)
    if not isinstance(g, GpuArray) or g.ndim == 0:
        return call_numpy("argwhere", (a,), {}, reason="the array is 0-d or of a dtype gpupy cannot hold")
    return stack(nonzero(g), axis=1)


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
    found = binary_search(g, values, side)
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
            key.append(arange(g.shape[d]).reshape([-1 if e == d else 1 for e in range(g.ndim)]))
    return gather(g, tuple(key))


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
