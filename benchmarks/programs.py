"""Realistic NumPy programs, run with NumPy and with gpupy side by side.

Each program is a function of an array module `xp` (numpy or gpupy), the
way a user's script reads after `import gpupy as np`: loops over elements,
recurrences, stencil time loops, linear algebra chains, image filters,
reductions with an axis, mixed float64/float32/int work. Each runs in this
one process: a warm-up of each module, then repetitions in turn (NumPy,
gpupy, NumPy, ...) on fresh inputs; gpupy's time ends when its result is a
NumPy array. Results are checked against NumPy's (rtol per program: exact
for integer work, float tolerances for reordered sums and transcendental
functions). Reported per program: medians, minimums, the speed-up (NumPy's
median / gpupy's) and gpupy's counters for one run; then the geometric mean.

    python benchmarks/programs.py                 # all, default sizes
    python benchmarks/programs.py --only trace,heat2d --reps 7
    python benchmarks/programs.py --json results.json
"""

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

import numpy

from common import import_gpupy

gpupy = import_gpupy()

PROGRAMS = {}


def program(rtol=0.0, atol=0.0):
    def register(fn):
        PROGRAMS[fn.__name__] = (fn, rtol, atol)
        return fn

    return register


def rng():
    return numpy.random.default_rng(12345)


# --- loops over elements and recurrences -----------------------------------------------------------

@program(rtol=1e-12)
def trace(xp, n=2000):
    """sum of tanh over a diagonal, element by element"""
    a = xp.asarray(rng().random((n, n)))
    t = 0.0
    for i in range(n):
        t += xp.tanh(a[i, i])
    return xp.asarray(t)


@program(rtol=1e-10)
def levinson(xp, n=500):
    """Levinson-Durbin recurrence: small slices updated in a loop"""
    r = xp.asarray(rng().random(n) * 0.1)
    y = xp.empty_like(r)
    alpha = -r[0]
    beta = 1.0
    y[0] = -r[0]
    for k in range(1, n):
        beta *= 1.0 - alpha * alpha
        alpha = -(r[k] + xp.dot(xp.flip(r[:k]), y[:k])) / beta
        y[:k] += alpha * xp.flip(y[:k])
        y[k] = alpha
    return y


@program(rtol=1e-12)
def horner(xp, n=200_000, degree=12):
    """polynomial evaluation by Horner's rule over a large array"""
    x = xp.asarray(numpy.linspace(-1, 1, n))
    coeffs = rng().standard_normal(degree)
    p = xp.zeros_like(x)
    for c in coeffs:
        p = p * x + c
    return p


@program(rtol=1e-12)
def recurrence_rows(xp, n=300, m=64):
    """row recurrence y[i] = 0.5 * y[i-1] + x[i] over a small matrix"""
    x = xp.asarray(rng().random((n, m)))
    y = xp.zeros((n, m))
    y[0] = x[0]
    for i in range(1, n):
        y[i] = 0.5 * y[i - 1] + x[i]
    return y


# --- stencil time loops -------------------------------------------------------------------------

@program(rtol=1e-12)
def heat2d(xp, n=512, steps=50):
    """explicit heat equation, 5-point stencil, in-place time loop"""
    u = xp.asarray(rng().random((n, n)))
    for _ in range(steps):
        u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                              - 4 * u[1:-1, 1:-1])
    return u


@program(rtol=1e-12)
def jacobi1d(xp, n=100_000, steps=50):
    """Jacobi iteration with two arrays"""
    a = xp.asarray(rng().random(n))
    b = xp.asarray(rng().random(n))
    for _ in range(steps):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return a


@program()
def life(xp, n=256, steps=30):
    """Conway's game of life on int8 cells"""
    z = xp.asarray((rng().random((n, n)) < 0.3).astype(numpy.int8))
    for _ in range(steps):
        nb = (z[:-2, :-2] + z[:-2, 1:-1] + z[:-2, 2:] + z[1:-1, :-2] + z[1:-1, 2:] + z[2:, :-2] + z[2:, 1:-1]
              + z[2:, 2:])
        birth = (nb == 3) & (z[1:-1, 1:-1] == 0)
        survive = ((nb == 2) | (nb == 3)) & (z[1:-1, 1:-1] == 1)
        z[...] = 0
        z[1:-1, 1:-1][birth | survive] = 1
    return z


