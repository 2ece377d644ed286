"""gpupy's ufunc objects: NumPy's ufuncs, evaluated lazily on the device.

Each op-table row becomes a `ufunc` that builds one expression node; any
argument or method gpupy does not handle (several outputs, reduce on an
op without a device reduction, ...) runs NumPy's ufunc instead, as a counted
fallback. NumPy's other ufuncs become `HostUfunc` objects (NumPy's, every
call a counted fallback), or are composed on the device (degrees, radians,
conjugate, divmod). `ufunc_for` gives the object for any NumPy ufunc; the
namespace takes them from there.
"""

import builtins
import warnings

import numpy as np

from . import _core
from ._convert import asarray, is_supported
from ._core import GpuArray
from ._fallback import call_numpy
from ._indexing_writes import ufunc_at
from ._inplace import copyto
from ._placement import host_function, run_on_host
from ._reductions import ufunc_accumulate, ufunc_reduce
from ._registry import UFUNC_IMPL

# Keyword arguments that leave the computation as gpupy builds it.
_NEUTRAL = {"casting": "same_kind", "order": "K", "subok": True, "where": True, "dtype": None, "signature": None}


def _is_neutral(kwargs):
    for k, v in kwargs.items():
        if k == "out":
            continue
        if k not in _NEUTRAL:
            return False
        neutral = _NEUTRAL[k]
        # (None only by identity: np.dtype("float64") == None, as
        # np.dtype(None) is float64.)
        if v is not neutral and (neutral is None or v != neutral):
            return False
    return True


def _loop_operand_dtype(x):
    """What NumPy's loop resolution is told of an operand: its dtype, or the
    Python type of a Python number (a weak scalar); None for anything else."""
    if isinstance(x, (GpuArray, np.ndarray, np.generic)):
        return x.dtype
    if type(x) in (bool, int, float, complex):
        return type(x)
    return None


def _natural_loop(numpy_ufunc, operand_dtypes):
    """The loop NumPy picks for these operands without dtype= or signature=
    (None where it has none)."""
    try:
        return numpy_ufunc.resolve_dtypes(operand_dtypes + (None,))
    except (TypeError, ValueError):
        return None


