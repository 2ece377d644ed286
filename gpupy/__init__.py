"""gpupy: a NumPy-compatible array evaluated lazily on the GPU.

Replace ``import numpy as np`` with ``import gpupy as np``: operations build
expressions that are fused into shaders and run through OpenGL (or the
software driver); whatever gpupy cannot run falls back to NumPy, visibly
(see set_fallback and stats).
"""

from ._version import __version__

try:
    from . import _core
except ImportError as _error:  # pragma: no cover - exercised in a child process by the tests
    import os as _os
    from importlib.machinery import EXTENSION_SUFFIXES as _suffixes

    _here = _os.path.dirname(_os.path.abspath(__file__))
    # A compiled core that refused to start (a wrong setting: "GPUPY_BLOCK_SIZE
    # must be an integer >= 1, got 'abc'") says why itself.
    _built = any(_os.path.exists(_os.path.join(_here, "_core" + suffix)) for suffix in _suffixes)
    if _os.path.exists(_os.path.join(_here, "..", "pyproject.toml")) and not _built:
        # `from None`: Python's own message (a partially initialised module,
        # as if the imports went in a circle) misleads here. (Above the
        # statement: Python 3.13's traceback prints the statement's lines.)
        raise ImportError(
            f"gpupy is being imported from its source tree ({_here}), which has no compiled core. "
            "Run Python from another directory to use the installed gpupy (pip install . installs it), "
            "or build the core in place with tools/dev_build.sh."
        ) from None
    raise

from ._core import DriverError, GpuArray
from ._fallback import FallbackError, GpupyFallbackWarning, fallback_mode, get_fallback, set_fallback
from ._placement import get_placement, set_placement
from ._runtime import (
    block_size,
    cache_bytes,
    calibrate,
    cost_model,
    driver,
    eager_threshold,
    host_threshold,
    reset_stats,
    set_block_size,
    set_cache_bytes,
    set_driver_option,
    set_eager_threshold,
    set_host_threshold,
    show_config,
    stats,
    use_driver,
)

# The sections: importing each registers what it provides (implementations
# of NumPy functions, ufunc objects); each imports those below it
# (docs/architecture.md, "The Python package").
from . import (_binning, _creation, _dask, _indexing_reads, _indexing_writes, _inplace, _linalg, _logic, _methods,
               _pandas, _reductions, _runtime, _shape, _sorting, _submodules, _ufuncs)
# The assembly.
from . import _gpuarray, _namespace
from ._convert import array, asarray
from ._creation import (
    arange,
    asanyarray,
    ascontiguousarray,
    asfortranarray,
    copy,
    empty,
    empty_like,
    fromfunction,
    full,
    full_like,
    gpufloat32,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from ._namespace import is_fallback

for _module in (_shape, _reductions, _linalg):
    globals().update({_name: getattr(_module, _name) for _name in _module.PUBLIC})
del _module

ndarray = GpuArray

# The Array API standard (docs/ecosystem.md): gpupy is its own namespace.
from ._array_api import API_VERSION as __array_api_version__  # noqa: E402
from ._array_api import array_namespace_info as __array_namespace_info__  # noqa: E402


def _assemble():
    """The one step after the sections registered: every NumPy name in
    gpupy's namespace, GpuArray put together, the submodule finder,
    pandas' group keys, Dask's chunk types, the driver."""
    _namespace.populate(globals())
    _gpuarray.assemble()
    _submodules.install_finder()
    _pandas.install()
    _dask.install()
    _runtime.select_driver()


_assemble()
_SUBMODULES = frozenset(_submodules.submodule_names())

# `from gpupy import *` binds what `from numpy import *` binds (submodules
# included), plus gpupy's own names.
__all__ = sorted({_n for _n in globals() if not _n.startswith("_")} | _SUBMODULES
                 | set(_namespace.numpys_private_star_names())) + ["__version__"]


def __getattr__(name):
    # NumPy's submodules (gpupy.random, gpupy.linalg, ...), made on first use.
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
