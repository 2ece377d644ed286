"""Placement by cost: the calibrated cost model of gpupy/_calibration.py.

What is checked, with counters and files (never with timings):
  - the core places evaluations wanted in host memory between the host
    engine and the device by the cost model it was given, counts each
    decision with its reason, and lets a host threshold or the placement
    setting override the model;
  - the calibration measures once, saves under the cache directory keyed by
    versions, driver, device and CPU, loads it in the next process,
    measures again when the key changes, and never breaks import;
  - the eager threshold derived from the parameters is the crossover of
    NumPy's cost per op and a lazy node's.
"""

import json
import os

import numpy as np
import pytest

import gpupy as gp
from fresh_python import run_python
from gpupy import _calibration, _core, _measurement, _placement

CHEAP_HOST = {"host_dispatch_ns": 1.0, "host_ns_per_op": 0.0, "host_ns_per_element_op": 0.001, "host_ns_per_element_op_deep": 0.001,
              "host_ns_per_element_math": 0.01,
              "device_dispatch_ns": 1e9, "device_ns_per_op": 1e3, "device_ns_per_element": 1e3, "device_ns_per_element_op": 1.0,
              "device_ns_per_element_math": 1.0, "upload_ns_per_byte": 1.0, "download_ns_per_byte": 1.0,
              "device_readback_ns": 0.0}
# Matrix products as measured on a CPU renderer: BLAS far cheaper.
PRODUCTS = {"blas_ns_per_flop": 0.02, "device_product_ns_per_flop": 5.0}
CHEAP_HOST.update(PRODUCTS)
CHEAP_DEVICE = {"host_dispatch_ns": 1e9, "host_ns_per_op": 1e3, "host_ns_per_element_op": 1e3, "host_ns_per_element_op_deep": 1e3,
                "host_ns_per_element_math": 1e3,
                "device_dispatch_ns": 1.0, "device_ns_per_op": 0.0, "device_ns_per_element": 0.001, "device_ns_per_element_op": 0.001,
                "device_ns_per_element_math": 0.001, "upload_ns_per_byte": 0.0, "download_ns_per_byte": 0.0,
                "device_readback_ns": 0.0, **PRODUCTS}
# Per element: arithmetic 2 ns on the host, 1 on the device; math functions
# 1 ns on the host, 100 on the device.
CHEAP_HOST_MATH = {"host_dispatch_ns": 1000.0, "host_ns_per_op": 0.0, "host_ns_per_element_op": 2.0,
                   "host_ns_per_element_op_deep": 2.0, "host_ns_per_element_math": 1.0,
                   "device_dispatch_ns": 1000.0, "device_ns_per_op": 0.0, "device_ns_per_element": 0.0, "device_ns_per_element_op": 1.0,
                   "device_ns_per_element_math": 100.0, "upload_ns_per_byte": 0.0, "download_ns_per_byte": 0.0,
                   "device_readback_ns": 0.0, **PRODUCTS}


@pytest.fixture
def model(gpu):
    """The cost model decides (no host threshold); the process's own model
    and placement come back afterwards."""
    gp.set_host_threshold(None)
    yield gpu
    gp.set_placement("auto")
    _calibration.hand_to_core()


def evaluate_on_host(n=5000):
    h = np.linspace(-2.0, 2.0, n)
    a = gp.asarray(h)
    gp.reset_stats()
    got = np.asarray(a * 3.0 + 1.0)
    np.testing.assert_array_equal(got, h * 3.0 + 1.0)
    return gp.stats()


def decisions(stats):
    p = stats["placements"]
    return {(where, why): n for where in ("host engine", "device") for why, n in p[where].items()}


@pytest.mark.parametrize("params, where", [(CHEAP_HOST, "host engine"), (CHEAP_DEVICE, "device")])
def test_the_cost_model_places_evaluations(model, params, where):
    _core.set_cost_model(params)
    s = evaluate_on_host()
    if model.name == "software":
        # The software driver computes on host memory itself: nothing to place.
        assert decisions(s) == {}
        return
    assert decisions(s) == {(where, "cost model"): 1}
    if where == "host engine":
        assert s["host_engine_evaluations"] >= 1 and s["evaluations"] == 0
    else:
        assert s["host_engine_evaluations"] == 0 and s["evaluations"] >= 1


def test_math_functions_are_priced_apart(model):
    # Arithmetic is cheaper on the device, math functions on the host: one
    # model, two answers, by the class of the work.
    _core.set_cost_model(CHEAP_HOST_MATH)
    h = np.linspace(-2.0, 2.0, 5000)
    a = gp.asarray(h)
    for expression, where in ((lambda xp, x: x * 3.0 + 1.0, "device"),
                              (lambda xp, x: xp.sin(x) + 1.0, "host engine")):
        gp.reset_stats()
        np.testing.assert_allclose(np.asarray(expression(gp, a)), expression(np, h), rtol=1e-15)
        if model.name != "software":
            assert decisions(gp.stats()) == {(where, "cost model"): 1}


