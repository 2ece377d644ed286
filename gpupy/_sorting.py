"""Sorting on the device: numpy.sort, numpy.argsort, ndarray.sort,
numpy.median (the middle of the sorted slices), numpy.percentile and
numpy.quantile (NumPy's order statistics and interpolation, its linear,
lower, higher, nearest and midpoint methods), numpy.partition and
numpy.argpartition (a sorted slice is a partition at every kth) and
numpy.unique (the starts of the sorted runs, compacted as a mask is) on a
bitonic sorting network (Batcher), one fused evaluation per compare-and-
exchange stage.

Each row (the sorted axis, moved last) is padded to a power of two with
values that sort after everything; a stage pairs element i with i ^ j and
keeps the smaller or the larger by the network's direction. The comparison
is NumPy's order -- NaN after every number -- with ties broken by the
original position, so the result is what a stable sort gives: argsort with
kind="stable" is NumPy's, and so are the signs of equal zeros. An element's
partner is a gather (the GATHER op) of the previous stage's stored values:
a row of n values takes log2(n) (log2(n) + 1) / 2 stages, each one
evaluation per array carried (values, and positions where they matter).

That is a GPU's way to sort. A CPU renderer runs it tens of times slower
than NumPy's one-thread sort, so in the "auto" placement these follow the
products' placement (`_placement.data_dependent_shapes_on_host`): NumPy on
a CPU renderer, counted as a host placement; the device on a GPU and when
forced. Structured dtypes (`order=`) go to NumPy."""

import inspect

import numpy as np

from . import _core
from ._axes import normalize_axis
from ._convert import asarray as _as_gpu
from ._core import GpuArray
from ._creation import arange, full, ones, zeros
from ._fallback import call_numpy
from ._indexing_reads import flatnonzero
from ._placement import data_dependent_shapes_on_host, run_on_host
from ._primitives import nan_last_less, read_at
from ._reductions import cumsum
from ._registry import implements
from ._shape import concatenate, flip, moveaxis, stack

_KINDS = (None, "quicksort", "mergesort", "heapsort", "stable")


def _after_everything(dtype):
    """A padding value that sorts at the end (ties with real values broken
    by position, which puts padding last)."""
    if dtype.kind == "f":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).max


def _before(a, b, ia, ib):
    """Whether (a, ia) sorts before (b, ib): NumPy's order (NaN last), then
    the position."""
    less = nan_last_less(a, b)
    # Neither sorts first: a tie, NaNs included.
    tie = ~(less | nan_last_less(b, a))
    return less | (tie & (ia < ib))


def _bitonic(rows, carry_positions):
    """Sorts each row of the 2-D GpuArray `rows` (width a power of two);
    returns the sorted values and, if carried, their original positions
    (without them, equal values keep no particular order)."""
    count, width = rows.shape
    values = rows.reshape(-1)
    flat = arange(count * width, dtype=np.int64)
    local = flat & (width - 1)  # rows start at multiples of the width: partners stay in the row
    positions = local
    k = 2
    while k <= width:
        j = k // 2
        while j >= 1:
            partner = flat ^ j
            theirs = read_at(values, partner)
            if carry_positions:
                their_position = read_at(positions, partner)
                mine_first = _before(values, theirs, positions, their_position)
            else:
                mine_first = _before(values, theirs, flat, partner)
            lower = (local & j) == 0
            ascending = (local & k) == 0
            keep = (lower == ascending) == mine_first
            values = _core.where(keep, values, theirs)
            if carry_positions:
                positions = _core.where(keep, positions, their_position)
            j //= 2
        k *= 2
    return values.reshape(count, width), positions.reshape(count, width) if carry_positions else None


