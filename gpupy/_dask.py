"""gpupy arrays as Dask chunks (docs/dask.md).

Dask keeps a list of the array types it may hold as chunks and a set of
dispatch tables for what it cannot do through NumPy's protocols
(concatenating chunks, contractions, percentiles, element counts, moving
chunks to NumPy). gpupy enters itself in both when `dask.array` is
imported -- at once if it already is, else right after its import
(_import_hooks), so `import gpupy` never imports Dask. Then:

* Dask operations on gpupy-chunked arrays give gpupy-chunked dask arrays,
  and mixing a dask array with a gpupy array gives a dask array, as mixing
  it with an ndarray does;
* each Dask task calls gpupy functions on its chunks, which build lazy
  expressions: a chain of blockwise tasks is one fused gpupy evaluation
  per chunk, whether Dask fused the tasks or not. Where a task's lazy
  result would keep far more alive than itself -- a chunk's partial sum
  holds the whole chunk until it is evaluated -- it is evaluated as the
  task ends (`settle`), so arrays larger than memory stream through;
* `dask.config.set({"array.backend": "gpupy"})` makes `da.ones`,
  `da.arange`, `da.random` ... create gpupy chunks, and
  `x.to_backend("gpupy")` moves a NumPy-chunked array to gpupy (the same
  backend is found through the "dask.array.backends" entry point when
  gpupy is installed and not yet imported).
"""

import math
import sys

import numpy as np

from . import _core
from ._convert import asarray
from ._core import GpuArray
from ._creation import empty, full
from ._import_hooks import after_import
from ._indexing_reads import take
from ._linalg import einsum, tensordot
from ._reductions import sum as _sum
from ._shape import concatenate
from ._sorting import percentile
from ._ufuncs import UFUNCS

BACKEND = "gpupy"


def _concatenate(arrays, axis=0):
    return concatenate(arrays, axis=axis)


def _take(a, indices, axis=None):
    return take(a, indices, axis=axis)


def _tensordot(a, b, axes=2):
    return tensordot(a, b, axes=axes)


def _einsum(*operands, **kwargs):
    return einsum(*operands, **kwargs)


def _empty(shape, dtype=float, **kwargs):
    return empty(shape, dtype=dtype)


def _divide(x1, x2, out=None, dtype=None):
    return UFUNCS["divide"](x1, x2, out=out, dtype=dtype)


def _percentile(a, q, method="linear"):
    """One chunk's percentiles and its length, as Dask merges them."""
    n = len(a)
    if not n:
        return None, n
    if not np.issubdtype(a.dtype, np.number):
        method = "nearest"
    return percentile(a, list(q), method=method), n


def _numel(x, axis=None, keepdims=False, dtype=np.float64, **kwargs):
    """The number of elements a reduction over `axis` folds, per output
    element, as a gpupy array (Dask divides a chunk's sum by it)."""
    shape = x.shape
    if axis is None:
        axes = range(len(shape))
    else:
        axes = [a % len(shape) for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    count = math.prod(shape[a] for a in axes)
    if axis is None and not keepdims:
        return np.prod(shape, dtype=dtype)  # a NumPy scalar, as Dask's own count of an ndarray chunk
    out_shape = tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes)
    return full(out_shape, count, dtype=dtype)


def _nannumel(x, **kwargs):
    return _sum(~UFUNCS["isnan"](x), **kwargs)


# A task's lazy result is evaluated when it keeps alive more than this many
# times its own bytes (and more than SETTLE_MIN_BYTES): a chunk's partial
# sum does, an elementwise result of a chunk or a concatenation of chunks
# does not, and stays lazy to fuse with the next task.
SETTLE_RATIO = 4
SETTLE_MIN_BYTES = 1 << 20
# Containers longer than this are data (a dask.bag partition), not partial
# results: not looked into, so a task callback costs no pass over them.
_SETTLE_ITEMS = 16


def settle(value):
    """A task's result as Dask's memory needs it: a lazy gpupy array (also
    inside a short tuple, list or dict: a reduction's partial results) that
    keeps far more alive than itself is evaluated into host memory, which
    releases its operands. Returns value."""
    if type(value) is GpuArray:
        if _core.retained_host_bytes(value) > max(SETTLE_RATIO * value.nbytes, SETTLE_MIN_BYTES):
            value.__array__()
    elif type(value) in (tuple, list, dict) and len(value) <= _SETTLE_ITEMS:
        for item in value.values() if type(value) is dict else value:
            settle(item)
    return value



