"""Array-likes to GpuArrays: numpy.array / asarray for gpupy.

Base layer: imports nothing of gpupy but `_core`. Every section coerces
its operands through `asarray`.
"""

import numpy as np

from . import _core
from ._array_api import check_device
from ._core import GpuArray


# The dtypes a GpuArray holds, in native byte order (the common case of
# is_supported and asarray's fast path: a set lookup).
HELD_DTYPES = frozenset(np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                              np.uint32, np.uint64, np.float16, np.float32,
                                              np.float64))


def is_supported(dtype):
    """True if a GpuArray can hold values of this dtype."""
    if dtype in HELD_DTYPES:
        return True
    try:
        dt = np.dtype(dtype)
    except TypeError:
        return False
    return dt.kind in "biuf" and dt.itemsize in (1, 2, 4, 8)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """Like numpy.array; returns a GpuArray for dtypes the device can hold.
    As NumPy's: a copy unless copy is None or False, in the memory order
    `order` asks for (a copy keeps the source's by default, "K"); without a
    copy, the source itself (a GpuArray) or a view of its memory (an
    ndarray, whose writes either way are seen)."""
    if isinstance(object, GpuArray):
        want = object.dtype if dtype is None else np.dtype(dtype)
        if copy is False and not (want == object.dtype and _core.in_order(object, order)):
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        result = object.astype(want, order=order, copy=bool(copy))
    else:
        host = np.array(object, dtype=dtype, copy=None if copy is None or copy else False, order=order, ndmin=ndmin)
        if not is_supported(host.dtype):
            if copy and isinstance(object, np.ndarray) and np.may_share_memory(host, object):
                host = host.copy(order=order)  # NumPy was not asked to copy (gpupy's own dtypes are copied below)
            return host
        if copy and not _fresh(host, object):
            # NumPy was asked for no copy (it copies once, into gpupy's
            # memory, here): the copy keeps host's memory order.
            return _core.copy_from_numpy(host)
        # The memory of an ndarray NumPy has just made is the array's
        # storage; an existing ndarray's is viewed, as NumPy does.
        return _core.array_from_numpy(host)
    if isinstance(result, GpuArray) and result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + result.shape)
    return result


def _fresh(host, source):
    """Whether NumPy made `host` just now (its own memory, not `source`'s
    or any other object's)."""
    return host is not source and host.base is None and host.flags.owndata


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """Like numpy.asarray: a GpuArray argument comes back as is; an ndarray
    of a dtype gpupy holds comes back as a GpuArray viewing its memory."""
    if type(a) is np.ndarray and dtype is None and copy is None and device is None and order is None \
            and a.dtype in HELD_DTYPES:
        # The common case, first: what `array` below does for it without
        # its checks (they were three quarters of a small asarray's time).
        return _core.array_from_numpy(a)
    if type(a) is GpuArray and dtype is None and copy is None and device is None and order is None:
        return a  # a script's own arrays handed back in (`xp.asarray(x)` in a loop)
    check_device(device)
    if isinstance(a, GpuArray) and (dtype is None or np.dtype(dtype) == a.dtype) and not copy \
            and _core.in_order(a, "K" if order is None else order):
        return a
    # copy=None: as NumPy's asarray, no copy where none is needed -- an
    # ndarray of a dtype gpupy does not hold comes back as it is (a view
    # made of it, as flip's, is a view of the caller's array, as in NumPy).
    return array(a, dtype=dtype, copy=copy, order="K" if order is None else order)


def ascontiguousarray(a, dtype=None, *, like=None):
    """numpy.ascontiguousarray: `a` itself where it is C-contiguous already
    (at least one dimension), else a C-ordered copy."""
    result = asarray(a, dtype=dtype, order="C")
    return result.reshape(1) if getattr(result, "ndim", 1) == 0 else result


def asfortranarray(a, dtype=None, *, like=None):
    """numpy.asfortranarray: `a` itself where it is Fortran-contiguous
    already (at least one dimension), else a Fortran-ordered copy."""
    result = asarray(a, dtype=dtype, order="F")
    return result.reshape(1) if getattr(result, "ndim", 1) == 0 else result


def stored_as(value, dtype):
    """One value as NumPy stores it in an element of `dtype` (pad's fill,
    an item assignment): a 0-d ndarray, with NumPy's conversion and its
    errors (OverflowError, ValueError)."""
    cell = np.empty((), dtype)
    cell[()] = value
    return cell


def as_gpu(a):
    """`a` as a GpuArray where the device can hold it (a NumPy array of
    another dtype otherwise)."""
    return a if isinstance(a, GpuArray) else asarray(a)


def from_pickle(host, scalar=False):
    """A GpuArray back from its pickle (GpuArray.__reduce_ex__): over the
    received bytes themselves where they can be its storage -- pickle
    protocol 5's out-of-band buffers, as dask.distributed sends them -- so
    no copy is made on either side; a scalar result again where it was one."""
    result = _core.adopt_ndarray(host) if is_supported(host.dtype) else host
    return _core.as_scalar(result) if scalar and isinstance(result, GpuArray) else result
