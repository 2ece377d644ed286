"""NumPy's submodules under gpupy: gpupy.random, gpupy.linalg, gpupy.fft, ...

`gpupy.<name>` (and `import gpupy.<name>`, `from gpupy.lib.stride_tricks
import ...`, at any depth) is a module made on first use from
`numpy.<name>` (a finder on sys.meta_path, and gpupy.__getattr__). Its
attributes are resolved lazily from NumPy's module according to a policy
per submodule (POLICIES):

"wrap"   functions run NumPy's on flushed arguments, counted as fallbacks
         ("random.rand", "linalg.inv", ...), array results of device dtypes
         as GpuArrays; gpupy's own implementation where one is registered
         for that NumPy function. random, linalg, fft, polynomial, lib,
         emath, char, strings, rec, and any submodule not listed.
"flush"  the same, but results stay NumPy's: ma (a masked array is a host
         array with a mask; its world stays NumPy's).
"read"   testing: the comparison functions (assert_*) read the values
         back (not a fallback: nothing is computed for the program);
         functions that take callables (assert_raises, ...) are NumPy's.
"same"   NumPy's objects themselves: exceptions, dtypes and typing hold
         classes only; ctypeslib shares memory with C pointers, which a
         copy would break; f2py is a build tool; core is NumPy's
         deprecated alias of its internals.

Classes are NumPy's, except random.Generator and random.RandomState
(subclasses whose methods return GpuArrays and write shuffles back) and
random.default_rng (which returns gpupy's Generator).
"""

import functools
import importlib
import importlib.abc
import importlib.machinery
import inspect
import sys
import types

import numpy as np

from . import _core
from ._fallback import _Call, _has_callable, call_numpy, fallback_function, note_fallback
from ._placement import placement_counts
from ._registry import FUNCTIONS as _FUNCTIONS

POLICIES = {
    "random": "wrap", "linalg": "wrap", "fft": "wrap", "polynomial": "wrap", "lib": "wrap", "emath": "wrap",
    "char": "wrap", "strings": "wrap", "rec": "wrap",
    "ma": "flush",
    "testing": "read",
    "exceptions": "same", "dtypes": "same", "typing": "same", "ctypeslib": "same", "f2py": "same", "core": "same",
}

# Functions that configure a submodule or its state: NumPy's own, not counted.
_DIRECT = {
    "random.seed", "random.get_state", "random.set_state", "random.get_bit_generator", "random.set_bit_generator",
    "polynomial.set_default_printstyle", "ma.set_fill_value",
}

# numpy.testing functions that call the callables they are given.
_TESTING_CALLERS = {"assert_raises", "assert_raises_regex", "assert_warns", "assert_no_warnings",
                    "assert_no_gc_cycles", "assert_"}

PREFIX = __name__.rpartition(".")[0] + "."  # "gpupy."


def policy(path):
    """The policy for numpy.<path> ("linalg", "lib.stride_tricks")."""
    return POLICIES.get(path.partition(".")[0], "wrap")


# --- function wrappers ---------------------------------------------------------------------------

def _flush_call(qualname, func, count, wrap_results):
    def call(*args, **kwargs):
        c = _Call()
        host_args, host_kwargs = c.flush(list(args)), c.flush(kwargs)
        if count:
            attempt = None if _has_callable(args, kwargs) else (lambda: func(*host_args, **host_kwargs))
            note_fallback(qualname, "gpupy does not implement this function", attempt)
        result = func(*host_args, **host_kwargs)
        return c.wrap(result) if wrap_results else result

    return call


