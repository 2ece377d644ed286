"""gpupy: a NumPy-compatible array evaluated lazily on the GPU.

Replace ``import numpy as np`` with ``import gpupy as np``: operations build
expressions that are fused into shaders and run through OpenGL (or the
software driver); whatever gpupy cannot run falls back to NumPy, visibly
(see set_fallback and stats).
"""

from ._version import __version__
from . import _core
from ._core import DriverError, GpuArray
from ._fallback import FallbackError, GpupyFallbackWarning, fallback_mode, get_fallback, set_fallback
from ._runtime import (
    block_size,
    cache_bytes,
    driver,
    host_threshold,
    reset_stats,
    set_block_size,
    set_cache_bytes,
    set_driver_option,
    set_host_threshold,
    show_config,
    stats,
    use_driver,
)
from . import _array

_array.install()

from ._runtime import select_driver as _select_driver

_select_driver()

from ._creation import (
    arange,
    array,
    asanyarray,
    asarray,
    ascontiguousarray,
    copy,
    empty,
    empty_like,
    fromfunction,
    full,
    full_like,
    gpufloat32,
    indices,
    linspace,
    ones,
    ones_like,
    zeros,
    zeros_like,
)
from . import _linalg, _reductions, _shape

_reductions.install()
_linalg.install()
for _module in (_shape, _reductions, _linalg):
    globals().update({_name: getattr(_module, _name) for _name in _module.PUBLIC})
del _module

from . import _inplace, _logic  # noqa: F401  (register copyto, isclose, allclose, array_equal, ...)

ndarray = GpuArray

_array.install_namespace_methods()

from ._namespace import is_fallback, populate as _populate

_populate(globals())
del _populate

from . import _submodules

_submodules.install_finder()
_SUBMODULES = frozenset(_submodules.submodule_names())

# `from gpupy import *` binds what `from numpy import *` binds (submodules
# included), plus gpupy's own names.
__all__ = sorted({_n for _n in globals() if not _n.startswith("_")} | _SUBMODULES) + ["__version__"]


def __getattr__(name):
    # NumPy's submodules (gpupy.random, gpupy.linalg, ...), made on first use.
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
