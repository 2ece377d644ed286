"""The seed workloads of the systems gpupy descends from, run with NumPy and
with gpupy side by side in one process.

Accelerator (Tarditi et al., ASPLOS 2006), on 2-D float32 images of 512x512
and 1024x1024 (--quick: 512x512 only): Conway's Life on a torus (uint8
cells, 10 steps, neighbours by 8 np.roll), a separable 5x5 Gaussian
(edge-padded), Bayer RGGB demosaicing with the Malvar-He-Cutler 5x5
filters, bilinear rotation by 30 degrees about the centre (gather with
integer index arrays), the KLT/Shi-Tomasi corner response (5x5 window),
7x7 SSD stereo over 16 disparities and block-matching motion estimation
(8x8 blocks, search range +-4). The stereo and motion frames hold whole grey
levels (0..255, as from an 8-bit camera) so that their sums are exact in
float32 in any order and the chosen disparity or displacement is compared
exactly.

Barracuda, on 1-D float32 vectors of 2^8, 2^12, 2^16 and 2^20 elements
(--quick: up to 2^16; --large adds 2^24, left out by default because with
the device forced those rows alone take about a minute and a half on two
cores, the Jacobi loop most of it): saxpy, sdot (as sum(x*y), and as xp.dot), rmse, Black-Scholes
(the CUDA sample's polynomial cumulative normal), a 5-tap weighted moving
average, the forward difference and 20 steps of 1-D Jacobi written in place.

C$ (Adinets and Sakharnykh): A @ B for float32 square matrices of 128, 256,
512 and 1024 (--quick: 128 and 256), with GFLOP/s for both. With --native
also a product written by hand in GLSL on the same GL implementation (C$'s
float4 blocking; by default the configuration fastest on llvmpipe,
--native-matmul picks another, such as the shared-memory tiled ones), the
reference for gpupy's own tiled product.

Each workload is a function of an array module `xp` written with plain
NumPy functions; the same source runs on numpy and on gpupy. Its inputs are
made once per size with NumPy; each run starts from them with xp.asarray
(so gpupy's time includes the upload, as in a script that loads its data
with NumPy) and gpupy's time ends when every result is a NumPy array.
--resident makes the inputs before the timer starts instead, as
Accelerator measured (without the initial transfer; gpupy's results are
still timed until they are NumPy arrays): gpupy arrays holding their own
memory (xp.array), as a script written with `import gpupy as np` has them.
(xp.asarray would view NumPy's memory, which the benchmark still holds:
NumPy could write it, so every lazy operation built on it reads a
snapshot -- a copy or a comparison of the whole input each time, the cost
of sharing NumPy's memory, not of computing.) After
a warm-up of each module (compiling lands there) the repetitions alternate
NumPy, gpupy, NumPy, ... and their medians are compared (ratio NumPy /
gpupy: above 1, gpupy is faster). Results are checked against NumPy's:
exactly for Life, the forward difference (one rounding) and the integer
results (disparities, displacements), within float32 tolerances otherwise
(for sums, growing with the square root of the number of terms). gpupy's
counters are those of the last repetition; the functions that fell back to
NumPy are listed per workload. --placement device forces evaluations onto
the device, but results of at most the eager threshold's elements (65536
here) are still computed by NumPy at once ("eager NumPy ops"); add
--eager-threshold 0 to send those to the device too.

The header says how many cores other processes used during the run. On a
2-core machine that matters most for matmul: NumPy's multi-threaded BLAS
then waits ~15 ms for its worker thread on every small product, while gpupy
runs small products on the calling thread alone, so a busy machine shows
gpupy far ahead at 128x128 and 256x256. The default set takes about half a
minute, about three minutes with --placement device (mostly the 1024x1024
product on the device, ~25 s a run).

    python benchmarks/seeds.py --quick                 # ~15 s on 2 cores
    python benchmarks/seeds.py --placement device      # every evaluation forced onto the device
    python benchmarks/seeds.py --placement device --eager-threshold 0   # small results too
    python benchmarks/seeds.py --only life,matmul --reps 7 --json seeds.json
    python benchmarks/seeds.py --resident              # inputs converted before the timer
    python benchmarks/seeds.py --only life,gauss5x5 --placement device --native   # against hand-written GLSL
    python benchmarks/seeds.py --only matmul --placement device --native          # gpupy's product against one by hand
"""

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy

