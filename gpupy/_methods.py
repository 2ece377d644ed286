"""Every Python-level method and protocol of GpuArray, in one place.

The operators, indexing and the basic attributes live in C++
(src/bindings/py_array.cpp); everything else a NumPy array has is defined
here, in the body of `ArrayMethods`, and copied onto the C++ class when
gpupy/_gpuarray.py assembles it. Methods that are gpupy functions of the
same name (`a.sum()` is `gpupy.sum(a)`) call those functions as gpupy's
namespace holds them (with the hand-over to other libraries); ndarray methods gpupy does not implement run NumPy's through
`_fallback.call_numpy` (counted as "ndarray.<name>", in-place ones written
back).
"""

import builtins
import numbers
import operator
import sys
import types

import numpy as np

from . import _array_api, _core, _indexing_reads, _indexing_writes, _linalg, _reductions, _shape, _sorting
from ._axes import normalize_axis
from ._convert import asarray, from_pickle, is_supported
from ._core import GpuArray
from ._deferral import deferring, hand_over_ufunc, overrides_ufuncs
from ._fallback import call_numpy, from_numpy, note_fallback, to_numpy
from ._registry import DEVICE_UFUNCS, FUNCTIONS, UFUNC_IMPL, WRAPPERS, function
from ._ufuncs import ufunc_for

_NOVALUE = np._NoValue


def _handing_over(numpy_function, implementation):
    """gpupy's function as gpupy's namespace holds it: `implementation`,
    stepping aside for arguments of a library NumPy would hand the call to
    (`a @ dask_array` is Dask's answer, as numpy.matmul(a, dask_array) is)."""
    return deferring(numpy_function.__name__, implementation, numpy_function)


# The gpupy functions the methods and operators below call, each as gpupy.<name> is.
_sum = _handing_over(np.sum, _reductions.sum)
_prod = _handing_over(np.prod, _reductions.prod)
_max = _handing_over(np.max, _reductions.max)
_min = _handing_over(np.min, _reductions.min)
_mean = _handing_over(np.mean, _reductions.mean)
_any = _handing_over(np.any, _reductions.any)
_all = _handing_over(np.all, _reductions.all)
_argmax = _handing_over(np.argmax, _reductions.argmax)
_argmin = _handing_over(np.argmin, _reductions.argmin)
_var = _handing_over(np.var, _reductions.var)
_std = _handing_over(np.std, _reductions.std)
_cumsum = _handing_over(np.cumsum, _reductions.cumsum)
_cumprod = _handing_over(np.cumprod, _reductions.cumprod)
_round = _handing_over(np.round, _shape.round)
_compress = _handing_over(np.compress, _indexing_reads.compress)
_matmul = _handing_over(np.matmul, _linalg.matmul)
_dot = _handing_over(np.dot, _linalg.dot)
_divmod = ufunc_for(np.divmod)

# The C++ class's own copy and astype, which the methods below wrap.
_core_copy = GpuArray.copy
_core_astype = GpuArray.astype


def numpy_qualname(func):
    """'sum', 'linalg.norm', 'lib.stride_tricks.as_strided' for a NumPy function."""
    module = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    if module == "numpy" or not module.startswith("numpy."):
        return name
    return f"{module[len('numpy.'):]}.{name}"


# --- helpers ---------------------------------------------------------------------------------------

def _fortran(a, order, accepted):
    """Whether order= ("C", "F" or "A") reads `a` in Fortran order: "A" does
    where `a` is Fortran-contiguous and not C-contiguous, as NumPy's."""
    if order is None or order in ("C", "c"):
        return False
    if order in ("F", "f"):
        return True
    if order in ("A", "a"):
        return a.ndim > 1 and _core.in_order(a, "F") and not _core.in_order(a, "C")
    raise ValueError(f"order must be one of {accepted} (got {order!r})")


def _selection_size(key, n):
    """Number of elements a slice (or ...) selects from n; None otherwise."""
    if key is Ellipsis:
        return n
    if isinstance(key, slice):
        return len(range(*key.indices(n)))
    return None


