"""The whole NumPy namespace under gpupy: gpupy's own implementations where
they exist, NumPy's (on flushed arguments, results wrapped back) elsewhere."""

import functools
import types

import numpy as np

from ._array import _FUNCTIONS
from ._fallback import call_numpy
from ._ufuncs import make_ufuncs

UFUNCS = make_ufuncs()


def _wrap_function(name, func):
    impl = _FUNCTIONS.get(func)
    if impl is not None:
        return impl

    @functools.wraps(func)
    def fallback(*args, **kwargs):
        return call_numpy(name, args, kwargs, func=func, reason="function gpupy does not implement")

    return fallback


def populate(namespace):
    """Fills `namespace` (gpupy's globals) with every public NumPy name."""
    for name, value in UFUNCS.items():
        namespace.setdefault(name, value)
    for name in dir(np):
        if name.startswith("_") or name in namespace:
            continue
        value = getattr(np, name)
        if isinstance(value, np.ufunc):
            from ._ufuncs import ufunc

            namespace[name] = UFUNCS.get(value.__name__) or ufunc(value)
        elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)) or (
                callable(value) and hasattr(value, "__wrapped__") and not isinstance(value, type)):
            namespace[name] = _wrap_function(name, value)
        else:
            namespace[name] = value
