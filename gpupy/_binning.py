"""Putting values into bins on the device: histogram, digitize, interp, isin.

Each finds, for every element, a place among a short sorted list (bin
edges, breakpoints, the test elements): arithmetic for uniform bins, else
the binary search of searchsorted (gpupy/_indexing_reads.py), log2(len) fused
gathers per element. The list itself is small and checked on the host, as
NumPy checks it (monotonic edges, finite ranges), with NumPy's messages.

Counting elements per bin is one reduction over a (bins x elements)
comparison for up to COMPARE_BINS bins -- a GPU's kind of work, no sort --
and bincount's sort-and-prefix-sum for more. Like searchsorted, these
follow `data_dependent_shapes_on_host`: a CPU renderer runs them in NumPy,
counted as a host placement.
"""

import operator

import numpy as np

from . import _core
from ._convert import asarray as _as_gpu
from ._core import GpuArray
from ._creation import arange, full, zeros
from ._fallback import call_numpy
from ._indexing_reads import searchsorted, take
from ._indexing_writes import bincount
from ._placement import data_dependent_shapes_on_host, run_on_host
from ._reductions import sum as _sum
from ._registry import implements
from ._shape import clip
from ._sorting import sort
from ._ufuncs import UFUNCS

# Bin counts up to this are one comparison reduction; more use bincount.
COMPARE_BINS = 64


def _real_gpu(x):
    """x as a GpuArray of booleans, integers or floats, or None."""
    g = _as_gpu(x)
    return g if isinstance(g, GpuArray) and g.dtype.kind in "biuf" else None


def _host(x):
    """A small argument (edges, breakpoints) as NumPy values."""
    return np.asarray(x.__array__() if isinstance(x, GpuArray) else x)


# --- histogram -----------------------------------------------------------------------------------

def _outer_edges(a, range):
    """NumPy's first and last edge: the range, or the data's extremes."""
    if range is not None:
        first, last = range
        if first > last:
            raise ValueError("max must be larger than min in range parameter.")
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"supplied range of [{first}, {last}] is not finite")
    elif a.size == 0:
        first, last = 0, 1
    else:
        first, last = a.min()[()], a.max()[()]
        if not (np.isfinite(first) and np.isfinite(last)):
            raise ValueError(f"autodetected range of [{first}, {last}] is not finite")
    if first == last:
        first, last = first - 0.5, last + 0.5
    return first, last


def _span(first, last):
    """last - first as NumPy's histogram takes it: in the unsigned type of a
    signed integer type, so that the span of an int16 range cannot overflow."""
    dt = np.result_type(first, last)
    if dt.kind == "i":
        return np.subtract(np.asarray(last, dt), np.asarray(first, dt), casting="unsafe", dtype=dt.char.upper())
    return np.subtract(last, first, dtype=dt)


