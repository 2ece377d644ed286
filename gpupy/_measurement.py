"""Measuring this machine's costs, for the cost model (_calibration.py keeps,
loads and corrects the model; this module only times and judges).

Each figure is timed in rounds until two agree within AGREEMENT (the
fastest run of each round: the least disturbed by other processes); a
thread that got less than its core while timing (BUSY_RATIO) or a figure
outside the range plausible for the kind of device (PLAUSIBLE) makes the
figures unfit to keep, and the notes say why. From the figures comes the
eager threshold (`eager_crossover`).

Base layer: imports only _core, _environment and _registry.
"""

import time

import numpy

from . import _core, _environment
from ._registry import REDUCE_CHUNK

# An evaluation's fixed cost is shared by the ops fused into it. An op
# made on host values does not know how many will follow before the
# result is read, so the eager threshold assumes a short chain of this many.
OPS_PER_EVALUATION = 4
# The eager threshold stays within the sizes NumPy's cost was measured at
# (a crossover is never extrapolated).
NUMPY_SIZES = (16, 1 << 16)
EAGER_LIMITS = (0, NUMPY_SIZES[-1])

MAX_ROUNDS = 4  # rounds a figure gets at most


# This thread's wall time over its CPU time, for a piece of single-threaded
# work: 1 on an idle machine; beyond this, other processes took its core.
# GPUPY_CALIBRATION_BUSY_RATIO sets another (tests of the file's mechanics
# raise it, so that a busy test machine still saves).
BUSY_RATIO = _environment.number("GPUPY_CALIBRATION_BUSY_RATIO", 1.3)
# Two rounds of a figure agree when they differ by at most this fraction.
# GPUPY_CALIBRATION_AGREEMENT sets another (tests of the file's mechanics
# raise it with the busy ratio: a noisy test machine still saves).
AGREEMENT = _environment.number("GPUPY_CALIBRATION_AGREEMENT", 0.25)

# Ranges (nanoseconds) a figure measured on an undisturbed machine falls
# in, by kind of device: a CPU renderer (llvmpipe), a GPU. Outside them the
# measurement was disturbed (or the device is not what it says), and the
# model is not saved. Wide on purpose: they catch a figure off by orders of
# magnitude (a device element at 920 ns, measured under 64-element blocks),
# not a slow machine.
PLAUSIBLE = {
    "host_dispatch_ns": (200.0, 2e6),
    "host_ns_per_op": (0.0, 1e5),
    "host_ns_per_element_op": (1e-3, 20.0),
    "host_ns_per_element_op_deep": (1e-3, 50.0),
    "host_ns_per_element_math": (0.0, 500.0),
    "device_dispatch_ns": (500.0, 5e7),
    "device_readback_ns": (0.0, 5e7),
    "device_ns_per_op": (0.0, 1e6),
    "device_ns_per_element": {"cpu renderer": (0.02, 200.0), "gpu": (0.0, 5.0)},
    "device_ns_per_element_op": {"cpu renderer": (0.0, 50.0), "gpu": (0.0, 5.0)},
    "device_ns_per_element_math": {"cpu renderer": (0.0, 500.0), "gpu": (0.0, 50.0)},
    "upload_ns_per_byte": (0.0, 20.0),
    "download_ns_per_byte": (0.0, 20.0),
    "numpy_dispatch_ns": (30.0, 1e5),
    "numpy_ns_per_element": (1e-4, 20.0),
    "lazy_node_ns": (30.0, 2e5),
    "blas_ns_per_flop": (1e-5, 5.0),
    "device_product_ns_per_flop": (1e-7, 1e4),
}

def round_ns(run, repetitions):
    # The fastest of a few runs: the least disturbed by other processes.
    times = []
    for _ in range(repetitions):
        t0 = time.perf_counter_ns()
        run()
        times.append(time.perf_counter_ns() - t0)
    return float(min(times))


def _agreed_ns(run, repetitions, name, notes):
    """A figure: rounds (each the fastest of `repetitions` runs) until two
    agree within AGREEMENT; the lesser of those two. If no two of
    MAX_ROUNDS agree, the least, and a note saying so."""
    run()  # warm: programs compiled, inputs in place
    rounds = [round_ns(run, repetitions)]
    while len(rounds) < MAX_ROUNDS:
        rounds.append(round_ns(run, repetitions))
        ordered = sorted(rounds)
        for a, b in zip(ordered, ordered[1:]):
            if b <= a * (1 + AGREEMENT):
                return a
    notes.append(f"{name}: no two of {MAX_ROUNDS} rounds agreed within {AGREEMENT:.0%} "
                 f"({', '.join(f'{r / 1e3:.1f} us' for r in rounds)})")
    return min(rounds)