def _sorted_along(a, axis, want_values, want_positions):
    """(values, positions) of `a` sorted along `axis` on the device."""
    a = _as_gpu(a)
    moved = moveaxis(a, axis, -1)
    shape = moved.shape
    n = shape[-1]
    rows = moved.reshape(-1, n) if moved.ndim else moved.reshape(1, 1)
    width = 1 << max(n - 1, 0).bit_length()
    if width != n:
        pad = full((rows.shape[0], width - n), _after_everything(a.dtype), a.dtype)
        rows = concatenate([rows, pad], axis=1)
    # Positions break ties: wanted, or for floats (the order of equal zeros
    # of both signs is a stable sort's).
    values, positions = _bitonic(rows, want_positions or a.dtype.kind == "f")
    out = []
    for x, wanted in ((values, want_values), (positions, want_positions)):
        out.append(moveaxis(x[:, :n].reshape(shape), -1, axis) if wanted else None)
    return out


def _sort_call(name, a, axis, kind, order, stable, values):
    """numpy.sort (values) or numpy.argsort (positions): the same arguments,
    placement and edge cases."""
    g = _as_gpu(a)
    kwargs = dict(axis=axis, kind=kind, order=order, stable=stable)
    if not isinstance(g, GpuArray) or order is not None or kind not in _KINDS or g.ndim == 0 and axis is not None:
        return call_numpy(name, (a,), kwargs, reason="the array is structured or 0-d, or the sort kind is one gpupy does not run")
    if data_dependent_shapes_on_host():
        return run_on_host(name, getattr(np, name), (g,), kwargs)
    if axis is None:
        g, axis = g.reshape(-1), 0
    axis = normalize_axis(axis, g.ndim)
    if g.size == 0:
        return g.copy() if values else zeros(g.shape, np.int64)
    return _sorted_along(g, axis, values, not values)[0 if values else 1]


@implements(np.sort)
def sort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.sort; `descending` is the Array API standard's (NumPy has none)."""
    result = _sort_call("sort", a, axis, kind, order, stable, values=True)
    if descending:  # equal values are indistinguishable: the ascending order reversed
        return flip(result, -1 if axis is None else axis)
    return result


@implements(np.argsort)
def argsort(a, axis=-1, kind=None, order=None, *, stable=None, descending=False):
    """numpy.argsort; `descending` is the Array API standard's: largest
    first, equal elements in their order (the stable ascending argsort of
    the reversed array, reversed and counted from the end)."""
    if descending:
        g = _as_gpu(a)
        if axis is None:
            g, axis = g.reshape(-1), 0
        n = g.shape[axis] if g.ndim else 1
        return (n - 1) - flip(_sort_call("argsort", flip(g, axis), axis, kind, order, True, values=False), axis)
    return _sort_call("argsort", a, axis, kind, order, stable, values=False)


