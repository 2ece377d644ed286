"""The whole NumPy namespace under gpupy.

Every public name of `numpy` is a name of `gpupy` (`populate`), decided
per kind of object:

* gpupy's own implementations (the package's modules, and every function
  registered with `_registry.implements`) are used as they are;
* ufuncs (`_ufuncs`): the device's ufunc objects for the op table's ufuncs (and their
  NumPy aliases: abs, mod, true_divide, acos, ...), a few composed on the
  device (degrees, radians, conjugate, divmod), and `HostUfunc` objects
  that run NumPy's ufunc, visibly, for the rest;
* functions that only configure NumPy or look at dtypes and shapes
  (`DIRECT`) are NumPy's own; a few questions about arrays are answered
  from their metadata without reading values (result_type, can_cast,
  may_share_memory, ...);
* every other function is a fallback wrapper: `_fallback.call_numpy` with
  GpuArray arguments flushed to ndarrays and array results wrapped back;
* classes and constants are NumPy's, except `ndarray` (GpuArray), `ufunc`
  (gpupy's ufunc class) and `vectorize` (results as GpuArrays); the index
  helpers r_ and c_ give GpuArrays (fallbacks), mgrid and ogrid NumPy's
  grids as GpuArrays (host placements);
* submodules (random, linalg, fft, ...) are wrapped lazily by
  `_submodules` when first used.

`populate` also records in the registry which gpupy callable answers for
each NumPy function, so that `numpy.f(gpu_array)` (__array_function__) and
`numpy.ufunc(gpu_array)` (__array_ufunc__) reach the same code as `gpupy.f`,
and fills `_registry.namespace` (where a GpuArray method that is a gpupy
function of its name finds it: `a.choose(...)` is `gpupy.choose(a, ...)`).
It is part of the assembly: the sections have registered what they
provide when gpupy's __init__ calls it.
"""

import types

import numpy as np

from . import _core, _registry
from ._core import GpuArray
from ._deferral import deferring
from ._fallback import call_numpy, fallback_function
from ._placement import host_function
from ._registry import DEVICE_UFUNCS, FUNCTIONS, UFUNC_IMPL
from ._ufuncs import UFUNCS, ufunc, ufunc_for


def is_fallback(obj):
    """True if gpupy's `obj` only hands its work to NumPy."""
    return bool(getattr(obj, "_gpupy_fallback", False))


# --- ufuncs --------------------------------------------------------------------------------------

# --- functions -----------------------------------------------------------------------------------

# NumPy functions that configure NumPy, describe dtypes or format numbers:
# nothing to compute on arrays; gpupy exports NumPy's own.
DIRECT = {
    "base_repr", "binary_repr", "broadcast_shapes", "datetime_data", "format_float_positional",
    "format_float_scientific", "get_include", "get_printoptions", "getbufsize", "geterr", "geterrcall",
    "info", "isdtype", "isfortran", "isscalar", "issubdtype", "iterable", "mintypecode", "printoptions",
    "promote_types", "set_printoptions", "setbufsize", "seterr", "seterrcall", "show_runtime", "test",
    "typename", "frompyfunc",
}


def _dtype_of(x):
    return x.dtype if isinstance(x, GpuArray) else x


def result_type(*arrays_and_dtypes):
    """numpy.result_type from the GpuArrays' dtypes (NEP 50: never values)."""
    return np.result_type(*(_dtype_of(x) for x in arrays_and_dtypes))


def can_cast(from_, to, casting="safe"):
    return np.can_cast(_dtype_of(from_), to, casting=casting)


def min_scalar_type(a, /):
    if isinstance(a, GpuArray):
        return a.dtype if a.ndim else np.min_scalar_type(a[()])
    return np.min_scalar_type(a)


def common_type(*arrays):
    return np.common_type(*(np.empty(0, a.dtype) if isinstance(a, GpuArray) else a for a in arrays))


def iscomplexobj(x):
    return False if isinstance(x, GpuArray) else np.iscomplexobj(x)


def isrealobj(x):
    return True if isinstance(x, GpuArray) else np.isrealobj(x)


def shares_memory(a, b, /, max_work=None):
    """numpy.shares_memory for gpupy arrays and ndarrays: views of one
    array whose elements overlap, or memory an ndarray lends or holds
    (gpupy.asarray of an ndarray, numpy.asarray of a gpupy array) -- from
    the arrays' geometry, never by evaluating them."""
    return _core.shares_memory(a, b, max_work)


def may_share_memory(a, b, /, max_work=None):
    """numpy.may_share_memory for gpupy arrays and ndarrays: as
    shares_memory, by the bounds of the elements only."""
    return _core.may_share_memory(a, b, max_work)


def astype(x, dtype, /, *, copy=True, device=None):
    if isinstance(x, GpuArray) and device is None:
        return x.astype(dtype, copy=copy)
    kwargs = {"copy": copy} if device is None else {"copy": copy, "device": device}
    return call_numpy("astype", (x, dtype), kwargs, func=np.astype)


def matrix_transpose(x, /):
    if isinstance(x, GpuArray) and x.ndim >= 2:
        return x.mT
    return call_numpy("matrix_transpose", (x,), {}, func=np.matrix_transpose)


def real(val):
    if isinstance(val, GpuArray):
        return val.real
    return call_numpy("real", (val,), {}, func=np.real)


