"""Driver selection at import, settings, counters and show_config()."""

import collections
import os
import sys

from . import _calibration, _core, _environment
from ._calibration import calibrate as _calibrate
from ._core import DriverError
from ._fallback import fallback_counts, get_fallback, reset_fallback_counts
from ._placement import get_placement, placement_counts, reset_placement_counts
from ._version import __version__

#: Why the OpenGL driver is not in use when it was not asked for; None if it is.
fallback_reason = None


def _first_line(text):
    return str(text).strip().splitlines()[0] if str(text).strip() else "no reason given"


def select_driver():
    """Loads the driver named by GPUPY_DRIVER, else OpenGL, else software.

    An explicitly requested driver that fails raises DriverError; the
    default falls back to the software driver with one line on stderr.
    """
    global fallback_reason
    requested = _environment.word("GPUPY_DRIVER")
    if requested:
        _core.use_driver(requested)
    else:
        try:
            _core.use_driver("opengl")
        except DriverError as exc:
            fallback_reason = _first_line(exc)
            sys.stderr.write(f"gpupy: OpenGL driver unavailable ({fallback_reason}); using the software driver\n")
            _core.use_driver("software")
    _say_what_the_device_changes()
    _calibrate()
    _core.reset_stats()  # the measurement is not the user's work


def _before_fork():
    """os.fork (multiprocessing's fork start method): every value the
    device holds is read back first, so that the child has it."""
    try:
        _core.before_fork()
    except Exception as exc:  # an at-fork hook cannot stop the fork: say so
        sys.stderr.write(f"gpupy: values on the device could not be read back before fork ({_first_line(exc)}); "
                         "the child process cannot use them\n")


def _after_fork_in_child():
    left = _core.after_fork_in_child()
    if left:
        sys.stderr.write(f"gpupy: this process was forked from one using the {left} driver, whose context cannot be "
                         "used after fork, so it computes with the software driver; start processes with "
                         f"multiprocessing's 'spawn' or 'forkserver' method to use {left} in them\n")


os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def _say_what_the_device_changes():
    """One line on stderr where the device's float32 differs from NumPy's
    and the user has not chosen (GPUPY_FLOAT32_SUBNORMALS): a value is never
    changed without saying so."""
    for line in _core.driver_describe().splitlines():
        key, _, value = line.strip().partition(": ")
        if key == "float32_subnormals" and "GPUPY_FLOAT32_SUBNORMALS=exact" in value:
            sys.stderr.write("gpupy: this device flushes float32 subnormals (|x| < 1.2e-38) to zero, which "
                             "NumPy keeps; GPUPY_FLOAT32_SUBNORMALS=exact computes float32 on the host instead "
                             "(slower), =flush accepts the flush without this note\n")


def use_driver(name):
    """Switches the active driver ("opengl" or "software") at run time.

    Values already computed stay valid; blocks on the old device are read
    back to the host first. The new driver's cost model is loaded (or
    measured, the first time on this machine).
    """
    _core.use_driver(name)
    _say_what_the_device_changes()
    _calibrate()


def calibrate():
    """Measures the active driver's cost model again now, saves it in the
    cache directory and uses it; returns cost_model()."""
    _calibrate(refresh=True)
    return cost_model()


def cost_model():
    """The cost model that places work between NumPy, the host engine and
    the device: its source ("loaded", "measured", "off", "failed (...)"),
    file, parameters (nanoseconds), derived eager threshold and key."""
    return _calibration.cost_model()


def driver():
    """Name of the active driver."""
    return _core.driver_name()


def set_block_size(elements):
    """Sets the number of elements per block (empties the device cache)."""
    _core.set_block_size(int(elements))


def block_size():
    return _core.block_size()


def set_cache_bytes(nbytes):
    """Sets the device cache budget in bytes (evicting down to it)."""
    _core.set_cache_budget(int(nbytes))


def cache_bytes():
    return _core.cache_budget()


def set_host_threshold(elements):
    """Evaluations of at most this many elements run on the host engine (in
    place, no transfers) when the active driver is a device; 0: never.
    None (the default) lets the driver judge from its cost model."""
    _core.set_host_threshold(None if elements is None else int(elements))


def host_threshold():
    return _core.host_threshold()


def set_eager_threshold(elements):
    """Operations whose operands are already in host memory and whose result
    has at most this many elements run in NumPy at once instead of as lazy
    nodes (a Python loop over rows or small slices); 0: never. Default: the
    calibrated crossover (cost_model()), else 1024 (GPUPY_EAGER_ELEMENTS)."""
    _core.set_eager_threshold(int(elements))
    _calibration.note_user_eager_threshold()


def eager_threshold():
    return _core.eager_threshold()


def set_driver_option(key, value):
    """Sets a driver-specific option, e.g. ("max_ops", 1) on the software driver."""
    _core.set_driver_option(key, value)
    _calibration.note_driver_option(_core.driver_name(), key, value)


