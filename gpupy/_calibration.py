"""The cost model of this machine, measured once and kept on disk.

Base layer (imports only _core, _fallback, _registry and _version). Three places can run an operation: NumPy
at once (small work on host values), the host engine (the software driver,
threaded, in place on host memory) and the device. Which is cheapest
depends on the machine: on a CPU renderer (llvmpipe) every shader
invocation costs ~7-10 ns on its own, on a GPU a dispatch costs more than
a small evaluation computes. So the parameters are measured, not assumed:
a short calibration (well under a second) times each place on this
machine at the first use of a driver, and keeps the result in the user's
cache directory, keyed by gpupy's and NumPy's versions, the driver and the
device it reports, and the CPU. A later process with the same key loads
it; a changed key measures again.

What the parameters decide:
  - the host engine or the device, for every evaluation wanted in host
    memory (the core's CostModel: a fixed cost per evaluation and costs
    per element and per element-operation for each place, and the cost
    per byte of moving the result);
  - the eager threshold: up to how many elements an op on host values
    runs in NumPy at once instead of as a lazy node;
  - matrix products and linear algebra: NumPy's BLAS on the host or the
    device's product, by the time per flop each took (_placement.py).

GPUPY_CALIBRATION: "auto" (the default: load, else measure and save),
"refresh" (measure again now), "off" (no calibration: the driver's own
judgement and the default eager threshold). GPUPY_CACHE_DIR sets the
directory (default $XDG_CACHE_HOME/gpupy, else ~/.cache/gpupy). Explicit
settings win over the model: GPUPY_HOST_ELEMENTS / set_host_threshold,
GPUPY_EAGER_ELEMENTS / set_eager_threshold, GPUPY_PLACEMENT.
"""

import hashlib
import json
import os
import platform
import time

import numpy

from . import _core
from ._fallback import mode_from_environment
from ._registry import REDUCE_CHUNK
from ._version import __version__

FORMAT = 4
_MODES = ("auto", "refresh", "off")

# An evaluation's fixed cost is shared by the ops fused into it. An op
# made on host values does not know how many will follow before the
# result is read, so the eager threshold assumes a short chain of this many.
OPS_PER_EVALUATION = 4
# The eager threshold stays within the sizes NumPy's cost was measured at
# (a crossover is never extrapolated).
NUMPY_SIZES = (16, 1 << 16)
EAGER_LIMITS = (0, NUMPY_SIZES[-1])


def _model(source, path=None, parameters=None, eager_threshold=None, key=None, seconds=None):
    """What cost_model() reports (see there)."""
    return {"source": source, "path": path, "parameters": parameters, "eager_threshold": eager_threshold,
            "key": key, "seconds": seconds}


_state = _model("not calibrated")
# Each driver's model once per process: switching drivers back and forth
# (the test suite does, per test) reads no file.
_by_driver = {}
# Whether the user set the eager threshold (then the model leaves it alone).
_eager_set_by_user = "GPUPY_EAGER_ELEMENTS" in os.environ


def note_user_eager_threshold():
    global _eager_set_by_user
    _eager_set_by_user = True


def cache_dir():
    explicit = os.environ.get("GPUPY_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpupy")


_cpu = []


def _cpu_model():
    if not _cpu:
        _cpu.append(_read_cpu_model())
    return _cpu[0]


def _read_cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_key():
    """What the measurements depend on; a change measures again."""
    describe = {}
    for line in _core.driver_describe().splitlines():
        k, _, v = line.partition(":")
        if k.strip() in ("driver", "vendor", "renderer", "gl_version", "device", "threads", "kernels", "cpu_renderer"):
            describe[k.strip()] = v.strip()
    return {"format": FORMAT, "gpupy": __version__, "numpy": numpy.__version__, "driver": _core.driver_name(),
            "device": describe, "host_engine": (_core.host_engine_describe() or "").split("host_loops:")[0].strip(),
            "cpu": _cpu_model(), "cpus": os.cpu_count()}


def _path_for(key):
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return os.path.join(cache_dir(), f"calibration-{key['driver']}-{digest}.json")


def _best_ns(run, repetitions):
    # The fastest of a few runs: the least disturbed by other processes (a
    # busy neighbour slows llvmpipe's threads most), so a calibration on a
    # loaded machine still sees the machine, not the load.
    run()  # warm: programs compiled, inputs in place
    times = []
    for _ in range(repetitions):
        t0 = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - t0)
    return float(min(times))


def _fit(points):
    """Least squares of times over columns, in relative error (a 10 us and a
    10 ms point count alike: the decisions turn on both); negative
    coefficients (noise on a term too small to measure) become 0."""
    a = numpy.array([p[0] for p in points], dtype=float)
    t = numpy.array([p[1] for p in points], dtype=float)
    w = 1.0 / numpy.maximum(t, 1.0)
    coef = numpy.linalg.lstsq(a * w[:, None], t * w, rcond=None)[0]
    return [max(0.0, float(c)) for c in coef]