def test_without_a_model_the_driver_judges(model):
    _core.set_cost_model({})
    s = evaluate_on_host()
    if model.name != "software":
        assert sum(n for (_, why), n in decisions(s).items() if why == "driver's judgement") == 1
        assert all(why == "driver's judgement" for _, why in decisions(s))


@pytest.mark.parametrize("forced, where", [("host", "host engine"), ("device", "device")])
def test_the_placement_setting_overrides_the_model(model, forced, where):
    _core.set_cost_model(CHEAP_DEVICE if forced == "host" else CHEAP_HOST)
    gp.set_placement(forced)
    s = evaluate_on_host()
    if model.name != "software":
        assert decisions(s) == {(where, "placement setting"): 1}


def test_a_host_threshold_overrides_everything(model):
    _core.set_cost_model(CHEAP_HOST)
    gp.set_placement("host")
    gp.set_host_threshold(10)  # 5000 elements: above it, so the device
    s = evaluate_on_host()
    if model.name != "software":
        assert decisions(s) == {("device", "host threshold"): 1}


def test_eager_numpy_ops_are_counted_as_placements(gpu):
    gp.set_eager_threshold(100)
    a = gp.asarray(np.arange(10.0))
    np.asarray(a)
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(a * 2 + 1), np.arange(10.0) * 2 + 1)
    s = gp.stats()
    assert s["eager_numpy_ops"] == 2
    assert s["placements"]["numpy"] == {"small ops on host values (eager threshold)": 2}
    assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0


def test_blas_placements_appear_among_placements(gpu):
    a = gp.asarray(np.eye(3))
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(a @ a), np.eye(3))
    assert gp.stats()["placements"]["numpy"] == {"linear algebra (BLAS/LAPACK)": 1}


def test_other_host_placements_are_not_called_linear_algebra(gpu):
    a = gp.asarray(np.arange(10.0))
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(gp.delete(a, 3)), np.delete(np.arange(10.0), 3))
    np.testing.assert_array_equal(np.asarray(gp.linalg.inv(gp.asarray(np.eye(2)) * 2)), np.eye(2) / 2)
    s = gp.stats()
    assert s["placements"]["numpy"] == {"linear algebra (BLAS/LAPACK)": 1, "NumPy's function on host values": 1}
    assert s["host_placements_by_function"] == {"delete": 1, "linalg.inv": 1}


# --- the eager crossover --------------------------------------------------------------------------

BASE = {"lazy_node_ns": 1000.0, "host_dispatch_ns": 8000.0, "device_dispatch_ns": 50000.0, "device_readback_ns": 0.0,
        "host_ns_per_op": 0.0, "device_ns_per_op": 0.0,
        "host_ns_per_element_op": 0.1, "device_ns_per_element": 5.0, "device_ns_per_element_op": 0.1,
        "numpy_dispatch_ns": 600.0, "numpy_ns_per_element": 0.2}


def test_the_eager_threshold_is_the_crossover():
    # Lazy: 1000 + 8000/4 = 3000 ns fixed, 0.1 ns an element; NumPy: 600 ns
    # and 0.2 ns: equal at (3000 - 600) / (0.2 - 0.1) = 24,000 elements.
    assert _measurement.eager_crossover(BASE) == 24000
    # Planning the op (the cheaper place's, 600 ns) is part of its fixed cost:
    # (3600 - 600) / 0.1 = 30,000.
    assert _measurement.eager_crossover(dict(BASE, host_ns_per_op=600.0, device_ns_per_op=900.0)) == 30000


def test_the_eager_threshold_stays_within_the_measured_sizes():
    cheap_numpy = dict(BASE, numpy_ns_per_element=0.05)  # NumPy never slower per element
    assert _measurement.eager_crossover(cheap_numpy) == _measurement.EAGER_LIMITS[1]
    cheap_lazy = dict(BASE, numpy_dispatch_ns=1e6)  # a lazy node always cheaper
    assert _measurement.eager_crossover(cheap_lazy) == 0


# --- the calibration file -------------------------------------------------------------------------

