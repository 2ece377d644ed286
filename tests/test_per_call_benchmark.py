"""benchmarks/per_call.py, tiny: every call of its table runs on both
modules, gpupy's result equals NumPy's, and each row carries gpupy's
counters. Times are printed, never asserted."""
import json
import re
from pathlib import Path

from fresh_python import run_python

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "per_call.py"


def test_the_per_call_table_has_every_call_right(tmp_path):
    out_json = tmp_path / "rows.json"
    r = run_python([str(SCRIPT), "--calls", "20", "--batches", "2", "--json", str(out_json)], timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "WRONG" not in r.stdout
    rows = json.loads(out_json.read_text())
    text = SCRIPT.read_text()
    names = re.findall(r'^    "(\w+)": \(', text, flags=re.M)
    assert [row["call"] for row in rows] == names and len(names) >= 14
    for row in rows:
        assert row["numpy_us"] > 0 and row["gpupy_us"] > 0
        assert {"fallbacks_per_call", "evaluations_per_call", "eager_numpy_ops_per_call"} <= set(row)
    assert re.search(r"\d+ of \d+ calls within 0.3 µs of NumPy's", r.stdout)