@program(rtol=1e-5)
def harris(xp, n=512):
    """Harris corner response: gradients, products, box-filtered (a stencil chain)"""
    img = xp.asarray(rng().random((n, n)).astype(numpy.float32))
    ix = img[1:-1, 2:] - img[1:-1, :-2]
    iy = img[2:, 1:-1] - img[:-2, 1:-1]

    def box(a):
        return (a[:-2, :-2] + a[:-2, 1:-1] + a[:-2, 2:] + a[1:-1, :-2] + a[1:-1, 1:-1] + a[1:-1, 2:]
                + a[2:, :-2] + a[2:, 1:-1] + a[2:, 2:])

    sxx, syy, sxy = box(ix * ix), box(iy * iy), box(ix * iy)
    return sxx * syy - sxy * sxy - 0.05 * (sxx + syy) ** 2


@program(rtol=1e-5)
def blur(xp, n=1024):
    """separable 5-tap blur of a float32 image"""
    img = xp.asarray(rng().random((n, n)).astype(numpy.float32))
    w = (0.0625, 0.25, 0.375, 0.25, 0.0625)
    h = sum(w[k] * img[:, k:n - 4 + k] for k in range(5))
    return sum(w[k] * h[k:n - 4 + k, :] for k in range(5))


# --- linear algebra --------------------------------------------------------------------------------

@program(rtol=1e-10)
def matrix_chain(xp, n=400):
    """A @ B @ C + A.T"""
    r = rng()
    a, b, c = (xp.asarray(r.standard_normal((n, n))) for _ in range(3))
    return a @ b @ c + a.T


@program(rtol=1e-9)
def power_iteration(xp, n=500, iters=50):
    """dominant eigenvalue by power iteration (matrix-vector loop)"""
    a = xp.asarray(rng().random((n, n)))
    v = xp.ones(n) / math.sqrt(n)
    for _ in range(iters):
        w = a @ v
        v = w / xp.sqrt(xp.sum(w * w))
    return xp.asarray(v @ (a @ v))


@program(rtol=1e-9)
def logistic_regression(xp, n=4000, d=32, iters=30):
    """gradient descent for logistic regression"""
    r = rng()
    x = xp.asarray(r.standard_normal((n, d)))
    y = xp.asarray((r.random(n) < 0.5).astype(numpy.float64))
    w = xp.zeros(d)
    for _ in range(iters):
        p = 1.0 / (1.0 + xp.exp(-(x @ w)))
        w = w - 0.1 * (x.T @ (p - y)) / n
    return w


@program(rtol=1e-9)
def kmeans_step(xp, n=20_000, k=16, d=8, iters=5):
    """k-means: distances by broadcasting, argmin, centroid update"""
    r = rng()
    pts = xp.asarray(r.standard_normal((n, d)))
    cent = pts[:k].copy()
    for _ in range(iters):
        dist = ((pts[:, None, :] - cent[None, :, :]) ** 2).sum(axis=2)
        label = dist.argmin(axis=1)
        onehot = (label[:, None] == xp.arange(k)[None, :]).astype(numpy.float64)
        cent = (onehot.T @ pts) / xp.maximum(onehot.sum(axis=0), 1.0)[:, None]
    return cent


# --- reductions with an axis and mixed dtypes -----------------------------------------------------

@program(rtol=1e-12)
def softmax_rows(xp, n=2000, m=500):
    """numerically stable softmax over rows"""
    x = xp.asarray(rng().standard_normal((n, m)))
    e = xp.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@program(rtol=1e-6, atol=1e-6)  # means of float32 sums in another order: ~1e-9 apart
