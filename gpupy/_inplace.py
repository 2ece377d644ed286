"""NumPy functions that write into an argument, on the device where they
can be (the others run in NumPy with their written arguments copied back,
see _fallback.call_numpy)."""

import contextlib

import numpy as np

from . import _core
from ._convert import asarray
from ._core import GpuArray
from ._fallback import call_numpy
from ._registry import implements


def _stand_in(x):
    """A one-element ndarray with x's dtype and number of dimensions, or x
    itself if it is a scalar: enough for NumPy to check its casting rules
    (Python scalars stay "weak", NEP 50)."""
    if not isinstance(x, GpuArray):
        if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
            return x
        x = np.asarray(x)
    return np.zeros((1,) * x.ndim, x.dtype)


@implements(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    """numpy.copyto; into a GpuArray, a lazy write on the device."""
    if not isinstance(dst, GpuArray):
        return call_numpy("copyto", (dst, src), {"casting": casting, "where": where}, func=np.copyto)
    if not dst._writeable:
        raise ValueError("assignment destination is read-only")
    # NumPy checks the casting (weak Python scalars, overflow) on stand-ins.
    # (The mask's stand-in has no dimensions: its shape is checked below.)
    converted = np.zeros((1,) * dst.ndim, dst.dtype)
    # Into an empty dst NumPy casts nothing and so warns of nothing (a mask
    # of False does not spare the cast of a scalar source): the stand-in's
    # cast is checked quietly then.
    with np.errstate(all="ignore") if dst.size == 0 else contextlib.nullcontext():
        np.copyto(converted, _stand_in(src), casting=casting,
                  where=_stand_in(where).reshape(()) if np.ndim(where) else where)
    if np.ndim(src) == 0 and not isinstance(src, (GpuArray, np.ndarray)):
        src = converted.reshape(-1)[0] if converted.size else src  # NumPy's conversion of the scalar
    # The source's leading length-1 dimensions beyond dst's are dropped (as
    # in an assignment); the mask's are not.
    shape = np.shape(src)
    kept = shape[next((k for k, n in enumerate(shape) if n != 1 or len(shape) - k <= dst.ndim), len(shape)):]
    if not _broadcasts(kept, dst.shape):
        raise ValueError(f"could not broadcast input array from shape {_text(shape)} into shape {_text(dst.shape)}")
    if not _broadcasts(np.shape(where), dst.shape):
        raise ValueError(f"could not broadcast where mask from shape {_text(np.shape(where))} into shape "
                         f"{_text(dst.shape)}")
    if dst.size == 0:
        return None  # nothing to write (and no element to convert: no warning)
    src = asarray(src, dtype=dst.dtype) if not isinstance(src, GpuArray) else src.astype(dst.dtype, copy=False)
    if isinstance(where, (bool, np.bool_)) and where:
        dst[...] = src
        return None
    dst[...] = _core.where(where, src.reshape(kept), dst)
    return None


def _broadcasts(shape, target):
    """Whether `shape` broadcasts to `target` (no more dimensions)."""
    return len(shape) <= len(target) and all(n in (1, t) for n, t in zip(reversed(shape), reversed(target)))


def _text(shape):
    """A shape as NumPy's messages write it: (2,3), (3,), ()."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
