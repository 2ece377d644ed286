"""Handing calls over to other array libraries, as NumPy does (NEP 13, NEP 18).

A pandas Series, an xarray DataArray or a dask array implements NumPy's
override protocols itself: `np.sin(series)` is a Series with its index,
`np.sum(dask_array)` a lazy dask array. A script that replaces NumPy by
gpupy must get the same objects back, so gpupy steps aside exactly where
NumPy would:

* a ufunc (gpupy's, NumPy's on a GpuArray, or an operator) with an operand
  that overrides `__array_ufunc__` is NumPy's ufunc, whose dispatch gives
  that operand's library the call (the operators do this in C,
  src/bindings/py_ops.cpp; GpuArray.__array_ufunc__ hands such a call to
  the other library, `hand_over_ufunc`);
* a function with an argument that implements `__array_function__` is
  NumPy's function, which dispatches to it;
* the functions NumPy forwards to the argument's own method
  (`np.sum(x)` is `x.sum()` for anything but an ndarray) do the same for
  objects that only override ufuncs (pandas, xarray), whose methods keep
  their index and coordinates.

Converters (array, asarray, ...) never step aside: turning the other
library's object into a gpupy array is what they are for, as NumPy's turn
it into an ndarray. Base layer: imports nothing of gpupy but `_core`.
"""

import functools

import numpy as np

from . import _core
from ._core import GpuArray

# What an argument's type asks of NumPy's dispatch: nothing (NATIVE), ufuncs
# only (UFUNCS: pandas, xarray), or functions too (FUNCTIONS: dask, ...).
NATIVE, UFUNCS, FUNCTIONS = 0, 1, 2

_OWN_PROTOCOLS = {
    "__array_ufunc__": (np.ndarray.__array_ufunc__, None),
    "__array_function__": (np.ndarray.__array_function__,),
}
_kinds = {t: NATIVE for t in (int, float, bool, complex, str, bytes, type(None), slice, type(Ellipsis), dict)}

# The functions numpy.fromnumeric and numpy's mean/std/var/squeeze forward to
# the argument's method of the same name when it is not an ndarray.
FORWARDED_TO_METHODS = frozenset({
    "all", "amax", "amin", "any", "argmax", "argmin", "argpartition", "argsort", "around", "choose", "clip",
    "compress", "cumprod", "cumsum", "max", "mean", "min", "nonzero", "prod", "repeat", "reshape", "round",
    "searchsorted", "squeeze", "std", "sum", "swapaxes", "take", "transpose", "var",
})

# Functions whose job is to make a gpupy array of whatever they are given.
CONVERTERS = frozenset({
    "array", "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require",
    "copy", "frombuffer", "fromiter", "from_dlpack", "empty_like", "zeros_like", "ones_like", "full_like",
})

# A sequence argument (`concatenate([a, b])`) is looked into up to this
# many items: NumPy's dispatchers look at the arrays of a sequence, and a
# long list of numbers is data, not arrays.
_SEQUENCE_LOOK = 64


def kind(t):
    """NATIVE, UFUNCS or FUNCTIONS for an argument's type (cached per type)."""
    k = _kinds.get(t)
    if k is None:
        if issubclass(t, (GpuArray, np.ndarray, np.generic)):
            k = NATIVE
        elif getattr(t, "__array_function__", np.ndarray.__array_function__) not in _OWN_PROTOCOLS["__array_function__"]:
            k = FUNCTIONS
        elif getattr(t, "__array_ufunc__", None) not in _OWN_PROTOCOLS["__array_ufunc__"]:
            k = UFUNCS
        else:
            k = NATIVE
        _kinds[t] = k
    return k


def strongest(objects):
    """The strongest kind among objects (and the items of short sequences among them)."""
    best = NATIVE
    for x in objects:
        t = type(x)
        if t is GpuArray:
            continue
        if t is list or t is tuple:
            if len(x) <= _SEQUENCE_LOOK:
                best = max(best, strongest(x))
            continue
        best = max(best, kind(t))
        if best == FUNCTIONS:
            break
    return best


def overrides_ufuncs(objects):
    """Whether an argument of a ufunc belongs to a library that overrides ufuncs."""
    for x in objects:
        t = type(x)
        if t is not GpuArray and kind(t) != NATIVE:
            return True
    return False


def hand_over_ufunc(ufunc, method, inputs, kwargs):
    """GpuArray.__array_ufunc__ with an operand of another library: that
    library's answer, as NumPy's dispatch would give it. A library that
    takes gpupy arrays (dask: gpupy is one of its chunk types) answers with
    them; one that only knows ndarrays (pandas: its __array_ufunc__ defers
    to any other array type) is asked again with the gpupy arrays read into
    ndarrays, which it takes -- what it would have been given under NumPy."""
    for x in inputs:
        t = type(x)
        if t is not GpuArray and kind(t) != NATIVE:
            result = t.__array_ufunc__(x, ufunc, method, *inputs, **kwargs)
            if result is not NotImplemented:
                return result
    hosts = tuple(x.__array__() if isinstance(x, GpuArray) else x for x in inputs)
    return getattr(ufunc, method)(*hosts, **kwargs)


def _decider(threshold):
    def decide(args, keyword_values):
        """Whether arguments the C check could not place take the call elsewhere."""
        return strongest(args) >= threshold or strongest(keyword_values) >= threshold

    return decide


_DECIDE = {UFUNCS: _decider(UFUNCS), FUNCTIONS: _decider(FUNCTIONS)}


def deferring(name, implementation, numpy_function):
    """gpupy's `implementation` of numpy function `name`, stepping aside for
    arguments of libraries NumPy would hand the call to. The common call
    (gpupy arrays, NumPy's arrays and scalars, numbers) is told apart in C
    (_core.handover, src/bindings/py_handover.cpp); any other argument is
    looked at here (`strongest`)."""
    if name in CONVERTERS:
        return implementation
    threshold = UFUNCS if name in FORWARDED_TO_METHODS else FUNCTIONS
    call = _core.handover(implementation, numpy_function, _DECIDE[threshold])
    functools.update_wrapper(call, implementation)
    # Pickled by reference as gpupy.<name>, which is this object.
    call.__module__, call.__qualname__ = "gpupy", name
    return call