@implements(np.median)
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The middle of each sorted slice (the mean of the two middles for an
    even length, in NumPy's dtype and formula), NaN where a slice holds one
    (NaN sorts last)."""
    g = _as_gpu(a)
    kwargs = dict(axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims)
    one_axis = axis is None or isinstance(axis, (int, np.integer))
    if not isinstance(g, GpuArray) or out is not None or not one_axis or g.dtype.kind not in "biuf" or g.size == 0:
        return call_numpy("median", (a,), kwargs, reason="out= or several axes are given, or the array is empty")
    if data_dependent_shapes_on_host():
        return run_on_host("median", np.median, (g,), dict(axis=axis, keepdims=keepdims))
    x, ax = (g.reshape(-1), 0) if axis is None else (g, normalize_axis(axis, g.ndim))
    n = x.shape[ax]
    ordered = moveaxis(_sorted_along(x, ax, True, False)[0], ax, -1)
    low, high = ordered[..., (n - 1) // 2], ordered[..., n // 2]
    if g.dtype.kind != "f":  # NumPy's mean of integers and booleans is float64
        low, high = low.astype(np.float64), high.astype(np.float64)
    middle = low if n % 2 else (low + high) / 2
    if g.dtype.kind == "f":
        middle = _core.where(_core.ufunc("isnan", ordered[..., -1]), ordered[..., -1], middle)
    if keepdims:
        middle = middle.reshape((1,) * g.ndim if axis is None else
                                tuple(1 if d == ax % g.ndim else s for d, s in enumerate(g.shape)))
    return middle


@implements(np.unique)
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True,
           sorted=True):
    """The sorted array's first element of each run of equal values (NaNs
    one run with equal_nan), found as for a mask; first positions from the
    stable sort's, counts from the runs' starts, the inverse by sorting the
    sort's positions back."""
    g = _as_gpu(ar)
    kwargs = dict(return_index=return_index, return_inverse=return_inverse, return_counts=return_counts, axis=axis,
                  equal_nan=equal_nan)
    if sorted is not True or _unique_takes_sorted():
        kwargs["sorted"] = sorted  # (a NumPy without the keyword refuses sorted=False itself)
    if not isinstance(g, GpuArray) or axis is not None or g.size == 0 or not sorted:
        return call_numpy("unique", (ar,), kwargs, reason="an axis is given, sorted=False, or the array is empty")
    if data_dependent_shapes_on_host():
        return run_on_host("unique", np.unique, (g,), kwargs)
    flat = g.reshape(-1)
    values, positions = _sorted_along(flat, 0, True, True)
    differs = values[1:] != values[:-1]
    if equal_nan and values.dtype.kind == "f":
        differs = differs & ~(_core.ufunc("isnan", values[1:]) & _core.ufunc("isnan", values[:-1]))
    starts_run = concatenate([ones(1, bool), differs])
    starts = flatnonzero(starts_run)
    out = [read_at(values, starts)]
    if return_index:
        out.append(read_at(positions, starts))
    if return_inverse:
        run_of_sorted = cumsum(starts_run, dtype=np.int64) - 1
        inverse = read_at(run_of_sorted, argsort(positions, kind="stable"))
        out.append(inverse.reshape(g.shape) if _inverse_keeps_the_shape() else inverse)
    if return_counts:
        ends = concatenate([starts[1:], full(1, flat.size, np.int64)])
        out.append(ends - starts)
    return out[0] if len(out) == 1 else tuple(out)


def _unique_takes_sorted():
    """Whether this NumPy's unique has the `sorted` keyword (NumPy 2.3 added
    it; its default, True, is what unique did before)."""
    if _unique_takes_sorted.answer is None:
        _unique_takes_sorted.answer = "sorted" in inspect.signature(np.unique).parameters
    return _unique_takes_sorted.answer


_unique_takes_sorted.answer = None


def _inverse_keeps_the_shape():
    """Whether this NumPy's unique gives the inverse the input's shape (2.x
    releases differ)."""
    if _inverse_keeps_the_shape.answer is None:
        probe = np.unique(np.zeros((1, 1)), return_inverse=True)[1]
        _inverse_keeps_the_shape.answer = probe.ndim == 2
    return _inverse_keeps_the_shape.answer


_inverse_keeps_the_shape.answer = None


def _partition_call(name, a, kth, axis, kind, order, values):
    """numpy.partition (values) or numpy.argpartition (positions): NumPy
    leaves the order within the two sides of each kth undefined, and a
    sorted slice is a partition at every kth -- so on the device, the
    stable sort; placed on the host, NumPy's introselect. NumPy's checks
    and errors either way."""
    g = _as_gpu(a)
    kwargs = dict(axis=axis, kind=kind, order=order)
    if not isinstance(g, GpuArray) or order is not None or g.dtype.kind not in "biuf":
        return call_numpy(name, (a, kth), kwargs, reason="the array is structured or complex")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {kind!r})")
    if data_dependent_shapes_on_host():
        return run_on_host(name, getattr(np, name), (g, kth), kwargs)
    if axis is None:
        g, axis = g.reshape(-1), 0
    axis = normalize_axis(axis, g.ndim)
    n = g.shape[axis]
    positions = np.asarray(kth.get() if isinstance(kth, GpuArray) else kth)
    if positions.dtype.kind not in "iu":
        raise TypeError("Partition index must be integer")
    for k in positions.reshape(-1).tolist():
        at = k + n if k < 0 else k
        if not 0 <= at < n:
            raise ValueError(f"kth(={at}) out of bounds ({n})")
    return _sort_call("sort" if values else "argsort", g, axis, "stable", None, None, values)