class Flags:
    """ndarray.flags for a GpuArray view; WRITEABLE can be changed, as in
    NumPy (False always; True except for a broadcast view)."""

    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "F": "f_contiguous", "WRITEABLE": "writeable", "W": "writeable", "OWNDATA": "owndata",
             "O": "owndata", "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
             "X": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved", "B": "behaved",
             "CARRAY": "carray", "CA": "carray", "FARRAY": "farray", "FA": "farray"}

    def __init__(self, a):
        # The core's test, with NumPy's rules (size-1 dimensions ignored; an
        # empty array is both).
        self.c_contiguous = _core.in_order(a, "C")
        self.f_contiguous = _core.in_order(a, "F")
        object.__setattr__(self, "_array", a)
        self.owndata = False  # the values live in the core, not in host memory the array owns
        self.aligned = True
        self.writebackifcopy = False

    writeable = property(lambda self: self._array._writeable)
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.behaved and self.c_contiguous)
    farray = property(lambda self: self.behaved and self.f_contiguous and not self.c_contiguous)

    def __getitem__(self, key):
        return getattr(self, self._KEYS[key.upper()])

    def __setattr__(self, name, value):
        if name == "writeable":
            self._array._set_writeable(bool(value))
            return
        if name in self.__dict__:
            raise ValueError(f"gpupy cannot change the {name} flag of an array")
        object.__setattr__(self, name, value)

    def __setitem__(self, key, value):
        name = self._KEYS.get(key.upper()) if isinstance(key, str) else None
        if name == "writeable":
            self._array._set_writeable(bool(value))
            return
        raise ValueError(f"gpupy cannot change the {key} flag of an array")

    def __repr__(self):
        names = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")
        return "\n".join(f"  {n} : {self[n]}" for n in names) + "\n"


class Flat:
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

        note_fallback("flat.__setitem__", "the flat assignment has an index array or a repeated value", write)
        write()
        self.base[...] = host


# ndarray methods that are gpupy functions of the same name, taking the array
# first, with no signature of their own below.
_NAMESPACE_METHODS = ("argpartition", "argsort", "choose", "clip", "conj", "conjugate", "diagonal", "nonzero",
                      "put", "repeat", "round", "searchsorted", "take", "trace")

# ndarray methods run by NumPy on the values read back (in-place ones are
# written back; see _fallback._WRITES).
_HOST_METHODS = ("getfield", "setfield", "byteswap")

# Methods that only read the values to store or encode them (not counted).
_READ_METHODS = ("tobytes", "tofile", "dump", "dumps")