def stats():
    """Counters since the last reset_stats(): evaluations, blocks moved, ..."""
    d = _core.stats()
    counts = fallback_counts()
    d["fallbacks"] = sum(counts.values())
    d["fallbacks_by_function"] = dict(counts)
    placed = collections.Counter(placement_counts())
    # Products the core placed on the host itself (`a @ b`, matmul/dot of
    # two arrays): counted there, without Python.
    placed["matmul"] += d.pop("host_matmuls")
    placed["dot"] += d.pop("host_dots")
    placed["argmin"] += d.pop("host_argmins")
    placed["argmax"] += d.pop("host_argmaxes")
    # float16 sums and products: NumPy's own, whose rounding follows its
    # loop structure (py_structural.cpp).
    placed["float16 add/multiply.reduce"] += d.pop("host_float16_folds")
    placed = +placed  # no zero counts
    d["host_placements"] = sum(placed.values())
    d["host_placements_by_function"] = dict(placed)
    # What ran where and why: the core's host-engine/device decisions, and
    # NumPy's share (small ops on host values at once; BLAS/LAPACK; NumPy's
    # own function on the host values for the rest).
    numpy_side = {}
    if d["eager_numpy_ops"]:
        numpy_side["small ops on host values (eager threshold)"] = d["eager_numpy_ops"]
    blas = sum(n for name, n in placed.items() if _is_linear_algebra(name))
    if blas:
        numpy_side["linear algebra (BLAS/LAPACK)"] = blas
    if d["host_placements"] > blas:
        numpy_side["NumPy's function on host values"] = d["host_placements"] - blas
    d["placements"]["numpy"] = numpy_side
    return d


# Host placements that are NumPy's BLAS and LAPACK: the products and
# numpy.linalg (polyfit is a least-squares solve).
_LINEAR_ALGEBRA = frozenset({"matmul", "dot", "vdot", "inner", "outer", "tensordot", "einsum", "kron", "polyfit"})


def _is_linear_algebra(name):
    return name in _LINEAR_ALGEBRA or name.startswith("linalg.")


def reset_stats():
    _core.reset_stats()
    reset_fallback_counts()
    reset_placement_counts()


def config():
    """The configuration show_config prints, as a dict of plain values
    (what `python -m gpupy --json` prints)."""
    threshold = host_threshold()
    model = _calibration.cost_model()
    if threshold is not None:
        host_engine = f"evaluations of at most {threshold} elements"
    elif _core.cost_model_in_use():
        host_engine = f"chosen by the cost model ({model['source']})"
    else:
        host_engine = "chosen by the driver's judgement"
    device = {}
    for line in _core.driver_describe().strip().splitlines():
        key, _, value = line.partition(":")
        device[key.strip()] = value.strip()
    engine = _core.host_engine_describe()
    loops = [line.split(":", 1)[1].split() for line in (engine or "").splitlines() if line.startswith("host_loops:")]
    return {
        "version": __version__,
        "driver": driver(),
        "opengl_unavailable": fallback_reason or None,
        "device": device,
        "block_size": block_size(),
        "cache_bytes": cache_bytes(),
        "host_engine": host_engine,
        "cost_model": model["path"] or None,
        "cost_model_source": model["source"],
        "cost_model_notes": model["notes"],
        "eager_threshold": eager_threshold(),
        "numpy_host_loops": len([w for w in loops[0] if "/" in w]) if loops else 0,
        "fallback_mode": get_fallback(),
        "placement": get_placement(),
        "driver_libraries": _core.driver_library_dir(),
    }


def config_text():
    c = config()
    lines = [f"gpupy {c['version']}", f"driver: {c['driver']}"]
    if c["opengl_unavailable"]:
        lines.append(f"opengl unavailable: {c['opengl_unavailable']}")
    lines += [f"  {key}: {value}" for key, value in c["device"].items()]
    lines.append(f"block size: {c['block_size']} elements")
    lines.append(f"cache budget: {c['cache_bytes']} bytes")
    lines.append(f"host engine: {c['host_engine']}")
    if c["cost_model"]:
        lines.append(f"cost model: {c['cost_model']}")
    lines.append(f"cost model source: {c['cost_model_source']}")
    lines.append(f"eager threshold: {c['eager_threshold']} elements")
    if c["numpy_host_loops"]:
        lines.append(f"NumPy loops on the host: {c['numpy_host_loops']} (op/dtype), for the math functions")
    lines.append(f"fallback mode: {c['fallback_mode']}")
    lines.append(f"placement: {c['placement']}")
    lines.append(f"driver libraries: {c['driver_libraries']}")
    return "\n".join(lines)


def show_config():
    """Prints the driver, device, limits, block size and cache budget."""
    print(config_text())