def _wrap_callable(path, name, value):
    qualname = f"{path}.{name}"
    mode = policy(path)
    impl = _FUNCTIONS.get(value) if _hashable(value) else None
    if impl is not None:
        return impl
    if qualname in _DIRECT or name == "test":
        return value
    size_at = None
    if path == "random":
        special = _RANDOM_SPECIAL.get(name)
        if special is not None:
            return special
        size_at = _size_position(value)
    if size_at is not None:
        wrapper = _one_value_draws(qualname, value, size_at, fallback_function(qualname, value, module=PREFIX + path))
    elif mode == "wrap":
        wrapper = fallback_function(qualname, value, module=PREFIX + path)
    elif mode == "flush":
        wrapper = _flush_call(qualname, value, count=True, wrap_results=False)
    else:  # "read"
        if name in _TESTING_CALLERS or not name.startswith("assert_"):
            return value
        wrapper = _flush_call(qualname, value, count=False, wrap_results=False)
    try:
        _named_like(wrapper, value, getattr(value, "__name__", name), name, PREFIX + path)
    except (AttributeError, TypeError):
        pass
    return wrapper


def _named_like(wrapper, func, name, qualname, module):
    """`wrapper` named and documented as the NumPy function `func` it
    stands for, under gpupy's `module`."""
    wrapper.__name__ = name
    wrapper.__qualname__ = qualname
    wrapper.__doc__ = getattr(func, "__doc__", None)
    wrapper.__wrapped__ = func
    wrapper.__module__ = module
    return wrapper


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _is_function(value):
    return callable(value) and not isinstance(value, type) and not isinstance(value, types.ModuleType)


# --- the wrapped modules -------------------------------------------------------------------------

class _MirrorModule(types.ModuleType):
    """gpupy.<path>: NumPy's numpy.<path>, its functions wrapped by policy."""

    def __init__(self, path, numpy_module):
        super().__init__(PREFIX + path, numpy_module.__doc__)
        self.__dict__["_numpy_module"] = numpy_module
        self.__dict__["_path"] = path
        if hasattr(numpy_module, "__all__"):
            self.__dict__["__all__"] = list(numpy_module.__all__)
        if hasattr(numpy_module, "__path__"):
            # A package whose submodules only this module's finder provides
            # (never NumPy's files loaded a second time under gpupy's name).
            self.__dict__["__path__"] = []

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        module = self.__dict__["_numpy_module"]
        path = self.__dict__["_path"]
        value = getattr(module, name)  # AttributeError (NumPy's message) if absent
        if isinstance(value, types.ModuleType) and not name.startswith("_") and value.__name__.startswith("numpy."):
            value = importlib.import_module(f"{PREFIX}{path}.{name}")
        elif name.startswith("_") or policy(path) == "same":
            return value  # private and pass-through names are not cached (NumPy may rebind them)
        elif path == "random" and name in _RANDOM_CLASSES:
            value = _RANDOM_CLASSES[name]
        elif _is_function(value):
            value = _wrap_callable(path, name, value)
        setattr(self, name, value)
        return value

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_numpy_module"])) | set(self.__dict__))

    def __repr__(self):
        return f"<module '{self.__name__}' (gpupy's view of {self.__dict__['_numpy_module'].__name__})>"


def numpy_submodule(path):
    """numpy.<path> if it is a public module of NumPy, else None: an
    attribute of NumPy's modules (aliases such as numpy.emath included) or
    a module that can be imported (numpy.matlib)."""
    parts = path.split(".")
    if not path or any(not part or part.startswith("_") for part in parts):
        return None
    module = np
    for part in parts:
        module = getattr(module, part, None)
        if not isinstance(module, types.ModuleType):
            break
    else:
        return module
    try:
        module = importlib.import_module(f"numpy.{path}")
    except ImportError:
        return None
    return module if isinstance(module, types.ModuleType) else None


class _Loader(importlib.abc.Loader):
    def __init__(self, path, numpy_module):
        self.path = path
        self.numpy_module = numpy_module

    def create_module(self, spec):
        return _MirrorModule(self.path, self.numpy_module)

    def exec_module(self, module):
        pass


