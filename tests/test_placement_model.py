"""A cost model no run can poison, that corrects itself, shaped for a GPU.

What is checked, with counters, files and the model's parameters (never
with timings):
  - a calibration measures the default configuration whatever the
    process's settings are, and puts them back; what it cannot put back
    (settings drivers read as they load) keeps the model out of the file;
  - figures whose rounds disagree, a busy machine and figures out of the
    range plausible for the device keep the model out of the file, and
    cost_model() says why;
  - processes that start at once measure once;
  - what placed evaluations take corrects a wrong model within a bounded
    number of evaluations, a decision that keeps losing is revised, and a
    default process saves the correction (a process with other settings
    does not);
  - a GPU's model (tests/fixtures/gpu_cost_model.json) sends large work and
    work on device-resident data to the device, tiny evaluations with
    readbacks to the host.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp
from fresh_python import PACKAGE_PARENT, run_python
from gpupy import _calibration, _core, _measurement

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run_code(code, cache_dir, timeout=300, **env):
    """`code` in a fresh process against the gpupy under test, with its cost
    model kept in `cache_dir` (busy-machine and agreement checks off unless
    `env` says: these tests are about the file); returns the last line of output
    as JSON."""
    # (and the drivers' test modes, which the suite may run in)
    model_settings = ("GPUPY_EAGER_ELEMENTS", "GPUPY_HOST_ELEMENTS", "GPUPY_PLACEMENT", "GPUPY_CALIBRATION",
                      "GPUPY_BLOCK_SIZE", "GPUPY_CACHE_BYTES") + _calibration.FIXED_AT_LOAD
    environment = {k: v for k, v in os.environ.items() if k not in model_settings}
    environment.update(GPUPY_CACHE_DIR=str(cache_dir), GPUPY_CALIBRATION_BUSY_RATIO="1000",
                       GPUPY_CALIBRATION_AGREEMENT="1000")
    environment.update(env)
    out = run_python(["-c", "import json, gpupy as gp\n" + code], env=environment, timeout=timeout)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = "m = gp.cost_model(); print(json.dumps(m))"


def model_files(cache_dir):
    return sorted(p for p in os.listdir(cache_dir) if p.endswith(".json"))


# --- measured in the default configuration ------------------------------------------------------

def test_a_measurement_sees_the_default_configuration_and_puts_the_process_back(gpu, monkeypatch):
    seen = {}

    def figures(notes):
        seen.update(block=_core.block_size(), budget=_core.cache_budget(), describe=_core.driver_describe())
        return dict(json.loads((FIXTURES / "gpu_cost_model.json").read_text())["parameters"])

    monkeypatch.setattr(_measurement, "figures", figures)
    gp.set_block_size(64)
    gp.set_cache_bytes(4096)
    gpu.option("max_ops", 3)
    _calibration.note_driver_option(gp.driver(), "max_ops", 3)
    try:
        _calibration.measure()
        assert seen["block"] == _core.DEFAULT_BLOCK_SIZE and seen["budget"] == _core.DEFAULT_CACHE_BYTES
        assert "max_ops: 3" not in seen["describe"] and "limit_ops: 3" not in seen["describe"]
        assert gp.block_size() == 64 and gp.cache_bytes() == 4096
        assert "max_ops: 3" in _core.driver_describe() or "limit_ops: 3" in _core.driver_describe()
    finally:
        _calibration.note_driver_option(gp.driver(), "max_ops", "default")


def test_a_run_with_tiny_blocks_saves_the_default_model(tmp_path):
    # The user's poisoning: a script run once with 64-element blocks and a
    # 4 KiB cache measured under them and saved it for every process after.
    tiny = run_code(REPORT, tmp_path, GPUPY_BLOCK_SIZE="64", GPUPY_CACHE_BYTES="4096")
    assert tiny["source"] == "measured", tiny["source"]
    assert tiny["key"]["block_size"] == _core.DEFAULT_BLOCK_SIZE
    assert tiny["key"]["cache_bytes"] == _core.DEFAULT_CACHE_BYTES
    default = run_code(REPORT, tmp_path)
    assert default["source"] == "loaded" and default["path"] == tiny["path"]
    assert not _measurement.implausible(default["parameters"], _calibration.device_kind())


def test_a_saved_model_out_of_the_plausible_range_is_measured_again(tmp_path):
    # A file an older gpupy poisoned (a device element at 920 ns, measured
    # under 64-element blocks) is not used: it is measured again, replaced.
    first = run_code(REPORT, tmp_path)
    assert first["source"] == "measured"
    record = json.loads(Path(first["path"]).read_text())
    record["parameters"]["device_ns_per_element"] = 920.0
    Path(first["path"]).write_text(json.dumps(record))
    again = run_code(REPORT, tmp_path)
    assert again["source"] == "measured" and again["path"] == first["path"], again["source"]
    assert json.loads(Path(first["path"]).read_text())["parameters"]["device_ns_per_element"] != 920.0


def test_settings_a_driver_read_as_it_loaded_keep_the_model_out_of_the_file(tmp_path):
    m = run_code(REPORT, tmp_path, GPUPY_SOFTWARE_MAX_OPS="1")
    assert m["source"].startswith("measured (for this process only, not saved: GPUPY_SOFTWARE_MAX_OPS is set")
    assert m["attempts"] == 1  # measuring again cannot mend a setting
    assert model_files(tmp_path) == []


# --- measurements that cannot be trusted are not kept ------------------------------------------

def test_figures_whose_rounds_disagree_are_not_kept(gpu, monkeypatch):
    rounds = iter([1000.0, 2000.0, 4000.0, 8000.0] * 1000)
    monkeypatch.setattr(_measurement, "round_ns", lambda run, repetitions: next(rounds))
    notes = []
    assert _measurement._agreed_ns(lambda: None, 3, "a figure", notes) == 1000.0
    assert notes and "no two of 4 rounds agreed" in notes[0]
    # Two rounds that agree end it: the lesser is the figure.
    rounds = iter([1000.0, 1200.0])
    assert _measurement._agreed_ns(lambda: None, 3, "a figure", notes) == 1000.0


def test_figures_out_of_the_plausible_range_are_named():
    fixture = json.loads((FIXTURES / "gpu_cost_model.json").read_text())["parameters"]
    assert _measurement.implausible(fixture, "gpu") == []
    poisoned = dict(fixture, device_ns_per_element=920.0)  # measured under 64-element blocks
    notes = _measurement.implausible(poisoned, "cpu renderer")
    assert any(n.startswith("device_ns_per_element = 920.0 is outside") for n in notes)


def test_a_model_measured_on_a_busy_machine_is_not_saved(tmp_path):
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 * os.cpu_count())]
    try:
        time.sleep(0.5)
        m = run_code(REPORT, tmp_path, GPUPY_CALIBRATION_BUSY_RATIO="1.3")
    finally:
        for p in spinners:
            p.kill()
            p.wait()
    assert m["source"].startswith("measured (for this process only, not saved: "), m["source"]
    assert any(note.startswith("the machine was busy") for note in m["notes"]), m["notes"]
    assert m["attempts"] == 2  # the busy measurement was taken again, busy again
    assert model_files(tmp_path) == []


# --- many processes, one measurement -----------------------------------------------------------

WAIT_FOR_THE_MODEL = """
import time
deadline = time.monotonic() + 30
while gp.cost_model()['source'].startswith('waiting') and time.monotonic() < deadline:
    time.sleep(0.05)
