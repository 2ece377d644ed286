#!/usr/bin/env python3
"""Results stay where they are: Life with its board read back every step.

A loop that reads its result each step (to draw it, to test it) hands the
board's bytes to NumPy each step. The board's device copy is kept through
that (src/core/building/export_watch.hpp), so after the first step nothing
should be uploaded: this prints the bytes uploaded after the first step
(the target: 0) and the time per step against NumPy's, with the board read
back and dropped ("transient") or every frame kept ("kept"), on the device
(placement "device") and with default placement.

    python benchmarks/resident.py                 # 512x512, 20 steps
    python benchmarks/resident.py --n 1024 --steps 50

(Boards of at most the eager threshold's elements -- 65,536 by default on
llvmpipe -- are computed in NumPy at once when their values are on the
host, as every op on small host values is: a board read back is, and the
device then uploads what NumPy computed.)
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import import_gpupy  # noqa: E402

gp = import_gpupy()


def life_step(xp, z):
    neighbours = sum(xp.roll(xp.roll(z, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    return xp.logical_or(neighbours == 3, xp.logical_and(z == 1, neighbours == 2)).astype(np.uint8)


def run(xp, board, steps, keep):
    """Seconds per step after the first, bytes uploaded after the first
    step, and the final board."""
    z = xp.asarray(board)
    frames, times, uploaded = [], [], None
    for step in range(steps):
        t0 = time.perf_counter()
        z = life_step(xp, z)
        frame = np.asarray(z)
        if keep:
            frames.append(frame)
        else:
            frame.sum()
        times.append(time.perf_counter() - t0)
        if step == 0 and xp is gp:
            uploaded = gp.stats()["bytes_uploaded"]
    if xp is gp:
        uploaded = gp.stats()["bytes_uploaded"] - uploaded
    return statistics.median(times[1:]), uploaded, np.asarray(z)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    board = (np.random.default_rng(0).random((args.n, args.n)) < 0.3).astype(np.uint8)
    print(f"gpupy {gp.__version__}, driver {gp.driver()}, Life {args.n}x{args.n}, {args.steps} steps, "
          f"board read back every step")
    print()
    print("| placement | frames | NumPy / step | gpupy / step | NumPy/gpupy | bytes uploaded after step 1 | valid |")
    print("|---|---|---:|---:|---:|---:|---|")
    for placement in ("device", "auto"):
        previous = gp.set_placement(placement)
        try:
            for keep in (False, True):
                t_np, _, want = run(np, board, args.steps, keep)
                gp.reset_stats()
                t_gp, uploaded, got = run(gp, board, args.steps, keep)
                print(f"| {placement} | {'kept' if keep else 'transient'} | {t_np * 1e3:.2f} ms | {t_gp * 1e3:.2f} ms | "
                      f"{t_np / t_gp:.2f}x | {uploaded} | {'yes' if np.array_equal(want, got) else 'NO'} |")
        finally:
            gp.set_placement(previous)


if __name__ == "__main__":
    main()
