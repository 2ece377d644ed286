"""benchmarks/report.py's speed-up plots: NumPy's time over gpupy's per
workload and size, from what run.py --json, seeds.py --json and gpu.py's
seeds.csv save. Small made-up results; nothing is measured."""

import csv
import json
import sys
from pathlib import Path

import pytest

# benchmarks/ is not a package: its folder is on the path only while report
# and its own imports load.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
try:
    import report
finally:
    del sys.path[0]


def run_json():
    """What run.py --json writes, reduced to the fields the plot reads."""
    def result(bench, case, impl, params, times, **kw):
        return {"bench": bench, "case": case, "impl": impl, "params": params, "times": times,
                "first": times[0] if times else None, **kw}

    rows = []
    for n, numpy_t, gpupy_t in ((1000, 2e-6, 4e-6), (100000, 3e-5, 1e-5)):
        params = {"n": n, "expr": "2*a + 3*b"}
        rows.append(result("elementwise", f"2*a + 3*b n={n}", "numpy", params, [numpy_t]))
        rows.append(result("elementwise", f"2*a + 3*b n={n}", "gpupy-opengl", params, [gpupy_t, gpupy_t * 3, gpupy_t]))
        rows.append(result("elementwise", f"2*a + 3*b n={n}", "gpupy-software", params, [gpupy_t * 2]))
    rows.append(result("sphere", "512²", "numpy", {"n": 512}, [0.004]))
    rows.append(result("sphere", "512²", "gpupy-opengl", {"n": 512}, [0.002]))
    for s in (10, 100):
        rows.append(result("distmap", f"512² |S|={s}", "numpy", {"n": 512, "S": s}, [s * 1e-3]))
        rows.append(result("distmap", f"512² |S|={s}", "gpupy-opengl", {"n": 512, "S": s}, [s * 2.5e-4]))
    # Neither a failure, a wrong result nor an estimate is a point.
    rows.append(result("distmap", "512² |S|=1000", "numpy", {"n": 512, "S": 1000}, [1.0]))
    rows.append(result("distmap", "512² |S|=1000", "gpupy-opengl", {"n": 512, "S": 1000}, [], estimated=0.3))
    rows.append(result("sphere", "2048²", "numpy", {"n": 2048}, [0.1]))
    rows.append(result("sphere", "2048²", "gpupy-opengl", {"n": 2048}, [0.01], ok=False))
    return {"machine": {}, "extra": {}, "results": rows}


def test_run_json_gives_numpy_over_gpupy_per_workload_and_size():
    series = report.speedup_series(run_json())
    assert series[("2*a + 3*b", None)] == [(1000, pytest.approx(0.5)), (100000, pytest.approx(3.0))]
    assert series[("shaded sphere", None)] == [(512 * 512, pytest.approx(2.0))]
    assert series[("distance map 512² (size: |S|)", None)] == [(10, pytest.approx(4.0)), (100, pytest.approx(4.0))]
    assert len(series) == 3
    software = report.speedup_series(run_json(), impl="gpupy-software")
    assert software == {("2*a + 3*b", None): [(1000, pytest.approx(0.25)), (100000, pytest.approx(1.5))]}


def test_seeds_rows_json_and_csv_alike(tmp_path):
    rows = [
        {"workload": "saxpy", "size": "2^20", "n": 1048576, "numpy_median": 1e-3, "gpupy_median": 5e-4, "valid": True},
        {"workload": "saxpy", "size": "2^8", "n": 256, "numpy_median": 4e-6, "gpupy_median": 8e-6, "valid": True},
        {"workload": "life", "size": "512x512", "n": 512, "numpy_median": 3e-3, "gpupy_median": 1e-3, "valid": True},
        {"workload": "life", "size": "1024x1024", "n": 1024, "numpy_median": 1.0, "gpupy_median": 1.0,
         "valid": False},
    ]
    expected = {("saxpy", None): [(256, pytest.approx(0.5)), (1048576, pytest.approx(2.0))],
                ("life", None): [(512 * 512, pytest.approx(3.0))]}
    path = tmp_path / "seeds.json"
    path.write_text(json.dumps(rows))
    assert report.speedup_series(report.load_saved(path)) == expected
    # gpu.py's seeds.csv: strings, and a placement per row.
    path = tmp_path / "seeds.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["section", "placement", *rows[0], "failed"])
        w.writeheader()
        for placement in ("default", "device"):
            for row in rows:
                w.writerow({"section": "seeds", "placement": placement, **row, "failed": ""})
    series = report.speedup_series(report.load_saved(path))
    assert series == {(w, p): pts for (w, _), pts in expected.items() for p in ("default", "device")}


def test_the_command_draws_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    saved = tmp_path / "run.json"
    saved.write_text(json.dumps(run_json()))
    out = tmp_path / "speedup.png"
    assert report.main(["--speedup", str(saved), "-o", str(out), "--title", "test"]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"results": []}))
    assert report.main(["--speedup", str(empty), "-o", str(tmp_path / "none.png")]) == 1
    assert not (tmp_path / "none.png").exists()
