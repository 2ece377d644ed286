"""Python-level methods of GpuArray: printing, conversion, iteration,
`.flat`, NumPy's protocols (__array_ufunc__, __array_function__), pickling,
and the ndarray methods built on the rest of the package.

The operators live in C++ (src/py_array.cpp); nothing here is on their
path. Every ndarray method exists on GpuArray: the ones with a gpupy
function of the same name call it (`a.sum()` is `gpupy.sum(a)`), the rest
run NumPy's method through `_fallback.call_numpy` (counted as a fallback as
"ndarray.<name>", in-place ones written back).
"""

import builtins
import operator
import types

import numpy as np

from . import _core
from ._core import GpuArray
from ._fallback import call_numpy, from_numpy, note_fallback, to_numpy

# numpy function -> gpupy implementation (registered with `implements`).
_FUNCTIONS = {}

# numpy function -> the gpupy namespace's function for it (wrappers included;
# filled by _namespace.populate).
_WRAPPERS = {}

# numpy ufunc -> the gpupy object that runs it, and the op-table name of
# those the device runs (filled by _namespace).
UFUNC_IMPL = {}
DEVICE_UFUNCS = {}


def implements(*numpy_functions):
    """Registers a gpupy function as the implementation of NumPy functions."""

    def register(func):
        for f in numpy_functions:
            _FUNCTIONS[f] = func
        return func

    return register


def register_wrapper(numpy_function, gpupy_function):
    _WRAPPERS[numpy_function] = gpupy_function


def _gp(name):
    """gpupy.<name>, looked up when called (after the namespace is filled)."""
    from . import _namespace

    return _namespace.namespace[name]


# --- printing and conversion ---------------------------------------------------------------------

def _repr(self):
    return repr(self.__array__())


def _str(self):
    return str(self.__array__())


def _format(self, spec):
    return format(self[()] if self.ndim == 0 else self.__array__(), spec)


def _numpy_scalar_conversion(self, convert):
    """float()/int()/complex() of a GpuArray as NumPy converts an ndarray of
    its shape: 0-d arrays convert, others raise (or warn) as NumPy does,
    without evaluating an array larger than one element."""
    if self.ndim == 0:
        return convert(self[()])
    if self.size == 1:
        return convert(self.__array__())
    return convert(np.broadcast_to(np.zeros((), self.dtype), self.shape))


def _float(self):
    return _numpy_scalar_conversion(self, float)


def _int(self):
    return _numpy_scalar_conversion(self, int)


def _complex(self):
    return _numpy_scalar_conversion(self, complex)


