"""The package's registries: what implements which NumPy function.

Base layer: imports nothing of gpupy. The sections register their
implementations here (`implements`), for the namespace and NumPy's
protocols to find; a section that uses another's function imports it.
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
    """gpupy.<name> as the namespace holds it, looked up when called: for
    what only the namespace makes (NumPy's functions as counted fallbacks,
    the hand-over to other libraries), which nothing below the assembly
    can import."""
    try:
        return namespace[name]
    except KeyError:
        raise RuntimeError(f"gpupy.{name} is used before gpupy's namespace is filled") from None
