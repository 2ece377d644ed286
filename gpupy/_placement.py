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
            call = _Call()
            for a, h in zip(args, hosts):
                call.source(a, h)
            return call.wrap(result)
    call = _Call()
    result = call.run(name, func, args, kwargs)
    call.write_back()
    return call.wrap(result)