@implements(np.partition)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    return _partition_call("partition", a, kth, axis, kind, order, values=True)


@implements(np.argpartition)
def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return _partition_call("argpartition", a, kth, axis, kind, order, values=False)


def partition_in_place(a, kth, axis=-1, kind="introselect", order=None):
    """ndarray.partition: the array's values replaced by a partitioned copy."""
    a[...] = partition(a, kth, axis=axis, kind=kind, order=order)


def sort_in_place(a, axis=-1, kind=None, order=None, *, stable=None):
    """ndarray.sort: the array's values replaced by their sorted copy."""
    a[...] = sort(a, axis=axis, kind=kind, order=order, stable=stable)


# Quantile methods computed on the device: their virtual index in the
# sorted slice of n values, as NumPy computes it (float64 on the host),
# and for the interpolating ones the fix of the weight gamma.
_VIRTUAL_INDEX = {
    "linear": lambda n, q: (n - 1) * q,
    "lower": lambda n, q: np.floor((n - 1) * q).astype(np.intp),
    "higher": lambda n, q: np.ceil((n - 1) * q).astype(np.intp),
    "nearest": lambda n, q: np.around((n - 1) * q).astype(np.intp),
    "midpoint": lambda n, q: 0.5 * (np.floor((n - 1) * q) + np.ceil((n - 1) * q)),
}


def _quantile_positions(n, q, method):
    """For each quantile: (previous, next, gamma) -- positions in the sorted
    slice (negative from its end) and the interpolation weight, or gamma
    None where NumPy takes the element without interpolating. NumPy's
    arithmetic on the host, step for step (its _quantile and _get_indexes)."""
    virtual = np.asanyarray(_VIRTUAL_INDEX[method](n, q))
    if virtual.dtype.kind in "iu":
        return [(int(i), int(i), None) for i in virtual.reshape(-1)]
    previous = np.array(np.floor(virtual), dtype=virtual.dtype)  # (arrays even when 0-d: written below)
    following = np.array(previous + 1, dtype=virtual.dtype)
    above, below = virtual >= n - 1, virtual < 0
    previous[above] = following[above] = -1
    previous[below] = following[below] = 0
    gamma = np.asanyarray(virtual - previous)
    if method == "midpoint":
        gamma = np.where(virtual % 1 == 0, 0.0, 0.5)
    gamma = np.asanyarray(gamma, dtype=virtual.dtype)
    return [(int(p), int(f), g) for p, f, g in zip(previous.reshape(-1), following.reshape(-1), gamma.reshape(-1))]


def _q_in_the_arrays_dtype():
    """Whether this NumPy computes a quantile of a float array with a float q
    (a Python float, or a NumPy float64, which is a float too) converted to
    the array's dtype, and a percentile's q divided by 100 of that dtype, so
    that the interpolation stays in the array's dtype (NumPy 2.0); later
    releases compute in q's own dtype and give a Python number's result the
    array's dtype at the end. Asked of NumPy once: the dtype of float32's
    quantile at a NumPy float64 q tells the two apart."""
    if _q_in_the_arrays_dtype.answer is None:
        probe = np.quantile(np.zeros(1, np.float32), np.float64(0.5))
        _q_in_the_arrays_dtype.answer = probe.dtype == np.float32
    return _q_in_the_arrays_dtype.answer


_q_in_the_arrays_dtype.answer = None


