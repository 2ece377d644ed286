"""Where work runs when gpupy has a choice: NumPy on the host, or the device.

Base layer (imports only _core and _fallback). Not every operation is
cheapest as a lazy expression on the device: a matrix product on a CPU
renderer runs ~100x faster in NumPy's BLAS than as a fused shader (the
renderer computes each invocation alone, ~7-10 ns, where BLAS blocks for
the caches and the vector units), and arithmetic on a single number costs
more as a node than as a NumPy call. The sections ask here, and what they
place on the host runs through `run_on_host`: NumPy on the arrays' host
values, results back as gpupy arrays. That is a placement, not a fallback:
counted apart (stats()["host_placements_by_function"]) and allowed in the
fallback mode "raise".

The placement setting (GPUPY_PLACEMENT or set_placement) forces a side:
"host", "device" (the device's own implementation, where gpupy has one:
for tests and benchmarks), or "auto" (the default: the cost rules below,
and for evaluations the core's calibrated cost model, _calibration.py).
It applies to linear algebra here and, in the core, to the choice between
the host engine and the device (where no host threshold is set).
"""

import collections

import numpy as np

from . import _core, _environment
from ._core import GpuArray
from ._fallback import _Call, _written, from_numpy

_MODES = ("auto", "host", "device")
_mode = _environment.choice("GPUPY_PLACEMENT", _MODES)
_counts = collections.Counter()
_core.set_placement_mode(_mode)


def set_placement(mode):
    """Forces where work with a choice runs: "host", "device" or "auto"
    (by cost; the default). Returns the previous setting."""
    global _mode
    if mode not in _MODES:
        raise ValueError(f"placement must be one of {_MODES}, got {mode!r}")
    previous, _mode = _mode, mode
    _core.set_placement_mode(mode)
    return previous


def get_placement():
    return _mode


def placement_counts():
    return _counts


def reset_placement_counts():
    _counts.clear()


def linear_algebra_on_host():
    """Whether matrix products and decompositions run in NumPy's BLAS and
    LAPACK: forced by the placement setting, else where the calibration
    (_calibration.py) measured the product cheaper -- on a CPU renderer
    always (BLAS ~0.015 ns a flop at 64x64 float32 on this machine's two
    cores, the device's fused multiply-and-fold ~2-5 ns); on a GPU by what
    it measured. LAPACK has no device version: it follows the products.
    The core decides (its `@` takes this path without Python)."""
    return _core.products_on_host()


def data_dependent_shapes_on_host():
    """Whether boolean masks, nonzero and searchsorted run in NumPy. On the
    device they are a prefix sum and a binary search per result element
    (log2 n gathers each, gpupy/_indexing_reads.py): a GPU's parallel work, which
    a CPU renderer does many times slower than NumPy's one pass. They follow
    the placement setting, and in "auto" the products' judgement of the
    device (a CPU renderer: NumPy, counted as a host placement)."""
    if _mode != "auto":
        return _mode == "host"
    return _core.products_on_host()


def write_on_host(name, target, key, value):
    """target[key] = value by NumPy into the target's host memory (copied
    first only if something still needs the old values), counted as a host
    placement under `name`."""
    _counts[name] += 1
    host_key = tuple(np.asarray(k) if isinstance(k, GpuArray) else k for k in key) if isinstance(key, tuple) else (
        np.asarray(key) if isinstance(key, GpuArray) else key)
    _core.write_on_host(target, host_key, np.asarray(value) if isinstance(value, GpuArray) else value)


def run_on_host(name, func, args, kwargs):
    """NumPy's `func` on the host values of the arguments (lazy ones are
    evaluated first), counted as a host placement under `name`; array
    results become gpupy arrays, arguments NumPy writes into are written
    back."""
    _counts[name] += 1
    if not kwargs and not _written(name, func, args, kwargs)[0]:
        # The common call (a @ b, dot(a, b) in a loop): only gpupy arrays
        # read, nothing written: NumPy on their host values, called from
        # the core without the write-back bookkeeping (in a loop over small
        # vectors that cost 5x the product).
        done = _core.host_call(func, args)
        if done is not None:
            if done[0]:
                return done[1]  # a NumPy scalar, or a fresh array already wrapped
            result, hosts = done[1], done[2]
            if type(result) is np.ndarray and not any(np.may_share_memory(result, h) for h in hosts):
                return from_numpy(result)
            # Several results (qr, eigh), or a view of an argument (which
            # becomes a view of the gpupy array).
            return _wrapped(result, args, hosts)
    call = _Call()
    result = call.run(name, func, args, kwargs)
    call.write_back()
    return call.wrap(result)


def _wrapped(result, given, handed):
    """`result` as gpupy returns it (_Call.wrap: arrays as gpupy arrays,
    one NumPy made as a view of an argument's host values as a view of that
    gpupy array, tuples and lists item by item); `given`: the arguments as
    given, `handed`: as handed to NumPy, in the same order."""
    call = _Call()
    for array, host in zip(given, handed):
        if type(array) is GpuArray:
            call.source(array, host)
    return call.wrap(result)


def host_function(name, func):
    """gpupy's version of NumPy's `func` (one that writes into none of its
    arguments) as NumPy's own call on the host values of the arguments,
    counted as a host placement under `name`; array results as gpupy
    arrays. For functions whose work NumPy does at its own cost on the
    host and gpupy has no device version of: a loop calling one per step
    pays NumPy's cost and a few tenths of a microsecond, where the
    fallback machinery (copies for written arguments, the raise mode's
    trial run) would add microseconds. NumPy's errors are NumPy's own.

    Only gpupy arrays given as arguments themselves (positional or
    keyword) are read here: NumPy's dispatch looks at no others, and a
    gpupy array inside a list reaches NumPy through its __array__."""
    counts = _counts
    adopt = _core.array_from_numpy
    ndarray = np.ndarray

    # (one plain function: it runs once per call, in loops where each
    # helper call and each lookup shows)
    def placed(*args, **kwargs):
        counts[name] += 1
        handed = args
        i = 0
        for a in args:
            if type(a) is GpuArray:
                if handed is args:
                    handed = list(args)
                handed[i] = a.__array__()
            i += 1
        handed_kwargs = kwargs
        if kwargs:
            for k, v in kwargs.items():
                if type(v) is GpuArray:
                    if handed_kwargs is kwargs:
                        handed_kwargs = dict(kwargs)
                    handed_kwargs[k] = v.__array__()
        result = func(*handed, **handed_kwargs)
        if type(result) is ndarray:
            # A new array, or a view of an array NumPy made (its base owns
            # its memory: base.base is None), becomes a gpupy array as it
            # is (the common case); a view of an argument's host values
            # (whose base is the device's memory) is made a view of that
            # gpupy array by _wrapped.
            base = result.base
            if base is None or getattr(base, "base", 0) is None or (handed is args and handed_kwargs is kwargs):
                try:
                    return adopt(result)
                except TypeError:  # a dtype the device cannot hold: NumPy's array
                    return result
        return _wrapped(result, (*args, *kwargs.values()), (*handed, *handed_kwargs.values()))

    placed.__name__ = placed.__qualname__ = getattr(func, "__name__", name)
    placed.__doc__ = getattr(func, "__doc__", None)
    placed.__wrapped__ = func
    return placed
