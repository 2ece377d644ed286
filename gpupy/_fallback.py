"""Running in NumPy what the device cannot, visibly.

Every time gpupy hands work to NumPy (an operation or dtype the driver
cannot run, advanced indexing, a function gpupy does not implement) it goes
through here: counted per function, and warned about or refused according
to the fallback mode ("silent", "warn" or "raise"; GPUPY_FALLBACK or
set_fallback()).
"""

import collections
import os
import warnings

import numpy as np

from . import _core


class GpupyFallbackWarning(UserWarning):
    """Work that gpupy ran in NumPy on the CPU."""


class FallbackError(RuntimeError):
    """Raised in "raise" mode when work would run in NumPy on the CPU."""


_MODES = ("silent", "warn", "raise")
_mode = os.environ.get("GPUPY_FALLBACK", "silent").strip().lower() or "silent"
if _mode not in _MODES:
    raise ValueError(f"GPUPY_FALLBACK must be one of {_MODES}, got {_mode!r}")
_counts = collections.Counter()


def set_fallback(mode):
    """Sets what happens when work runs in NumPy: "silent", "warn" or "raise"."""
    global _mode
    if mode not in _MODES:
        raise ValueError(f"fallback mode must be one of {_MODES}, got {mode!r}")
    _mode = mode


def get_fallback():
    return _mode


def fallback_counts():
    return _counts


def reset_fallback_counts():
    _counts.clear()


def note_fallback(name, reason):
    """Records that `name` runs in NumPy because of `reason`."""
    if _mode == "raise":
        raise FallbackError(f"gpupy would run {name} in NumPy on the CPU: {reason}")
    _counts[name] += 1
    if _mode == "warn":
        warnings.warn(f"gpupy runs {name} in NumPy on the CPU: {reason}", GpupyFallbackWarning, stacklevel=3)


def to_numpy(value):
    """Replaces GpuArrays (also inside lists/tuples/dicts) by ndarrays."""
    if isinstance(value, _core.GpuArray):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        converted = [to_numpy(v) for v in value]
        return type(value)(converted) if not hasattr(value, "_fields") else type(value)(*converted)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    return value


def from_numpy(value):
    """Wraps ndarrays of dtypes gpupy holds as GpuArrays, recursively."""
    if isinstance(value, np.ndarray) and not isinstance(value, np.matrix):
        try:
            return _core.array_from_numpy(value)
        except TypeError:
            return value
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(from_numpy(v) for v in value)
    if isinstance(value, list):
        return [from_numpy(v) for v in value]
    return value


def call_numpy(name, args, kwargs, func=None, reason="not supported on the device"):
    """Runs numpy function `name` (or `func`) on flushed arguments."""
    note_fallback(name, reason)
    out = kwargs.get("out")
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    func = func if func is not None else getattr(np, name)
    result = func(*to_numpy(args), **to_numpy(kwargs))
    if out is not None:
        targets = out if isinstance(out, tuple) else (out,)
        results = result if isinstance(result, tuple) else (result,)
        for t, r in zip(targets, results):
            t[...] = r
        return out
    return from_numpy(result)


def _host_evaluate(name, out, operands, params):
    """Evaluates one expression node in NumPy, into `out` (its host buffer)."""
    note_fallback(name, "the driver cannot run this operation for this dtype")
    if name == "astype":
        np.copyto(out, operands[0], casting="unsafe")
    elif name == "where":
        np.copyto(out, np.where(operands[0], operands[1], operands[2]), casting="unsafe")
    elif name == "index":
        axis = params["axis"]
        shape = [1] * out.ndim
        shape[axis] = out.shape[axis]
        np.copyto(out, np.arange(out.shape[axis]).reshape(shape), casting="unsafe")
    elif name == "reduce":
        _host_reduce(out, operands[0], params)
    else:
        getattr(np, name)(*operands, out=out, casting="unsafe")


def _host_reduce(out, operand, params):
    fold = getattr(np, params["fold"])
    nd, chunk = params["ndim"], params["chunk"]
    outer = operand.shape[: operand.ndim - nd]
    flat = operand.reshape(outer + (-1,))
    if params["mode"] == "chunks":
        for c in range(out.shape[-1]):
            out[..., c] = fold.reduce(flat[..., c * chunk:(c + 1) * chunk], axis=-1)
    else:
        res = out.reshape(outer + (-1,))
        for start in range(0, flat.shape[-1], chunk):
            res[..., start:start + chunk] = fold.accumulate(flat[..., start:start + chunk], axis=-1)


_core.set_host_evaluator(_host_evaluate)
_core._set_numpy_fallback(lambda name, args, kwargs: call_numpy(name, args, kwargs))
