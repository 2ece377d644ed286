"""The differential fuzzer's long campaign, surviving crashes.

Runs tests/fuzz under the "long" hypothesis profile once per (driver,
setting) in a child process, so a segmentation fault or an abort ends one
child, is reported with its signal, and the campaign goes on. Prints one
line per child and a summary; exits 1 if any child failed or crashed.

    python tests/fuzz/campaign.py --examples 13000          # 8 x 13000 programs
    python tests/fuzz/campaign.py --examples 2000 --driver software --setting tiny-cache

A failing child's output (hypothesis's shrunk program and its reproduce
blob) is kept in the --log-dir.
"""

import argparse
import itertools
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DRIVERS = ("software", "opengl")
SETTINGS = ("defaults", "tiny-cache", "small-blocks", "one-op", "placed", "library", "warnings")


def run_one(driver, setting, examples, log_dir, timeout):
    env = dict(os.environ, GPUPY_FUZZ_EXAMPLES=str(examples))
    cmd = [sys.executable, "-m", "pytest", str(HERE / "test_differential.py"), "-q", "-s", "-p", "no:cacheprovider",
           "--hypothesis-profile=long", "-k", f"{driver} and {setting}"]
    start = time.monotonic()
    try:
        out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        code, text = out.returncode, out.stdout + out.stderr
    except subprocess.TimeoutExpired as e:
        code, text = "timeout", (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
    seconds = time.monotonic() - start
    log = Path(log_dir) / f"{driver}-{setting}.log"
    log.write_text(text)
    passing = sum(int(n) for n in re.findall(r"fuzz programs agreed: (\d+)", text))
    failing = 1 if "Falsifying example" in text else 0
    if isinstance(code, int) and code < 0:
        verdict = f"CRASH (signal {-code})"
    elif code == 0:
        verdict = "ok"
    elif code == 5:
        verdict = "SKIPPED (driver unavailable?)"
    else:
        verdict = f"FAILED ({code})"
    return {"driver": driver, "setting": setting, "verdict": verdict, "passing": passing, "failing": failing,
            "seconds": seconds, "log": str(log)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=13000, help="programs per (driver, setting)")
    parser.add_argument("--driver", action="append", choices=DRIVERS)
    parser.add_argument("--setting", action="append", choices=SETTINGS)
    parser.add_argument("--log-dir", default="fuzz-logs")
    parser.add_argument("--timeout", type=float, default=6 * 3600, help="seconds per child")
    args = parser.parse_args(argv)
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    results = []
    for driver, setting in itertools.product(args.driver or DRIVERS, args.setting or SETTINGS):
        r = run_one(driver, setting, args.examples, args.log_dir, args.timeout)
        results.append(r)
        print(f"{driver:9} {setting:11} {r['verdict']:22} {r['passing']:7} programs agreed with NumPy, "
              f"{r['failing']} failing, {r['seconds']:.0f} s ({r['log']})", flush=True)
    total = sum(r["passing"] for r in results)
    bad = [r for r in results if r["verdict"] not in ("ok", "SKIPPED (driver unavailable?)")]
    print(f"total: {total} programs agreed with NumPy; {len(bad)} of {len(results)} runs failed or crashed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