def _wall_over_cpu(run):
    """run()'s result, and its wall time over this thread's CPU time:
    about 1 for single-threaded work on an idle machine, more where other
    processes took the core. (Over the whole run, not the best of a few
    pieces: a thread woken on a busy machine often gets one piece's worth
    of its core undisturbed.)"""
    w0, c0 = time.perf_counter(), time.thread_time()
    result = run()
    return result, (time.perf_counter() - w0) / max(time.thread_time() - c0, 1e-6)


def busy_ratio():
    """_wall_over_cpu of ~10 ms of NumPy's single-threaded work."""
    x = numpy.linspace(0.0, 1.0, 1 << 14)
    return _wall_over_cpu(lambda: [numpy.sin(x) for _ in range(120)])[1]


def _fit(points):
    """Least squares of times over columns, in relative error (a 10 us and a
    10 ms point count alike: the decisions turn on both); negative
    coefficients (noise on a term too small to measure) become 0."""
    a = numpy.array([p[0] for p in points], dtype=float)
    t = numpy.array([p[1] for p in points], dtype=float)
    w = 1.0 / numpy.maximum(t, 1.0)
    coef = numpy.linalg.lstsq(a * w[:, None], t * w, rcond=None)[0]
    return [max(0.0, float(c)) for c in coef]


def _per_element_left(passes, per_element_op):
    """A place's cost per element beyond its operations, from its shortest
    chain's growth with the size -- for when the joint fit gave it none:
    the cost per element and the cost per element and operation grow
    together with the size, and noise on the smaller one can hand all of
    it to the other (a CPU renderer's ~2-7 ns an invocation fitted as 0,
    which the plausibility check then refuses). Where the fitted cost per
    operation explains all of that growth and more (noise on it too: a
    wheel check refused a model once so), the growth is shared by the
    chain's operations and the pass itself alike. `passes`: (elements,
    operations, ns) of each timed chain."""
    shortest = min(ops for _, ops, _ in passes)
    timed = sorted((n, t) for n, ops, t in passes if ops == shortest)
    (n0, t0), (n1, t1) = timed[0], timed[-1]
    if n1 == n0:
        return 0.0
    growth = (t1 - t0) / (n1 - n0)
    left = growth - shortest * per_element_op
    return left if left > 0.0 else max(0.0, growth / (shortest + 1))


def chain(x, pairs):
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


# The tiled product's two forms (the OpenGL driver's option tiled_products)
# are timed against each other at the first size, doubling from
# PRODUCT_N, where one product takes this long -- on a GPU the fixed costs
# of a small product hide its kernel -- but at most TILED_MAX_N.
TILED_TUNING_NS = 2e6
TILED_MAX_N = 2048


def _device_product(a):
    # a @ a.T as the device computes it (gpupy/_linalg.py): broadcast views
    # multiplied and folded over the shared axis, nothing stored between.
    n = a.shape[0]
    av = a.reshape((n, 1, n))._broadcast_to((n, n, n))
    bv = a.reshape((1, n, n))._broadcast_to((n, n, n))
    return _core.reduce(_core.ufunc("multiply", av, bv), "add", [2], numpy.dtype(numpy.float32), REDUCE_CHUNK,
                        checked=False)


