"""Reductions and scans on the device.

Each reduction is a chain of chunked REDUCE nodes built by the core
(`_core.reduce`): the operand expression is fused into the first pass, and
every pass folds many elements per output. argmax/argmin are a second
reduction: the smallest index where the value equals the maximum (or is
NaN, as NumPy returns the first NaN). NumPy's dtype rules, NaN semantics
and error messages are kept; results of full reductions are 0-d GpuArrays
(they stay on the device until used), where NumPy would give a scalar.
"""

import builtins
import functools
import operator

import numpy as np

from . import _core
from ._convert import as_gpu as _gpu
from ._core import GpuArray
from ._fallback import call_numpy
from ._placement import linear_algebra_on_host, placement_counts, run_on_host
from ._registry import REDUCE_CHUNK as CHUNK
from ._registry import implements

_NOVALUE = np._NoValue


def _axes(axis, ndim, zero_d_axis=False, counted=False):
    """Normalised tuple of axes (AxisError and duplicate checks as NumPy).
    zero_d_axis: NumPy's ufunc reductions also take an integer axis 0 or -1
    on a 0-d array (reducing over nothing); mean, var and tuples do not.
    counted: NumPy's mean, var and std count the elements first, taking
    each axis as an index (a NumPy bool: NumPy 2.0 warns there, before its
    sum refuses it)."""
    if axis is None:
        return tuple(range(ndim))
    if zero_d_axis and ndim == 0 and np.ndim(axis) == 0 and operator.index(axis) in (0, -1):
        return ()
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = []
    for ax in axes:
        if isinstance(ax, (bool, np.bool_)):
            if counted and isinstance(ax, np.bool_):
                operator.index(ax)  # NumPy's own verdict on a NumPy bool as an index
            raise TypeError("an integer is required")  # NumPy's refusal of a bool axis
        ax = operator.index(ax)  # TypeError for a float, as NumPy
        if ax < -ndim or ax >= ndim:
            raise np.exceptions.AxisError(f"axis {ax} is out of bounds for array of dimension {ndim}")
        out.append(ax % ndim if ndim else ax)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(out)


def _one_axis(axis):
    """The axis of an arg-reduction or a scan, which take one integer: NumPy's
    TypeError for a bool or anything else operator.index refuses."""
    if isinstance(axis, (bool, np.bool_)):
        raise TypeError("an integer is required for the axis")
    return operator.index(axis)


def _keep(result, shape, axes):
    """Re-inserts reduced axes as length 1 (keepdims=True)."""
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    return result.reshape(kept)


@functools.lru_cache(maxsize=None)
def _default_sum_dtype(dtype):
    """The dtype np.sum/np.prod give for `dtype` when none is asked for."""
    return np.add.reduce(np.zeros(1, dtype)).dtype


def _finish(result, a, axes, keepdims, out):
    if keepdims:
        result = _keep(result, a.shape, axes)
    return result if out is None else _into(out, result)


def _into(out, result):
    """`result` written into a reduction's out=, as NumPy writes it: a
    read-only out is refused first, then an out of another shape."""
    if not out.flags.writeable:
        raise ValueError("output array is read-only")
    if np.shape(out) != np.shape(result):
        raise ValueError(f"output parameter for reduction has shape {np.shape(out)}, but the result has shape "
                         f"{np.shape(result)}")
    out[...] = result
    return out


def _unsupported(kwargs):
    where = kwargs.get("where", True)
    return not (where is True or (isinstance(where, (bool, np.bool_)) and where))


def _masked(kwargs, where):
    """`kwargs` for NumPy's own, with the where= mask when one was given: a
    mask left out of the call changed the answer in silence."""
    if where is not True:
        kwargs["where"] = where
    return kwargs


