"""Out of core: the mean, standard deviation and histogram of a float32
array larger than this machine's free memory, read from a chunked Zarr
store and streamed through dask.distributed workers chunk by chunk -- with
gpupy chunks and with NumPy chunks, on 1 and 2 worker processes.

    pip install "dask[distributed]" zarr psutil
    python benchmarks/dask_zarr.py                      # free memory x 1.1
    python benchmarks/dask_zarr.py --gib 2 --store /tmp/small.zarr

The store is written once (raw float32, no compression: the read is the
disk's, not a codec's) and reused while its size matches. Each
configuration runs on a fresh LocalCluster (workers started by spawn, one
thread each) and computes the three results in one pass over the store.
Reported: wall time, throughput in elements/s, the peak resident memory of
each worker and of this process, gpupy's counters in the workers, and
whether the results match the NumPy-chunked run (mean and std to float32
summation accuracy, the histogram exactly).
"""

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import import_gpupy, table  # noqa: E402

BINS, LIMITS = 64, (-5.0, 5.0)


def chunk_values(index, chunk):
    """Chunk `index` of the store: standard normal float32, seeded by index."""
    return np.random.default_rng(1000 + index).standard_normal(chunk, dtype=np.float32)


def write_store(path, elements, chunk):
    import dask.array as da
    import zarr

    if path.exists():
        try:
            existing = zarr.open_array(str(path), mode="r")
            if existing.shape == (elements,) and existing.chunks == (chunk,):
                return False
        except Exception:  # a store of another shape, or a broken one: written again
            pass
        shutil.rmtree(path)

    def one_chunk(block_info=None):
        (start, _), = block_info[None]["array-location"]
        return chunk_values(start // chunk, chunk)

    x = da.map_blocks(one_chunk, chunks=((chunk,) * (elements // chunk),), dtype=np.float32)
    da.to_zarr(x, str(path), compressors=None)
    return True


def peak_rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(path, library, workers, cache_mib):
    import dask
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    dask.config.set({"distributed.worker.multiprocessing-method": "spawn"})
    env = {"GPUPY_CACHE_BYTES": str(cache_mib << 20)}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      env=env) as cluster, Client(cluster) as client:
        x = da.from_zarr(str(path))
        if library == "gpupy":
            import_gpupy()
            x = x.to_backend("gpupy")
            client.run(lambda: __import__("gpupy").reset_stats())
        counts, _ = da.histogram(x, bins=BINS, range=LIMITS)
        start = time.perf_counter()
        mean, std, hist = dask.compute(x.mean(), x.std(), counts)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_rss_mib)
        counters = {}
        if library == "gpupy":
            for stats in client.run(lambda: dict(__import__("gpupy").stats())).values():
                for key in ("fallbacks", "evaluations", "host_engine_evaluations", "host_placements"):
                    counters[key] = counters.get(key, 0) + int(stats.get(key, 0))
    return dict(library=library, workers=workers, seconds=seconds, mean=float(mean), std=float(std),
                hist=np.asarray(hist).tolist(), worker_peak_mib=sorted(peaks.values()), counters=counters)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "gpupy-dask-bench.zarr")
    parser.add_argument("--gib", type=float, default=None, help="store size (default: free memory x 1.1)")
    parser.add_argument("--chunk-mib", type=int, default=64)
    parser.add_argument("--cache-mib", type=int, default=256, help="each worker's device cache")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the store afterwards")
    args = parser.parse_args()

    import psutil

    free = psutil.virtual_memory().available
    size = int(args.gib * 2**30) if args.gib else int(free * 1.1)
    chunk = (args.chunk_mib << 20) // 4
    elements = max(1, size // 4 // chunk) * chunk
    print(f"free memory {free / 2**30:.1f} GiB; store {elements * 4 / 2**30:.1f} GiB = {elements} float32 "
          f"in chunks of {chunk} ({args.chunk_mib} MiB); disk free {shutil.disk_usage(args.store.parent).free / 2**30:.0f} GiB")
    start = time.perf_counter()
    if write_store(args.store, elements, chunk):
        print(f"wrote {args.store} in {time.perf_counter() - start:.0f} s")

    results = []
    for workers in args.workers:
        for library in ("numpy", "gpupy"):
            r = run(args.store, library, workers, args.cache_mib)
            results.append(r)
            print(f"{library} x{workers}: {r['seconds']:.1f} s, {elements / r['seconds'] / 1e6:.0f} M elements/s, "
                  f"worker peaks {[round(p) for p in r['worker_peak_mib']]} MiB {r['counters'] or ''}", flush=True)

    rows = []
    for r in results:
        ref = next(q for q in results if q["library"] == "numpy" and q["workers"] == r["workers"])
        # float32 sums of n values: NumPy's pairwise and gpupy's tree
        # reductions each err by about log2(n) * eps32 relative.
        tol = 4 * np.log2(elements) * np.finfo(np.float32).eps
        same = (abs(r["mean"] - ref["mean"]) <= tol * ref["std"] and abs(r["std"] - ref["std"]) <= tol * ref["std"]
                and r["hist"] == ref["hist"])
        rows.append([r["library"], r["workers"], f"{r['seconds']:.1f}", f"{elements / r['seconds'] / 1e6:.0f}",
                     f"{ref['seconds'] / r['seconds']:.2f}x", " / ".join(str(round(p)) for p in r["worker_peak_mib"]),
                     "yes" if same else "NO", ", ".join(f"{k} {v}" for k, v in r["counters"].items()) or "-"])
    print()
    print(table(["chunks", "workers", "seconds", "M elements/s", "vs NumPy chunks", "worker peak RSS (MiB)",
                 "matches NumPy", "gpupy counters in the workers"], rows))
    print(f"\nthis process: peak RSS {peak_rss_mib():.0f} MiB; the store: {elements * 4 / 2**30:.1f} GiB, "
          f"free memory at the start {free / 2**30:.1f} GiB")
    if args.json:
        args.json.write_text(json.dumps(dict(elements=elements, chunk=chunk, free_bytes=free, results=results), indent=1))
    if not args.keep:
        shutil.rmtree(args.store, ignore_errors=True)


if __name__ == "__main__":
    main()