class ufunc(_core.ufunc_base):
    """A NumPy-compatible ufunc whose calls build lazy GPU expressions.

    Calling one is the C base type's slot (src/bindings/py_ufunc.cpp): the
    plain call f(x) / f(x, y) goes straight to the core; `_call` has every
    other form."""

    def __init__(self, numpy_ufunc):
        super().__init__(numpy_ufunc.__name__)
        self._np = numpy_ufunc
        self._nin = numpy_ufunc.nin
        self.__name__ = numpy_ufunc.__name__
        self.__qualname__ = numpy_ufunc.__name__
        self.__doc__ = numpy_ufunc.__doc__
        self._reduceat = host_function(self.__name__ + ".reduceat", numpy_ufunc.reduceat)

    nin = property(lambda self: self._np.nin)
    nout = property(lambda self: self._np.nout)
    nargs = property(lambda self: self._np.nargs)
    ntypes = property(lambda self: self._np.ntypes)
    types = property(lambda self: self._np.types)
    identity = property(lambda self: self._np.identity)
    signature = property(lambda self: self._np.signature)

    def __repr__(self):
        return f"<gpupy ufunc '{self.__name__}'>"

    def __reduce__(self):
        return (ufunc_by_name, (self.__name__,))

    def _call(self, *args, **kwargs):
        where = kwargs.get("where", True)
        if not (where is True or (type(where) in (bool, np.bool_) and where)):
            return self._masked(args, kwargs)
        out = kwargs.get("out")
        if isinstance(out, tuple):
            if len(out) != 1:
                return call_numpy(self.__name__, args, kwargs, func=self._np, reason="it is given several outputs")
            out = out[0]
        # An ndarray out= is written through its own memory (the core lends it).
        if len(args) == self._np.nin and (out is None or isinstance(out, (GpuArray, np.ndarray))):
            if _is_neutral(kwargs):
                result = _core.ufunc(self.__name__, *args, out=out)
            else:
                result = self._with_loop(args, kwargs, out)
            if result is not NotImplemented:
                return result
        return call_numpy(self.__name__, args, kwargs, func=self._np, reason="gpupy does not handle these arguments on the device")

    def _with_loop(self, args, kwargs, out):
        """f(..., dtype=) or f(..., signature=): the loop NumPy picks for these
        operands (its errors included), run on the device with the operands
        cast to the loop's inputs. NotImplemented where that is not enough
        (several outputs, operands without a dtype, other keywords, an error)."""
        kwargs = dict(kwargs)
        kwargs.pop("out", None)
        dtype, signature = kwargs.pop("dtype", None), kwargs.pop("signature", None)
        casting = kwargs.pop("casting", "same_kind")
        if self._np.nout != 1 or not _is_neutral(kwargs) or (dtype is not None and signature is not None):
            return NotImplemented
        operand_dtypes = tuple(_loop_operand_dtype(x) for x in args)
        if any(d is None for d in operand_dtypes):  # (not `None in`: float64 == None, as np.dtype(None) is float64)
            return NotImplemented
        asked = dict(signature=signature) if dtype is None else dict(dtype=dtype)
        if out is None and all(type(d) is type for d in operand_dtypes):
            # Numbers only: NumPy's scalar at once, as without dtype= (and
            # NumPy's types for them: a lone Python int is int64, not weak).
            return self._np(*args, casting=casting, **asked)
        if signature is None:
            signature = (None,) * len(args) + (np.dtype(dtype),)
        try:
            loop = self._np.resolve_dtypes(operand_dtypes + (None,), signature=signature, casting=casting)
        except (TypeError, ValueError):
            # NumPy's own error, in its order of checks (a Python int out of
            # the loop's range before the casting rule): its call on empty
            # stand-ins of the operands' dtypes raises it.
            stand_ins = [x if type(d) is type else np.empty(0, d) for x, d in zip(args, operand_dtypes)]
            numpys = self._np(*stand_ins, casting=casting, **asked)
            # NumPy 2.0's call casts a Python number to the loop unchecked
            # where its resolution refuses it (add(int32, 1.5, dtype=int64)
            # is int64's 1): the loop, found without the casting rule.
            try:
                loop = self._np.resolve_dtypes(operand_dtypes + (None,), signature=signature, casting="unsafe")
            except (TypeError, ValueError):
                return NotImplemented
            if numpys.dtype != loop[-1]:
                return NotImplemented
        if out is not None and casting != "same_kind" and out.dtype != loop[-1]:
            return NotImplemented  # casting the result into out by another rule: NumPy's
        if loop == _natural_loop(self._np, operand_dtypes):
            operands = args  # the loop NumPy picks anyway (Dask's divide(a, b, dtype=f8) of floats)
        else:
            operands = [x.astype(t, copy=False) if isinstance(x, GpuArray) else asarray(x, dtype=t)
                        for x, t in zip(args, loop)]
        result = _core.ufunc(self.__name__, *operands, out=out)
        if result is NotImplemented or (out is None and result.dtype != loop[-1]):
            return NotImplemented
        return result

    def _masked_operands(self, args, mask):
        """The operands, with the elements the mask leaves out replaced by
        a value the ufunc computes without a floating-point error: NumPy
        never computes those elements, so never warns of them (1/b where
        b != 0). Only where the error state looks for errors at all."""
        if builtins.all(mode == "ignore" for kind, mode in np.geterr().items() if kind != "under"):
            return args
        if builtins.all(loop.endswith("?") for loop in self._np.types if not loop.endswith("O")):
            return args  # comparisons and tests: no floating-point errors
        safe = 0 if self.__name__ == "arctanh" else 1  # arctanh(1) is a division by zero
        where = _core.where
        if not builtins.any(isinstance(a, GpuArray) for a in args):
            # Numbers only: computed once, they would warn whatever the mask
            # (and the output may be empty); as arrays over the mask, only
            # where it keeps them. The dtypes stay NumPy's: NumPy's scalars
            # become arrays of their own dtype, and Python numbers -- weak,
            # cast to the others' dtype -- stay numbers beside them.
            strong = builtins.any(isinstance(a, np.generic) for a in args)
            if not strong:
                # Python numbers only: arrays of their common type, as NumPy
                # makes them -- 2**63 beside 1.5 is a float64 (made an int64
                # on its own, it wrapped to -2**63). One that does not fit it
                # (2**63 beside another int) is an OverflowError here, and
                # _masked then lets NumPy's own call answer, with its error
                # in its order of checks. A type gpupy does not hold
                # (complex): arrays of each number's own default type.
                common = np.result_type(*args)
                if is_supported(common):
                    return tuple(where(mask, np.array(a, dtype=common), common.type(safe)) for a in args)
            return tuple(where(mask, a, a.dtype.type(safe)) if isinstance(a, np.generic)
                         else a if strong else where(mask, a, type(a)(safe)) for a in args)
        # Numbers beside arrays are masked too (`floor_divide(x, 0, where=False)`
        # must not warn): each as an array of the dtype NumPy's loop casts
        # it to, which keeps the loop, and so the result's dtype, NumPy's.
        if builtins.all(isinstance(a, GpuArray) for a in args):
            return tuple(where(mask, a, a.dtype.type(safe)) for a in args)
        # (A Python bool is NumPy's bool, not a weak number.)
        loop = self._np.resolve_dtypes(tuple(a.dtype if isinstance(a, (GpuArray, np.generic))
                                             else np.dtype(bool) if type(a) is bool else type(a)
                                             for a in args) + (None,) * self._np.nout)
        return tuple(where(mask, a, a.dtype.type(safe)) if isinstance(a, GpuArray)
                     else where(mask, np.asarray(a, dtype=dt), dt.type(safe)) for a, dt in zip(args, loop))

    def _masked(self, args, kwargs):
        """f(..., out=out, where=mask): f of every element, written into out
        through the mask, on the device. NumPy leaves out's other elements as
        they were, and a new result's undefined (gpupy's are zero)."""
        kwargs = dict(kwargs)
        where = kwargs.pop("where")
        out_given = "out" in kwargs
        out = kwargs.pop("out", None)
        if isinstance(out, tuple):
            out = out[0] if len(out) == 1 else out
        mask = asarray(where)
        usable = (isinstance(mask, GpuArray) and mask.dtype == np.bool_ and len(args) == self._np.nin
                  and (out is None or isinstance(out, GpuArray)))
        if usable:
            try:
                # (other keywords, dtype= and casting=, as without a mask)
                result = self(*self._masked_operands(args, mask), **kwargs)
            except (ValueError, TypeError, OverflowError):  # NumPy's error, in NumPy's order of checks (out's dtype first)
                result = None
            if isinstance(result, (np.generic, np.ndarray)):
                result = asarray(result)  # operands NumPy computed at once (numbers): written on the device too
            usable = isinstance(result, GpuArray)
        if usable and out is not None:
            usable = (np.can_cast(result.dtype, out.dtype, kwargs.get("casting", "same_kind"))
                      and np.broadcast_shapes(result.shape, mask.shape, out.shape) == out.shape)
        if not usable:  # NumPy's answer, or its error
            kwargs.update(where=where, out=out)
            return call_numpy(self.__name__, args, kwargs, func=self._np, reason="gpupy cannot apply this mask on the device")
        if out is not None:
            copyto(out, result, casting="unsafe", where=mask)
            return out
        if not out_given:
            warnings.warn("'where' used without 'out', expect unitialized memory in output. If this is "
                          "intentional, use out=None.", UserWarning, stacklevel=3)
        return _core.where(mask, result, result.dtype.type(0))

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=np._NoValue, where=True):
        return ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        return ufunc_accumulate(self, array, axis, dtype, out)

    def outer(self, a, b, **kwargs):
        if kwargs or not (np.ndim(a) >= 0 and np.ndim(b) >= 0):
            return call_numpy(self.__name__ + ".outer", (a, b), kwargs, func=self._np.outer)
        a = asarray(a)
        b = asarray(b)
        if not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
            return call_numpy(self.__name__ + ".outer", (a, b), {}, func=self._np.outer)
        a2 = a.reshape(a.shape + (1,) * b.ndim)
        return self(a2, b)

    def reduceat(self, *args, **kwargs):
        # NumPy's own on the host values, a host placement: a reduction
        # over segments whose bounds are data, one pass in NumPy's loop.
        # With out= the result is written back into it.
        if len(args) == 5 and "out" not in kwargs:
            args, kwargs = args[:4], dict(kwargs, out=args[4])
        if kwargs.get("out") is not None:
            return run_on_host(self.__name__ + ".reduceat", self._np.reduceat, args, kwargs)
        return self._reduceat(*args, **kwargs)

    def at(self, *args, **kwargs):
        if not kwargs and len(args) == 3 and self._nin == 2:
            if ufunc_at(self, *args):  # on the device (gpupy/_indexing_writes.py)
                return None
        return call_numpy(self.__name__ + ".at", args, kwargs, func=self._np.at)


