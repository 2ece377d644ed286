"""The package's registries: what implements which NumPy function.

Base layer: imports nothing of gpupy but `_core`. The sections
(_creation, _shape, _reductions, _linalg, _logic, _inplace, _ufuncs,
_methods, ...) register here and never import each other: a section that
needs another section's function looks it up by name when it runs
(`function("sum")`), after gpupy's namespace is filled.
"""

# numpy function -> gpupy implementation (registered with `implements`).
FUNCTIONS = {}

# numpy function -> the gpupy namespace's function for it (fallback
# wrappers included; filled by _namespace.populate).
WRAPPERS = {}

# numpy ufunc -> the gpupy object that runs it, and the op-table name of
# those the device runs (filled by _namespace.populate).
UFUNC_IMPL = {}
DEVICE_UFUNCS = {}

# gpupy's globals, once populated: what `function` looks names up in.
namespace = {}

# What one section provides to another that is not a gpupy function:
# "ufunc_reduce" and "ufunc_accumulate" (from _reductions, for gpupy's
# ufunc objects), "make_ufunc" and "ufunc_class" (from _ufuncs, for the
# namespace), "gather", "scatter" and "read_at" (from _indexing, for advanced indexing
# in _methods and the sorting network in _sorting), "sort_in_place" (from
# _sorting, for ndarray.sort).
hooks = {}

# How many elements one output of a device reduction folds per pass (the
# reductions and the matrix products built on them share it).
REDUCE_CHUNK = 256


def implements(*numpy_functions):
    """Registers a gpupy function as the implementation of NumPy functions."""

    def register(func):
        for f in numpy_functions:
            FUNCTIONS[f] = func
        return func

    return register


def register_wrapper(numpy_function, gpupy_function):
    WRAPPERS[numpy_function] = gpupy_function


def function(name):
    """gpupy.<name>, looked up when called: how a section uses another's
    functions without importing it."""
    try:
        return namespace[name]
    except KeyError:
        raise RuntimeError(f"gpupy.{name} is used before gpupy's namespace is filled") from None