def _chain(x, pairs):
    # Multiply-adds by weak Python scalars: float32 stays float32, and
    # each pair is two operations the planner counts.
    y = x
    for i in range(pairs):
        y = y * (1.0 + 1e-4 * (i + 1)) + 0.5
    return y


def _math_chain(x, count):
    # sin keeps its argument in [-1, 1]: every step is the same work.
    y = x
    for _ in range(count):
        y = _core.ufunc("sin", y)
    return y


MATH_OPS = 8
# Matrix products are timed at this size: big enough for BLAS to be past
# its call overhead, small enough for a CPU renderer's fused product
# (~0.1 GFLOP/s on llvmpipe) to take milliseconds.
PRODUCT_N = 64


def _device_product(a):
    # a @ a.T as the device computes it (gpupy/_linalg.py): broadcast views
    # multiplied and folded over the shared axis, nothing stored between.
    n = a.shape[0]
    av = a.reshape((n, 1, n))._broadcast_to((n, n, n))
    bv = a.reshape((1, n, n))._broadcast_to((n, n, n))
    return _core.reduce(_core.ufunc("multiply", av, bv), "add", [2], numpy.dtype(numpy.float32), REDUCE_CHUNK,
                        checked=False)


def measure():
    """Times each place on this machine; returns (parameters, eager threshold)."""
    host_threshold = _core.host_threshold()
    eager = _core.eager_threshold()
    _core.set_eager_threshold(0)
    try:
        small = 1024
        big = max(small * 4, min(1 << 18, _core.block_size()))
        pairs = (1, _core.COST_MODEL_SHALLOW_OPS // 2)
        data = {n: numpy.linspace(0.0, 1.0, n, dtype=numpy.float32) for n in (small, big)}
        arrays = {n: _core.array_from_numpy(data[n]) for n in (small, big)}
        # Building a node from Python costs the same wherever it runs: it is
        # measured apart and taken out of each place's times.
        build = _best_ns(lambda: _chain(arrays[small], 32), 5) / 64

        def place(threshold):
            points = []
            for n in (small, big):
                for k in pairs:
                    _core.set_host_threshold(threshold)
                    t = _best_ns(lambda: numpy.asarray(_chain(arrays[n], k)), 5)
                    points.append((n, 2 * k, max(1.0, t - 2 * k * build)))
            return points

        host = place(1 << 62)
        device = place(0)

        def place_math(threshold):
            _core.set_host_threshold(threshold)
            t = _best_ns(lambda: numpy.asarray(_math_chain(arrays[big], MATH_OPS)), 5)
            return max(1.0, t - MATH_OPS * build)

        host_math = place_math(1 << 62)
        device_math = place_math(0)

        # A deep expression, at a quarter of the size (it is 10x the work).
        deep_n, deep_pairs = big // 4, _core.COST_MODEL_DEEP_OPS // 2

        def place_deep(threshold):
            _core.set_host_threshold(threshold)
            t = _best_ns(lambda: numpy.asarray(_chain(arrays[big][:deep_n], deep_pairs)), 3)
            return max(1.0, t - 2 * deep_pairs * build)

        host_deep = place_deep(1 << 62)
        device.append((deep_n, 2 * deep_pairs, place_deep(0)))
        # Moving values: the device pass on fresh host data (uploaded first)
        # against the same pass on data the device holds already.
        _core.set_host_threshold(0)
        fresh = _best_ns(lambda: numpy.asarray(_chain(_core.array_from_numpy(data[big].copy()), 1)), 5)
        warm = _best_ns(lambda: numpy.asarray(_chain(arrays[big], 1)), 5)
        transfer = max(0.0, (fresh - warm) / (big * 4))

        h_dispatch, h_op = _fit([([1.0, n * ops], t) for n, ops, t in host])
        h_op_deep = max(0.0, (host_deep - h_dispatch) / (deep_n * 2 * deep_pairs))
        # The readback of each result is priced per byte apart.
        d_dispatch, d_elem, d_op = _fit([([1.0, n, n * ops], max(1.0, t - n * 4 * transfer))
                                         for n, ops, t in device])
        # Math functions: what a chain of them costs beyond each place's
        # fixed and per-element costs.
        h_math = max(0.0, (host_math - h_dispatch) / (big * MATH_OPS))
        d_math = max(0.0, (device_math - d_dispatch - big * (d_elem + 4 * transfer)) / (big * MATH_OPS))
        # Matrix products: NumPy's BLAS against the device's fused product.
        h = numpy.random.default_rng(0).random((PRODUCT_N, PRODUCT_N), dtype=numpy.float32)
        g = _core.array_from_numpy(h)
        flops = 2.0 * PRODUCT_N ** 3
        blas = _best_ns(lambda: numpy.matmul(h, h.T), 5) / flops
        device_product = _best_ns(lambda: numpy.asarray(_device_product(g)), 3) / flops
        # NumPy's own cost per op.
        npx = {n: numpy.linspace(0.0, 1.0, n, dtype=numpy.float32) for n in NUMPY_SIZES}
        np_dispatch, np_elem = _fit([([1.0, n], _best_ns(lambda n=n: numpy.multiply(npx[n], 1.0001), 21))
                                     for n in NUMPY_SIZES])

        params = {"host_dispatch_ns": h_dispatch, "host_ns_per_element_op": h_op,
                  "host_ns_per_element_op_deep": h_op_deep, "host_ns_per_element_math": h_math,
                  "device_dispatch_ns": d_dispatch, "device_ns_per_element": d_elem,
                  "device_ns_per_element_op": d_op, "device_ns_per_element_math": d_math,
                  "transfer_ns_per_byte": transfer,
                  "numpy_dispatch_ns": np_dispatch, "numpy_ns_per_element": np_elem,
                  "blas_ns_per_flop": blas, "device_product_ns_per_flop": device_product,
                  "lazy_node_ns": build}
        return params, eager_crossover(params)
    finally:
        _core.set_host_threshold(host_threshold)
        _core.set_eager_threshold(eager)


def eager_crossover(p):
    """Up to how many elements NumPy at once beats a lazy node: NumPy's op
    costs its dispatch plus its per-element cost; the lazy op costs building
    the node, its share of an evaluation's fixed cost, and its per-element
    cost on the cheaper place."""
    lazy_fixed = p["lazy_node_ns"] + min(p["host_dispatch_ns"], p["device_dispatch_ns"]) / OPS_PER_EVALUATION
    lazy_elem = min(p["host_ns_per_element_op"], p["device_ns_per_element"] + p["device_ns_per_element_op"])
    gain = lazy_fixed - p["numpy_dispatch_ns"]
    slope = p["numpy_ns_per_element"] - lazy_elem
    if gain <= 0:
        return EAGER_LIMITS[0]
    if slope <= 0:
        return EAGER_LIMITS[1]
    return int(min(EAGER_LIMITS[1], max(EAGER_LIMITS[0], gain / slope)))


def _load(path, key):
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, ValueError):
        return None
    if saved.get("key") != key or not isinstance(saved.get("parameters"), dict):
        return None
    return saved