def figures(notes):
    """The figures of each place on this machine, in nanoseconds (timed in
    whatever configuration the caller set up); `notes` gets what makes
    them unfit to keep."""
    # Chains run at two sizes whose costs differ by far more than the noise
    # (the fixed cost dominates the first, the cost per element the second:
    # ~0.3 ms of llvmpipe's at 65,536); moving values is timed at a size
    # where the bytes dominate. Every size is one block of the default
    # configuration (4M elements).
    # Three depths tell a place's cost per operation whatever the size
    # (planning it) from its cost per element and operation.
    small, big, move = 1024, 1 << 16, 1 << 18
    pairs = (1, 16, _core.COST_MODEL_SHALLOW_OPS // 2)
    data = {n: numpy.linspace(0.0, 1.0, n, dtype=numpy.float32) for n in (small, big, move)}
    arrays = {n: _core.array_from_numpy(data[n]) for n in (small, big, move)}

    def figure(name, run, repetitions=3):
        return _agreed_ns(run, repetitions, name, notes)

    # Building a node from Python costs the same wherever it runs: it is
    # measured apart and taken out of each place's times.
    build = figure("lazy node", lambda: chain(arrays[small], 32)) / 64

    # The host engine's passes end in host memory; the device's are timed
    # left on the device, the work done (evaluate_on_device waits for it:
    # the driver's finish),
    # and reading back is priced apart below: taken out of passes read
    # back, its estimate's noise (a difference of two times) went to the
    # cost per element, and a calibration was refused for a device element
    # at 0.002 ns.
    on_host = numpy.asarray

    def on_device(x):
        _core.evaluate_on_device(x, wait=True)

    def place(where, threshold, run):
        points = []
        for n in (small, big):
            for k in pairs:
                _core.set_host_threshold(threshold)
                t = figure(f"{where} chain of {2 * k} at {n}", lambda: run(chain(arrays[n], k)))
                points.append((n, 2 * k, max(1.0, t - 2 * k * build)))
        return points

    host = place("host engine", 1 << 62, on_host)
    device = place("device", 0, on_device)

    def place_math(where, threshold, run):
        _core.set_host_threshold(threshold)
        t = figure(f"{where} math chain", lambda: run(_math_chain(arrays[big], MATH_OPS)))
        return max(1.0, t - MATH_OPS * build)

    host_math = place_math("host engine", 1 << 62, on_host)
    device_math = place_math("device", 0, on_device)

    # A deep expression on the host engine (more registers per element:
    # smaller chunks, more cache traffic), at a quarter of the size (it is
    # 10x the work). The device's cost per operation stays what the
    # shallow chains measured: a shader's work grows with its operations
    # alone, and compiling one of 1,024 operations takes llvmpipe ~0.5 s.
    deep_n, deep_pairs = big // 4, _core.COST_MODEL_DEEP_OPS // 2
    _core.set_host_threshold(1 << 62)
    host_deep = max(1.0, figure("host engine deep chain",
                                lambda: numpy.asarray(chain(arrays[big][:deep_n], deep_pairs)), 2)
                    - 2 * deep_pairs * build)
    # Moving values, each way: the device pass on fresh host data (uploaded
    # first) against the same pass on data the device holds already; and
    # the pass read back against the pass left on the device.
    _core.set_host_threshold(0)
    fresh = figure("upload", lambda: numpy.asarray(chain(_core.array_from_numpy(data[move].copy()), 1)))
    warm = figure("resident", lambda: numpy.asarray(chain(arrays[move], 1)))
    upload = max(0.0, (fresh - warm) / (move * 4))
    kept = {n: figure(f"device pass kept at {n}", lambda n=n: on_device(chain(arrays[n], 1)))
            for n in (small, move)}
    read = {n: figure(f"device pass read at {n}", lambda n=n: numpy.asarray(chain(arrays[n], 1)))
            for n in (small, move)}
    download = max(0.0, ((read[move] - kept[move]) - (read[small] - kept[small])) / ((move - small) * 4))
    readback = max(0.0, (read[small] - kept[small]) - small * 4 * download)

    h_dispatch, h_per_op, h_op = _fit([([1.0, ops, n * ops], t) for n, ops, t in host])
    deep_ops = 2 * deep_pairs
    h_op_deep = max(0.0, (host_deep - h_dispatch - deep_ops * h_per_op) / (deep_n * deep_ops))
    d_dispatch, d_per_op, d_elem, d_op = _fit([([1.0, ops, n, n * ops], t) for n, ops, t in device])
    if d_elem == 0.0:
        d_elem = _per_element_left(device, d_op)
    # The fit can hand the whole fixed cost to the per-operation term (noise
    # on a small intercept; a dispatch of 0 is then refused as implausible):
    # the smallest pass left on the device is a dispatch and little else.
    d_dispatch = max(d_dispatch, kept[small] - 2 * d_per_op - small * (d_elem + 2 * d_op))
    # Math functions: what a chain of them costs beyond each place's
    # fixed and per-element costs.
    h_math = max(0.0, (host_math - h_dispatch - MATH_OPS * h_per_op) / (big * MATH_OPS))
    d_math = max(0.0, (device_math - d_dispatch - MATH_OPS * d_per_op - big * d_elem) / (big * MATH_OPS))
    # Matrix products: NumPy's BLAS against the device's fused product.
    h = numpy.random.default_rng(0).random((PRODUCT_N, PRODUCT_N), dtype=numpy.float32)
    g = _core.array_from_numpy(h)
    flops = 2.0 * PRODUCT_N ** 3
    blas = figure("BLAS product", lambda: numpy.matmul(h, h.T)) / flops
    device_product = figure("device product", lambda: numpy.asarray(_device_product(g)), 2) / flops
    tiled = _tiled_forms(figure)
    # NumPy's own cost per op: single-threaded work, so its wall time over
    # this thread's CPU time is a busy check inside the calibration (the
    # ones before and after miss a neighbour that came and went).
    npx = {n: numpy.linspace(0.0, 1.0, n, dtype=numpy.float32) for n in NUMPY_SIZES}
    (np_dispatch, np_elem), share = _wall_over_cpu(lambda: _fit(
        [([1.0, n], figure(f"NumPy op at {n}", lambda n=n: numpy.multiply(npx[n], 1.0001), 9)) for n in NUMPY_SIZES]))
    if share > BUSY_RATIO:
        notes.append(f"the machine was busy: this thread got 1/{share:.2f} of its core while NumPy's op was timed")
    return {"host_dispatch_ns": h_dispatch, "host_ns_per_op": h_per_op, "host_ns_per_element_op": h_op,
            "host_ns_per_element_op_deep": h_op_deep, "host_ns_per_element_math": h_math,
            "device_dispatch_ns": d_dispatch, "device_readback_ns": readback, "device_ns_per_op": d_per_op,
            "device_ns_per_element": d_elem,
            "device_ns_per_element_op": d_op, "device_ns_per_element_math": d_math,
            "upload_ns_per_byte": upload, "download_ns_per_byte": download,
            "numpy_dispatch_ns": np_dispatch, "numpy_ns_per_element": np_elem,
            "blas_ns_per_flop": blas, "device_product_ns_per_flop": device_product,
            "lazy_node_ns": build, **tiled}


def _tiled_forms(figure):
    """The OpenGL driver's product in each tiled form, in ns per flop
    ({"device_shared_tiles_ns_per_flop": ..., "device_registers_tiles_ns_per_flop":
    ...}; empty on other drivers): which form a device suits is measured,
    not assumed (a CPU renderer loads shared memory a lane at a time; on a
    GPU either may win)."""
    if _core.driver_name() != "opengl":
        return {}
    rng = numpy.random.default_rng(1)
    n = PRODUCT_N
    while True:
        g = _core.array_from_numpy(rng.random((n, n), dtype=numpy.float32))
        t = figure(f"device product at {n}", lambda: numpy.asarray(_device_product(g)), 2)
        if t >= TILED_TUNING_NS or n >= TILED_MAX_N:
            break
        n *= 2
    found = {}
    try:
        for form in ("shared", "registers"):
            _core.set_driver_option("tiled_products", form)
            t = figure(f"device product at {n}, {form} tiles", lambda: numpy.asarray(_device_product(g)), 2)
            found[f"device_{form}_tiles_ns_per_flop"] = t / (2.0 * n ** 3)
    finally:
        _core.set_driver_option("tiled_products", "default")
    return found


def faster_tiled_form(params):
    """"shared" or "registers", whichever product form `params` measured
    faster; "default" (the driver's rule) where they hold no such figures."""
    shared = (params or {}).get("device_shared_tiles_ns_per_flop")
    registers = (params or {}).get("device_registers_tiles_ns_per_flop")
    if not shared or not registers:
        return "default"
    return "shared" if shared < registers else "registers"


def implausible(params, kind):
    """What in `params` is out of the range plausible for this kind of
    device (PLAUSIBLE), as notes; empty: all plausible."""
    notes = []
    for name, limits in PLAUSIBLE.items():
        lo, hi = limits[kind] if isinstance(limits, dict) else limits
        value = params.get(name)
        if value is None or not lo <= value <= hi:
            notes.append(f"{name} = {value!r} is outside {lo:g}..{hi:g} ns for a {kind}")
    return notes


def eager_crossover(p):
    """Up to how many elements NumPy at once beats a lazy node: NumPy's op
    costs its dispatch plus its per-element cost; the lazy op costs building
    the node, its share of an evaluation's fixed cost, planning it, and its
    per-element cost on the cheaper place."""
    device_fixed = p["device_dispatch_ns"] + p["device_readback_ns"]
    lazy_fixed = (p["lazy_node_ns"] + min(p["host_dispatch_ns"], device_fixed) / OPS_PER_EVALUATION
                  + min(p["host_ns_per_op"], p["device_ns_per_op"]))
    lazy_elem = min(p["host_ns_per_element_op"], p["device_ns_per_element"] + p["device_ns_per_element_op"])
    gain = lazy_fixed - p["numpy_dispatch_ns"]
    slope = p["numpy_ns_per_element"] - lazy_elem
    if gain <= 0:
        return EAGER_LIMITS[0]
    if slope <= 0:
        return EAGER_LIMITS[1]
    return int(min(EAGER_LIMITS[1], max(EAGER_LIMITS[0], gain / slope)))
