"""The cost model of this machine: measured once (the timing itself is
_measurement.py's), kept on disk, corrected by what it then sees.

Base layer (imports only _core, _environment, _measurement and _version). Three places can run an operation: NumPy
at once (small work on host values), the host engine (the software driver,
threaded, in place on host memory) and the device. Which is cheapest
depends on the machine: on a CPU renderer (llvmpipe) every shader
invocation costs ~7-10 ns on its own, on a GPU a dispatch and a readback
cost more than a small evaluation computes. So the parameters are
measured, not assumed: a short calibration (well under a second) times each
place on this machine at the first use of a driver, and keeps the result in
the user's cache directory.

What the parameters decide:
  - the host engine or the device, for every evaluation wanted in host
    memory (the core's CostModel: per place a fixed cost per evaluation,
    costs per element and per element-operation, the device's readback
    round trip and its transfers each way, priced by where the inputs
    live);
  - the eager threshold: up to how many elements an op on host values
    runs in NumPy at once instead of as a lazy node;
  - matrix products and linear algebra: NumPy's BLAS on the host or the
    device's product, by the time per flop each took (_placement.py).

A model is valid only for what it measured, and no run can poison it:
  - it always measures the default configuration (block size, cache
    budget, driver options), whatever the process's own settings are; what
    cannot be put back for the measurement (settings in the environment
    that drivers read as they load) makes a model for this process only;
  - each figure is measured until two rounds agree within 25%, and the
    whole against ranges plausible for the kind of device; a machine found
    busy (this thread got less than its core) or a figure out of range
    gives a model for this process only, never saved, and cost_model() says
    why;
  - the key it is saved under names gpupy's and NumPy's versions, the
    driver and device, their limits, the host engine and the CPU;
  - processes that start at once measure once: the first takes a lock on
    the model's file, the others wait for it briefly, else start with the
    driver's judgement and take the model when it is there;
  - every evaluation the model places is timed against its prediction
    (core/runtime/placement_feedback.hpp): parameters persistently off by
    more than 2x are re-estimated in the core, and saved here (a process
    in the default configuration only).

GPUPY_CALIBRATION: "auto" (the default: load, else measure and save),
"refresh" (measure again now), "off" (no calibration: the driver's own
judgement and the default eager threshold). GPUPY_CACHE_DIR sets the
directory (default $XDG_CACHE_HOME/gpupy, else ~/.cache/gpupy). Explicit
settings win over the model: GPUPY_HOST_ELEMENTS / set_host_threshold,
GPUPY_EAGER_ELEMENTS / set_eager_threshold, GPUPY_PLACEMENT.
"""

import atexit
import fcntl
import hashlib
import json
import os
import platform
import threading
import time

import numpy

from . import _core, _environment, _measurement
from ._version import __version__

FORMAT = 7
_MODES = ("auto", "refresh", "off")

# How long a process waits for another's calibration before it starts with
# the driver's judgement (and takes the model once it is there).
WAIT_SECONDS = 1.0

# Settings a driver reads from the environment as it loads: a measurement
# cannot put their defaults back, so a model measured with one set is this
# process's alone.
FIXED_AT_LOAD = ("GPUPY_SOFTWARE_MAX_OPS", "GPUPY_SOFTWARE_MAX_BYTES", "GPUPY_GL_FLOAT_PROBE",
                 "GPUPY_FLOAT32_SUBNORMALS", "GPUPY_GL_DUMP_SHADERS", "GPUPY_GL_CHECK_PROGRAM_KEYS")


def _model(source, path=None, parameters=None, eager_threshold=None, key=None, seconds=None, notes=(), attempts=0):
    """What cost_model() reports (see there)."""
    return {"source": source, "path": path, "parameters": parameters, "eager_threshold": eager_threshold,
            "key": key, "seconds": seconds, "notes": list(notes), "attempts": attempts}


_state = _model("not calibrated")
# Each driver's model once per process: switching drivers back and forth
# (the test suite does, per test) reads no file.
_by_driver = {}
# Whether the user set the eager threshold (then the model leaves it alone).
_eager_set_by_user = _core.eager_threshold_set_in_environment()
# Driver options this process set (gpupy.set_driver_option): (driver, key) -> value.
_options_set = {}