def _namespace_method(name):
    # Looked up by name when called: a.take(...) is gpupy.take(a, ...) as the
    # namespace made it, and some of these only the namespace makes (choose:
    # NumPy's function as a counted fallback), after this module is imported.
    def method(self, *args, **kwargs):
        return function(name)(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"a.{name}(...) is gpupy.{name}(a, ...)."
    return method


def _host_method(name):
    unbound = getattr(np.ndarray, name)

    def method(self, *args, **kwargs):
        return call_numpy(f"ndarray.{name}", (self,) + args, kwargs, func=unbound, reason="gpupy does not implement this ndarray method")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = unbound.__doc__
    return method


class ArrayMethods:
    """The Python-level part of GpuArray (see the module docstring)."""

    __array_priority__ = 100

    # --- printing and conversion
    def __repr__(self):
        # A scalar result prints as the NumPy scalar NumPy would have given.
        return repr(self[()] if self._is_scalar else self.__array__())

    def __str__(self):
        return str(self.__array__())

    def __format__(self, spec):
        return format(self[()] if self.ndim == 0 else self.__array__(), spec)

    def __hash__(self):
        # Scalar results are immutable, so they hash as NumPy's scalars (by
        # value, evaluating); arrays are mutable and unhashable, as ndarrays.
        if self._is_scalar:
            return hash(self[()])
        raise TypeError(f"unhashable type: '{type(self).__name__}'")

    def __round__(self, ndigits=None):
        if self.ndim == 0:
            value = self[()]
            return round(value) if ndigits is None else round(value, ndigits)
        return _round(self, 0 if ndigits is None else ndigits)

    def _scalar_conversion(self, convert):
        """float()/int()/complex() as NumPy converts an ndarray of this shape:
        0-d arrays convert, others raise (or warn) as NumPy does, without
        evaluating an array larger than one element."""
        if self.ndim == 0:
            return convert(self[()])
        if self.size == 1:
            return convert(self.__array__())
        return convert(np.broadcast_to(np.zeros((), self.dtype), self.shape))

    def __float__(self):
        return self._scalar_conversion(float)

    def __int__(self):
        return self._scalar_conversion(int)

    def __complex__(self):
        return self._scalar_conversion(complex)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1:
            # One evaluation for all elements, then plain NumPy scalars.
            return iter(self.__array__())
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value):
        equal = self == value  # NumPy: (a == value).any()
        if not isinstance(equal, GpuArray) or equal.ndim == 0:
            return bool(equal)  # Python's answer where == is not elementwise
        return bool(_any(equal))

    def tolist(self):
        return self.__array__().tolist()

    def __delitem__(self, key):
        raise ValueError("cannot delete array elements")

    # --- shape
    # reshape, ravel and flatten give a view exactly where NumPy's do: which
    # arrays share memory after a write depends on it.
    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1:
            shape = shape[0]
        fortran = _fortran(self, order, "'C', 'F', 'A'")
        source = self.copy(order="F" if fortran else "C") if copy else self
        if fortran:
            target = (operator.index(shape),) if np.ndim(shape) == 0 else tuple(shape)
            result = source.T._reshape(target[::-1]).T
        else:
            result = source._reshape(shape)
        if copy is False and result._owner_id != self._owner_id:
            raise ValueError("Unable to avoid creating a copy while reshaping.")
        return result

    def ravel(self, order="C"):
        if order in ("K", "k"):
            if _core.in_order(self, "C"):
                order = "C"
            elif _core.in_order(self, "F"):
                order = "F"
            else:
                # The elements in memory order: a view where they are one
                # run of memory with no step back, else a copy.
                kept, back = _core.memory_view(self)
                return kept._reshape(-1) if not back and _core.in_order(kept, "C") else kept.flatten()
        fortran = _fortran(self, order, "'A', 'C', 'F', or 'K'")
        if _core.in_order(self, "F" if fortran else "C"):
            return self.reshape(-1, order="F" if fortran else "C")
        return self.flatten(order="F" if fortran else "C")

    def flatten(self, order="C"):
        if order in ("K", "k"):
            return _core.memory_view(self)[0].copy()._reshape(-1)
        if _fortran(self, order, "'A', 'C', 'F', or 'K'"):
            return self.T.copy()._reshape(-1)
        return self.copy()._reshape(-1)

    def squeeze(self, axis=None):
        if axis is None:
            axes = [i for i, n in enumerate(self.shape) if n == 1]
        elif self.ndim == 0 and np.ndim(axis) == 0 and operator.index(axis) in (0, -1):
            axes = []  # NumPy accepts axis 0 (or -1) of a 0-d array, and squeezes nothing
        else:
            axes = [axis] if np.ndim(axis) == 0 else list(axis)
            axes = [normalize_axis(a, self.ndim) for a in axes]
            for a in axes:
                if self.shape[a] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        shape = [n for i, n in enumerate(self.shape) if i not in axes]
        return self._reshape(tuple(shape))

    def swapaxes(self, axis1, axis2):
        axes = list(range(self.ndim))
        a, b = normalize_axis(axis1, self.ndim, "axis1"), normalize_axis(axis2, self.ndim, "axis2")
        axes[a], axes[b] = axes[b], axes[a]
        return self.transpose(axes)

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return self.swapaxes(-1, -2)

    def resize(self, *new_shape, refcheck=True):
        raise ValueError("cannot resize a gpupy array in place; use gpupy.resize(a, new_shape), which returns a "
                         "new array")

    # --- copying, pickling, dtypes
    def copy(self, order="C"):
        # NumPy's default for the method is a C-ordered copy (numpy.copy's is "K").
        return _core_copy(self, order)

    def __copy__(self, *args):
        return self.copy(order="K")  # as NumPy's __copy__ and __deepcopy__

    __deepcopy__ = __copy__

    def __reduce_ex__(self, protocol):
        # The evaluated bytes themselves (a read-only view, no copy): NumPy
        # pickles them, with protocol 5 as an out-of-band buffer where they
        # are contiguous, which the other side uses in place (from_pickle).
        # As with NumPy's out-of-band pickles, the buffer shows the array's
        # bytes until it is used.
        host = self.__array__()
        return (from_pickle, (host, True) if self._is_scalar else (host,))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if casting != "unsafe" and not np.can_cast(self.dtype, dtype, casting=casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to {np.dtype(dtype)!r} "
                            f"according to the rule {casting!r}")
        return _core_astype(self, dtype, copy, order)

    def view(self, dtype=None, type=None):
        if type is None and isinstance(dtype, builtins.type) and issubclass(dtype, np.ndarray):
            dtype, type = None, dtype
        if type is not None:
            # An ndarray (subclass) view: NumPy's, of the values read back.
            host = self.__array__()
            return host.view(type) if dtype is None else host.view(dtype, type)
        if dtype is None or np.dtype(dtype) == self.dtype:
            return self[...]
        # Reinterpreting the bits: NumPy's view of this array's own memory
        # (its export: writes either way are seen), lent back to gpupy where
        # it holds the new dtype.
        host = np.asarray(self).view(dtype)
        return asarray(host) if is_supported(host.dtype) else host

    # --- real/imag, flags, buffers
    @property
    def real(self):
        # Device dtypes are real: the real part is the array itself (a view).
        return self[...]

    @real.setter
    def real(self, value):
        self[...] = value

    @property
    def imag(self):
        # Read-only zeros, as NumPy gives for real arrays (a broadcast constant).
        return _core.full((), 0, self.dtype)._broadcast_to(self.shape)

    @imag.setter
    def imag(self, value):
        raise TypeError("array does not have imaginary part to set")

    flags = property(Flags)

    @property
    def data(self):
        return memoryview(self.__array__())

    # --- the Array API standard and DLPack (gpupy/_array_api.py)
    device = property(_array_api.device_of)
    to_device = _array_api.to_device
    __dlpack__ = _array_api.dlpack
    __dlpack_device__ = _array_api.dlpack_device

    def __array_namespace__(self, /, *, api_version=None):
        _array_api.check_api_version(api_version)
        return sys.modules["gpupy"]

    @property
    def __array_interface__(self):
        """NumPy's array interface (version 3), evaluating first. Its data is
        a buffer object rather than an address, so whoever reads it holds a
        reference to the bytes, which cannot go away under it: the array's
        own bytes, writable as the buffer protocol's export is, for a
        contiguous array (docs/ecosystem.md); for a strided view (the
        interface's buffer object must be contiguous) a read-only copy,
        since a write into a copy would be lost."""
        # NumPy asked for a buffer before this and discarded its error (an
        # interrupt, a fallback refused, a warning turned into an error):
        # that error is raised here.
        _core._raise_export_error(self)
        host = np.asarray(memoryview(self))  # the buffer protocol's export (its own error, if it fails)
        if not host.flags.c_contiguous:
            host = np.ascontiguousarray(host)
            host.flags.writeable = False
        interface = dict(host.__array_interface__)
        interface["data"] = host
        interface["strides"] = None
        return interface

    @property
    def ctypes(self):
        return self.__array__().ctypes

    def setflags(self, write=None, align=None, uic=None):
        if write is not None:
            self._set_writeable(bool(write))

    @property
    def flat(self):
        return Flat(self)

    @flat.setter
    def flat(self, value):
        Flat(self)[...] = value

    # --- NumPy's protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy's ufuncs on GpuArrays (np.sin(g), ndarray + g) stay on the device."""
        if kwargs:
            out = kwargs.get("out", ())
            if overrides_ufuncs(out if isinstance(out, tuple) else (out,)):
                return NotImplemented
        if overrides_ufuncs(inputs):
            return hand_over_ufunc(ufunc, method, inputs, kwargs)
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
                          reason="gpupy does not implement this ufunc method")

    def __array_function__(self, func, types, args, kwargs):
        """numpy.f(g) calls gpupy's f where gpupy has one, else NumPy's."""
        for t in types:
            if not issubclass(t, (GpuArray, np.ndarray)):
                return NotImplemented
        impl = FUNCTIONS.get(func)
        if impl is None:
            impl = WRAPPERS.get(func)
        if impl is not None:
            return impl(*args, **kwargs)
        return call_numpy(numpy_qualname(func), args, kwargs, func=func, reason="gpupy does not implement this function")

    @classmethod
    def __class_getitem__(cls, item):
        return types.GenericAlias(cls, item)

    # --- operators built on gpupy functions
    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def __imatmul__(self, other):
        result = _matmul(self, other)
        if result.shape != self.shape:
            raise ValueError(f"matmul: output shape {self.shape} does not match the result's {result.shape}")
        _core.check_output_cast("matmul", result, self)
        self[...] = result
        return self

    def __divmod__(self, other):
        return _divmod(self, other)

    def __rdivmod__(self, other):
        return _divmod(other, self)

    # --- methods that are gpupy functions
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
        return _sum(self, axis, dtype, out, keepdims, initial, where)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
        return _prod(self, axis, dtype, out, keepdims, initial, where)

    def max(self, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
        return _max(self, axis, out, keepdims, initial, where)

    def min(self, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
        return _min(self, axis, out, keepdims, initial, where)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
        return _mean(self, axis, dtype, out, keepdims, where=where)

    def any(self, axis=None, out=None, keepdims=False, *, where=True):
        return _any(self, axis, out, keepdims, where=where)

    def all(self, axis=None, out=None, keepdims=False, *, where=True):
        return _all(self, axis, out, keepdims, where=where)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _argmax(self, axis, out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _argmin(self, axis, out, keepdims=keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
        return _var(self, axis, dtype, out, ddof, keepdims, **kwargs)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
        return _std(self, axis, dtype, out, ddof, keepdims, **kwargs)

    def cumsum(self, axis=None, dtype=None, out=None):
        return _cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return _cumprod(self, axis, dtype, out)

    def dot(self, b, out=None):
        return _dot(self, b, out)

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """In place, as ndarray.sort: the sorted copy (gpupy/_sorting.py) written back."""
        _sorting.sort_in_place(self, axis=axis, kind=kind, order=order, stable=stable)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """In place, as ndarray.partition: a partitioned copy (gpupy/_sorting.py) written back."""
        _sorting.partition_in_place(self, kth, axis=axis, kind=kind, order=order)

    def compress(self, condition, axis=None, out=None):
        return _compress(condition, self, axis, out)

    for _name in _NAMESPACE_METHODS:
        locals()[_name] = _namespace_method(_name)
    for _name in _HOST_METHODS + _READ_METHODS:
        locals()[_name] = _host_method(_name)
    del _name


# --- indexing NumPy's way (installed as the core's handlers) -----------------------------------

def advanced_getitem(self, key):
    gathered = _indexing_reads.gather(self, key)  # integer-array keys and masks: on the device
    if gathered is not None:
        return gathered
    host, host_key = self.__array__(), to_numpy(key)
    note_fallback("__getitem__", "gpupy does not run this form of advanced indexing on the device", lambda: host[host_key])
    return from_numpy(host[host_key])


def advanced_setitem(self, key, value):
    if _indexing_writes.scatter(self, key, value):  # masks and integer-array keys: a select on the device
        return
    host_key, host_value = to_numpy(key), to_numpy(value)

    def attempt():
        np.array(self)[host_key] = host_value

    note_fallback("__setitem__", "gpupy does not run this form of advanced indexing on the device", attempt)
    # Into the array's host memory, copied first only if something still
    # needs the old values.
    _core.write_on_host(self, host_key, host_value)


_NOT_METHODS = {"__module__", "__qualname__", "__doc__", "__dict__", "__weakref__"}


class IntegerScalar(GpuArray):
    """What a gpupy scalar result of an integer dtype gives as `__class__`.

    Never instantiated: `type(s)` is GpuArray. Libraries that tell scalars
    from arrays with `isinstance(x, numbers.Number)` (Dask's reductions,
    pandas' is_scalar) ask `__class__`, and NumPy's integer scalars are
    `numbers.Integral`; so are gpupy's scalar results, and arrays are not."""


class RealScalar(GpuArray):
    """The same for a floating dtype: `numbers.Real`, as NumPy's floats."""


numbers.Integral.register(IntegerScalar)
numbers.Real.register(RealScalar)


def python_methods():
    """ArrayMethods' methods and attributes by name, as the C++ class takes
    them (gpupy/_gpuarray.py copies them onto it), and the names the
    installed NumPy's ndarray keeps only to say they were removed."""
    methods = {name: value for name, value in vars(ArrayMethods).items() if name not in _NOT_METHODS}
    methods.update(_removed_by_numpy(methods))
    return methods


def _removed_by_numpy(methods):
    """What the installed NumPy's ndarray keeps of what later releases
    removed: NumPy 2.0 lists ptp, itemset and newbyteorder only to raise
    AttributeError with what to use instead (GpuArray's raise NumPy's
    error), and still has tostring, deprecated (GpuArray's is NumPy's
    method on the host copy, its warning included). NumPy itself says which
    names: those of dir(ndarray) that GpuArray lacks."""
    removed = {}
    for name in dir(np.ndarray):
        if name.startswith("_") or name in methods or hasattr(GpuArray, name):
            continue
        try:
            value = getattr(np.empty(0), name)
        except AttributeError as error:
            removed[name] = property(lambda self, message=str(error): _raise_attribute_error(message))
        else:
            if callable(value):  # (not `base`, which GpuArray leaves out: docs/numpy_namespace.md)
                removed[name] = _numpys_method_on_the_host(name)
    return removed


def _numpys_method_on_the_host(name):
    def method(self, *args, **kwargs):
        return getattr(np.asarray(self), name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _raise_attribute_error(message):
    raise AttributeError(message)