def _reduce(name, fold, a, axis, dtype, out, keepdims, initial, where, default_dtype, needs_identity):
    if (dtype is None and out is None and keepdims is False and initial is _NOVALUE
            and where is True and type(a) is GpuArray and a.size):
        # `x.sum()` / `np.max(x, axis=(1, 2))` in a loop: none of the
        # argument handling (with no empty axis, no identity is needed).
        if axis is None:
            return _core.reduce(a, fold, _ALL_AXES[a.ndim], default_dtype(a.dtype), CHUNK)
        if (type(axis) is int or type(axis) is tuple) and a.ndim:
            key = (axis, a.ndim)
            axes = _AXES_SEEN.get(key) if type(axis) is int or builtins.all(type(x) is int for x in axis) else None
            if axes is None:
                axes = list(_axes(axis, a.ndim))  # raises NumPy's errors
                if len(_AXES_SEEN) < 4096:
                    _AXES_SEEN[key] = axes
            return _core.reduce(a, fold, axes, default_dtype(a.dtype), CHUNK)
    if not isinstance(a, GpuArray):
        a = _gpu(a)
    if not isinstance(a, GpuArray) or _unsupported({"where": where}):
        # (max, min and their nan forms take no dtype.)
        return call_numpy(name, (a,), _masked(dict(axis=axis, out=out, keepdims=keepdims,
                                                   **({} if dtype is None else {"dtype": dtype}),
                                                   **({} if initial is _NOVALUE else {"initial": initial})), where),
                          reason="gpupy does not reduce with these arguments on the device")
    axes = _axes(axis, a.ndim, zero_d_axis=True)
    acc = np.dtype(dtype) if dtype is not None else default_dtype(a.dtype)
    if needs_identity and initial is _NOVALUE and builtins.any(a.shape[ax] == 0 for ax in axes):
        raise ValueError(f"zero-size array to reduction operation {fold} which has no identity")
    result = _core.reduce(a, fold, list(axes), acc, CHUNK)
    if initial is not _NOVALUE:
        result = _core.ufunc(fold, result, acc.type(initial))
    return _finish(result, a, axes, keepdims, out)


_ALL_AXES = [list(range(n)) for n in range(65)]  # axis=None, by ndim (NumPy's limit is 64)
_AXES_SEEN = {}  # (axis, ndim) -> normalised axes, for the fast path (a program uses a few)


def _same_dtype(dt):
    return dt


@implements(np.sum)
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("sum", "add", a, axis, dtype, out, keepdims, initial, where, _default_sum_dtype, False)


@implements(np.prod)
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("prod", "multiply", a, axis, dtype, out, keepdims, initial, where, _default_sum_dtype, False)