from common import LoadMeter, fmt_ratio, fmt_time, import_gpupy

gpupy = import_gpupy()


def rng():
    """The same inputs in every run."""
    return numpy.random.default_rng(12345)


@dataclass(frozen=True)
class Sizes:
    """The sizes of a family of workloads: `tiny` for the tests, `quick`,
    the default set and what --large adds."""
    tiny: int
    quick: tuple
    default: tuple
    large: tuple
    label: str  # format of one size

    def chosen(self, quick, large):
        return self.quick if quick else self.default + (self.large if large else ())


IMAGES = Sizes(tiny=32, quick=(512,), default=(512, 1024), large=(), label="{0}x{0}")
VECTORS = Sizes(tiny=2 ** 8, quick=(2 ** 8, 2 ** 12, 2 ** 16), default=(2 ** 8, 2 ** 12, 2 ** 16, 2 ** 20),
                large=(2 ** 24,), label="2^{log2}")
MATRICES = Sizes(tiny=16, quick=(128, 256), default=(128, 256, 512, 1024), large=(), label="{0}x{0}")


def size_label(sizes, n):
    return sizes.label.format(n, log2=n.bit_length() - 1)


@dataclass(frozen=True)
class Seed:
    fn: object        # fn(xp, *inputs) -> an array or a tuple of arrays
    inputs: object    # inputs(n) -> tuple of NumPy arrays
    sizes: Sizes
    origin: str
    rtol: object      # a number, or rtol(n); 0 with atol 0: exact
    atol: float
    flops: object = None  # flops(n), for a GFLOP/s figure

    def tolerance(self, n):
        """(rtol, atol) at size n."""
        return (self.rtol(n) if callable(self.rtol) else self.rtol), self.atol


SEEDS = {}


def seed(origin, sizes, inputs, rtol=0.0, atol=0.0, flops=None):
    def register(fn):
        SEEDS[fn.__name__] = Seed(fn, inputs, sizes, origin, rtol, atol, flops)
        return fn

    return register


def float32_sum(n):
    """rtol for float32 sums of n terms added in another order than NumPy's:
    rounding errors grow like sqrt(n) ulps. NumPy's own float32 dot
    (OpenBLAS's sdot) is 4e-5 off the exact value at 2^24 terms, more than
    a fixed 1e-5 allows."""
    return max(1e-5, float(numpy.finfo(numpy.float32).eps) * math.sqrt(n))


# --- inputs (NumPy, made once per size) --------------------------------------------------------------

def cells(n):
    return ((rng().random((n, n)) < 0.3).astype(numpy.uint8),)


def image(n):
    return (rng().random((n, n), dtype=numpy.float32),)


def grey_levels(shape, generator):
    return generator.integers(0, 256, shape).astype(numpy.float32)


def stereo_pair(n):
    """The right view is the left one moved 5 pixels plus sensor noise."""
    r = rng()
    left = grey_levels((n, n), r)
    right = numpy.clip(numpy.roll(left, -5, axis=1) + r.integers(-3, 4, (n, n)), 0, 255).astype(numpy.float32)
    return left, right


def frame_pair(n):
    """The current frame is the previous one moved by (2, -1) plus noise."""
    r = rng()
    previous = grey_levels((n, n), r)
    current = numpy.clip(numpy.roll(previous, (2, -1), axis=(0, 1)) + r.integers(-3, 4, (n, n)), 0, 255)
    return previous, current.astype(numpy.float32)


def vectors(n):
    r = rng()
    return r.random(n, dtype=numpy.float32), r.random(n, dtype=numpy.float32)


def options(n):
    """The CUDA sample's ranges: stock price, strike price, years to expiry."""
    r = rng()
    return (r.uniform(5.0, 30.0, n).astype(numpy.float32), r.uniform(1.0, 100.0, n).astype(numpy.float32),
            r.uniform(0.25, 10.0, n).astype(numpy.float32))


