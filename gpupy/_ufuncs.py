"""gpupy's ufunc objects: NumPy's ufuncs, evaluated lazily on the device.

Each op-table row becomes a `ufunc` that builds one expression node; any
argument or method gpupy does not handle (dtype=, where=, reduce on an op
without a device reduction, ...) runs NumPy's ufunc instead, as a counted
fallback.
"""

import numpy as np

from . import _core
from ._core import GpuArray
from ._fallback import call_numpy

# Keyword arguments that leave the computation as gpupy builds it.
_NEUTRAL = {"casting": "same_kind", "order": "K", "subok": True, "where": True, "dtype": None, "signature": None}


def _is_neutral(kwargs):
    for k, v in kwargs.items():
        if k == "out":
            continue
        if k not in _NEUTRAL:
            return False
        neutral = _NEUTRAL[k]
        if v is not neutral and v != neutral:
            return False
    return True


class ufunc:
    """A NumPy-compatible ufunc whose calls build lazy GPU expressions."""

    def __init__(self, numpy_ufunc):
        self._np = numpy_ufunc
        self.__name__ = numpy_ufunc.__name__
        self.__qualname__ = numpy_ufunc.__name__
        self.__doc__ = numpy_ufunc.__doc__

    nin = property(lambda self: self._np.nin)
    nout = property(lambda self: self._np.nout)
    nargs = property(lambda self: self._np.nargs)
    ntypes = property(lambda self: self._np.ntypes)
    types = property(lambda self: self._np.types)
    identity = property(lambda self: self._np.identity)
    signature = property(lambda self: self._np.signature)

    def __repr__(self):
        return f"<gpupy ufunc '{self.__name__}'>"

    def __call__(self, *args, **kwargs):
        out = kwargs.get("out")
        if isinstance(out, tuple):
            if len(out) != 1:
                return call_numpy(self.__name__, args, kwargs, func=self._np, reason="several outputs")
            out = out[0]
        if len(args) == self._np.nin and _is_neutral(kwargs) and (out is None or isinstance(out, GpuArray)):
            result = _core.ufunc(self.__name__, *args, out=out)
            if result is not NotImplemented:
                return result
        return call_numpy(self.__name__, args, kwargs, func=self._np, reason="arguments gpupy does not handle")

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        from . import _reductions

        return _reductions.ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        from . import _reductions

        return _reductions.ufunc_accumulate(self, array, axis, dtype, out)

    def outer(self, a, b, **kwargs):
        if kwargs or not (np.ndim(a) >= 0 and np.ndim(b) >= 0):
            return call_numpy(self.__name__ + ".outer", (a, b), kwargs, func=self._np.outer)
        from . import _creation

        a = _creation.asarray(a)
        b = _creation.asarray(b)
        if not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
            return call_numpy(self.__name__ + ".outer", (a, b), {}, func=self._np.outer)
        a2 = a.reshape(a.shape + (1,) * b.ndim)
        return self(a2, b)

    def reduceat(self, *args, **kwargs):
        return call_numpy(self.__name__ + ".reduceat", args, kwargs, func=self._np.reduceat)

    def at(self, *args, **kwargs):
        return call_numpy(self.__name__ + ".at", args, kwargs, func=self._np.at)


def make_ufuncs():
    """gpupy ufunc objects for every op-table ufunc, keyed by name."""
    return {name: ufunc(getattr(np, name)) for name in _core.ufunc_names()}