def _lerp(a, b, t):
    """NumPy's interpolation between a and b by t: from a below one half,
    from b above (the same operations, in the same dtypes)."""
    diff = b - a
    return _core.where(t >= 0.5, b - diff * (1 - t), a + diff * t)


def _quantile_call(name, a, q, axis, out, overwrite_input, method, keepdims, weights, scale):
    """numpy.quantile (scale 1) and numpy.percentile (scale 100) on the
    device: the slices sorted (bitonic), the order statistics each quantile
    needs taken as views, interpolated as NumPy does; NaN where a slice
    holds one (NaN sorts last)."""
    g = _as_gpu(a)
    kwargs = dict(axis=axis, out=out, overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                  weights=weights)
    one_axis = axis is None or isinstance(axis, (int, np.integer))
    host_q = np.asanyarray(q.get() if isinstance(q, GpuArray) else q)
    if (not isinstance(g, GpuArray) or g.dtype.kind not in "biuf" or out is not None or weights is not None or
            method not in _VIRTUAL_INDEX or not one_axis or g.size == 0 or host_q.ndim > 2 or
            host_q.dtype.kind not in "biuf"):
        return call_numpy(name, (a, q), kwargs, reason="out=, weights or several axes are given, the method "
                                                       "is another, q has more than 2 dimensions, or the array is "
                                                       "empty or complex")
    weak = type(q) in (int, float)  # NumPy's weak promotion of a Python number
    in_the_arrays_dtype = _q_in_the_arrays_dtype()
    if in_the_arrays_dtype:
        given = host_q if isinstance(q, GpuArray) else q  # (a Python number stays weak in the division)
        if scale != 1:
            fractions = np.asanyarray(np.true_divide(given, g.dtype.type(scale) if g.dtype.kind == "f" else scale))
        else:
            fractions = np.asanyarray(given, dtype=g.dtype if isinstance(q, (int, float)) and g.dtype.kind == "f"
                                      else None)
    else:
        fractions = np.true_divide(host_q, scale) if scale != 1 else host_q
    if not (fractions.size == 0 or (fractions.min() >= 0 and fractions.max() <= 1)):
        raise ValueError("Percentiles must be in the range [0, 100]" if scale == 100 else
                         "Quantiles must be in the range [0, 1]")
    if data_dependent_shapes_on_host():
        return run_on_host(name, getattr(np, name), (g, q), dict(axis=axis, method=method, keepdims=keepdims))
    x, ax = (g.reshape(-1), 0) if axis is None else (g, normalize_axis(axis, g.ndim))
    n = x.shape[ax]
    ordered = moveaxis(_sorted_along(x, ax, True, False)[0], ax, -1)
    results = []
    for previous, following, gamma in _quantile_positions(n, fractions, method):
        low = ordered[..., previous]
        if gamma is None:
            results.append(low)
        else:
            weight = gamma if in_the_arrays_dtype else float(gamma) if weak else np.float64(gamma)
            results.append(_lerp(low, ordered[..., following], weight))
    result = stack(results).reshape(fractions.shape + results[0].shape) if fractions.ndim else results[0]
    if g.dtype.kind == "f":
        has_nan = _core.ufunc("isnan", ordered[..., -1])
        if result.ndim == 0:
            if bool(has_nan):
                result = ordered[..., -1]  # (NumPy returns the slice's NaN itself, in its dtype)
        else:
            result = _core.where(has_nan, ordered[..., -1], result)
    if keepdims:
        kept = (1,) * g.ndim if axis is None else tuple(1 if d == ax % g.ndim else s for d, s in enumerate(g.shape))
        result = result.reshape(fractions.shape + kept)
    return result


@implements(np.quantile)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    return _quantile_call("quantile", a, q, axis, out, overwrite_input, method, keepdims, weights, 1)


@implements(np.percentile)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    return _quantile_call("percentile", a, q, axis, out, overwrite_input, method, keepdims, weights, 100)


