"""gpupy under dask.distributed: the thesis's distance map over a grid cut
into tiles, and the mean, standard deviation and histogram of an array
several times larger than each worker's device cache, on a LocalCluster of
worker processes -- each with its own gpupy driver -- checked against NumPy.

    PYTHONPATH=. python examples/dask_cluster.py                  # 2 workers
    PYTHONPATH=. python examples/dask_cluster.py --workers 1 --grid 2048

The workers are started with "spawn" (dask.distributed's default), never
forked: each creates its OpenGL context itself. Each may be given its own
GPU with GPUPY_EGL_DEVICE (docs/dask.md). Chunks travel between processes as
pickle protocol 5 out-of-band buffers, read in place on both sides.
"""

import argparse
import importlib
import time

import numpy as np


def points(count, grid, seed):
    """The random points of the distance map, the same for every run."""
    return np.random.default_rng(seed).uniform(0, grid, size=(count, 2))


def distance_map(xp, grid, tile, pts):
    """min over the points of the Euclidean distance, for every pixel of a
    grid x grid image in tiles of tile x tile: one dask array, whose
    chunks are `xp` arrays (gpupy or NumPy)."""
    import dask.array as da

    library = xp.__name__  # the task imports it by name in the worker

    def one_tile(block_info=None):
        xp = importlib.import_module(library)
        (r0, r1), (c0, c1) = block_info[None]["array-location"]
        rows = xp.arange(r0, r1, dtype=xp.float32)[:, None]
        cols = xp.arange(c0, c1, dtype=xp.float32)[None, :]
        nearest = xp.full((r1 - r0, c1 - c0), xp.inf, dtype=xp.float32)
        for x, y in pts.astype(np.float32):
            nearest = xp.minimum(nearest, xp.sqrt((cols - x) ** 2 + (rows - y) ** 2))
        return nearest

    meta = xp.empty((0, 0), dtype=xp.float32)
    return da.map_blocks(one_tile, chunks=((tile,) * (grid // tile),) * 2, dtype=np.float32, meta=meta)


def samples(xp, size, chunk, seed):
    """A 1-d dask array of `size` float32 values in chunks of `chunk`,
    generated in the workers (chunk k from seed + k), as `xp` arrays."""
    import dask.array as da

    library = xp.__name__

    def one_chunk(block_info=None):
        xp = importlib.import_module(library)
        (start, stop), = block_info[None]["array-location"]
        values = np.random.default_rng(seed + start // chunk).standard_normal(stop - start, dtype=np.float32)
        return xp.asarray(values)

    return da.map_blocks(one_chunk, chunks=((chunk,) * (size // chunk),), dtype=np.float32,
                         meta=xp.empty((0,), dtype=xp.float32))


def statistics(x, bins, limits):
    """mean, standard deviation and histogram of a dask array, in one pass."""
    import dask
    import dask.array as da

    counts, _ = da.histogram(x, bins=bins, range=limits)
    return dask.compute(x.mean(), x.std(), counts)


def worker_counters(client):
    """gpupy's counters summed over the workers, since the last call."""
    def take():
        import gpupy

        counts = gpupy.stats()
        gpupy.reset_stats()
        return counts

    total = {}
    for counts in client.run(take).values():
        for key in ("fallbacks", "evaluations", "host_engine_evaluations", "host_placements"):
            total[key] = total.get(key, 0) + counts.get(key, 0)
    return ", ".join(f"{k} {v}" for k, v in total.items())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--grid", type=int, default=4096, help="distance map size (pixels per side)")
    parser.add_argument("--tile", type=int, default=1024)
    parser.add_argument("--points", type=int, default=32)
    parser.add_argument("--size", type=int, default=2**26, help="elements of the reduced array")
    parser.add_argument("--chunk", type=int, default=2**22)
    parser.add_argument("--cache-mib", type=int, default=64, help="each worker's device cache")
    args = parser.parse_args()

    import dask
    from dask.distributed import Client, LocalCluster

    import gpupy as gp

    dask.config.set({"distributed.worker.multiprocessing-method": "spawn"})
    env = {"GPUPY_CACHE_BYTES": str(args.cache_mib << 20)}
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                      env=env) as cluster, Client(cluster) as client:
        drivers = client.run(lambda: __import__("gpupy").driver())
        print(f"{args.workers} workers, drivers {sorted(drivers.values())}, device cache {args.cache_mib} MiB each")

        worker_counters(client)
        pts = points(args.points, args.grid, seed=1)
        start = time.perf_counter()
        got = distance_map(gp, args.grid, args.tile, pts).compute()
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        want = distance_map(np, args.grid, args.tile, pts).compute()  # NumPy chunks, the same workers
        numpy_seconds = time.perf_counter() - start
        error = float(np.abs(np.asarray(got) - want).max())
        print(f"distance map {args.grid}x{args.grid} in {args.tile}-pixel tiles, {args.points} points: "
              f"{seconds:.2f} s (NumPy chunks {numpy_seconds:.2f} s), {type(got).__name__}, "
              f"largest difference from NumPy {error:.3g}")
        print(f"  in the workers: {worker_counters(client)}")

        start = time.perf_counter()
        mean, std, counts = statistics(samples(gp, args.size, args.chunk, seed=7), 32, (-4, 4))
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        np_mean, np_std, np_counts = statistics(samples(np, args.size, args.chunk, seed=7), 32, (-4, 4))
        numpy_seconds = time.perf_counter() - start
        print(f"mean/std/histogram of {args.size} float32 ({args.size * 4 >> 20} MiB, "
              f"{args.size * 4 / (args.cache_mib << 20):.0f}x a worker's cache): {seconds:.2f} s "
              f"(NumPy chunks {numpy_seconds:.2f} s); "
              f"mean {float(mean):.6f} (NumPy {float(np_mean):.6f}), std {float(std):.6f} "
              f"(NumPy {float(np_std):.6f}), histogram equal: {bool(np.array_equal(np.asarray(counts), np_counts))}")
        print(f"  in the workers: {worker_counters(client)}")


if __name__ == "__main__":
    main()