def standardize_mixed(xp, n=1_000_000):
    """float32 data, int64 labels: per-class mean removal and scaling"""
    r = rng()
    x = xp.asarray(r.standard_normal(n).astype(numpy.float32))
    label = xp.asarray(r.integers(0, 4, n))
    out = xp.zeros(n, dtype=numpy.float32)
    for c in range(4):
        mask = label == c
        xc = xp.where(mask, x, 0)
        count = mask.sum()
        mean = xc.sum() / count
        var = (xp.where(mask, x - mean, 0) ** 2).sum() / count
        out = xp.where(mask, (x - mean) / xp.sqrt(var), out)
    return out


@program(rtol=1e-9)
def black_scholes(xp, n=1_000_000):
    """option pricing: a long elementwise expression with erf-free CDF"""
    r = rng()
    s = xp.asarray(r.uniform(10, 50, n))
    k = xp.asarray(r.uniform(10, 50, n))
    t = xp.asarray(r.uniform(0.1, 2, n))
    vol, rate = 0.3, 0.02
    d1 = (xp.log(s / k) + (rate + 0.5 * vol * vol) * t) / (vol * xp.sqrt(t))
    d2 = d1 - vol * xp.sqrt(t)

    def cdf(z):  # the logistic approximation, as such scripts use
        return 1.0 / (1.0 + xp.exp(-1.702 * z))

    return s * cdf(d1) - k * xp.exp(-rate * t) * cdf(d2)


@program()
def floyd_warshall(xp, n=120):
    """all-pairs shortest paths, one whole-matrix step per vertex"""
    path = xp.asarray(rng().integers(1, 100, (n, n)).astype(numpy.int32))
    for k in range(n):
        path[:] = xp.minimum(path, xp.add.outer(path[:, k], path[k, :]))
    return path


@program(rtol=1e-12)
def nbody_step(xp, n=400, steps=5):
    """pairwise gravitational accelerations by broadcasting"""
    r = rng()
    pos = xp.asarray(r.standard_normal((n, 3)))
    vel = xp.zeros((n, 3))
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]
        inv = (xp.sum(d * d, axis=2) + 0.01) ** -1.5
        acc = xp.sum(d * inv[:, :, None], axis=1)
        vel = vel + 0.01 * acc
        pos = pos + 0.01 * vel
    return pos


# --- small steps in Python loops: rows, pairs, draws, containers -----------------------------------

@program()
def symbol_decisions(xp, n=12_000):
    """nearest of 32 symbols per received sample: argmin(abs(e - symbols) ** 2) in a loop"""
    r = rng()
    symbols = xp.asarray(numpy.linspace(-31, 31, 32))
    received = xp.asarray(r.integers(0, 32, n) * 2.0 - 31 + r.normal(0, 0.6, n))
    decided = xp.zeros(n, dtype=numpy.int64)
    for i in range(n):
        decided[i] = xp.argmin(xp.abs(received[i] - symbols) ** 2)
    return decided


@program()
def rows_match_pattern(xp, n=20_000):
    """rows of a boolean n x 4 array compared with a tuple, counted in a loop"""
    bits = xp.asarray(rng().random((n, 4)) < 0.5)
    pattern = (True, False, True, True)
    hits = 0
    for i in range(n):
        if (bits[i] == pattern).all():
            hits += 1
    return xp.asarray(hits)


@program(rtol=1e-12)
def column_distances(xp, d=16, m=130):
    """one Euclidean distance per pair of columns, a double loop"""
    x = xp.asarray(rng().standard_normal((d, m)))
    dist = xp.zeros((m, m))
    for i in range(m):
        for j in range(i + 1, m):
            dist[i, j] = dist[j, i] = xp.sqrt(xp.sum((x[:, i] - x[:, j]) ** 2))
    return dist


@program(rtol=1e-12)
def spring_forces(xp, n=40, steps=250):
    """time steps updating the 2-element force row of each particle (springs to the centre and a neighbour)"""
    r = rng()
    pos = xp.asarray(r.standard_normal((n, 2)))
    vel = xp.zeros((n, 2))
    force = xp.zeros((n, 2))
    centre = xp.asarray([0.5, -0.25])
    dt = 0.01
    for _ in range(steps):
        for i in range(n):
            force[i] = -2.0 * (pos[i] - centre) - 0.5 * (pos[i] - pos[i - 1])
        vel += dt * force
        pos += dt * vel
    return pos