def imag(val):
    if isinstance(val, GpuArray):
        return val.imag
    return call_numpy("imag", (val,), {}, func=np.imag)


_METADATA = {f.__name__: f for f in (result_type, can_cast, min_scalar_type, common_type, iscomplexobj, isrealobj,
                                     shares_memory, may_share_memory, real, imag, astype, matrix_transpose)}


# --- classes and index helpers -------------------------------------------------------------------

class vectorize(np.vectorize):
    """numpy.vectorize whose calls return GpuArrays (the Python function
    runs per element on the CPU: a fallback)."""

    def __call__(self, *args, **kwargs):
        return call_numpy("vectorize", args, kwargs, func=super().__call__,
                          reason="vectorize runs a Python function per element")


class _IndexHelper:
    """np.r_ / c_, with GpuArray results (NumPy's on flushed arguments,
    counted as fallbacks)."""

    _gpupy_fallback = True

    def __init__(self, name, helper):
        self._name = name
        self._helper = helper

    def __getitem__(self, key):
        return call_numpy(self._name, (key,), {}, func=self._helper.__getitem__, reason="gpupy does not implement this index helper")

    def __len__(self):
        return len(self._helper)

    def __repr__(self):
        return f"<gpupy {self._name} (NumPy's on the CPU)>"


def _host_bound(value):
    """A slice bound or step as NumPy's grid is given it: a gpupy array's
    host values (NumPy computes with them as with any 0-d array)."""
    return value.__array__() if type(value) is GpuArray else value


def _host_slice(item):
    if type(item) is slice and GpuArray in (type(item.start), type(item.stop), type(item.step)):
        return slice(_host_bound(item.start), _host_bound(item.stop), _host_bound(item.step))
    return _host_bound(item)


class _GridHelper:
    """np.mgrid / ogrid: NumPy's grid of the slices, counted as a host
    placement, the arrays as gpupy arrays (ogrid's tuple a tuple of them).
    A grid is made from Python numbers, on the host whatever gpupy does:
    NumPy computes it at its own cost, with its dtype rules (int for
    integer slices, float64 for float steps, num points for complex
    steps) and its errors."""

    def __init__(self, name, helper):
        self._name = name
        self._helper = helper
        self._placed = host_function(name, helper.__getitem__)

    def __getitem__(self, key):
        if type(key) is tuple:
            key = tuple(_host_slice(k) for k in key)
        else:
            key = _host_slice(key)
        return self._placed(key)

    def __len__(self):
        return len(self._helper)

    def __repr__(self):
        return f"<gpupy {self._name} (NumPy's grid on the host)>"


_CLASSES = {"ndarray": GpuArray, "vectorize": vectorize}
_INDEX_HELPERS = {"r_": _IndexHelper, "c_": _IndexHelper, "mgrid": _GridHelper, "ogrid": _GridHelper}


def public_names(module):
    return [n for n in dir(module) if not n.startswith("_")]


def numpys_private_star_names():
    """The names NumPy's __all__ lists with one leading underscore (NumPy
    2.0's `_get_promotion_state` and its kin): `from numpy import *` binds
    them, so gpupy's star import binds them too, as NumPy's own objects."""
    return [n for n in getattr(np, "__all__", ()) if n.startswith("_") and not n.startswith("__")]


def populate(ns):
    """Fills `ns` (gpupy's globals) with every public NumPy name."""
    _registry.namespace = ns
    DEVICE_UFUNCS.update({getattr(np, name): name for name in UFUNCS})
    classes = dict(_CLASSES, ufunc=ufunc)
    own = {n for n, v in ns.items() if not n.startswith("_")}
    for name in public_names(np):
        value = getattr(np, name)
        if isinstance(value, types.ModuleType):
            continue  # submodules are wrapped lazily (gpupy.__getattr__)
        if name in own:
            gp_value = ns[name]
        elif isinstance(value, np.ufunc):
            impl = FUNCTIONS.get(value)
            gp_value = impl if impl is not None else ufunc_for(value)
        elif isinstance(value, type):
            gp_value = classes.get(name, value)
        elif name in _INDEX_HELPERS:
            gp_value = _INDEX_HELPERS[name](name, value)
        elif not callable(value) or name in DIRECT:
            gp_value = value
        elif value in FUNCTIONS:
            gp_value = FUNCTIONS[value]
        elif name in _METADATA:
            gp_value = _METADATA[name]
        else:
            gp_value = fallback_function(name, value)
        if isinstance(value, np.ufunc):
            UFUNC_IMPL[value] = gp_value
        elif callable(value) and not isinstance(value, type) and gp_value is not value:
            # numpy.f(g) reaches the implementation itself; gpupy.f first
            # looks for arguments NumPy would hand the call to.
            _registry.register_wrapper(value, gp_value)
            if name not in _METADATA and callable(gp_value) and not isinstance(gp_value, (type, _IndexHelper, _GridHelper)):
                gp_value = deferring(name, gp_value, value)
        ns[name] = gp_value
    for name in numpys_private_star_names():
        ns.setdefault(name, getattr(np, name))
    for name, value in UFUNCS.items():
        ns.setdefault(name, value)
        UFUNC_IMPL.setdefault(getattr(np, name), value)