@implements(np.max, np.amax)
def max(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("max", "maximum", a, axis, None, out, keepdims, initial, where, _same_dtype, True)


@implements(np.min, np.amin)
def min(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("min", "minimum", a, axis, None, out, keepdims, initial, where, _same_dtype, True)


amax = max
amin = min


@implements(np.nanmax)
def nanmax(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("nanmax", "fmax", a, axis, None, out, keepdims, initial, where, _same_dtype, True)


@implements(np.nanmin)
def nanmin(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _reduce("nanmin", "fmin", a, axis, None, out, keepdims, initial, where, _same_dtype, True)


def _bool_reduce(name, fold, a, axis, out, keepdims, where):
    a = _gpu(a)
    if not isinstance(a, GpuArray) or _unsupported({"where": where}):
        return call_numpy(name, (a,), _masked(dict(axis=axis, out=out, keepdims=keepdims), where),
                          reason="gpupy does not handle these arguments on the device")
    axes = _axes(axis, a.ndim, zero_d_axis=True)
    result = _core.reduce(a, fold, list(axes), np.dtype(bool), CHUNK)
    return _finish(result, a, axes, keepdims, out)


@implements(np.any)
def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _bool_reduce("any", "logical_or", a, axis, out, keepdims, where)


@implements(np.all)
def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _bool_reduce("all", "logical_and", a, axis, out, keepdims, where)


def _count(shape, axes):
    n = 1
    for ax in axes:
        n *= shape[ax]
    return n


@functools.lru_cache(maxsize=None)
def _mean_dtype(dtype):
    return np.dtype(np.float64) if dtype.kind in "biu" else dtype


_FLOAT16 = np.dtype(np.float16)


@implements(np.mean)
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _gpu(a)
    if not isinstance(a, GpuArray) or _unsupported({"where": where}):
        return call_numpy("mean", (a,), _masked(dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims), where),
                          reason="gpupy does not handle these arguments on the device")
    axes = _axes(axis, a.ndim, counted=True)
    n = _count(a.shape, axes)
    if n == 0:
        return call_numpy("mean", (a,), dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims),
                          reason="the slice is empty (NumPy warns and gives NaN)")
    acc = np.dtype(dtype) if dtype is not None else _mean_dtype(a.dtype)
    if dtype is None and acc == _FLOAT16:
        # NumPy's mean of float16 sums in float32 over its buffered loop
        # (the operand cast a buffer at a time, each buffer summed pairwise)
        # and rounds once: NumPy's own on the host values, counted.
        _placed["mean"] += 1
        result = _core.array_from_numpy(np.asarray(np.mean(a.__array__(), axis=axes, keepdims=keepdims)))
        return result if out is None else _into(out, result)
    total = _core.reduce(a, "add", list(axes), acc, CHUNK)
    result = total / n
    if result.dtype != acc:
        result = result.astype(acc)
    return _finish(result, a, axes, keepdims, out)


@implements(np.nanmean)
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = _gpu(a)
    if not isinstance(a, GpuArray) or a.dtype.kind != "f" or _unsupported({"where": where}):
        return call_numpy("nanmean", (a,), _masked(dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims), where),
                          reason="gpupy does not handle these arguments on the device")
    axes = _axes(axis, a.ndim)
    nan = _core.ufunc("isnan", a)
    values = _core.where(nan, 0, a)
    acc = np.dtype(dtype) if dtype is not None else a.dtype
    total = _core.reduce(values, "add", list(axes), acc, CHUNK)
    count = _core.reduce(_core.ufunc("logical_not", nan), "add", list(axes), np.dtype(np.int64), CHUNK)
    return _finish((total / count).astype(acc), a, axes, keepdims, out)


@implements(np.nansum)
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    a = _gpu(a)
    if isinstance(a, GpuArray) and a.dtype.kind == "f":
        a = _core.where(_core.ufunc("isnan", a), 0, a)
    return sum(a, axis, dtype, out, keepdims, initial, where)


@implements(np.nanprod)
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    a = _gpu(a)
    if isinstance(a, GpuArray) and a.dtype.kind == "f":
        a = _core.where(_core.ufunc("isnan", a), 1, a)
    return prod(a, axis, dtype, out, keepdims, initial, where)


_placed = placement_counts()


def _arg_extreme(name, fold, a, axis, out, keepdims):
    if axis is None and out is None and not keepdims and type(a) is GpuArray and a.size:
        # `argmin(abs(e - symbols))` in a loop over samples: where the
        # arg-reductions are placed on the host, the first extreme found in
        # one pass over the host values (counted as NumPy's function placed
        # there), without the flattening and the general call's argument
        # handling, which cost seven times NumPy's argmin.
        found = _core.arg_extreme_now(a, name == "argmax")
        if found is not None:
            return found
        if linear_algebra_on_host():  # values not on the host yet: NumPy's own on them
            _placed[name] += 1
            return _core.as_scalar(_core.array_from_numpy(np.asarray(getattr(a.__array__(), name)())))
    a = _gpu(a)
    if not isinstance(a, GpuArray):
        return call_numpy(name, (a,), dict(axis=axis, out=out, keepdims=keepdims), reason="gpupy does not handle this dtype on the device")
    if axis is None:
        flat = a.reshape(-1)
        result = _arg_extreme(name, fold, flat, 0, None, False)
        if keepdims:
            result = result.reshape((1,) * a.ndim)
        return result if out is None else _into(out, result)
    axis = _one_axis(axis)
    if a.ndim == 0:
        # NumPy arg-reduces a 0-d array as its ravel; keepdims keeps 0 dims.
        a, keepdims = a.reshape(1), False
    (ax,) = _axes(axis, a.ndim)
    n = a.shape[ax]
    if n == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if linear_algebra_on_host():
        # Where the device lost to the host's vectorised code (a CPU
        # renderer: products go to BLAS), NumPy's arg-reduction is one pass
        # over the host values; the device's formulation below is three
        # (the extreme, the hits, the first hit): a (20000, 16) argmin
        # took 6.5 ms on the host engine, 0.6 in NumPy. A placement, as
        # the products' (stats()["host_placements_by_function"]).
        # Results are gpupy arrays, 0-d included, as the other reductions'.
        kwargs = {"axis": ax, "keepdims": keepdims}
        if out is not None:
            kwargs["out"] = out
        result = run_on_host(name, getattr(np, name), (a,), kwargs)
        return result if isinstance(result, GpuArray) else _core.as_scalar(_gpu(result))
    extreme = _core.reduce(a, fold, [ax], a.dtype, CHUNK)
    extreme_b = _keep(extreme, a.shape, (ax,))
    hit = _core.ufunc("equal", a, extreme_b)
    if a.dtype.kind == "f":
        # NumPy returns the first NaN: the extreme is NaN exactly then.
        hit = _core.ufunc("logical_or", hit, _core.ufunc("isnan", a))
    index = _core.index_array(a.shape, ax, np.dtype(np.int64))
    candidates = _core.where(hit, index, n)
    result = _core.reduce(candidates, "minimum", [ax], np.dtype(np.int64), CHUNK)
    return _finish(result, a, (ax,), keepdims, out)


@implements(np.argmax)
def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_extreme("argmax", "maximum", a, axis, out, keepdims)


@implements(np.argmin)
def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_extreme("argmin", "minimum", a, axis, out, keepdims)


def _nan_arg_extreme(name, arg_extreme, fill, a, axis, out, keepdims):
    """nanargmin/nanargmax: the arg extreme with NaNs as +-inf, and
    NumPy's ValueError for a slice of NaNs only (one value read back)."""
    g = _gpu(a)
    if not isinstance(g, GpuArray):
        return call_numpy(name, (a,), dict(axis=axis, out=out, keepdims=keepdims),
                          reason="gpupy cannot hold the array's dtype")
    if g.dtype.kind == "f":
        nan = _core.ufunc("isnan", g)
        if g.size and builtins.bool(any(all(nan, axis=axis))):
            raise ValueError("All-NaN slice encountered")
        g = _core.where(nan, g.dtype.type(fill), g)
    return arg_extreme(g, axis=axis, out=out, keepdims=keepdims)


@implements(np.nanargmax)
def nanargmax(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg_extreme("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


@implements(np.nanargmin)
def nanargmin(a, axis=None, out=None, *, keepdims=False):
    return _nan_arg_extreme("nanargmin", argmin, np.inf, a, axis, out, keepdims)


@implements(np.ptp)
def ptp(a, axis=None, out=None, keepdims=False):
    result = max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)
    return result if out is None else _into(out, result)


@implements(np.var)
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NOVALUE, correction=_NOVALUE):
    a = _gpu(a)
    # NumPy's own gets every argument given: a mask, a mean or a correction
    # left out of its call changed the answer in silence.
    kwargs = _masked(dict(axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims), where)
    for key, value in (("mean", mean), ("correction", correction)):
        if value is not _NOVALUE:
            kwargs[key] = value
    if (not isinstance(a, GpuArray) or _unsupported({"where": where}) or mean is not _NOVALUE
            or correction is not _NOVALUE):
        return call_numpy("var", (a,), kwargs, reason="gpupy does not handle these arguments on the device")
    axes = _axes(axis, a.ndim, counted=True)
    n = _count(a.shape, axes)
    if n - ddof <= 0:
        return call_numpy("var", (a,), kwargs, reason="the degrees of freedom are <= 0")
    acc = np.dtype(dtype) if dtype is not None else _mean_dtype(a.dtype)
    centre = _keep(_core.reduce(a, "add", list(axes), acc, CHUNK) / n, a.shape, axes)
    deviation = _core.ufunc("subtract", a.astype(acc) if a.dtype != acc else a, centre)
    squares = _core.ufunc("multiply", deviation, deviation)
    result = _core.reduce(squares, "add", list(axes), acc, CHUNK) / (n - ddof)
    if result.dtype != acc:
        result = result.astype(acc)
    return _finish(result, a, axes, keepdims, out)


@implements(np.std)
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=_NOVALUE, correction=_NOVALUE):
    v = var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean, correction=correction)
    result = _core.ufunc("sqrt", v) if isinstance(v, GpuArray) else np.sqrt(v)
    return result if out is None else _into(out, result)