# gpupy ufunc objects for every op-table ufunc, keyed by name.
UFUNCS = {name: ufunc(getattr(np, name)) for name in _core.ufunc_names()}


def ufunc_by_name(name):
    """gpupy's ufunc object for numpy.<name> (how gpupy's ufuncs unpickle)."""
    return UFUNC_IMPL[getattr(np, name)]


class HostUfunc(ufunc):
    """A NumPy ufunc the device has no op for: every call runs NumPy's,
    counted as a fallback (results of device dtypes come back as GpuArrays)."""

    _gpupy_fallback = True

    def __repr__(self):
        where = " (NumPy on the CPU)" if self._gpupy_fallback else ""
        return f"<gpupy ufunc '{self.__name__}'{where}>"

    def _host(self, method, args, kwargs):
        name = self.__name__ if method == "__call__" else f"{self.__name__}.{method}"
        func = self._np if method == "__call__" else getattr(self._np, method)
        return call_numpy(name, args, kwargs, func=func, reason="gpupy has no device op for this ufunc")

    def __call__(self, *args, **kwargs):
        return self._host("__call__", args, kwargs)

    def reduce(self, *args, **kwargs):
        return self._host("reduce", args, kwargs)

    def accumulate(self, *args, **kwargs):
        return self._host("accumulate", args, kwargs)

    def reduceat(self, *args, **kwargs):
        return self._host("reduceat", args, kwargs)

    def outer(self, *args, **kwargs):
        return self._host("outer", args, kwargs)

    def at(self, *args, **kwargs):
        return self._host("at", args, kwargs)