def _edges(a, bins, range):
    """(edges as NumPy values, (first, last, count) for uniform bins or None)."""
    if np.ndim(bins) == 0:
        try:
            count = operator.index(bins)
        except TypeError as e:
            raise TypeError("`bins` must be an integer, a string, or an array") from e
        if count < 1:
            raise ValueError("`bins` must be positive, when an integer")
        first, last = _outer_edges(a, range)
        edge_type = np.result_type(first, last, a)
        if edge_type.kind in "iub":
            edge_type = np.result_type(edge_type, float)
        edges = np.linspace(first, last, count + 1, endpoint=True, dtype=edge_type)
        if np.any(edges[:-1] >= edges[1:]):
            raise ValueError(f"Too many bins for data range. Cannot create {count} finite-sized bins.")
        return edges, (first, last, count)
    if np.ndim(bins) != 1:
        raise ValueError("`bins` must be 1d, when an array")
    edges = _host(bins)
    if np.any(edges[:-1] > edges[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    return edges, None


def _uniform_bins(a, edges, first, last, count):
    """Each element's bin (0..count-1), or count where it is outside the
    range or NaN: NumPy's arithmetic, then its correction against the
    edges themselves, so that a rounding of the division never moves an
    element across an edge."""
    where = _core.where
    keep = (a >= first) & (a <= last)
    x = a.astype(edges.dtype, copy=False)
    offset = UFUNCS["subtract"](x, first, dtype=np.result_type(x.dtype, first))  # (x is of a float type)
    guess = where(keep, offset / _span(first, last) * count, 0).astype(np.int64)
    guess = where(guess == count, count - 1, guess)
    on_device = _as_gpu(edges)
    guess = where(x < take(on_device, guess), guess - 1, guess)
    guess = where((x >= take(on_device, UFUNCS["minimum"](guess + 1, count))) & (guess != count - 1), guess + 1, guess)
    return where(keep, guess, count)


def _searched_bins(a, edges):
    """Each element's bin among edges that need not be uniform (the last
    bin includes its right edge), or len(edges) - 1 outside them or NaN."""
    where = _core.where
    count = len(edges) - 1
    if count < 1:
        return full(a.shape, 0, np.int64)
    on_device = _as_gpu(edges)
    bin_ = searchsorted(on_device, a, side="right") - 1
    bin_ = where(a == edges[-1], count - 1, bin_)
    return where((bin_ < 0) | (bin_ >= count), count, bin_)


def _bin_totals(bins, count, weights, dtype):
    """The number (or the weights' sum) of elements in each of `count`
    bins; elements in bin `count` are left out."""
    if bins.size == 0:
        return zeros(count, dtype)
    if count <= COMPARE_BINS:
        hit = bins[None, :] == arange(count, dtype=np.int64)[:, None]
        if weights is None:
            return _sum(hit, axis=1, dtype=dtype)
        # Summed in float64 and cast, as NumPy's bincount of weights.
        spread = _core.where(hit, weights.astype(np.float64)[None, :], 0.0)
        return _sum(spread, axis=1).astype(dtype)
    return bincount(bins, weights=weights, minlength=count + 1)[:count].astype(dtype)


@implements(np.histogram)
def histogram(a, bins=10, range=None, density=None, weights=None):
    g = _real_gpu(a)
    w = None if weights is None else _real_gpu(weights)
    kwargs = dict(bins=bins, range=range, density=density, weights=weights)
    if g is None or g.dtype.kind == "b" or isinstance(bins, str) or (weights is not None and w is None):
        return call_numpy("histogram", (a,), kwargs,
                          reason="the data or weights are not real numbers, or the bins are chosen by an estimator")
    if data_dependent_shapes_on_host():
        return run_on_host("histogram", np.histogram, (g,), dict(kwargs, weights=w))
    if w is not None and w.shape != g.shape:
        raise ValueError("weights should have the same shape as a.")
    flat = g.reshape(-1)
    edges, uniform = _edges(flat, bins, range)
    count = len(edges) - 1
    in_bin = _uniform_bins(flat, edges, *uniform) if uniform else _searched_bins(flat, edges)
    dtype = np.dtype(np.intp) if w is None else w.dtype
    totals = _bin_totals(in_bin, count, None if w is None else w.reshape(-1), dtype)
    if density:
        widths = _as_gpu(np.array(np.diff(edges), float))
        totals = totals / widths / totals.sum()
    return totals, _as_gpu(edges)


# --- digitize, interp, isin ----------------------------------------------------------------------

def _monotonicity(bins):
    """1 for increasing, -1 for decreasing, 0 for neither (NumPy's test)."""
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array")
    steps = np.diff(bins)
    if np.all(steps >= 0):
        return 1
    if np.all(steps <= 0):
        return -1
    return 0


@implements(np.digitize)
def digitize(x, bins, right=False):
    g = _real_gpu(x)
    if g is None:
        return call_numpy("digitize", (x, bins), dict(right=right), reason="x is not an array of real numbers")
    edges = _host(bins)
    monotonic = _monotonicity(edges)
    if monotonic == 0:
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if monotonic == -1:
        return len(edges) - searchsorted(_as_gpu(edges[::-1]), g, side=side)
    return searchsorted(_as_gpu(edges), g, side=side)


@implements(np.interp)
def interp(x, xp, fp, left=None, right=None, period=None):
    g = _real_gpu(x)
    points, values = _real_gpu(xp), _real_gpu(fp)
    if g is None or points is None or values is None or period is not None:
        return call_numpy("interp", (x, xp, fp), dict(left=left, right=right, period=period),
                          reason="period= is given, or an argument is not real numbers")
    if points.ndim != 1 or values.ndim != 1:
        raise ValueError("object too deep for desired array")
    if points.shape[0] != values.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    if points.shape[0] == 0:
        raise ValueError("array of sample points is empty")
    if data_dependent_shapes_on_host():
        return run_on_host("interp", np.interp, (g, points, values), dict(left=left, right=right))
    where, isnan = _core.where, UFUNCS["isnan"]
    x = g.astype(np.float64, copy=False).reshape(-1)
    xp_, fp_ = points.astype(np.float64, copy=False), values.astype(np.float64, copy=False)
    n = xp_.shape[0]
    low = fp_[0] if left is None else np.float64(left)
    high = fp_[n - 1] if right is None else np.float64(right)
    if n == 1:
        # NumPy compares with the one point only (a NaN x gives fp[0]).
        return _shaped(where(x < xp_[0], low, where(x > xp_[0], high, fp_[0])), g)
    j = searchsorted(xp_, x, side="right") - 1  # the last point <= x
    at = clip(j, 0, n - 2)
    x0, x1, y0, y1 = take(xp_, at), take(xp_, at + 1), take(fp_, at), take(fp_, at + 1)
    # NumPy's interp is C code that warns of nothing; the slopes here meet
    # 0/0 and inf*0 where it does too (and then retries, below).
    with np.errstate(all="ignore"):
        slope = (y1 - y0) / (x1 - x0)
        between = slope * (x - x0) + y0
        # NumPy's retries where the line through both points is not finite.
        from_right = slope * (x - x1) + y1
    between = where(isnan(between), where(isnan(from_right) & (y0 == y1), y0, from_right), between)
    inside = where((j == n - 1) | (x0 == x), where(j == n - 1, fp_[n - 1], y0), between)
    return _shaped(where(isnan(x), x, where(j < 0, low, where(x > xp_[n - 1], high, inside))), g)


def _shaped(flat, like):
    """A result computed over like.reshape(-1), in like's shape: a scalar
    result for 0-d `like`, as NumPy's interp gives one."""
    return flat.reshape(like.shape) if like.ndim else _core.as_scalar(flat.reshape(()))


@implements(np.isin)
def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    g, tests = _real_gpu(element), _real_gpu(test_elements)
    if g is None or tests is None or kind not in (None, "sort"):
        return call_numpy("isin", (element, test_elements), dict(assume_unique=assume_unique, invert=invert, kind=kind),
                          reason="an argument is not an array of real numbers, or kind='table' was given")
    if data_dependent_shapes_on_host():
        return run_on_host("isin", np.isin, (g, tests), dict(assume_unique=assume_unique, invert=invert))
    ordered = sort(tests.reshape(-1))
    if ordered.size == 0:
        found = zeros(g.shape, bool)
    else:
        flat = g.reshape(-1)  # (searchsorted gives a 0-d element a NumPy scalar)
        at = UFUNCS["minimum"](searchsorted(ordered, flat, side="left"), ordered.size - 1)
        found = (take(ordered, at) == flat).reshape(g.shape)
    return ~found if invert else found