def _save(path, record):
    # Written whole and renamed: a process reading it never sees half.
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
        return True
    except OSError:
        return False


CORE_PARAMETERS = ("host_dispatch_ns", "host_ns_per_element_op", "host_ns_per_element_op_deep",
                   "host_ns_per_element_math", "device_dispatch_ns",
                   "device_ns_per_element", "device_ns_per_element_op", "device_ns_per_element_math",
                   "transfer_ns_per_byte", "blas_ns_per_flop", "device_product_ns_per_flop")


def _use(model, remember=True):
    """Makes `model` the one cost_model() describes and the core uses (and,
    with `remember`, the active driver's for the rest of the process)."""
    _state.update(model)
    if remember:
        _by_driver[_core.driver_name()] = dict(model)
    hand_to_core()
    if model["parameters"] is not None and not _eager_set_by_user:
        _core.set_eager_threshold(model["eager_threshold"])


def calibrate(refresh=False):
    """Loads the active driver's cost model, or measures it (and saves it),
    and hands it to the core. Never raises: a failure leaves the driver's
    own judgement in place and says why in cost_model()."""
    how = "refresh" if refresh else mode_from_environment("GPUPY_CALIBRATION", _MODES)
    if how == "off":
        _use(_model("off (GPUPY_CALIBRATION=off)"), remember=False)
        return
    known = _by_driver.get(_core.driver_name())
    if known is not None and how != "refresh":
        _use(known)  # a failure is not retried either
        return
    try:
        key = machine_key()
        path = _path_for(key)
        saved = None if how == "refresh" else _load(path, key)
        if saved is not None:
            _use(_model("loaded", path, saved["parameters"], saved["eager_threshold"], key, saved.get("seconds")))
            return
        t0 = time.perf_counter()
        params, eager = measure()
        seconds = time.perf_counter() - t0
        record = {"key": key, "parameters": params, "eager_threshold": eager, "seconds": seconds,
                  "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        if _save(path, record):
            _use(_model("measured", path, params, eager, key, seconds))
        else:
            _use(_model("measured (not saved: the cache directory is not writable)", None, params, eager, key,
                        seconds))
    except Exception as exc:  # never let a measurement break import
        _use(_model(f"failed ({type(exc).__name__}: {exc}); the driver's judgement decides"))


def hand_to_core():
    """Gives the core the model cost_model() describes (again, after a test
    replaced it with _core.set_cost_model); none: the driver judges."""
    p = _state["parameters"]
    _core.set_cost_model({k: p[k] for k in CORE_PARAMETERS} if p else {})


def cost_model():
    """The cost model in use: where it came from ("loaded", "measured",
    "off", "failed (...)"), its file, its parameters in nanoseconds, the
    eager threshold it derived, the key it was measured under, and how long
    the measurement took."""
    return dict(_state)