def run_code(code, cache_dir, **env):
    """`code` in a fresh process against the gpupy under test, with its cost
    model kept in `cache_dir` (busy-machine detection off: these tests are
    about the file, tests/test_placement_model.py about the checks); returns
    the last line of output as JSON."""
    # (and the drivers' test modes, which the suite may run in)
    model_settings = ("GPUPY_EAGER_ELEMENTS", "GPUPY_HOST_ELEMENTS", "GPUPY_PLACEMENT",
                      "GPUPY_CALIBRATION") + _calibration.FIXED_AT_LOAD
    environment = {k: v for k, v in os.environ.items() if k not in model_settings}
    environment.update(GPUPY_CACHE_DIR=str(cache_dir), GPUPY_CALIBRATION_BUSY_RATIO="1000",
                       GPUPY_CALIBRATION_AGREEMENT="1000", **env)
    out = run_python(["-c", "import json, gpupy as gp\n" + code], env=environment, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = "m = gp.cost_model(); print(json.dumps([m, gp.eager_threshold(), gp.driver()]))"


def test_the_calibration_is_measured_once_then_loaded(tmp_path):
    first, eager, driver = run_code(REPORT, tmp_path)
    assert first["source"] == "measured"
    assert first["attempts"] in (1, 2)  # (2: the first was disturbed)
    path = first["path"]
    assert os.path.dirname(path) == str(tmp_path) and os.path.basename(path).startswith(f"calibration-{driver}-")
    with open(path) as f:
        saved = json.load(f)
    assert saved["key"] == first["key"] and saved["parameters"] == first["parameters"]
    assert saved["key"]["gpupy"] == gp.__version__ and saved["key"]["numpy"] == np.__version__
    assert set(_core.cost_model_parameters()) <= set(saved["parameters"])
    assert all(v >= 0 for v in saved["parameters"].values())
    assert eager == saved["eager_threshold"]
    assert _measurement.EAGER_LIMITS[0] <= eager <= _measurement.EAGER_LIMITS[1]

    second, eager2, _ = run_code(REPORT, tmp_path)
    assert second["source"] == "loaded" and second["parameters"] == first["parameters"] and eager2 == eager
    assert second["attempts"] == 0  # nothing measured in that process

    # The core uses the loaded model: a small evaluation is placed by it.
    placed = run_code("import numpy as np\n"
                        "a = gp.asarray(np.arange(100.0)); np.asarray(a * 2.0 + 1.0)\n"
                        "print(json.dumps([gp.stats()['placements']]))", tmp_path, GPUPY_EAGER_ELEMENTS="0")[0]
    if driver != "software":
        assert sum(placed["host engine"].values()) + sum(placed["device"].values()) == 1
        assert set(placed["host engine"]) | set(placed["device"]) == {"cost model"}


def test_a_changed_key_measures_again(tmp_path):
    first, _, _ = run_code(REPORT, tmp_path)
    assert first["path"] is not None, first["source"]  # (why the model was not saved)
    with open(first["path"]) as f:
        saved = json.load(f)
    saved["key"]["gpupy"] = "0.0.0-older"  # the file of another version under this name
    saved["parameters"]["host_dispatch_ns"] = 123456789.0
    with open(first["path"], "w") as f:
        json.dump(saved, f)
    again, _, _ = run_code(REPORT, tmp_path)
    assert again["source"] == "measured"
    assert again["parameters"]["host_dispatch_ns"] != 123456789.0


def test_calibration_off_leaves_the_driver_judging(tmp_path):
    m, eager, _ = run_code(REPORT + "\nprint(json.dumps([gp._core.cost_model_in_use(), 0, 0]))", tmp_path,
                             GPUPY_CALIBRATION="off")
    assert m is False  # the last line: no model in the core
    assert os.listdir(tmp_path) == []


def test_an_unwritable_cache_directory_still_calibrates(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    m, _, _ = run_code(REPORT, blocker / "sub")
    assert m["source"].startswith("measured (not saved") and m["path"] is None


def test_a_user_eager_threshold_is_kept(tmp_path):
    m = run_code("gp.set_eager_threshold(7); gp.use_driver(gp.driver()); gp.calibrate()\n"
                   "print(json.dumps([gp.eager_threshold()]))", tmp_path)
    assert m == [7]
    m = run_code("print(json.dumps([gp.eager_threshold()]))", tmp_path, GPUPY_EAGER_ELEMENTS="9")
    assert m == [9]


def test_a_failing_measurement_never_breaks_import(monkeypatch):
    saved_state = dict(_calibration._state)
    saved_known = dict(_calibration._by_driver)

    def broken():
        raise RuntimeError("no clock")

    monkeypatch.setattr(_calibration, "measure", broken)
    monkeypatch.setenv("GPUPY_CACHE_DIR", "/nonexistent/gpupy-test")
    try:
        _calibration._by_driver.clear()
        gp.calibrate()
        m = gp.cost_model()
        assert m["source"].startswith("failed (RuntimeError: no clock)") and m["parameters"] is None
        assert not _core.cost_model_in_use()
        np.testing.assert_array_equal(np.asarray(gp.arange(4.0) + 1), np.arange(4.0) + 1)
    finally:
        _calibration._by_driver.clear()
        _calibration._by_driver.update(saved_known)
        _calibration._state.update(saved_state)
        _calibration.hand_to_core()


def test_calibration_setting_is_checked(tmp_path):
    out = run_python(["-c", "import gpupy"], env=dict(os.environ, GPUPY_CALIBRATION="sometimes",
                                                         GPUPY_CACHE_DIR=str(tmp_path)), timeout=300)
    assert out.returncode != 0 and "GPUPY_CALIBRATION must be one of" in out.stderr


@pytest.fixture
def handed_model(monkeypatch):
    """Makes `parameters` the calibration's model, handed to the core as
    calibrate() does; the process's own model comes back afterwards."""
    def use(parameters):
        monkeypatch.setitem(_calibration._state, "parameters", parameters)
        _calibration.hand_to_core()
    yield use
    monkeypatch.undo()
    _calibration.hand_to_core()


@pytest.mark.parametrize("blas, device, on_host", [(0.02, 5.0, True), (5.0, 0.02, False)])
@pytest.mark.parametrize("call", ["operator", "matmul", "dot"])
def test_linear_algebra_goes_where_the_product_was_cheaper(gpu, handed_model, blas, device, on_host, call):
    # The operator's slot and the functions' first step decide in the core
    # (no Python on the way); the counts say where each product ran.
    handed_model(dict(_calibration.cost_model()["parameters"] or CHEAP_HOST, blas_ns_per_flop=blas,
                      device_product_ns_per_flop=device))
    assert _placement.linear_algebra_on_host() == on_host
    product = {"operator": lambda x, y: x @ y, "matmul": gp.matmul, "dot": gp.dot}[call]
    name = "dot" if call == "dot" else "matmul"
    h = np.arange(12.0).reshape(3, 4)
    a = gp.asarray(h)
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(product(a, a.T)), h @ h.T)
    s = gp.stats()
    assert s["host_placements_by_function"] == ({name: 1} if on_host else {})
    assert (s["evaluations"] + s["host_engine_evaluations"] == 0) == on_host
    gp.set_placement("host" if not on_host else "device")  # the setting overrides the measurement
    try:
        gp.reset_stats()
        np.testing.assert_array_equal(np.asarray(product(a, a.T)), h @ h.T)
        assert gp.stats()["host_placements_by_function"] == ({} if on_host else {name: 1})
    finally:
        gp.set_placement("auto")


def test_without_a_model_linear_algebra_uses_blas(handed_model):
    handed_model(None)
    assert _placement.linear_algebra_on_host() and _core.products_on_host()


def test_a_cost_per_element_fitted_as_none_is_taken_from_the_shortest_chain():
    # Passes of a place costing 10 us + 2 us an operation + n * (3 ns +
    # 0.5 ns an operation): the cost per element the joint fit may lose to
    # noise is what the shortest chain grows by per element beyond its
    # operations.
    def ns(n, ops):
        return 10_000 + 2_000 * ops + n * (3.0 + 0.5 * ops)

    passes = [(n, ops, ns(n, ops)) for n in (1024, 65536) for ops in (2, 32, 96)]
    assert _measurement._per_element_left(passes, 0.5) == pytest.approx(3.0)
    assert _measurement._per_element_left(passes, 0.0) == pytest.approx(4.0)  # all of the growth
    # A cost per operation that over-explains the growth (noise): the
    # growth (4 ns) shared by the two operations and the pass.
    assert _measurement._per_element_left(passes, 10.0) == pytest.approx(4.0 / 3)
    assert _measurement._per_element_left(passes, 2.0) == pytest.approx(4.0 / 3)  # (exactly explained: the same)
    assert _measurement._per_element_left([(1024, 2, 5.0), (1024, 2, 6.0)], 0.5) == 0.0  # one size: nothing to tell
    flat = [(n, ops, 10_000.0) for n, ops, _ in passes]
    assert _measurement._per_element_left(flat, 0.5) == 0.0  # no growth: none
    # The joint fit of exact figures finds it itself.
    fitted = _measurement._fit([([1.0, ops, n, n * ops], t) for n, ops, t in passes])
    assert fitted == pytest.approx([10_000, 2_000, 3.0, 0.5], rel=1e-6)


@pytest.mark.parametrize("wait", [False, True])
def test_a_pass_left_on_the_device_reads_nothing_back(gpu, wait):
    # The calibration times the device's passes so, waiting for the work
    # (the driver's finish); the values stay there for the next reader.
    h = np.linspace(-1.0, 1.0, 5000, dtype=np.float32)
    x = gp.asarray(h) * np.float32(3.0) + np.float32(1.0)
    gp.reset_stats()
    _core.evaluate_on_device(x, wait=wait)
    s = gp.stats()
    assert s["evaluations"] == 1 and s["bytes_downloaded"] == 0, s
    np.testing.assert_array_equal(np.asarray(x), h * np.float32(3.0) + np.float32(1.0))
    assert gp.stats()["evaluations"] == 1  # read back, not evaluated again