class MirrorFinder(importlib.abc.MetaPathFinder):
    """Finds gpupy.<path> for every public NumPy submodule numpy.<path>."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(PREFIX):
            return None
        sub = fullname[len(PREFIX):]
        module = numpy_submodule(sub)
        if module is None:
            return None
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _Loader(sub, module), is_package=is_package)


def install_finder():
    if not any(isinstance(f, MirrorFinder) for f in sys.meta_path):
        sys.meta_path.append(MirrorFinder())


def submodule_names():
    """Public submodules of numpy that gpupy mirrors (as dir(numpy) lists them)."""
    return sorted(n for n in dir(np) if not n.startswith("_") and isinstance(getattr(np, n, None), types.ModuleType))


# --- random --------------------------------------------------------------------------------------

def _size_position(func):
    """Where `size` stands among the positional parameters of NumPy's draw
    `func` (None: it has none, or its signature cannot be read)."""
    try:
        names = [n for n in inspect.signature(func).parameters if n != "self"]
    except (TypeError, ValueError):
        return None
    return names.index("size") if "size" in names else None


# Host placements by name (stats()["host_placements_by_function"]).
_placed = placement_counts()


def _one_value_draws(qualname, func, size_at, otherwise):
    """`func` (a draw of NumPy's, function or bound method) as gpupy offers
    it: a draw of one number from plain arguments (None, numbers, strings,
    NumPy scalars, dtypes, types; no size) is NumPy's own call and result,
    counted as a host placement -- the number lives on the host whatever
    gpupy does, and a loop drawing one per step pays NumPy's cost -- and
    any other call goes to `otherwise` (arrays made by NumPy and handed
    over, counted as a fallback). The choice is a C object's
    (src/bindings/py_random_draws.cpp): a Python wrapper cost half NumPy's
    own draw. (_wrap_callable names it.)"""
    return _core.random_draw(func, otherwise, size_at, _placed, qualname, False)


def _numpys_draw(bound, *args, **kwargs):
    # NumPy's draws that this one calls (choice calls integers) are part of it.
    _core.enter_draw()
    try:
        return bound(*args, **kwargs)
    finally:
        _core.leave_draw()


def _method(cls_name, name, unbound):
    qualname = f"random.{cls_name}.{name}"

    def otherwise(self, *args, **kwargs):
        numpys = functools.partial(_numpys_draw, unbound.__get__(self))
        return call_numpy(qualname, args, kwargs, func=numpys, reason="random numbers are generated on the CPU")

    draw = _core.random_draw(unbound, otherwise, _size_position(unbound), _placed, qualname, True)
    return _named_like(draw, unbound, name, f"{cls_name}.{name}", PREFIX + "random")


def _wrap_methods(cls, base, skip):
    for name in dir(base):
        if name.startswith("_") or name in skip or name in cls.__dict__:
            continue
        value = getattr(base, name)
        if callable(value) and not isinstance(value, (type, property)):
            setattr(cls, name, _method(base.__name__, name, value))
    return cls


class Generator(np.random.Generator):
    """numpy.random.Generator whose methods return GpuArrays (the numbers
    are drawn on the CPU by NumPy: the same streams as NumPy's, counted as
    fallbacks "random.Generator.<method>", one number from plain arguments
    as a host placement); shuffle writes back into GpuArrays."""

    def spawn(self, n_children):
        return [Generator(g.bit_generator) for g in super().spawn(n_children)]

    def __reduce__(self):
        return (Generator, (self.bit_generator,))


class RandomState(np.random.RandomState):
    """numpy.random.RandomState whose methods return GpuArrays (see Generator)."""

    def __reduce__(self):
        return (RandomState, (self._bit_generator,))


_wrap_methods(Generator, np.random.Generator, skip={"bit_generator", "spawn"})
_wrap_methods(RandomState, np.random.RandomState, skip={"seed", "get_state", "set_state"})


def default_rng(seed=None):
    """numpy.random.default_rng, returning gpupy's Generator (same stream)."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, np.random.Generator):
        return Generator(seed.bit_generator)
    return Generator(np.random.default_rng(seed).bit_generator)


default_rng.__module__ = PREFIX + "random"
_RANDOM_CLASSES = {"Generator": Generator, "RandomState": RandomState}
_RANDOM_SPECIAL = {"default_rng": default_rng}
for _cls in (Generator, RandomState):
    _cls.__module__ = PREFIX + "random"
del _cls