def matrices(n):
    r = rng()
    return r.random((n, n), dtype=numpy.float32), r.random((n, n), dtype=numpy.float32)


# --- shared image helpers ---------------------------------------------------------------------------

def box_sum(a, width):
    """Sum over every width x width window ('valid': the result is smaller
    by width - 1), rows then columns, as shifted slices."""
    n, m = a.shape
    rows = sum(a[:, k:m - width + 1 + k] for k in range(width))
    return sum(rows[k:n - width + 1 + k, :] for k in range(width))


def least(xp, costs):
    """Per element, the number of the first of `costs` (arrays of one
    shape) that is smallest there: a running minimum, as a search over
    candidates is written."""
    for k, cost in enumerate(costs):
        if k == 0:
            best_cost, best = cost, xp.zeros(cost.shape, dtype=xp.int32)
        else:
            better = cost < best_cost
            best_cost = xp.where(better, cost, best_cost)
            best = xp.where(better, k, best)
    return best


def correlate(padded, kernel, n, m):
    """The n x m result of a 5x5 kernel over an image padded by 2: a
    weighted sum of shifted slices, zero taps left out."""
    return sum(w * padded[dy:dy + n, dx:dx + m] for dy, row in enumerate(kernel) for dx, w in enumerate(row) if w)


# --- Accelerator ------------------------------------------------------------------------------------

@seed("Accelerator", IMAGES, cells)
def life(xp, grid, steps=10):
    """Conway's Life on a torus, neighbours counted with 8 rolls"""
    z = xp.asarray(grid)
    for _ in range(steps):
        neighbours = (xp.roll(z, 1, axis=0) + xp.roll(z, -1, axis=0) + xp.roll(z, 1, axis=1)
                      + xp.roll(z, -1, axis=1) + xp.roll(z, (1, 1), axis=(0, 1)) + xp.roll(z, (1, -1), axis=(0, 1))
                      + xp.roll(z, (-1, 1), axis=(0, 1)) + xp.roll(z, (-1, -1), axis=(0, 1)))
        alive = xp.logical_or(neighbours == 3, xp.logical_and(z == 1, neighbours == 2))
        z = alive.astype(xp.uint8)
    return z


@seed("Accelerator", IMAGES, image, rtol=1e-6, atol=1e-7)
def gauss5x5(xp, picture):
    """separable 5x5 Gaussian, edge-padded borders"""
    img = xp.asarray(picture)
    n, m = img.shape
    padded = xp.pad(img, 2, mode="edge")
    taps = (1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16)
    rows = sum(w * padded[:, k:k + m] for k, w in enumerate(taps))
    return sum(w * rows[k:k + n, :] for k, w in enumerate(taps))


# Malvar, He and Cutler, "High-quality linear interpolation for demosaicing
# of Bayer-patterned color images" (ICASSP 2004), the kernels times 8.
GREEN_AT_RED_OR_BLUE = ((0, 0, -1, 0, 0), (0, 0, 2, 0, 0), (-1, 2, 4, 2, -1), (0, 0, 2, 0, 0), (0, 0, -1, 0, 0))
ALONG_ROW = ((0, 0, 0.5, 0, 0), (0, -1, 0, -1, 0), (-1, 4, 5, 4, -1), (0, -1, 0, -1, 0), (0, 0, 0.5, 0, 0))
ALONG_COLUMN = tuple(zip(*ALONG_ROW))
DIAGONAL = ((0, 0, -1.5, 0, 0), (0, 2, 0, 2, 0), (-1.5, 0, 6, 0, -1.5), (0, 2, 0, 2, 0), (0, 0, -1.5, 0, 0))