def note_user_eager_threshold():
    global _eager_set_by_user
    _eager_set_by_user = True


def note_driver_option(driver, key, value):
    """Records an option set on a driver, so a measurement puts its default
    back (and a correction is not saved while it is in place)."""
    if str(value) == "default":
        _options_set.pop((driver, key), None)
    else:
        _options_set[(driver, key)] = value


def cache_dir():
    explicit = _environment.text("GPUPY_CACHE_DIR")
    if explicit:
        return explicit
    base = _environment.text("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
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


# The driver's description lines the measurements depend on: the device,
# and the limits that decide how work is cut into evaluations.
_KEY_LINES = ("driver", "vendor", "renderer", "gl_version", "device", "threads", "kernels", "cpu_renderer",
              "limit_textures", "limit_uniform_components", "limit_instructions", "limit_ops", "max_ops", "max_bytes")


def _described(text):
    lines = {}
    for line in (text or "").splitlines():
        k, _, v = line.partition(":")
        if k.strip() in _KEY_LINES:
            lines[k.strip()] = v.strip()
    return lines


def machine_key():
    """What the measurements depend on, in the default configuration that
    they are made in; a change measures again."""
    return {"format": FORMAT, "gpupy": __version__, "numpy": numpy.__version__, "driver": _core.driver_name(),
            "device": _described(_core.driver_describe()), "host_engine": _described(_core.host_engine_describe()),
            "block_size": _core.DEFAULT_BLOCK_SIZE, "cache_bytes": _core.DEFAULT_CACHE_BYTES,
            "cpu": _cpu_model(), "cpus": os.cpu_count()}


def _path_for(key):
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    return os.path.join(cache_dir(), f"calibration-{key['driver']}-{digest}.json")


def device_kind():
    """"cpu renderer" (llvmpipe, or the software driver: the CPU) or "gpu"."""
    described = _described(_core.driver_describe())
    return "gpu" if described.get("cpu_renderer") == "no" else "cpu renderer"


# --- the default configuration ------------------------------------------------------------

def configuration_problems():
    """Why this process cannot measure (or correct) the default
    configuration: settings a driver read from the environment as it
    loaded, options set on the host engine while another driver is active."""
    problems = [f"{name} is set" for name in FIXED_AT_LOAD if _environment.is_set(name)]
    active = _core.driver_name()
    problems += [f"the {driver} driver's option {key} is {value}" for (driver, key), value in _options_set.items()
                 if driver != active]
    return problems


def running_default_configuration():
    """Whether the process runs as a default one would: its measurements
    describe the default configuration (so a correction may be saved)."""
    return (not configuration_problems() and not _options_set and _core.block_size() == _core.DEFAULT_BLOCK_SIZE
            and _core.cache_budget() == _core.DEFAULT_CACHE_BYTES)


class _DefaultConfiguration:
    """The default block size, cache budget and driver options while a
    measurement runs, and the process's own settings back after it."""

    def __enter__(self):
        self.saved = (_core.block_size(), _core.cache_budget(), _core.host_threshold(), _core.eager_threshold())
        self.options = {key: value for (driver, key), value in _options_set.items() if driver == _core.driver_name()}
        _core.set_block_size(_core.DEFAULT_BLOCK_SIZE)
        _core.set_cache_budget(_core.DEFAULT_CACHE_BYTES)
        for key in self.options:
            _core.set_driver_option(key, "default")
        # The suite's check of program keys (GPUPY_GL_CHECK_PROGRAM_KEYS)
        # regenerates every program an evaluation finds: off while measuring,
        # so that a process of the suite measures what a user's would.
        self.checking_keys = _core.driver_name() == "opengl" and _environment.is_set("GPUPY_GL_CHECK_PROGRAM_KEYS")
        if self.checking_keys:
            _core.set_driver_option("check_program_keys", "0")
        _core.set_eager_threshold(0)
        return self

    def __exit__(self, *exc):
        if self.checking_keys:
            _core.set_driver_option("check_program_keys", "default")
        block, budget, host, eager = self.saved
        for key, value in self.options.items():
            _core.set_driver_option(key, str(value))
        _core.set_block_size(block)
        _core.set_cache_budget(budget)
        _core.set_host_threshold(host)
        _core.set_eager_threshold(eager)
        return False


# --- measuring ------------------------------------------------------------------------------

def measure():
    """Times each place on this machine in the default configuration;
    returns (parameters, eager threshold, notes): the notes say what makes
    the figures unfit to keep (empty: fit)."""
    notes = []
    before = _measurement.busy_ratio()
    with _DefaultConfiguration():
        params = _measurement.figures(notes)
    busy = max(before, _measurement.busy_ratio())
    if busy > _measurement.BUSY_RATIO:
        notes.append(f"the machine was busy: this thread got 1/{busy:.2f} of its core while measuring")
    notes += _measurement.implausible(params, device_kind())
    return params, _measurement.eager_crossover(params), notes


# --- the file -------------------------------------------------------------------------------

def _load(path, key):
    try:
        with open(path) as f:
            saved = json.load(f)
    except (OSError, ValueError):
        return None
    if saved.get("key") != key or not isinstance(saved.get("parameters"), dict):
        return None
    if any(name not in saved["parameters"] for name in _core.cost_model_parameters()):
        return None
    if _measurement.implausible(saved["parameters"], device_kind()):
        return None  # written by hand or by an older gpupy: measured again, and replaced
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


class _Lock:
    """An exclusive lock on a model's file (its ".lock" beside it), so that
    processes starting at once measure once."""

    def __init__(self, path):
        self.fd = None
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.fd = os.open(f"{path}.lock", os.O_CREAT | os.O_RDWR, 0o644)
        except OSError:
            self.fd = None  # no lock where the directory is not writable: nothing is saved there either

    def take(self, block):
        if self.fd is None:
            return True
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
            return True
        except OSError:
            return False

    def release(self):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


# --- using a model ----------------------------------------------------------------------------

def _use(model, remember=True):
    """Makes `model` the one cost_model() describes and the core uses (and,
    with `remember`, the active driver's for the rest of the process)."""
    _state.clear()
    _state.update(model)
    if remember:
        _by_driver[_core.driver_name()] = dict(model)
    hand_to_core()
    if _core.driver_name() == "opengl":
        # The product form this device ran faster (an explicit
        # tiled_products setting still wins, in the driver).
        _core.set_driver_option("measured_tiles", _measurement.faster_tiled_form(model["parameters"]))
    if model["parameters"] is not None and not _eager_set_by_user:
        _core.set_eager_threshold(model["eager_threshold"])


def calibrate(refresh=False):
    """Loads the active driver's cost model, or measures it (and saves it
    where it may be kept), and hands it to the core. Never raises: a
    failure leaves the driver's own judgement in place and says why in
    cost_model()."""
    how = "refresh" if refresh else _environment.choice("GPUPY_CALIBRATION", _MODES)
    if how == "refresh":
        _corrected_while_busy[0] = False  # a new model: its corrections are judged afresh
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
            _use(_loaded(path, key, saved))
            return
        lock = _Lock(path)
        if not lock.take(block=False):
            _wait_for_another(lock, path, key)
            return
        try:
            saved = None if how == "refresh" else _load(path, key)  # (measured while this one waited)
            if saved is not None:
                _use(_loaded(path, key, saved))
                return
            _measure_and_keep(path, key)
        finally:
            lock.release()
    except Exception as exc:  # never let a measurement break import
        _use(_model(f"failed ({type(exc).__name__}: {exc}); the driver's judgement decides"))


def _loaded(path, key, saved):
    return _model("loaded", path, saved["parameters"], saved["eager_threshold"], key, saved.get("seconds"),
                  saved.get("notes", ()))


# Measurements taken before giving up on saving one: a neighbour that came
# and went disturbs one measurement (a busy core, two rounds that happened
# to agree on a bad figure), seldom two in a row.
ATTEMPTS = 2


def _measure_and_keep(path, key):
    t0 = time.perf_counter()
    problems = configuration_problems()
    for attempt in range(1, ATTEMPTS + 1):
        params, eager, notes = measure()
        if problems or not notes:
            break  # (a configuration problem stays whatever is measured)
    seconds = time.perf_counter() - t0
    if notes or problems:
        why = "; ".join(problems + notes)
        _use(_model(f"measured (for this process only, not saved: {why})", None, params, eager, key, seconds,
                    problems + notes, attempt))
        return
    record = {"key": key, "parameters": params, "eager_threshold": eager, "seconds": seconds,
              "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "corrections": 0}
    if _save(path, record):
        _use(_model("measured", path, params, eager, key, seconds, attempts=attempt))
    else:
        _use(_model("measured (not saved: the cache directory is not writable)", None, params, eager, key, seconds,
                    attempts=attempt))


def _wait_for_another(lock, path, key):
    """Another process is measuring this model: wait for it briefly; else
    start with the driver's judgement, and take its model when it is there
    (a thread waits on the lock; the core is handed the model between two
    of this process's calls, under the GIL)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.02)
        if lock.take(block=False):
            lock.release()
            saved = _load(path, key)
            if saved is not None:
                _use(_loaded(path, key, saved))
                return
            break
    driver = _core.driver_name()
    _use(_model("waiting for another process's calibration; the driver's judgement decides meanwhile", path,
                key=key), remember=False)

    def take_when_there():
        lock.take(block=True)
        lock.release()
        saved = _load(path, key)
        if saved is not None and _core.driver_name() == driver and _state["parameters"] is None:
            _use(_loaded(path, key, saved))

    threading.Thread(target=take_when_there, name="gpupy-calibration-wait", daemon=True).start()


def hand_to_core():
    """Gives the core the model cost_model() describes (again, after a test
    replaced it with _core.set_cost_model); none: the driver judges."""
    p = _state["parameters"]
    _core.set_cost_model({k: p[k] for k in _core.cost_model_parameters()} if p else {})


def _note(text):
    """Adds a note to what cost_model() says of the model in use."""
    _state["notes"] = list(_state.get("notes") or []) + [text]


def cost_model():
    """The cost model in use: where it came from ("loaded", "measured",
    "measured (for this process only, not saved: why)", "off", "failed
    (...)", "waiting for another process's calibration"), its file, its
    parameters in nanoseconds (as corrected by what evaluations measured),
    the eager threshold it derived, the key it was measured under, how long
    the measurement took, how many measurements it took (a disturbed one is
    taken again once; 0: none in this process), and notes on what made it
    unfit to keep."""
    model = dict(_state)
    corrected = _core.corrected_cost_model()
    if corrected and model["parameters"] is not None:
        model["parameters"] = dict(model["parameters"], **corrected)
    model["feedback"] = _core.placement_feedback()
    return model


# --- corrections --------------------------------------------------------------------------

_SAVE_EVERY = 2.0  # seconds between saves of a corrected model (and one at exit)
_last_save = [0.0]
_unsaved = [False]
# Set once a correction came while the machine was busy: what the
# evaluations measured then describes the load, not the machine, so this
# process's corrections are its own.
_corrected_while_busy = [False]


def _corrected():
    """The core corrected the model (placement_feedback.hpp): its eager
    threshold follows, and the corrected parameters are saved -- from a
    process running the default configuration only, whose measurements
    describe what a default process sees."""
    p = _state["parameters"]
    if p is None:
        return
    params = dict(p, **_core.corrected_cost_model())
    _state["parameters"] = params
    _state["eager_threshold"] = _measurement.eager_crossover(params)
    if _by_driver.get(_core.driver_name()) is not None:
        _by_driver[_core.driver_name()].update(parameters=params, eager_threshold=_state["eager_threshold"])
    if not _eager_set_by_user:
        _core.set_eager_threshold(_state["eager_threshold"])
    _unsaved[0] = True
    if not _corrected_while_busy[0] and running_default_configuration():
        busy = _measurement.busy_ratio()
        if busy > _measurement.BUSY_RATIO:
            _corrected_while_busy[0] = True
            _note(f"a correction came while the machine was busy (this thread got 1/{busy:.2f} of its core): "
                  "this process's corrections are not saved")
    if time.monotonic() - _last_save[0] >= _SAVE_EVERY:
        save_corrections()


def save_corrections():
    """Writes the corrected model over its file, where it came from one and
    this process runs the default configuration."""
    if not _unsaved[0] or _state.get("path") is None or _state["parameters"] is None:
        return
    if not running_default_configuration() or not _state["source"].startswith(("loaded", "measured")):
        return
    if _corrected_while_busy[0]:
        return
    path, key = _state["path"], _state["key"]
    lock = _Lock(path)
    if not lock.take(block=False):
        return  # another process writes it now; this one tries again later
    try:
        record = _load(path, key)
        if record is None:
            return
        record["parameters"].update(_state["parameters"])
        record["eager_threshold"] = _state["eager_threshold"]
        record["corrections"] = record.get("corrections", 0) + 1
        record["corrected"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if _save(path, record):
            _unsaved[0] = False
            _last_save[0] = time.monotonic()
    finally:
        lock.release()


# --- probes -------------------------------------------------------------------------------

# A probe times chains of 2 and 32 operations at these sizes (placement_feedback.hpp:
# a place the model sends no work to is checked before a costly decision
# rests on it). Milliseconds on llvmpipe, microseconds on a GPU.
PROBE_SIZES = (1024, 1 << 16)
PROBE_PAIRS = (1, 16)
# ... as the core sees them (Work: elements, ops, math functions, result,
# upload and download bytes): resident float32 inputs, results read back.
PROBE_WORKS = [(n, 2 * k, 0, 4 * n, 0, 0) for n in PROBE_SIZES for k in PROBE_PAIRS]


def probe(places):
    """Times a few small evaluations on each of `places` ("host engine",
    "device") and hands them to the core, which corrects the model where
    they disagree with it. Called by the core once an evaluation whose
    decisions wanted it is complete; never raises (a failure is noted in
    cost_model()["notes"]); leaves stats() as it was."""
    for place in places:
        try:
            rows = []
            _core.uncounted(lambda place=place: rows.extend(_probe_rows(place)))
            _core.note_probe(place, rows)
        except Exception as exc:  # a probe never breaks the operation that asked for it
            _note(f"probe of the {place} failed: {type(exc).__name__}: {exc}")


def _probe_rows(place):
    # Under blocks or a cache smaller than the probe's arrays the probe
    # would time blocking, not the place: no rows (the place counts as
    # probed, and is judged by the model alone).
    if _state["parameters"] is None or _core.block_size() < PROBE_SIZES[-1] or \
            _core.cache_budget() < 64 * PROBE_SIZES[-1]:
        return []
    build = _state["parameters"]["lazy_node_ns"]
    saved = (_core.host_threshold(), _core.eager_threshold())
    _core.set_eager_threshold(0)
    _core.set_host_threshold(1 << 62 if place == "host engine" else 0)
    try:
        rows = []
        inputs = {n: _core.array_from_numpy(numpy.linspace(0.0, 1.0, n, dtype=numpy.float32)) for n in PROBE_SIZES}
        for work in PROBE_WORKS:
            n, ops = work[0], work[1]
            run = lambda: numpy.asarray(_measurement.chain(inputs[n], ops // 2))  # noqa: E731
            run()  # warm: the program compiled, the input on the device
            # The small rows tell the fixed costs, microseconds a busy
            # neighbour can multiply: the fastest of more runs.
            repetitions = 9 if n == PROBE_SIZES[0] else 3
            rows.append(work + (max(1.0, _measurement.round_ns(run, repetitions) - ops * build),))
        return rows
    finally:
        _core.set_host_threshold(saved[0])
        _core.set_eager_threshold(saved[1])


_core.set_model_corrected_hook(_corrected)
_core.set_probe_hook(probe)
atexit.register(save_corrections)