def _scan(name, fold, a, axis, dtype, out):
    a = _gpu(a)
    if not isinstance(a, GpuArray):
        return call_numpy(name, (a,), dict(axis=axis, dtype=dtype, out=out), reason="gpupy does not handle this dtype on the device")
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    axis = _one_axis(axis)
    if a.ndim == 0:
        # NumPy scans a 0-d array as its ravel (one element).
        a = a.reshape(1)
    (ax,) = _axes(axis, a.ndim)
    acc = np.dtype(dtype) if dtype is not None else _default_sum_dtype(a.dtype)
    result = _scanned(name, fold, a, ax, acc)
    return result if out is None else _into(out, result)


# Below this many elements a scan placed on the host is NumPy's own: its
# sequential accumulate beat the chunked scan on one or two cores (1,000
# float32: 4 against 25 us; 100,000: 0.29 against 0.66 ms; at 2^20 3.1
# against 3.6 ms, 2-core VM, 2026-11-29), and it is NumPy's answer exactly:
# its rounding, and the infinities and NaNs of a running sum, which a
# chunked scan reassociates (a chunk's partial sums overflow where the
# running sum, an infinity of the other sign already, would not have).
_HOST_SCAN_ELEMENTS = 1 << 20


def _scanned(name, fold, a, ax, acc):
    """The inclusive scan of `a` along axis ax with `fold`, in dtype acc.
    NumPy's float16 accumulate rounds every step to float16 (a sum of
    0.1s stops growing at 256), a chain no chunked scan reproduces: NumPy's
    own on the host values, counted as a placement; so is any scan below
    _HOST_SCAN_ELEMENTS where data work is placed on the host (a CPU
    renderer)."""
    if (acc == _FLOAT16 and fold in ("add", "multiply")) or (a.size < _HOST_SCAN_ELEMENTS
                                                              and linear_algebra_on_host()):
        _placed[name] += 1
        ufunc = getattr(np, fold)
        return _core.array_from_numpy(ufunc.accumulate(a.__array__(), axis=ax, dtype=acc))
    return _core.scan(a, fold, ax, acc, CHUNK)