def _iter(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    if self.ndim == 1:
        # One evaluation for all elements, then plain NumPy scalars.
        return iter(self.__array__())
    return (self[i] for i in range(self.shape[0]))


def _contains(self, value):
    equal = self == value  # NumPy: (a == value).any()
    if not isinstance(equal, GpuArray) or equal.ndim == 0:
        return bool(equal)  # Python's answer where == is not elementwise
    return bool(_gp("any")(equal))


def _tolist(self):
    return self.__array__().tolist()


def _delitem(self, key):
    raise ValueError("cannot delete array elements")


# --- shape methods -------------------------------------------------------------------------------

def _reshape(self, *shape, order="C", copy=None):
    if len(shape) == 1:
        shape = shape[0]
    if order == "C":
        result = self._reshape(shape)
    elif order == "F":
        target = (shape,) if isinstance(shape, int) else tuple(shape)
        result = self.T._reshape(target[::-1]).T
    else:
        raise ValueError("order must be one of 'C', 'F', 'A' (gpupy supports 'C' and 'F')")
    return result.copy() if copy else result


def _ravel(self, order="C"):
    return _reshape(self, -1, order=order)


def _flatten(self, order="C"):
    return _reshape(self, -1, order=order).copy()


def _squeeze(self, axis=None):
    if axis is None:
        axes = [i for i, n in enumerate(self.shape) if n == 1]
    else:
        axes = [axis] if np.ndim(axis) == 0 else list(axis)
        axes = [_norm_axis(a, self.ndim) for a in axes]
        for a in axes:
            if self.shape[a] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    shape = [n for i, n in enumerate(self.shape) if i not in axes]
    return self._reshape(tuple(shape))


def _norm_axis(axis, ndim, prefix=None):
    axis = operator.index(axis)
    if axis < -ndim or axis >= ndim:
        raise np.exceptions.AxisError(axis, ndim, prefix)
    return axis % ndim if ndim else axis


def _swapaxes(self, axis1, axis2):
    axes = list(range(self.ndim))
    a, b = _norm_axis(axis1, self.ndim, "axis1"), _norm_axis(axis2, self.ndim, "axis2")
    axes[a], axes[b] = axes[b], axes[a]
    return self.transpose(axes)


def _matrix_transpose(self):
    if self.ndim < 2:
        raise ValueError("matrix transpose with ndim < 2 is undefined")
    return _swapaxes(self, -1, -2)


# --- copying, pickling ---------------------------------------------------------------------------

def _reduce_ex(self, protocol):
    from ._creation import array

    return (array, (np.array(self),))


def _copy_protocol(self, *args):
    return self.copy()


_core_copy = GpuArray.copy


def _copy(self, order="K"):
    # The layout is the core's business; every order gives the same values.
    return _core_copy(self)


# --- real/imag, flags, buffers -------------------------------------------------------------------

def _real(self):
    # Device dtypes are real: the real part is the array itself (a view).
    return self[...]


def _set_real(self, value):
    self[...] = value


def _imag(self):
    # Read-only zeros, as NumPy gives for real arrays (a broadcast constant).
    return _core.full((), 0, self.dtype)._broadcast_to(self.shape)


def _set_imag(self, value):
    raise TypeError("array does not have imaginary part to set")


class _Flags:
    """ndarray.flags for a GpuArray view (read-only)."""

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "WRITEABLE": "writeable", "W": "writeable", "OWNDATA": "owndata",
             "O": "owndata", "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
             "X": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved", "B": "behaved",
             "CARRAY": "carray", "CA": "carray", "FARRAY": "farray", "FA": "farray"}

    def __init__(self, a):
        _, shape, strides = a._view
        self.c_contiguous = _contiguous(shape, strides)
        self.f_contiguous = _contiguous(shape[::-1], strides[::-1])
        self.writeable = a._writeable
        self.owndata = False  # the values live in the core, not in host memory the array owns
        self.aligned = True
        self.writebackifcopy = False

    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.f_contiguous and not self.c_contiguous)

    def __getitem__(self, key):
        return getattr(self, self._KEYS[key.upper()])

    def __setattr__(self, name, value):
        if name in self.__dict__:
            raise ValueError(f"gpupy cannot change the {name} flag of an array")
        object.__setattr__(self, name, value)

    def __setitem__(self, key, value):
        raise ValueError(f"gpupy cannot change the {key} flag of an array")

    def __repr__(self):
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names) + "\n"


def _contiguous(shape, strides):
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _data(self):
    return memoryview(self.__array__())


def _ctypes(self):
    return self.__array__().ctypes


def _setflags(self, write=None, align=None, uic=None):
    if write is not None and bool(write) != self._writeable:
        raise ValueError("gpupy cannot change whether an array is writeable")


def _resize(self, *new_shape, refcheck=True):
    raise ValueError("cannot resize a gpupy array in place; use gpupy.resize(a, new_shape), which returns a new array")


def _view(self, dtype=None, type=None):
    if type is None and isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
        dtype, type = None, dtype
    if type is not None:
        # An ndarray (subclass) view: NumPy's, of the values read back.
        host = self.__array__()
        return host.view(type) if dtype is None else host.view(dtype, type)
    if dtype is None or np.dtype(dtype) == self.dtype:
        return self[...]
    # Reinterpreting the bits: NumPy's view, of a copy (writes to it do not
    # reach this array).
    return call_numpy("ndarray.view", (self, dtype), {}, func=np.ndarray.view, reason="dtype reinterpretation")


# --- .flat ---------------------------------------------------------------------------------------