class _AliasUfunc(ufunc):
    """A NumPy ufunc whose loops compute exactly what a device ufunc
    computes (np.degrees is np.rad2deg's formula): runs the device's."""

    def __init__(self, numpy_ufunc, device):
        super().__init__(numpy_ufunc)
        self._device = device

    def __call__(self, *args, **kwargs):
        return self._device(*args, **kwargs)

    def reduce(self, *args, **kwargs):
        return self._device.reduce(*args, **kwargs)

    def accumulate(self, *args, **kwargs):
        return self._device.accumulate(*args, **kwargs)


class _ConjugateUfunc(HostUfunc):
    """np.conjugate: the identity for the device's real dtypes (a new array
    laid out as a ufunc's result: positive's)."""

    _gpupy_fallback = False

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], GpuArray) and args[0].dtype != np.bool_:
            return _core.ufunc("positive", args[0])
        return self._host("__call__", args, kwargs)


def _together(*results):
    """Results of one call, marked to be evaluated in one pass (one read of
    their operands) where they are big enough to be evaluated lazily."""
    if all(isinstance(r, GpuArray) for r in results):
        _core.needed_together(*results)
    return results


def _held_result(operands):
    """Whether gpupy holds the dtype NumPy's binary ufunc would give these
    operands (Python numbers as NumPy 2 weighs them); else NumPy runs the
    call on host values (divmod of a float16 operand: one call, NumPy's
    own warning "in divmod", not one per part)."""
    try:
        dtype = np.result_type(*(a.dtype if isinstance(a, (GpuArray, np.ndarray, np.generic)) else a for a in operands))
    except (TypeError, ValueError):
        return True  # (the parts raise NumPy's error)
    return is_supported(dtype)


class _DivmodUfunc(HostUfunc):
    """np.divmod as the device's floor_divide and remainder (NumPy computes
    both outputs with the same loops as those ufuncs), evaluated together."""

    _gpupy_fallback = False

    def __call__(self, *args, **kwargs):
        if len(args) == 2 and not kwargs and any(isinstance(a, GpuArray) for a in args) and _held_result(args):
            results = _together(UFUNCS["floor_divide"](*args), UFUNCS["remainder"](*args))
            if all(isinstance(r, GpuArray) for r in results):
                _core.warn_as("divmod", *results)  # NumPy's warnings name divmod
            return results
        return self._host("__call__", args, kwargs)


class _ModfUfunc(HostUfunc):
    """np.modf on the device: the integral part is trunc(x); the fractional
    part x - trunc(x) (exact: both have x's exponent or the difference is
    x itself) with x's sign, a signed zero for infinities -- NumPy's values,
    NaN and -0.0 included. Both evaluated together."""

    _gpupy_fallback = False

    def __call__(self, *args, **kwargs):
        dtype = None
        if len(args) == 1 and not kwargs and isinstance(args[0], GpuArray):
            dtype = np.dtype(self._np.resolve_dtypes((args[0].dtype, None, None))[1])
        if dtype in (np.float32, np.float64):  # (float16 parts: NumPy's)
            x = args[0].astype(dtype, copy=False)
            whole = UFUNCS["trunc"](x)
            # (infinities replaced first: inf - inf would warn where NumPy's modf does not)
            finite = _core.where(UFUNCS["isinf"](x), dtype.type(0), x)
            part = UFUNCS["copysign"](UFUNCS["subtract"](finite, UFUNCS["trunc"](finite)), x)
            return _together(part, whole)
        return self._host("__call__", args, kwargs)


_ALIAS_OF = {"degrees": "rad2deg", "radians": "deg2rad"}


def _made_for(np_ufunc):
    name = np_ufunc.__name__
    if name in UFUNCS:
        return UFUNCS[name]
    if name in _ALIAS_OF:
        return _AliasUfunc(np_ufunc, UFUNCS[_ALIAS_OF[name]])
    if name == "conjugate":
        return _ConjugateUfunc(np_ufunc)
    if name == "divmod":
        return _DivmodUfunc(np_ufunc)
    if name == "modf":
        return _ModfUfunc(np_ufunc)
    return HostUfunc(np_ufunc)


_MADE = {}


def ufunc_for(np_ufunc):
    """gpupy's object for a NumPy ufunc, made once: the namespace's and the
    one the package's own code calls are the same object."""
    made = _MADE.get(np_ufunc)
    if made is None:
        made = _MADE[np_ufunc] = _made_for(np_ufunc)
    return made
