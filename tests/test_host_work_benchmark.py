"""benchmarks/host_work.py, tiny: it runs, and its figures come from gpupy's
counters (nodes created, evaluations, programs compiled or found), whatever
the driver. Times are printed, never asserted."""
import re
from pathlib import Path

from fresh_python import run_python

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "host_work.py"


def test_host_work_reports_per_node_figures_from_the_counters():
    r = run_python([str(SCRIPT), "--grid", "16", "--points", "12", "--reps", "1"], timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout
    nodes = int(re.search(r"nodes created per run\s+(\d+)", out).group(1))
    m = re.search(r"evaluations per run\s+(\d+)\s+\(programs compiled (\d+), found in the cache (\d+)\)", out)
    evaluations, compiled, hits = (int(g) for g in m.groups())
    # Twelve points: a dist_array and a minimum each, about ten nodes apiece
    # -- those of the timed run alone (the counter runs from the process's
    # start; the two warm-up runs made as many again each).
    assert 12 * 4 <= nodes <= 12 * 16
    assert evaluations >= 1
    # The first two runs warm the OpenGL driver's program cache: the timed
    # one compiles nothing new (the software driver compiles no programs).
    driver = re.search(r"placement device, driver (\w+)", out).group(1)
    assert compiled == 0 and (hits >= 1 or driver == "software")
    for row in ("building", "planning", "both"):
        assert re.search(rf"\| {row} \| [\d.]+ ms \| [\d.]+ us \| [\d.]+ us \| [\d.]+x \|", out), out