@seed("Accelerator", IMAGES, image, rtol=1e-5, atol=1e-6)
def demosaic(xp, mosaic):
    """Bayer RGGB to RGB, Malvar-He-Cutler 5x5 filters, np.where per site"""
    raw = xp.asarray(mosaic)
    n, m = raw.shape
    # reflecting by 2 keeps every pixel's colour in the pad
    padded = xp.pad(raw, 2, mode="reflect")
    green_rb = correlate(padded, GREEN_AT_RED_OR_BLUE, n, m) / 8
    along_row = correlate(padded, ALONG_ROW, n, m) / 8
    along_column = correlate(padded, ALONG_COLUMN, n, m) / 8
    diagonal = correlate(padded, DIAGONAL, n, m) / 8
    even_row = (xp.arange(n) % 2 == 0)[:, None]
    even_column = (xp.arange(m) % 2 == 0)[None, :]
    red_site = even_row & even_column
    blue_site = ~even_row & ~even_column
    green_in_red_row = even_row & ~even_column
    green_in_blue_row = ~even_row & even_column
    red = xp.where(red_site, raw, xp.where(green_in_red_row, along_row,
                                           xp.where(green_in_blue_row, along_column, diagonal)))
    green = xp.where(red_site | blue_site, green_rb, raw)
    blue = xp.where(blue_site, raw, xp.where(green_in_blue_row, along_row,
                                             xp.where(green_in_red_row, along_column, diagonal)))
    return xp.stack([red, green, blue], axis=-1)


@seed("Accelerator", IMAGES, image, rtol=1e-6, atol=1e-7)
def rotate(xp, picture, degrees=30.0):
    """bilinear rotation about the centre, zeros outside"""
    img = xp.asarray(picture)
    n, m = img.shape
    c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
    y, x = xp.indices((n, m))
    cy, cx = (n - 1) / 2, (m - 1) / 2
    # where each output pixel comes from: the inverse rotation
    sx = c * (x - cx) + s * (y - cy) + cx
    sy = -s * (x - cx) + c * (y - cy) + cy
    x0, y0 = xp.floor(sx), xp.floor(sy)
    fx, fy = sx - x0, sy - y0
    inside = (x0 >= 0) & (x0 < m - 1) & (y0 >= 0) & (y0 < n - 1)
    ix = xp.clip(x0, 0, m - 2).astype(xp.intp)
    iy = xp.clip(y0, 0, n - 2).astype(xp.intp)
    top = (1 - fx) * img[iy, ix] + fx * img[iy, ix + 1]
    bottom = (1 - fx) * img[iy + 1, ix] + fx * img[iy + 1, ix + 1]
    return xp.where(inside, (1 - fy) * top + fy * bottom, 0).astype(xp.float32)


@seed("Accelerator", IMAGES, image, rtol=1e-5, atol=1e-5)
def klt(xp, picture, window=5):
    """Shi-Tomasi corner response: smaller eigenvalue of the 5x5 structure tensor"""
    img = xp.asarray(picture)
    ix = (img[1:-1, 2:] - img[1:-1, :-2]) * 0.5
    iy = (img[2:, 1:-1] - img[:-2, 1:-1]) * 0.5
    sxx, syy, sxy = box_sum(ix * ix, window), box_sum(iy * iy, window), box_sum(ix * iy, window)
    half_trace = (sxx + syy) * 0.5
    return half_trace - xp.sqrt(((sxx - syy) * 0.5) ** 2 + sxy * sxy)


@seed("Accelerator", IMAGES, stereo_pair)
def stereo_ssd(xp, left_view, right_view, disparities=16, window=7):
    """7x7 SSD stereo over 16 disparities: the disparity of least cost"""
    left, right = xp.asarray(left_view), xp.asarray(right_view)

    def costs():
        for d in range(disparities):
            diff = left - xp.roll(right, d, axis=1)
            yield box_sum(diff * diff, window)

    return least(xp, costs())


