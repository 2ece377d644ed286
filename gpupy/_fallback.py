"""Running in NumPy what the device cannot, visibly.

Every time gpupy hands work to NumPy (an operation or dtype the driver
cannot run, advanced indexing, a function gpupy does not implement) it goes
through here: `call_numpy` for whole functions, `note_fallback` for
everything else. Each is counted per function (`gpupy.stats()
["fallbacks_by_function"]`) and warned about or refused according to the
fallback mode: "silent", "warn" (a GpupyFallbackWarning pointing at the
user's line) or "raise" (FallbackError instead of the result). The mode
comes from GPUPY_FALLBACK or set_fallback(). Input NumPy rejects raises
NumPy's own exception in every mode: in "raise" mode NumPy is tried on
copies first, and FallbackError replaces only a result that would have
been computed on the CPU (nothing is written back, nothing counted).

`call_numpy` also keeps NumPy's semantics for functions that write into
their arguments. The host arrays gpupy hands to NumPy are read-only views
of the device's values (a write there would be lost), so the arguments
NumPy writes into -- `out=`, ufunc outputs, `np.copyto`'s dst, `ufunc.at`'s
array, `shuffle`'s x, ... -- get writable copies whose contents are then
written back into the GpuArrays. Results come back as GpuArrays where the
device can hold their dtype; a result NumPy made as a view of an argument
(np.flip, np.moveaxis, as_strided, ...) becomes a view of that GpuArray, so
that writes through it reach the original as in NumPy.
"""

import collections
import contextlib
import functools
import inspect
import operator
import os
import sys
import warnings

import numpy as np

from . import _core
from . import _environment
from ._array_api import check_device


class GpupyFallbackWarning(UserWarning):
    """Work that gpupy ran in NumPy on the CPU."""


class FallbackError(RuntimeError):
    """Raised in "raise" mode when work would run in NumPy on the CPU."""


_MODES = ("silent", "warn", "raise")


_mode = _environment.choice("GPUPY_FALLBACK", _MODES)
_counts = collections.Counter()


def set_fallback(mode):
    """Sets what happens when work runs in NumPy on the CPU.

    "silent" counts it (gpupy.stats()["fallbacks_by_function"]), "warn" also
    issues a GpupyFallbackWarning, "raise" refuses with FallbackError.
    Returns the previous mode.
    """
    global _mode
    if mode not in _MODES:
        raise ValueError(f"fallback mode must be one of {_MODES}, got {mode!r}")
    previous, _mode = _mode, mode
    # The core refuses host evaluation itself in "raise" mode, before any
    # work, since it never calls Python mid-evaluation (docs/threads.md).
    _core.set_refuse_host_evaluation(mode == "raise")
    return previous


def get_fallback():
    """The current fallback mode: "silent", "warn" or "raise"."""
    return _mode


@contextlib.contextmanager
def fallback_mode(mode):
    """Context manager: the fallback mode is `mode` inside the block."""
    previous = set_fallback(mode)
    try:
        yield
    finally:
        set_fallback(previous)


def fallback_counts():
    return _counts


def reset_fallback_counts():
    _counts.clear()


_PACKAGE_DIRS = tuple(os.path.dirname(m.__file__) + os.sep for m in (np, sys.modules[__name__.rpartition(".")[0]]))


def _user_stacklevel():
    """The stacklevel (for warnings.warn called from note_fallback) of the
    first frame outside gpupy and NumPy: the user's line."""
    frame = sys._getframe(2)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRS):
        frame = frame.f_back
        level += 1
    return level


def note_fallback(name, reason, attempt=None):
    """Records that `name` runs in NumPy because of `reason`, or refuses.

    In "raise" mode, `attempt` (a callable doing NumPy's work on copies,
    without side effects) is run first when given: input NumPy rejects
    raises NumPy's own exception -- an error in the input is not work to
    hand to NumPy -- and only valid input raises FallbackError.
    """
    if _mode == "raise":
        if attempt is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # NumPy's warnings are not errors in the input
                attempt()
        raise FallbackError(f"gpupy would run {name} in NumPy on the CPU: {reason}.")
    _counts[name] += 1
    if _mode == "warn":
        warnings.warn(f"gpupy runs {name} in NumPy on the CPU: {reason}.", GpupyFallbackWarning,
                      stacklevel=_user_stacklevel())


# --- GpuArray <-> ndarray ----------------------------------------------------------------------

def to_numpy(value):
    """Replaces GpuArrays (also inside lists/tuples/dicts) by ndarrays."""
    return _Call().flush(value)


def from_numpy(value):
    """Wraps ndarrays of dtypes gpupy holds as GpuArrays, recursively.

    Only exact ndarrays: subclasses (np.matrix, masked arrays, memmaps,
    recarrays) have semantics of their own and stay NumPy's.
    """
    if type(value) is np.ndarray:
        try:
            return _core.array_from_numpy(value)
        except TypeError:  # a dtype the device cannot hold
            return value
    if isinstance(value, (tuple, list)):
        converted = [from_numpy(v) for v in value]
        if isinstance(value, list):
            return converted
        return type(value)(*converted) if hasattr(value, "_fields") else type(value)(converted)
    return value