class _Flat:
    """a.flat for a GpuArray: reads and writes the array in C order."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return self.base.size

    def __iter__(self):
        return iter(self.base.__array__().flat)

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.base.__array__().ravel(), dtype=dtype)

    def __repr__(self):
        return f"<gpupy flat iterator over {self.base.shape} {self.base.dtype}>"

    def copy(self):
        return self.base.flatten()

    def _index(self, k):
        n = self.base.size
        k = k.__index__()
        if k < -n or k >= n:
            raise IndexError(f"index {k} is out of bounds for size {n}")
        return np.unravel_index(k % n, self.base.shape) if self.base.ndim else ()

    def _flat_view(self):
        """The array as a 1-d view, or None if it has none (non-contiguous)."""
        flat = self.base.reshape(-1)
        return flat if flat._owner_id == self.base._owner_id else None

    def __getitem__(self, key):
        if hasattr(key, "__index__") and not isinstance(key, (GpuArray, np.ndarray)):
            return self.base[self._index(key)]
        return self.base.reshape(-1)[key]

    def __setitem__(self, key, value):
        if hasattr(key, "__index__") and not isinstance(key, (GpuArray, np.ndarray)):
            self.base[self._index(key)] = value
            return
        flat = self._flat_view()
        count = _selection_size(key, self.base.size)
        if flat is not None and count is not None and (np.ndim(value) == 0 or np.size(value) == count):
            flat[key] = value
            return
        # NumPy's own flat assignment (index arrays, values repeated to fill).
        host, host_key, host_value = np.array(self.base), to_numpy(key), to_numpy(value)

        def write():
            host.flat[host_key] = host_value

        note_fallback("flat.__setitem__", "flat assignment with an index array or a repeated value", write)
        write()
        self.base[...] = host


def _selection_size(key, n):
    """Number of elements a slice (or ...) selects from n; None otherwise."""
    if key is Ellipsis:
        return n
    if isinstance(key, slice):
        return len(range(*key.indices(n)))
    return None


def _get_flat(self):
    return _Flat(self)


def _set_flat(self, value):
    _Flat(self)[...] = value


# --- NumPy's protocols ---------------------------------------------------------------------------

_PLAIN_TYPES = frozenset({GpuArray, np.ndarray, int, float, bool, complex, type(None)})


def _foreign(objects):
    """True if an argument is an array-like of another library that
    implements the protocols itself (NumPy's rule: defer to it)."""
    for x in objects:
        t = type(x)
        if t in _PLAIN_TYPES or isinstance(x, (GpuArray, np.ndarray, np.generic)):
            continue
        if getattr(t, "__array_ufunc__", None) is not None:
            return True
    return False


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """NumPy's ufuncs on GpuArrays (np.sin(g), ndarray + g) stay on the device."""
    if kwargs:
        out = kwargs.get("out", ())
        if _foreign(out if isinstance(out, tuple) else (out,)):
            return NotImplemented
    if _foreign(inputs):
        return NotImplemented
    if method == "__call__" and not kwargs:
        # The common case (ndarray + g, np.sin(g)) straight to the core.
        name = DEVICE_UFUNCS.get(ufunc)
        if name is not None and len(inputs) == ufunc.nin:
            result = _core.ufunc(name, *inputs)
            if result is not NotImplemented:
                return result
    impl = UFUNC_IMPL.get(ufunc)
    if impl is not None:
        target = impl if method == "__call__" else getattr(impl, method, None)
        if target is not None:
            return target(*inputs, **kwargs)
    name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
    return call_numpy(name, inputs, kwargs, func=ufunc if method == "__call__" else getattr(ufunc, method),
                      reason="ufunc method gpupy does not implement")


def numpy_qualname(func):
    """'sum', 'linalg.norm', 'lib.stride_tricks.as_strided' for a NumPy function."""
    module = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    if module == "numpy" or not module.startswith("numpy."):
        return name
    return f"{module[len('numpy.'):]}.{name}"


def _array_function(self, func, types, args, kwargs):
    """numpy.f(g) calls gpupy's f where gpupy has one, else NumPy's."""
    for t in types:
        if not issubclass(t, (GpuArray, np.ndarray)):
            return NotImplemented
    impl = _FUNCTIONS.get(func)
    if impl is None:
        impl = _WRAPPERS.get(func)
    if impl is not None:
        return impl(*args, **kwargs)
    return call_numpy(numpy_qualname(func), args, kwargs, func=func, reason="function gpupy does not implement")


def _class_getitem(cls, item):
    return types.GenericAlias(cls, item)


# --- indexing NumPy's way ------------------------------------------------------------------------

def _advanced_getitem(self, key):
    host, host_key = self.__array__(), to_numpy(key)
    note_fallback("__getitem__", "advanced indexing runs in NumPy", lambda: host[host_key])
    return from_numpy(host[host_key])


def _advanced_setitem(self, key, value):
    host, host_key, host_value = np.array(self), to_numpy(key), to_numpy(value)

    def write():
        host[host_key] = host_value

    note_fallback("__setitem__", "advanced indexing runs in NumPy", write)
    write()
    self[...] = host


# --- methods -------------------------------------------------------------------------------------

# ndarray methods that are gpupy functions of the same name, taking the array first.
_NAMESPACE_METHODS = (
    "all", "any", "argmax", "argmin", "argpartition", "argsort", "choose", "clip", "conj", "conjugate",
    "cumprod", "cumsum", "diagonal", "dot", "max", "mean", "min", "nonzero", "prod", "put", "repeat", "round",
    "searchsorted", "std", "sum", "take", "trace", "var",
)

# ndarray methods run by NumPy on the values read back (in-place ones are
# written back; see _fallback._WRITES).
_HOST_METHODS = ("sort", "partition", "getfield", "setfield", "byteswap")

# Methods that only read the values to store or encode them (not counted).
_READ_METHODS = ("tobytes", "tofile", "dump", "dumps")


def _namespace_method(name):
    def method(self, *args, **kwargs):
        return _gp(name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"a.{name}(...) is gpupy.{name}(a, ...)."
    return method


def _host_method(name):
    unbound = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        return call_numpy(f"ndarray.{name}", (self,) + args, kwargs, func=unbound, reason="ndarray method")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = unbound.__doc__
    return method


def _compress(self, condition, axis=None, out=None):
    return _gp("compress")(condition, self, axis, out)


def _imatmul(self, other):
    result = _gp("matmul")(self, other)
    if result.shape != self.shape:
        raise ValueError(f"matmul: output shape {self.shape} does not match the result's {result.shape}")
    if not np.can_cast(result.dtype, self.dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast ufunc 'matmul' output from {result.dtype!r} to {self.dtype!r} with "
                        "casting rule 'same_kind'")
    self[...] = result
    return self


def _divmod(self, other):
    return _gp("divmod")(self, other)


def _rdivmod(self, other):
    return _gp("divmod")(other, self)


_orig_astype = GpuArray.astype


def _astype_impl(self, dtype, casting, copy):
    if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting=casting):
        raise TypeError(f"Cannot cast array data from {self.dtype!r} to {np.dtype(dtype)!r} "
                        f"according to the rule {casting!r}")
    return _orig_astype(self, dtype, copy)


def install():
    """Adds the Python-level methods to the C++ GpuArray class."""
    cls = GpuArray
    cls.__repr__ = _repr
    cls.__str__ = _str
    cls.__format__ = _format
    cls.__float__ = _float
    cls.__int__ = _int
    cls.__complex__ = _complex
    cls.__iter__ = _iter
    cls.__contains__ = _contains
    cls.__delitem__ = _delitem
    cls.__divmod__ = _divmod
    cls.__rdivmod__ = _rdivmod
    cls.__imatmul__ = _imatmul
    cls.__class_getitem__ = classmethod(_class_getitem)
    cls.tolist = _tolist
    cls.reshape = _reshape
    cls.ravel = _ravel
    cls.flatten = _flatten
    cls.squeeze = _squeeze
    cls.swapaxes = _swapaxes
    cls.mT = property(_matrix_transpose)
    cls.flat = property(_get_flat, _set_flat)
    cls.real = property(_real, _set_real)
    cls.imag = property(_imag, _set_imag)
    cls.flags = property(_Flags)
    cls.data = property(_data)
    cls.ctypes = property(_ctypes)
    cls.setflags = _setflags
    cls.resize = _resize
    cls.view = _view
    cls.copy = _copy
    cls.compress = _compress
    cls.__reduce_ex__ = _reduce_ex
    cls.__copy__ = _copy_protocol
    cls.__deepcopy__ = _copy_protocol
    cls.__array_ufunc__ = _array_ufunc
    cls.__array_function__ = _array_function
    cls.__array_priority__ = 100
    cls.astype = lambda self, dtype, order="K", casting="unsafe", subok=True, copy=True: (
        _astype_impl(self, dtype, casting, copy))
    for name in _HOST_METHODS + _READ_METHODS:
        setattr(cls, name, _host_method(name))
    _core._set_advanced_indexing(_advanced_getitem, _advanced_setitem)


def install_namespace_methods():
    """Methods that are gpupy functions, where no module installed a
    specialised one (the reductions, dot, ...): called after they have."""
    cls = GpuArray
    for name in _NAMESPACE_METHODS:
        if name not in cls.__dict__:
            setattr(cls, name, _namespace_method(name))
    for name, method in (("__matmul__", lambda self, other: _gp("matmul")(self, other)),
                         ("__rmatmul__", lambda self, other: _gp("matmul")(other, self))):
        if name not in cls.__dict__:
            setattr(cls, name, method)