@implements(np.cumsum)
def cumsum(a, axis=None, dtype=None, out=None):
    return _scan("cumsum", "add", a, axis, dtype, out)


@implements(np.cumprod)
def cumprod(a, axis=None, dtype=None, out=None):
    return _scan("cumprod", "multiply", a, axis, dtype, out)


@implements(np.count_nonzero)
def count_nonzero(a, axis=None, *, keepdims=False):
    a = _gpu(a)
    if not isinstance(a, GpuArray):
        return call_numpy("count_nonzero", (a,), dict(axis=axis, keepdims=keepdims), reason="gpupy does not handle this dtype on the device")
    axes = _axes(axis, a.ndim, zero_d_axis=True)
    result = _core.reduce(a.astype(bool), "add", list(axes), np.dtype(np.intp), CHUNK)
    if axis is None and not keepdims:
        return int(result)
    return _finish(result, a, axes, keepdims, None)


# ufunc.reduce / ufunc.accumulate for the folds the device has.
_FOLDS = {"add", "multiply", "maximum", "minimum", "fmax", "fmin", "logical_and", "logical_or"}
_IDENTITY_FREE = {"maximum", "minimum", "fmax", "fmin"}


def _fold_dtype(uf, dtype):
    """The dtype NumPy's `uf.reduce` / `uf.accumulate` fold `dtype` in when
    none is asked for: add and multiply widen booleans and small integers
    to the platform's integer (as np.sum does: np.add.accumulate of int8 is
    int64), the other folds their loop's dtype."""
    if uf.__name__ in ("add", "multiply"):
        return _default_sum_dtype(dtype)
    return np.dtype(uf._np.resolve_dtypes((dtype, dtype, None))[2])


def ufunc_reduce(uf, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    name = uf.__name__
    a = _gpu(array)
    if name not in _FOLDS or not isinstance(a, GpuArray) or _unsupported({"where": where}):
        kwargs = dict(axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        if initial is not _NOVALUE:
            kwargs["initial"] = initial
        _masked(kwargs, where)
        reason = ("the ufunc has no fold on the device" if name not in _FOLDS
                  else "gpupy does not handle this dtype on the device" if not isinstance(a, GpuArray)
                  else "a where= mask of the reduction")
        return call_numpy(f"{name}.reduce", (array,), kwargs, func=uf._np.reduce, reason=reason)
    if name in ("logical_and", "logical_or"):
        dt = np.dtype(bool) if dtype is None else np.dtype(dtype)
        default = lambda _: dt  # noqa: E731
    elif name in _IDENTITY_FREE:
        default = _same_dtype
    else:
        default = functools.partial(_fold_dtype, uf)
    return _reduce(f"{name}.reduce", name, a, axis, dtype, out, keepdims, initial, where, default,
                   name in _IDENTITY_FREE)


def ufunc_accumulate(uf, array, axis=0, dtype=None, out=None):
    name = uf.__name__
    a = _gpu(array)
    if name not in _FOLDS or not isinstance(a, GpuArray):
        return call_numpy(f"{name}.accumulate", (array,), dict(axis=axis, dtype=dtype, out=out),
                          func=uf._np.accumulate, reason="the ufunc has no fold on the device")
    if a.ndim == 0:
        raise TypeError("cannot accumulate on a scalar")
    axes = _axes(axis, a.ndim)
    if len(axes) != 1:
        raise ValueError("accumulate does not allow multiple axes")
    (ax,) = axes
    acc = np.dtype(dtype) if dtype is not None else _fold_dtype(uf, a.dtype)
    result = _scanned(f"{name}.accumulate", name, a, ax, acc)
    return result if out is None else _into(out, result)


# Names gpupy exports from this module (as NumPy functions of the same name).
PUBLIC = (
    "sum",
    "prod",
    "max",
    "min",
    "nanmax",
    "nanmin",
    "any",
    "all",
    "mean",
    "nanmean",
    "nansum",
    "nanprod",
    "argmax",
    "argmin",
    "ptp",
    "var",
    "std",
    "cumsum",
    "cumprod",
    "count_nonzero",
    "amax",
    "amin",
)