m = gp.cost_model()
print(json.dumps([m['source'], m['parameters']]))
"""


def test_processes_starting_at_once_measure_once(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("GPUPY_CALIBRATION",)}
    env.update(GPUPY_CACHE_DIR=str(tmp_path), GPUPY_CALIBRATION_BUSY_RATIO="1000",
               GPUPY_CALIBRATION_AGREEMENT="1000",
               PYTHONPATH=os.pathsep.join(p for p in (PACKAGE_PARENT, env.get("PYTHONPATH", "")) if p))
    # Each child imports gpupy once all four are running: starting a child
    # from a large test process takes a while where Python forks it (3.9),
    # and a child started after the first one's measurement ended would
    # rightly measure again.
    code = "import sys\nsys.stdin.readline()\nimport json, gpupy as gp\n" + WAIT_FOR_THE_MODEL
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, cwd=PACKAGE_PARENT, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    sources = [s for s, _ in results]
    measured = [s for s in sources if s.startswith("measured")]
    assert len(measured) == 1, sources
    others = sorted(s for s in sources if not s.startswith("measured"))
    if measured[0] == "measured":
        # Saved: the others took it (at once, or once it was there).
        assert others == ["loaded"] * 3, sources
        assert all(params == results[0][1] for _, params in results)
        assert len(model_files(tmp_path)) == 1
    else:
        # Not fit to keep (a loaded test machine): nobody else measured;
        # the others judge by the driver until a later process measures.
        assert all(s.startswith("waiting") for s in others), sources
        assert model_files(tmp_path) == []


# --- the model corrects itself -----------------------------------------------------------------

def _measured_parameters():
    p = _calibration.cost_model()["parameters"]
    if p is None:
        pytest.skip("no measured cost model in this process (GPUPY_CALIBRATION=off?)")
    return {k: p[k] for k in _core.cost_model_parameters()}


HOST_PARAMETERS = ("host_dispatch_ns", "host_ns_per_op", "host_ns_per_element_op", "host_ns_per_element_op_deep",
                   "host_ns_per_element_math")


def _distance_map(xp, n=96, points=6):
    x = xp.fromfunction(lambda i, j: i, (n, n), dtype=np.float32)
    y = xp.fromfunction(lambda i, j: j, (n, n), dtype=np.float32)
    d = None
    for k in range(points):
        e = (x - 3.0 * k) ** 2 + (y - 5.0 * k) ** 2
        d = e if d is None else xp.minimum(d, e)
    return d


def _placements(stats):
    p = stats["placements"]
    return {where: sum(p[where].values()) for where in ("host engine", "device")}


def test_a_model_with_host_costs_100_times_too_high_heals(opengl):
    # Every decision favours the device; the host engine is never measured
    # by the work itself. Once the device's evaluations have taken what a
    # probe costs (PlacementFeedback::kProbeHostAfterNs: a few ms), the host
    # engine is probed, corrected, and the work goes there.
    gp.set_host_threshold(None)
    right = _measured_parameters()
    wrong = dict(right, **{k: right[k] * 100 for k in HOST_PARAMETERS})
    _core.set_cost_model(wrong)
    try:
        want = _distance_map(np)
        gp.reset_stats()
        runs = 0
        while not _core.placement_feedback()["host engine"]["checked"] and runs < 400:
            np.testing.assert_array_equal(np.asarray(_distance_map(gp)), want)
            runs += 1
        assert _core.placement_feedback()["host engine"]["checked"], "the host engine was never probed"
        assert gp.stats()["model_corrections"] >= 1
        assert _core.placement_feedback()["host engine"]["corrections"] >= 1
        corrected = _core.corrected_cost_model()
        # The host engine's costs came down by an order of magnitude at least
        # (to within 2x of what its probe measured: the simulations below
        # check how close to the truth a correction comes).
        for k in ("host_dispatch_ns", "host_ns_per_element_op"):
            assert corrected[k] < wrong[k] / 10, (k, corrected[k], wrong[k])
        gp.reset_stats()
        for run in range(3):
            np.testing.assert_array_equal(np.asarray(_distance_map(gp)), want)
        assert _placements(gp.stats())["host engine"] >= 1
    finally:
        _calibration.hand_to_core()


def test_a_device_priced_too_cheap_for_tiny_work_is_corrected_by_what_it_takes(opengl):
    # A model that prices the device at 100 ns an evaluation, whatever the
    # work, sends tiny evaluations there; on llvmpipe each costs the device
    # ~100 us. Its evaluations correct its fixed cost, and tiny work goes to
    # the host engine again.
    gp.set_host_threshold(None)
    right = _measured_parameters()
    free = {k: 0.0 for k in right if k.startswith("device") and k != "device_product_ns_per_flop"}
    _core.set_cost_model(dict(right, **dict(free, device_dispatch_ns=100.0), upload_ns_per_byte=0.0,
                              download_ns_per_byte=0.0))
    try:
        h = np.linspace(0.0, 1.0, 300, dtype=np.float32)
        gp.reset_stats()
        for k in range(24):
            a = gp.array(h)
            np.testing.assert_array_equal(np.asarray(a * 2.0 + float(k)), h * 2.0 + np.float32(k))
        assert _core.placement_feedback()["device"]["corrections"] >= 1
        assert _core.corrected_cost_model()["device_dispatch_ns"] > 100.0 * 10
        gp.reset_stats()
        np.asarray(gp.array(h) * 2.0 + 1.0)
        assert _placements(gp.stats()) == {"host engine": 1, "device": 0}
    finally:
        _calibration.hand_to_core()


def test_a_scan_is_priced_by_the_work_it_does(opengl):
    # A cumulative sum is a scan within chunks plus the chunks' totals,
    # read through a broadcast by every output. The totals are evaluated
    # once into their own storage; priced as if each output folded a chunk
    # again, a scan of 2^21 elements cost seconds in either place, and a
    # device 10x cheaper per operation won it despite moving 32 MB -- five
    # times slower than the host engine on llvmpipe. Priced by what it
    # does, the transfers decide, and the host engine takes it.
    gp.set_host_threshold(None)
    model = {k: LLVMPIPE[k] for k in _core.cost_model_parameters()}
    model.update(device_ns_per_element=0.0, device_ns_per_element_op=0.013, upload_ns_per_byte=1.0,
                 download_ns_per_byte=1.0)
    _core.set_cost_model(model)
    try:
        h = np.random.default_rng(5).random(1 << 21)
        gp.reset_stats()
        got = np.asarray(gp.cumsum(gp.asarray(h)[::-1]))
        np.testing.assert_allclose(got, np.cumsum(h[::-1]), rtol=1e-12)
        placed = _placements(gp.stats())
        assert placed["device"] == 0 and placed["host engine"] >= 1, gp.stats()["placements"]
    finally:
        _calibration.hand_to_core()


# --- the feedback loop on its own: decisions against a known truth --------------------------------

# A CPU renderer's figures (llvmpipe on 2 cores): the truth the simulated
# machine runs at. The decisions below depend on these only, not on the
# machine the tests run on.
LLVMPIPE = {"host_dispatch_ns": 7000.0, "host_ns_per_op": 800.0, "host_ns_per_element_op": 0.13,
            "host_ns_per_element_op_deep": 0.3, "host_ns_per_element_math": 0.6,
            "device_dispatch_ns": 100000.0, "device_readback_ns": 10000.0, "device_ns_per_op": 2000.0,
            "device_ns_per_element": 5.0, "device_ns_per_element_op": 1.0, "device_ns_per_element_math": 5.0,
            "upload_ns_per_byte": 0.1, "download_ns_per_byte": 0.1, "blas_ns_per_flop": 0.02,
            "device_product_ns_per_flop": 0.5}


def work(elements, ops, math=0, upload=False):
    """A Work tuple: float32 results read back, inputs resident unless `upload`."""
    return (elements, ops, math, 4 * elements, 4 * elements if upload else 0, 0)


# Work a program meets: tiny steps of a loop, a medium image filter, a large
# deep expression (the thesis distance map's evaluations), math functions.
PROGRAM = [work(300, 2), work(4096, 6), work(1 << 16, 12, 2), work(1 << 18, 7000), work(1 << 20, 20, upload=True)]


def simulate(model, truth, works=PROGRAM, rounds=20):
    decisions, corrected = _core._simulate_placement(model, truth, works, rounds, _calibration.PROBE_WORKS)
    return decisions, corrected


def where(decisions):
    return [place for place, _ in decisions]


@pytest.mark.parametrize("truth_name", ["llvmpipe", "gpu"])
@pytest.mark.parametrize("wrong", ["host x100", "device x100", "host /100", "device /100", "all x3"])
def test_a_wrong_model_heals_within_a_bounded_number_of_evaluations(truth_name, wrong):
    truth = LLVMPIPE if truth_name == "llvmpipe" else json.loads((FIXTURES / "gpu_cost_model.json").read_text())[
        "parameters"]
    truth = {k: truth[k] for k in _core.cost_model_parameters()}
    place, factor = {"host x100": ("host", 100), "device x100": ("device", 100), "host /100": ("host", 0.01),
                     "device /100": ("device", 0.01), "all x3": ("", 3)}[wrong]
    model = {k: v * factor if k.startswith(place) or k.startswith(("upload", "download")) and place == "device"
             else v for k, v in truth.items()}
    right, _ = simulate(truth, truth)
    got, corrected = simulate(model, truth)
    n = len(PROGRAM)
    # The right model's decisions settle; the wrong one's reach them within
    # 8 rounds of the program (40 evaluations) and stay there.
    assert where(got[-8 * n:]) == where(right[-8 * n:])
    mistakes = sum(a != b for a, b in zip(where(got), where(right)))
    assert mistakes <= 8 * n, (mistakes, got)
    # The parameters that decide came back within 2x of the truth.
    for k in ("host_dispatch_ns", "host_ns_per_element_op", "device_ns_per_element"):
        assert truth[k] / 2.5 <= corrected[k] <= truth[k] * 2.5 or wrong == "all x3", (k, corrected[k], truth[k])


def test_a_right_model_sends_no_real_work_to_the_worse_place():
    # The other place is checked by a probe, not by trying the program's
    # own work there (a deep expression tried on llvmpipe costs seconds).
    decisions, corrected = simulate(LLVMPIPE, LLVMPIPE, rounds=30)
    assert all(reason == "cost model" for _, reason in decisions)
    assert corrected == {k: LLVMPIPE[k] for k in _core.cost_model_parameters()}


def test_a_close_call_that_keeps_losing_is_revised():
    # The model says the device is a little cheaper for this work (within
    # 2x); the device really costs 1.6x what the model says -- off by less
    # than a correction takes, but enough to lose. The host engine (checked
    # by a probe) is tried once, measured faster, and used from then on.
    w = work(1 << 16, 40)
    model = dict(LLVMPIPE, device_ns_per_element=0.0, device_ns_per_element_op=0.12, device_dispatch_ns=5000.0,
                 device_readback_ns=0.0, device_ns_per_op=0.0)
    truth = dict(model, **{k: model[k] * 1.6 for k in ("device_dispatch_ns", "device_ns_per_element_op")})
    host = simulate(model, model, [w], 1)[0][0][0]
    assert host == "device"  # the model's choice
    decisions, _ = simulate(model, truth, [w], 40)
    places = where(decisions)
    assert decisions.count(("host engine", "tried")) == 1
    tried = decisions.index(("host engine", "tried"))
    assert all(d == ("host engine", "measured faster") for d in decisions[tried + 1:]), decisions
    assert places[:tried] == ["device"] * tried


def _host_costs_times_100(params, kind):
    """The host engine's costs 100 times too high, each kept within the
    range a saved model must be in to be loaded (else it is measured again)."""
    out = dict(params)
    for k in HOST_PARAMETERS:
        limits = _measurement.PLAUSIBLE[k]
        lo, hi = limits[kind] if isinstance(limits, dict) else limits
        out[k] = min(params[k] * 100, hi * 0.9)
    return out


def test_a_default_process_saves_a_correction_and_one_with_other_settings_does_not(tmp_path):
    measured = run_code(REPORT, tmp_path)
    path = measured["path"]
    assert path is not None, measured["source"]  # (why the model was not saved)
    record = json.loads(Path(path).read_text())
    poisoned = _host_costs_times_100(record["parameters"], _calibration.device_kind())
    # Enough device time (~0.1 ms an evaluation at the least) that the
    # host engine, priced out, is probed in both processes: the one with
    # other settings (blocks still as large as a probe's arrays) corrects
    # its own decisions too, and must not save them.
    work = "import numpy as np\nfor k in range(100):\n    np.asarray(gp.ones((256, 256), np.float32) * float(k) + 1.0)\n"
    for env, corrected in (({"GPUPY_BLOCK_SIZE": str(1 << 16)}, False), ({}, True)):
        record["parameters"] = dict(poisoned)
        record["corrections"] = 0
        Path(path).write_text(json.dumps(record))
        run = run_code(work + "print(json.dumps(gp.stats()['model_corrections']))", tmp_path, GPUPY_EAGER_ELEMENTS="0",
                       **env)
        after = json.loads(Path(path).read_text())
        if gp.driver() == "software" or measured["key"]["driver"] == "software":
            return  # nothing to place: the software driver computes on host memory itself
        assert run >= 1
        if corrected:
            assert after["corrections"] >= 1
            assert after["parameters"]["host_dispatch_ns"] < poisoned["host_dispatch_ns"] / 10
        else:
            assert after["corrections"] == 0 and after["parameters"] == poisoned


def test_corrections_made_on_a_busy_machine_are_not_saved(tmp_path):
    # A busy ratio below 1 makes every moment "busy": the default process
    # still corrects its own decisions, and leaves the file as it was.
    measured = run_code(REPORT, tmp_path)
    if measured["key"]["driver"] == "software":
        return  # nothing to place: the software driver computes on host memory itself
    path = measured["path"]
    record = json.loads(Path(path).read_text())
    poisoned = _host_costs_times_100(record["parameters"], _calibration.device_kind())
    record["parameters"], record["corrections"] = dict(poisoned), 0
    Path(path).write_text(json.dumps(record))
    work = ("import numpy as np\nfor k in range(100):\n    np.asarray(gp.ones((256, 256), np.float32) * float(k) + 1.0)\n"
            "print(json.dumps([gp.stats()['model_corrections'], gp.cost_model()['notes']]))")
    corrections, notes = run_code(work, tmp_path, GPUPY_EAGER_ELEMENTS="0", GPUPY_CALIBRATION_BUSY_RATIO="0.5")
    assert corrections >= 1
    assert any("busy" in n and "not saved" in n for n in notes), notes
    after = json.loads(Path(path).read_text())
    assert after["corrections"] == 0 and after["parameters"] == poisoned


# --- a GPU's model ------------------------------------------------------------------------------

def test_a_gpus_model_sends_large_and_resident_work_to_the_device_and_tiny_readbacks_to_the_host(gpu):
    record = json.loads((FIXTURES / "gpu_cost_model.json").read_text())
    _core.set_cost_model({k: record["parameters"][k] for k in _core.cost_model_parameters()})
    try:
        image = 2048 * 2048
        assert _core.placement_of(image, 30, 4, image * 4, upload_bytes=image * 4) == "device"
        assert _core.placement_of(1 << 18, 10, 0, (1 << 18) * 4, upload_bytes=0) == "device"
        assert _core.placement_of(256, 4, 0, 1024, upload_bytes=1024) == "host engine"
        # The same small work on inputs the device holds and the host engine
        # would have to read back first: the device.
        assert _core.placement_of(1 << 16, 4, 0, 1 << 18, download_bytes=1 << 20) == "device"
    finally:
        _calibration.hand_to_core()


def test_where_the_inputs_live_decides_on_a_gpus_model(opengl):
    # Measured decisions on the OpenGL driver: an evaluation reading an
    # array the device holds goes to the device; the same on host data, small,
    # stays on the host.
    record = json.loads((FIXTURES / "gpu_cost_model.json").read_text())
    gp.set_host_threshold(None)
    _core.set_cost_model({k: record["parameters"][k] for k in _core.cost_model_parameters()})
    try:
        h = np.linspace(0.0, 1.0, 1 << 20, dtype=np.float32)
        on_host = gp.array(h)
        gp.reset_stats()
        np.testing.assert_array_equal(np.asarray(on_host * 2.0 + 1.0), h * 2.0 + 1.0)
        assert _placements(gp.stats()) == {"host engine": 1, "device": 0}
        on_device = gp.array(h) * 3.0
        _core.evaluate_on_device(on_device)
        gp.reset_stats()
        np.testing.assert_array_equal(np.asarray(on_device * 2.0 + 1.0), (h * 3.0) * 2.0 + 1.0)
        assert _placements(gp.stats()) == {"host engine": 0, "device": 1}
    finally:
        _calibration.hand_to_core()


def test_calibrate_on_the_command_line_says_where_work_goes(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GPUPY_CALIBRATION"}
    env.update(GPUPY_CACHE_DIR=str(tmp_path), GPUPY_CALIBRATION_BUSY_RATIO="1000",
               GPUPY_CALIBRATION_AGREEMENT="1000")
    out = run_python(["-m", "gpupy", "--calibrate"], env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "cost model of the" in out.stdout and "where work goes:" in out.stdout
    assert "a 2048x2048 image" in out.stdout


# --- the product form a device suits, measured -------------------------------------------------

def tiled_line():
    return next(line for line in _core.driver_describe().splitlines() if line.startswith("tiled_products:"))


def test_a_measured_model_holds_both_product_forms_and_the_driver_uses_the_faster(opengl, tmp_path):
    # (the fixture: skipped where the OpenGL driver cannot start)
    code = ("m = gp.cost_model(); p = m['parameters']\n"
            "line = [l for l in gp._core.driver_describe().splitlines() if l.startswith('tiled_products:')][0]\n"
            "print(json.dumps({'source': m['source'], 'driver': gp.driver(), 'line': line,\n"
            "  'shared': p.get('device_shared_tiles_ns_per_flop'), 'registers': p.get('device_registers_tiles_ns_per_flop')}))")
    got = run_code(code, tmp_path, GPUPY_DRIVER="opengl")
    assert got["driver"] == "opengl"
    assert got["source"] == "measured"
    assert got["shared"] > 0 and got["registers"] > 0
    faster = "shared" if got["shared"] < got["registers"] else "registers"
    assert got["line"] == f"tiled_products: {faster} (measured)"
    # A process that loads the model uses the same form.
    again = run_code(code, tmp_path, GPUPY_DRIVER="opengl")
    assert again["source"] == "loaded" and again["line"] == got["line"]


@pytest.mark.parametrize("faster", ["shared", "registers"])
def test_the_measured_product_form_gives_way_to_an_explicit_one(opengl, faster):
    slower = "registers" if faster == "shared" else "shared"
    params = {f"device_{faster}_tiles_ns_per_flop": 1.0, f"device_{slower}_tiles_ns_per_flop": 2.0}
    assert _measurement.faster_tiled_form(params) == faster
    assert _measurement.faster_tiled_form({"device_product_ns_per_flop": 1.0}) == "default"
    before = tiled_line()
    try:
        _core.set_driver_option("measured_tiles", faster)
        assert tiled_line() == f"tiled_products: {faster} (measured)"
        opengl.option("tiled_products", slower)
        assert tiled_line() == f"tiled_products: {slower} (set)"
        opengl.option("tiled_products", "default")
        assert tiled_line() == f"tiled_products: {faster} (measured)"
        # Products are right in the form measured.
        a = np.random.default_rng(3).random((70, 90), dtype=np.float32)
        b = np.random.default_rng(4).random((90, 50), dtype=np.float32)
        np.testing.assert_allclose(np.asarray(gp.asarray(a) @ gp.asarray(b)), a @ b, rtol=2e-5)
        with pytest.raises(Exception, match="expected shared, registers"):
            _core.set_driver_option("measured_tiles", "sideways")
    finally:
        _core.set_driver_option("measured_tiles", _measurement.faster_tiled_form(_calibration.cost_model()["parameters"]))
    assert tiled_line() == before
