"""NumPy functions that write into an argument, on the device where they
can be (the others run in NumPy with their written arguments copied back,
see _fallback.call_numpy)."""

import numpy as np

from ._convert import asarray
from ._core import GpuArray
from ._fallback import call_numpy
from ._registry import function, implements


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
    np.copyto(np.zeros((1,) * dst.ndim, dst.dtype), _stand_in(src), casting=casting, where=_stand_in(where))
    for operand in (src, where):
        shape = np.shape(operand)
        if np.broadcast_shapes(shape, dst.shape) != dst.shape:
            raise ValueError(f"could not broadcast input array from shape {shape} into shape {dst.shape}")
    if isinstance(where, (bool, np.bool_)) and where:
        dst[...] = src
        return None
    src = asarray(src, dtype=dst.dtype) if not isinstance(src, GpuArray) else src.astype(dst.dtype, copy=False)
    dst[...] = function("where")(where, src, dst)
    return None