def _rebuild(value, items):
    if isinstance(value, list):
        return items
    if hasattr(value, "_fields"):  # a namedtuple
        return type(value)(*items)
    return type(value)(items)


class _Call:
    """One call into NumPy: the host arrays handed over and how their
    results map back to GpuArrays."""

    def __init__(self, dry_run=False):
        self.sources = {}   # id(read-only host view) -> (GpuArray, view)
        self.targets = {}   # id(writable host copy) -> (GpuArray, copy)
        self.keep = set()   # ids of ndarrays the caller passed as outputs
        self.dry_run = dry_run  # copies of written ndarrays too: no side effects

    def source(self, array, host):
        """Records that `host` is the GpuArray `array`'s host view, so a
        result that views it becomes a view of `array`; returns `host`."""
        self.sources[id(host)] = (array, host)
        return host

    def flush(self, value):
        """Read-only host views of the GpuArrays in `value`."""
        if isinstance(value, _core.GpuArray):
            return self.source(value, value.__array__())
        if isinstance(value, (list, tuple)):
            return _rebuild(value, [self.flush(v) for v in value])
        if isinstance(value, dict):
            return {k: self.flush(v) for k, v in value.items()}
        return value

    def writable(self, value):
        """Writable host copies of the GpuArrays in an argument NumPy
        writes into (an `out` tuple included); NumPy's own read-only error
        for GpuArrays that are not writeable (broadcast views)."""
        if isinstance(value, _core.GpuArray):
            if not value._writeable:
                return self.flush(value)
            host = np.array(value)
            self.targets[id(host)] = (value, host)
            return host
        if isinstance(value, tuple):
            return tuple(self.writable(v) for v in value)
        if isinstance(value, np.ndarray):
            if self.dry_run:
                return value.copy() if value.flags.writeable else value
            self.keep.add(id(value))
        return value

    def run(self, name, func, args, kwargs):
        """func on the host arrays (outputs and written arguments copied)."""
        positions, keywords = _written(name, func, args, kwargs)
        host_args = [self.writable(a) if i in positions else self.flush(a) for i, a in enumerate(args)]
        host_kwargs = {k: self.writable(v) if k in keywords else self.flush(v) for k, v in kwargs.items()}
        return func(*host_args, **host_kwargs)

    def write_back(self):
        for target, host in self.targets.values():
            target[...] = host

    def wrap(self, value):
        """The result as gpupy returns it."""
        if isinstance(value, np.ndarray):
            if id(value) in self.targets and self.targets[id(value)][1] is value:
                return self.targets[id(value)][0]
            if id(value) in self.keep or type(value) is not np.ndarray:
                return value
            view = self._view_of_source(value)
            return view if view is not None else from_numpy(value)
        if isinstance(value, (tuple, list)):
            return _rebuild(value, [self.wrap(v) for v in value])
        return value

    def _view_of_source(self, result):
        """The GpuArray view equal to `result` if NumPy made it as a view of
        one of the flushed arguments (strides a whole number of elements,
        no broadcast dimension), else None."""
        if not self.sources or result.size == 0:
            return None
        base = result
        for _ in range(32):
            source = self.sources.get(id(base))
            if source is not None and source[1] is base:
                break
            base = getattr(base, "base", None)
            if base is None:
                return None
        else:
            return None
        array, host = source
        item = result.itemsize
        if result.dtype != host.dtype:
            return None
        delta = result.__array_interface__["data"][0] - host.__array_interface__["data"][0]
        if delta % item or any(s % item for s in result.strides):
            return None
        if any(s == 0 and n > 1 for s, n in zip(result.strides, result.shape)):
            return None
        return _core.view_as(array, array._view[0] + delta // item, result.shape,
                             tuple(s // item for s in result.strides))


# --- which arguments NumPy writes into ---------------------------------------------------------

# Functions that write into an argument: qualified name -> (parameter, position).
_WRITES = {
    "copyto": ("dst", 0),
    "put": ("a", 0),
    "place": ("arr", 0),
    "putmask": ("a", 0),
    "fill_diagonal": ("a", 0),
    "put_along_axis": ("arr", 0),
    "random.shuffle": ("x", 0),
    "random.Generator.shuffle": ("x", 0),
    "random.RandomState.shuffle": ("x", 0),
    "ndarray.sort": ("self", 0),
    "ndarray.partition": ("self", 0),
    "ndarray.put": ("self", 0),
    "ndarray.setfield": ("self", 0),
    "ndarray.byteswap": ("self", 0),  # only with inplace=True; see _written
}

# Functions that move data between the host and the program -- values read
# back to show or store them (like printing), host data read in (like
# gpupy.array(list)) -- not computation that could have run on the device:
# not counted, allowed in "raise" mode.
HOST_IO = {
    "array2string", "array_repr", "array_str", "save", "savez", "savez_compressed", "savetxt",
    "ndarray.tofile", "ndarray.tobytes", "ndarray.dump", "ndarray.dumps",
    "load", "loadtxt", "genfromtxt", "fromfile", "frombuffer", "fromstring", "fromiter", "fromregex",
    "from_dlpack",
}


_out_positions = {}


def _out_position(name, func):
    """Position of the `out` parameter of `func` (NumPy's `name`), or None."""
    try:
        return _out_positions[name]
    except KeyError:
        pass
    position = None
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i, p in enumerate(params):
        if p.name == "out" and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            position = i
            break
    _out_positions[name] = position
    return position


def _written(name, func, args, kwargs):
    """(positions, keywords) of the arguments NumPy writes into."""
    positions, keywords = set(), set()
    if "out" in kwargs:
        keywords.add("out")
    if isinstance(func, np.ufunc):
        positions.update(range(func.nin, len(args)))
    elif name.endswith(".at") and isinstance(getattr(func, "__self__", None), np.ufunc):
        positions.add(0)
    else:
        pos = _out_position(name, func)
        if pos is not None and pos < len(args):
            positions.add(pos)
    spec = _WRITES.get(name)
    if name == "nan_to_num":
        copy = kwargs.get("copy", args[1] if len(args) > 1 else True)
        spec = None if copy else ("x", 0)
    elif name == "ndarray.byteswap" and not kwargs.get("inplace", args[1] if len(args) > 1 else False):
        spec = None
    if spec is not None:
        param, pos = spec
        if param in kwargs:
            keywords.add(param)
        elif pos < len(args):
            positions.add(pos)
    return positions, keywords


def _has_callable(args, kwargs):
    for value in list(args) + list(kwargs.values()):
        for v in (value if isinstance(value, (list, tuple)) else (value,)):
            if callable(v) and not isinstance(v, (type, np.ndarray, _core.GpuArray, np.ufunc)):
                return True
    return False


def call_numpy(name, args, kwargs, func=None, reason="gpupy does not support it on the device"):
    """Runs NumPy's `func` (default numpy.<name>) on flushed arguments.

    `name` is the qualified NumPy name ("sum", "linalg.inv", "add.at",
    "random.Generator.normal", "ndarray.sort") under which the fallback is
    counted. Arguments NumPy writes into are written back into their
    GpuArrays; array results come back as GpuArrays where the device can
    hold their dtype (NumPy's views of an argument as views of it).
    """
    if func is None:
        func = functools.reduce(getattr, name.split("."), np)  # "add.reduce": numpy.add.reduce
    if kwargs.get("device") is not None:
        # gpupy's device, for NumPy's function: what falls back runs on NumPy's one device.
        check_device(kwargs["device"])
        kwargs = dict(kwargs, device="cpu")
    if name not in HOST_IO:
        # Raise mode tries NumPy first, so that bad input gets NumPy's error;
        # not for random draws (they would advance the generator's state) or
        # calls that take the user's callables (they could do anything).
        dry_run = None
        if not name.startswith("random.") and not _has_callable(args, kwargs):
            dry_run = lambda: _Call(dry_run=True).run(name, func, args, kwargs)  # noqa: E731
        note_fallback(name, reason, dry_run)
    call = _Call()
    try:
        result = call.run(name, func, args, kwargs)
    except FloatingPointError:
        call.write_back()  # np.errstate's "raise": NumPy raises after writing its outputs
        raise
    call.write_back()
    return call.wrap(result)


def fallback_function(qualname, func, module="gpupy"):
    """A gpupy function that runs NumPy's `func` on flushed arguments,
    counted as a fallback under `qualname` ("sum", "linalg.inv")."""

    @functools.wraps(func)
    def fallback(*args, **kwargs):
        return call_numpy(qualname, args, kwargs, func=func, reason="gpupy does not implement this function")

    fallback.__module__ = module
    fallback.__qualname__ = qualname.rpartition(".")[2]
    fallback._gpupy_fallback = qualname not in HOST_IO  # moving data in or out is not a fallback
    return fallback


# --- expression nodes the driver cannot run ----------------------------------------------------

def _note_host_evaluation(name):
    """The core's host engine is about to evaluate a node (op `name`) that
    the active driver cannot run: CPU work, counted or refused like any
    fallback."""
    note_fallback(name, "the driver cannot run this operation for this dtype")


# The core names ndarray comparisons with arbitrary objects (`g == None`)
# by the operator NumPy applies.
_OPERATORS = {"ndarray.__eq__": operator.eq, "ndarray.__ne__": operator.ne}

_core.set_host_evaluation_hook(_note_host_evaluation)
_core.set_refuse_host_evaluation(_mode == "raise")
_core._set_numpy_fallback(lambda name, args, kwargs, reason="gpupy does not support it on the device":
                          call_numpy(name, args, kwargs, func=_OPERATORS.get(name), reason=reason))