@program()
def mandelbrot_masks(xp, n=400, iterations=40):
    """Mandelbrot escape counts: Z[I] = Z[I]**2 + C[I] under a shrinking boolean mask (real and imaginary parts apart)"""
    cr = xp.asarray(numpy.linspace(-2.0, 0.6, n))[None, :] + xp.zeros((n, 1))
    ci = xp.asarray(numpy.linspace(-1.2, 1.2, n))[:, None] + xp.zeros((1, n))
    zr = xp.zeros((n, n))
    zi = xp.zeros((n, n))
    count = xp.zeros((n, n), dtype=numpy.int32)
    inside = xp.ones((n, n), dtype=bool)
    for k in range(iterations):
        a, b = zr[inside], zi[inside]
        zr[inside], zi[inside] = a * a - b * b + cr[inside], 2.0 * a * b + ci[inside]
        escaped = inside & (zr * zr + zi * zi > 4.0)
        count[escaped] = k + 1
        inside &= ~escaped
    return count


@program(rtol=1e-12)
def image_channels(xp, n=1000):
    """an RGB image built by writing each channel of a new (n, n, 3) array"""
    y, x = numpy.linspace(0, 1, n)[:, None], numpy.linspace(0, 1, n)[None, :]
    x, y = xp.asarray(x), xp.asarray(y)
    img = xp.zeros((n, n, 3))
    img[:, :, 0] = x * (1 - y)
    img[:, :, 1] = xp.sqrt(x * y)
    img[:, :, 2] = 0.5 + 0.5 * xp.cos(6.0 * (x + y))
    return img.mean(axis=2) + img[:, :, 1]


@program(rtol=1e-9)
def reversed_cumsum(xp, n=2_000_000):
    """tail sums: cumsum of a reversed view, reversed back"""
    p = xp.asarray(rng().random(n))
    tail = xp.cumsum(p[::-1])[::-1]
    return tail / tail[0]


@program(rtol=1e-12)
def syrk_lower(xp, n=200, m=60):
    """C = beta*C + alpha*A@A.T on the lower triangle, row slice by row slice (syrk's loop)"""
    r = rng()
    a = xp.asarray(r.random((n, m)))
    c = xp.asarray(r.random((n, n)))
    alpha, beta = 1.5, 1.2
    for i in range(n):
        c[i, :i + 1] *= beta
        for k in range(m):
            c[i, :i + 1] += alpha * a[i, k] * a[:i + 1, k]
    return c


@program(rtol=1e-12)
def csr_matvec(xp, n=2000, per_row=8, products=10):
    """sparse matrix-vector products in CSR form: a dot of index-array gathers per row"""
    r = rng()
    counts = r.integers(1, 2 * per_row, n)
    indptr_h = numpy.concatenate([[0], numpy.cumsum(counts)])
    indptr = xp.asarray(indptr_h)
    indices = xp.asarray(r.integers(0, n, indptr_h[-1]))
    data = xp.asarray(r.standard_normal(indptr_h[-1]))
    x = xp.asarray(r.standard_normal(n))
    for _ in range(products):
        y = xp.empty(n)
        for i in range(n):
            start, stop = indptr[i], indptr[i + 1]
            y[i] = xp.dot(data[start:stop], x[indices[start:stop]])
        x = y / xp.sqrt(xp.dot(y, y))
    return x


@program()
def random_walk(xp, n=20_000):
    """a 2-D lattice walk drawing one random integer per step"""
    gen = xp.random.default_rng(2024)
    moves = xp.asarray([[1, 0], [-1, 0], [0, 1], [0, -1]])
    path = xp.zeros((n, 2), dtype=numpy.int64)
    for i in range(1, n):
        path[i] = path[i - 1] + moves[gen.integers(0, 4)]
    return path