def _sizeof(x):
    # dask.distributed measures every task's result in the task's thread
    # as it ends: the task boundary, where the result is settled.
    return settle(x).nbytes


def _settle_task(key, result, dsk, state, worker_id):
    # The local schedulers' (threads, processes, synchronous) task boundary.
    settle(result)


def _to_numpy(data, **kwargs):
    return np.array(data.__array__(), **kwargs)


def _to_gpupy(data, **kwargs):
    return asarray(data, **kwargs)


_backend = None


def _meta():
    """The array Dask's creation functions are given as `meta=`: empty and
    1-d, so that Dask's meta of any dimension is a slice of it (a 0-d one
    would be indexed with `[()]`, which gives a NumPy scalar)."""
    return empty((0,))


def backend_entrypoint():
    """The "gpupy" array backend of Dask (an ArrayBackendEntrypoint), made
    once; also what the "dask.array.backends" entry point names, which Dask
    calls before gpupy is otherwise imported."""
    global _backend
    register()
    if _backend is None:
        _backend = _make_backend()
    return _backend


def _make_backend():
    import dask.array as da
    from dask import config
    from dask.array.backends import ArrayBackendEntrypoint
    from dask.utils import Dispatch

    to_gpupy_dispatch = Dispatch("to_gpupy_dispatch")
    to_gpupy_dispatch.register((object, np.ndarray), _to_gpupy)
    to_gpupy_dispatch.register(GpuArray, lambda data, **kwargs: data)

    def with_gpupy_meta(name):
        def create(*args, meta=None, **kwargs):
            meta = _meta() if meta is None else meta
            with config.set({"array.backend": "numpy"}):  # Dask's own function, given gpupy's meta
                return getattr(da, name)(*args, meta=meta, **kwargs)

        create.__name__ = name
        return staticmethod(create)

    class GpupyBackend(ArrayBackendEntrypoint):
        """Dask arrays created with gpupy chunks."""

        @classmethod
        def to_backend_dispatch(cls):
            return to_gpupy_dispatch

        @classmethod
        def to_backend(cls, data, **kwargs):
            if isinstance(data._meta, GpuArray):
                return data
            return data.map_blocks(to_gpupy_dispatch, **kwargs)

        @property
        def RandomState(self):
            return sys.modules[__package__].random.RandomState  # gpupy.random, made on first use

        @property
        def default_bit_generator(self):
            return np.random.PCG64

        ones = with_gpupy_meta("ones")
        zeros = with_gpupy_meta("zeros")
        empty = with_gpupy_meta("empty")
        full = with_gpupy_meta("full")

        @staticmethod
        def arange(*args, like=None, **kwargs):
            like = _meta() if like is None else like
            with config.set({"array.backend": "numpy"}):
                return da.arange(*args, like=like, **kwargs)

    return GpupyBackend()


def register(_module=None):
    """Enters gpupy in Dask's chunk types and dispatch tables (idempotent)."""
    from dask.array import dispatch
    from dask.array.backends import array_creation_dispatch
    from dask.array.chunk_types import register_chunk_type
    from dask.array.core import is_valid_chunk_type

    from dask.callbacks import Callback
    from dask.sizeof import sizeof

    if is_valid_chunk_type(GpuArray):
        return
    register_chunk_type(GpuArray)
    # What a chunk holds (dask.distributed's memory accounting, spilling),
    # and the end of each task, local or distributed (settle).
    sizeof.register(GpuArray, _sizeof)
    Callback(posttask=_settle_task).register()
    dispatch.concatenate_lookup.register(GpuArray, _concatenate)
    dispatch.take_lookup.register(GpuArray, _take)
    dispatch.tensordot_lookup.register(GpuArray, _tensordot)
    dispatch.einsum_lookup.register(GpuArray, _einsum)
    dispatch.empty_lookup.register(GpuArray, _empty)
    dispatch.divide_lookup.register(GpuArray, _divide)
    dispatch.percentile_lookup.register(GpuArray, _percentile)
    dispatch.numel_lookup.register(GpuArray, _numel)
    dispatch.nannumel_lookup.register(GpuArray, _nannumel)
    dispatch.to_numpy_dispatch.register(GpuArray, _to_numpy)
    array_creation_dispatch.register_backend(BACKEND, backend_entrypoint())


def install():
    after_import("dask.array", register)