@seed("Accelerator", IMAGES, frame_pair)
def motion(xp, previous_frame, current_frame, block=8, radius=4):
    """block matching, 8x8 blocks, +-4 pixels: the displacement of least SAD per block"""
    previous, current = xp.asarray(previous_frame), xp.asarray(current_frame)
    n, m = current.shape
    padded = xp.pad(previous, radius, mode="edge")
    side = 2 * radius + 1

    def sads():
        for k in range(side * side):
            dy, dx = k // side - radius, k % side - radius
            candidate = padded[radius + dy:radius + dy + n, radius + dx:radius + dx + m]
            yield xp.abs(current - candidate).reshape(n // block, block, m // block, block).sum(axis=(1, 3))

    best = least(xp, sads())
    return best // side - radius, best % side - radius


# --- Barracuda --------------------------------------------------------------------------------------

@seed("Barracuda", VECTORS, vectors, rtol=1e-6, atol=1e-7)
def saxpy(xp, x, y, a=2.5):
    """a*x + y"""
    return a * xp.asarray(x) + xp.asarray(y)


@seed("Barracuda", VECTORS, vectors, rtol=float32_sum)
def sdot(xp, x, y):
    """dot product as sum(x*y)"""
    return xp.sum(xp.asarray(x) * xp.asarray(y))


@seed("Barracuda", VECTORS, vectors, rtol=float32_sum)
def sdot_dot(xp, x, y):
    """dot product as xp.dot(x, y)"""
    return xp.dot(xp.asarray(x), xp.asarray(y))


@seed("Barracuda", VECTORS, vectors, rtol=float32_sum)
def rmse(xp, x, y):
    """sqrt(mean((x - y)**2))"""
    return xp.sqrt(xp.mean((xp.asarray(x) - xp.asarray(y)) ** 2))


def cumulative_normal(xp, d):
    """The CUDA sample's polynomial approximation (Abramowitz-Stegun 26.2.17)."""
    k = 1.0 / (1.0 + 0.2316419 * xp.abs(d))
    tail = (0.3989422804014327 * xp.exp(-0.5 * d * d)
            * (k * (0.31938153 + k * (-0.356563782 + k * (1.781477937 + k * (-1.821255978 + k * 1.330274429))))))
    return xp.where(d > 0, 1.0 - tail, tail)


@seed("Barracuda", VECTORS, options, rtol=1e-4, atol=1e-4)
def black_scholes(xp, stock, strike, years, rate=0.02, volatility=0.30):
    """European call and put prices"""
    s, x, t = xp.asarray(stock), xp.asarray(strike), xp.asarray(years)
    sqrt_t = xp.sqrt(t)
    d1 = (xp.log(s / x) + (rate + 0.5 * volatility * volatility) * t) / (volatility * sqrt_t)
    d2 = d1 - volatility * sqrt_t
    discount = xp.exp(-rate * t)
    cnd1, cnd2 = cumulative_normal(xp, d1), cumulative_normal(xp, d2)
    call = s * cnd1 - x * discount * cnd2
    put = x * discount * (1.0 - cnd2) - s * (1.0 - cnd1)
    return call, put


@seed("Barracuda", VECTORS, vectors, rtol=1e-6, atol=1e-7)
def wma(xp, x, _, taps=(1, 2, 3, 4, 5)):
    """weighted moving average, 5 taps"""
    v = xp.asarray(x)
    n, k = v.shape[0], len(taps)
    return sum(w * v[i:n - k + 1 + i] for i, w in enumerate(taps)) / sum(taps)


@seed("Barracuda", VECTORS, vectors)
def forward_difference(xp, x, _):
    """x[1:] - x[:-1] (one rounding: exact)"""
    v = xp.asarray(x)
    return v[1:] - v[:-1]


@seed("Barracuda", VECTORS, vectors, rtol=1e-5, atol=1e-7)
def jacobi1d(xp, x, _, steps=20):
    """1-D Jacobi, the new interior written back in place each step"""
    v = xp.array(x)  # a copy: the input stays as it was for the next run
    for _ in range(steps):
        v[1:-1] = (v[:-2] + v[1:-1] + v[2:]) / 3
    return v


# --- C$ ---------------------------------------------------------------------------------------------

@seed("C$", MATRICES, matrices, rtol=float32_sum, flops=lambda n: 2.0 * n ** 3)
def matmul(xp, a, b):
    """A @ B, float32 square matrices"""
    return xp.asarray(a) @ xp.asarray(b)


# --- running and checking ---------------------------------------------------------------------------

def as_numpy(result):
    """The results as NumPy arrays (for gpupy this evaluates and reads back)."""
    return tuple(numpy.asarray(r) for r in (result if isinstance(result, tuple) else (result,)))


def timed(fn, xp, inputs):
    start = time.perf_counter()
    out = as_numpy(fn(xp, *inputs))
    return time.perf_counter() - start, out


def compare(got, want, rtol, atol):
    """(valid, error, what differs): shapes and dtypes equal and values
    within rtol/atol (exactly, when both are 0). `error` is the largest
    max |got - want| / max |want| over the results."""
    if len(got) != len(want):
        return False, math.inf, f"{len(got)} results, NumPy gives {len(want)}"
    worst = 0.0
    problems = []
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            problems.append(f"result {i}: {g.dtype}{g.shape}, NumPy {w.dtype}{w.shape}")
            worst = math.inf
            continue
        if not g.size:
            continue
        difference = numpy.abs(g.astype(numpy.float64) - w.astype(numpy.float64))
        scale = float(numpy.max(numpy.abs(w.astype(numpy.float64)))) or 1.0
        worst = max(worst, float(numpy.max(difference)) / scale)
        close = g == w if rtol == atol == 0 else numpy.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
        if not numpy.all(close):
            first = numpy.unravel_index(numpy.argmin(close), close.shape)
            problems.append(f"result {i}: {close.size - numpy.count_nonzero(close)} of {close.size} elements differ, "
                            f"max |error| {numpy.max(difference):.3g}; first at {tuple(map(int, first))}: "
                            f"gpupy {g[first]!r}, NumPy {w[first]!r}")
    return not problems, worst, "; ".join(problems)


COUNTERS = ("evaluations", "host_engine_evaluations", "eager_numpy_ops", "fallbacks", "fallbacks_by_function",
            "host_placements", "host_placements_by_function", "programs_compiled")


def counters():
    stats = gpupy.stats()
    return {k: stats[k] for k in COUNTERS}


def measure(name, n, reps, resident=False):
    spec = SEEDS[name]
    host_inputs = spec.inputs(n)

    def inputs_for(xp):
        """The run's inputs: NumPy's arrays, or with `resident` xp's own
        arrays of their values, made outside the timed run."""
        return tuple(xp.array(v) for v in host_inputs) if resident else host_inputs

    row = {"workload": name, "origin": spec.origin, "doc": spec.fn.__doc__, "size": size_label(spec.sizes, n), "n": n}
    rtol, atol = spec.tolerance(n)
    row["tolerance"] = "exact" if rtol == atol == 0 else f"rtol {rtol:.2g} atol {atol:.2g}"
    timed(spec.fn, numpy, inputs_for(numpy))
    try:
        gpupy.reset_stats()
        timed(spec.fn, gpupy, inputs_for(gpupy))
        row["programs_compiled_first_run"] = gpupy.stats()["programs_compiled"]
        t_np, t_gp = [], []
        for _ in range(reps):
            t, want = timed(spec.fn, numpy, inputs_for(numpy))
            t_np.append(t)
            ready = inputs_for(gpupy)
            gpupy.reset_stats()
            t, got = timed(spec.fn, gpupy, ready)
            t_gp.append(t)
            row.update(counters())
    except Exception as exc:  # noqa: BLE001 -- a failing workload is reported, the others still run
        row.update(valid=False, failed=f"{type(exc).__name__}: {exc}".splitlines()[0], **counters())
        return row
    valid, error, problem = compare(got, want, rtol, atol)
    row.update(numpy_median=statistics.median(t_np), gpupy_median=statistics.median(t_gp), valid=valid,
               max_error=error, problem=problem)
    row["ratio"] = row["numpy_median"] / row["gpupy_median"]
    if spec.flops:
        row["numpy_gflops"] = spec.flops(n) / row["numpy_median"] / 1e9
        row["gpupy_gflops"] = spec.flops(n) / row["gpupy_median"] / 1e9
    return row


def hand_written_stencil(kind, steps):
    """Accelerator's stencil `kind` written by hand: one image in, one out."""
    def prepare(shader, n, inputs, **_options):
        (image,) = inputs
        shader.stencil_prepare(kind, n, steps)
        return (lambda: shader.stencil_run(image)), kind

    return prepare


def hand_written_matmul(shader, n, inputs, matmul_config=None, **_options):
    """C$'s product written by hand: A and B in, A @ B out (the configuration
    `matmul_config`, by default the fastest measured on llvmpipe)."""
    a, b = inputs
    shader.matmul_prepare(n, matmul_config)
    return (lambda: shader.matmul_run(a, b)), shader.matmul_config


# Workloads with a hand-written GLSL version in native/distmap_glsl.cpp (the
# comparison Accelerator made; for C$'s product, the reference gpupy's own
# tiled product is measured against): prepare(shader, n, inputs, **options)
# compiles it for size n and returns (one run, the shader's name).
HAND_WRITTEN = {"life": hand_written_stencil("life", 10), "gauss5x5": hand_written_stencil("gauss5x5", 1),
                "matmul": hand_written_matmul}


def measure_hand_written(row, reps, **options):
    """Adds the hand-written shader's median (upload, passes, read back, as
    gpupy's runs are timed) to a row of a workload that has one; `options`
    go to its prepare (matmul_config)."""
    import native  # builds with g++ and the EGL/GL development files at first use

    spec = SEEDS[row["workload"]]
    n = row["n"]
    inputs = spec.inputs(n)
    run, shader_name = HAND_WRITTEN[row["workload"]](native.GlslDistanceMap(), n, inputs, **options)
    got = run()  # the first run JITs
    valid, _, problem = compare(as_numpy(got), as_numpy(spec.fn(numpy, *inputs)), *spec.tolerance(n))
    if not valid:
        raise RuntimeError(f"the hand-written {shader_name} differs from NumPy: {problem}")
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    row["hand_written"] = shader_name
    row["hand_written_median"] = statistics.median(times)
    if spec.flops:
        row["hand_written_gflops"] = spec.flops(n) / row["hand_written_median"] / 1e9


def ratio_text(x):
    # the device's matrix products are hundreds of times slower: keep a digit
    return fmt_ratio(x) if x >= 0.01 else f"{x:.1g}x"


def print_report(rows, args, foreign_load):
    load = "" if foreign_load is None else f", other processes used {foreign_load:.2f} cores meanwhile"
    print(f"gpupy {gpupy.__version__}, driver {gpupy.driver()}, placement {gpupy.get_placement()}, "
          f"eager threshold {gpupy.eager_threshold()} elements, {args.reps} repetitions{load}")
    print("inputs converted before the timer (--resident)\n" if args.resident
          else "inputs converted from NumPy within the timed run\n")
    print("| workload | size | NumPy median | gpupy median | NumPy/gpupy | max rel. error | tolerance | valid "
          "| evaluations device/host | eager NumPy ops | fallbacks | host placements | programs compiled first/last |")
    print("|---|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|")
    for r in rows:
        compiled = f"{r.get('programs_compiled_first_run', '-')}/{r['programs_compiled']}"
        counts = (f"{r['evaluations']}/{r['host_engine_evaluations']} | {r['eager_numpy_ops']} | {r['fallbacks']} | "
                  f"{r['host_placements']} | {compiled}")
        if "failed" in r:
            print(f"| {r['workload']} | {r['size']} | | | | | {r['tolerance']} | FAILED: {r['failed']} | {counts} |")
            continue
        print(f"| {r['workload']} | {r['size']} | {fmt_time(r['numpy_median'])} | {fmt_time(r['gpupy_median'])} | "
              f"{ratio_text(r['ratio'])} | {r['max_error']:.2g} | {r['tolerance']} | {'yes' if r['valid'] else 'NO'} | "
              f"{counts} |")
    ratios = [r["ratio"] for r in rows if r.get("valid")]
    if ratios:
        geo = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        print(f"\ngeometric mean of NumPy/gpupy over {len(ratios)} valid rows: {geo:.2f}")
    flops = [r for r in rows if "gpupy_gflops" in r]
    if flops:
        print("\n| matmul | NumPy GFLOP/s | gpupy GFLOP/s |\n|---|---:|---:|")
        for r in flops:
            print(f"| {r['size']} | {r['numpy_gflops']:.2f} | {r['gpupy_gflops']:.2f} |")
    print("\nfunctions that fell back to NumPy (calls in one run):")
    fell_back = [r for r in rows if r["fallbacks_by_function"]]
    for r in fell_back:
        calls = ", ".join(f"{f} x{c}" for f, c in sorted(r["fallbacks_by_function"].items()))
        print(f"  {r['workload']} {r['size']}: {calls}")
    if not fell_back:
        print("  none")
    native_rows = [r for r in rows if "hand_written_median" in r]
    if native_rows:
        print("\n| workload | size | hand-written shader | hand-written GLSL | gpupy | gpupy / hand-written "
              "| hand-written GFLOP/s | gpupy GFLOP/s |\n|---|---|---|---:|---:|---:|---:|---:|")
        for r in native_rows:
            gflops = (f"{r['hand_written_gflops']:.2f} | {r['gpupy_gflops']:.2f}" if "hand_written_gflops" in r
                      else " | ")
            print(f"| {r['workload']} | {r['size']} | {r['hand_written']} | {fmt_time(r['hand_written_median'])} | "
                  f"{fmt_time(r['gpupy_median'])} | {r['gpupy_median'] / r['hand_written_median']:.2f} | {gflops} |")
    placed = [r for r in rows if r["host_placements_by_function"]]
    if placed:
        print("\nplaced on the host (NumPy's BLAS/LAPACK by gpupy's choice, not fallbacks):")
        for r in placed:
            calls = ", ".join(f"{f} x{c}" for f, c in sorted(r["host_placements_by_function"].items()))
            print(f"  {r['workload']} {r['size']}: {calls}")
    bad = [r for r in rows if not r.get("valid")]
    if bad:
        print("\nNOT MATCHING NUMPY:")
        for r in bad:
            print(f"  {r['workload']} {r['size']}: {r.get('failed') or r['problem']}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated workload names (" + ", ".join(SEEDS) + ")")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="the small sizes only")
    parser.add_argument("--large", action="store_true", help="also 2^24-element vectors")
    parser.add_argument("--placement", choices=("default", "auto", "device", "host"), default="default",
                        help="gpupy.set_placement(mode); 'device' forces every evaluation onto the device")
    parser.add_argument("--eager-threshold", type=int,
                        help="gpupy.set_eager_threshold(N): results of at most N elements computed from host values "
                             "run in NumPy at once, not as evaluations (0: never; default: gpupy's calibrated value)")
    parser.add_argument("--native", action="store_true",
                        help="also time the hand-written GLSL shaders of " + ", ".join(HAND_WRITTEN) +
                        " (benchmarks/native; needs g++ and the EGL/GL development files)")
    parser.add_argument("--native-matmul", metavar="CONFIG",
                        help="with --native: the hand-written product's configuration (a name of "
                        "distmap_glsl.cpp's kMatmulConfigs, e.g. tiled-8x8-16x16-k8, the fastest with "
                        "shared-memory tiles; default: the fastest measured on llvmpipe)")
    parser.add_argument("--resident", action="store_true",
                        help="make each run's inputs xp's own arrays before its timer starts (as Accelerator "
                             "measured: without the initial transfer); results are still timed until they are "
                             "NumPy arrays")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args(argv)
    names = args.only.split(",") if args.only else list(SEEDS)
    unknown = [n for n in names if n not in SEEDS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; known: {', '.join(SEEDS)}")
    if args.placement != "default":
        gpupy.set_placement(args.placement)
    if args.eager_threshold is not None:
        gpupy.set_eager_threshold(args.eager_threshold)
    rows = []
    with LoadMeter() as load:
        for name in names:
            for n in SEEDS[name].sizes.chosen(args.quick, args.large):
                row = measure(name, n, args.reps, args.resident)
                if args.native and name in HAND_WRITTEN and "failed" not in row:
                    measure_hand_written(row, args.reps, matmul_config=args.native_matmul)
                rows.append(row)
                state = "FAILED" if "failed" in row else f"{row['ratio']:.2f} {'ok' if row['valid'] else 'MISMATCH'}"
                print(f"{name} {row['size']}: {state}", file=sys.stderr, flush=True)
    print_report(rows, args, load.foreign)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r.get("valid") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