@program()
def maze_binary_tree(xp, h=120, w=120):
    """a maze carved cell by cell (binary-tree algorithm), one random draw per cell"""
    xp.random.seed(99)
    grid = xp.ones((2 * h + 1, 2 * w + 1), dtype=numpy.int8)
    for i in range(h):
        for j in range(w):
            grid[2 * i + 1, 2 * j + 1] = 0
            if i == 0 and j == w - 1:
                continue
            if i == 0 or (j < w - 1 and xp.random.randint(0, 2) == 1):
                grid[2 * i + 1, 2 * j + 2] = 0  # carve east
            else:
                grid[2 * i, 2 * j + 1] = 0  # carve north
    return grid


class _SortedStore:
    """A sorted 1-D array with insertion and removal, as scripts write
    container classes over NumPy arrays."""

    def __init__(self, xp, values):
        self.xp = xp
        self.data = xp.sort(xp.asarray(values))

    def add(self, value):
        i = int(self.xp.searchsorted(self.data, value))
        self.data = self.xp.insert(self.data, i, value)

    def discard_at(self, i):
        self.data = self.xp.delete(self.data, i)

    def __len__(self):
        return len(self.data)


@program()
def sorted_container(xp, n=200_000, adds=400, removals=300):
    """an array-backed sorted container: insert and delete into a 200,000-element array"""
    r = rng()
    store = _SortedStore(xp, r.random(n))
    new = r.random(adds)
    drop = r.integers(0, n, removals)
    for v in new:
        store.add(float(v))
    for i in drop:
        store.discard_at(int(i))
    return store.data


# --- running -------------------------------------------------------------------------------------

def run(fn, xp):
    start = time.perf_counter()
    out = numpy.asarray(fn(xp))
    return time.perf_counter() - start, out


def measure(name, reps):
    fn, rtol, atol = PROGRAMS[name]
    run(fn, numpy)
    run(fn, gpupy)  # warm-up: compile and JIT land here
    t_np, t_gp = [], []
    for _ in range(reps):
        t, want = run(fn, numpy)
        t_np.append(t)
        gpupy.reset_stats()
        t, got = run(fn, gpupy)
        t_gp.append(t)
        stats = gpupy.stats()
    ok = got.shape == want.shape and got.dtype == want.dtype and numpy.allclose(got, want, rtol=rtol, atol=atol,
                                                                                 equal_nan=True)
    return {
        "program": name, "doc": fn.__doc__, "numpy_median": statistics.median(t_np), "numpy_min": min(t_np),
        "gpupy_median": statistics.median(t_gp), "gpupy_min": min(t_gp),
        "speedup": statistics.median(t_np) / statistics.median(t_gp), "valid": bool(ok),
        "evaluations": stats["evaluations"], "host_engine_evaluations": stats["host_engine_evaluations"],
        "fallbacks": stats["fallbacks"], "host_placements": stats["host_placements"],
        "shared_stores": stats["shared_stores"], "eager_numpy_ops": stats["eager_numpy_ops"],
        "fallbacks_by_function": stats["fallbacks_by_function"],
        "host_placements_by_function": stats["host_placements_by_function"],
    }


def fmt(t):
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated program names")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(PROGRAMS)
    rows = []
    for name in names:
        row = measure(name, args.reps)
        rows.append(row)
        print(f"{name}: {row['speedup']:.2f}x {'ok' if row['valid'] else 'MISMATCH'}", file=sys.stderr, flush=True)
    print(f"gpupy {gpupy.__version__}, driver {gpupy.driver()}, {args.reps} repetitions\n")
    print("| program | NumPy median | gpupy median | speed-up | valid | evaluations device/host | eager NumPy ops "
          "| host placements | fallbacks |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['program']} | {fmt(r['numpy_median'])} | {fmt(r['gpupy_median'])} | {r['speedup']:.2f}x | "
              f"{'yes' if r['valid'] else 'NO'} | {r['evaluations']}/{r['host_engine_evaluations']} | "
              f"{r['eager_numpy_ops']} | {r['host_placements']} | {r['fallbacks']} |")
    valid = [r["speedup"] for r in rows if r["valid"]]
    if valid:
        geo = math.exp(sum(math.log(s) for s in valid) / len(valid))
        print(f"\ngeometric mean speed-up over {len(valid)} valid programs: {geo:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r["valid"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
