"""The distance map of thesis section 5.2 / appendix A.3 (Figure 5.2).

For an n x n grid and a set S of random points, every pixel gets its
distance to the nearest point of S, scaled to 0..255. Versions:

  numpy          the thesis's program (Python 3 port), `xp` = numpy
  gpupy-opengl   the same function with `xp` = gpupy, OpenGL driver
  gpupy-software the same, gpupy's software driver
  numexpr        one numexpr.evaluate per point over precomputed index arrays
  c++            native/distmap_cpu.cpp, -O3 -fno-math-errno, 1 thread
  c++-omp        the same with -fopenmp (all cores, as llvmpipe uses)
  glsl-loop      native/distmap_glsl.cpp, loop over a uniform array
  glsl-unrolled  the same, unrolled chunks of points at constant indices
  glsl-unrolled-nanmin  the same with NumPy's NaN-propagating minimum and
                 no contraction: what an exact translation costs per point

Two deviations from the thesis's text, both the same in every version:
`max(distMin.flat)` (Python's builtin max iterating over elements) is
written `xp.max(distMin)`, and the points come from numpy's default_rng
instead of the thesis's own random_values module.
"""

import time

import numpy as np

from common import Result, compare, fmt_time, log, log_case, run_case

EXPO = 2  # the thesis's default distance exponent (Euclidean)
CHECK = dict(rtol=1e-5)  # float32 sqrt/min: results agree to a few ulp


def make_points(n_grid, n_points, seed=2007):
    """n_points random points in the grid, as Python floats (thesis: nGrid * myrandf())."""
    rng = np.random.default_rng(seed)
    return [(float(n_grid * rng.random()), float(n_grid * rng.random())) for _ in range(n_points)]


def thesis_program(xp, n_grid, pt, clock=None):
    """Thesis appendix A.3 lines 42-75 with `from numpy import *` as xp."""
    dtype = xp.float32
    expo = EXPO

    def dist(p, q):
        """Returns the Euclidean distance between two (2D) points."""
        (x, y), (x0, y0) = p, q
        return ((x - x0) ** expo + (y - y0) ** expo) ** (1.0 / expo)

    def dist_array(p0):
        """Returns an array whose elements are the distance (in units of
        rows and columns) to a given point (x0, y0)."""
        x0, y0 = p0
        f = lambda x, y, x0=x0, y0=y0: dist((x, y), (x0, y0))
        return xp.fromfunction(f, (n_grid, n_grid), dtype=dtype)

    # distMin[i,j] is the distance from pixel (i,j) to the closest 'pt'.
    distMin = dist_array(pt[0])
    for i in range(1, len(pt)):
        distMin = xp.minimum(dist_array(pt[i]), distMin)
    if clock:
        clock.mark("build")

    pxlMin = 0
    pxlMax = xp.max(distMin)  # thesis: max(distMin.flat)
    if clock:
        clock.mark("max")

    # scale and offset distances to lie between 0 and 1
    distMinScaled = (distMin - pxlMin) / (pxlMax - pxlMin)

    # (gray) pixel values lie between 0 and 255
    pxls = 255 * distMinScaled
    out = np.asarray(pxls)
    if clock:
        clock.mark("scale+readback")
    return out


def numexpr_program(ne, n_grid, pt, clock=None):
    """The same computation as a numexpr user would write it."""
    x, y = np.indices((n_grid, n_grid), dtype=np.float32)
    d = None
    for x0, y0 in pt:
        x0, y0 = np.float32(x0), np.float32(y0)  # NEP 50: float32 arithmetic, as NumPy's
        if d is None:
            d = ne.evaluate("sqrt((x - x0)**2 + (y - y0)**2)")
        else:
            d = ne.evaluate("minimum(sqrt((x - x0)**2 + (y - y0)**2), d)")
    if clock:
        clock.mark("build")
    mx = d.max()
    out = ne.evaluate("255 * (d / mx)")
    if clock:
        clock.mark("scale")
    return out


GRIDS = (512, 2048)
POINTS = (10, 100, 1000, 5000)
QUICK_GRIDS = (512,)
QUICK_POINTS = (10, 100, 1000)


REFERENCES = ("numpy", "c++")  # the first of these that ran is what the others are checked against


def implementations(env):
    """[(name, factory)]: factory(n, points) prepares (outside the timing)
    and returns the timed function fn(clock) -> NumPy array."""
    impls = [("numpy", lambda n, pt: (lambda clock: thesis_program(np, n, pt, clock)))]
    for name, lib in env.cpu_libs.items():
        impls.append((name, (lambda lib: lambda n, pt: (lambda clock: lib.run(n, pt)))(lib)))
    if env.numexpr is not None:
        impls.append(("numexpr", lambda n, pt: (lambda clock: numexpr_program(env.numexpr, n, pt, clock))))
    for drv in env.gpupy_drivers:
        def factory(n, pt, drv=drv):
            env.use_driver(drv)
            return lambda clock: thesis_program(env.gpupy, n, pt, clock)

        impls.append((f"gpupy-{drv}", factory))
    if env.glsl is not None:
        for mode, chunk in env.glsl_modes:
            def factory(n, pt, mode=mode, chunk=chunk):
                if mode.startswith("unrolled"):  # no more statements than points (a power of two, few programs)
                    chunk = min(chunk, 1 << max(0, len(pt) - 1).bit_length())
                env.glsl.prepare(n, mode, chunk)
                return lambda clock: env.glsl.run(n, pt)

            impls.append((f"glsl-{mode}", factory))
    return impls


def predict(results, impl, n, s):
    """A time for (impl, n, s) from the largest measured |S| at the same n (linear in |S|)."""
    known = [r for r in results if r.impl == impl and r.params.get("n") == n and r.typical is not None
             and r.estimated is None and not r.failed and r.params["S"] < s]
    if not known:
        return None
    r = max(known, key=lambda r: r.params["S"])
    return r.typical * s / r.params["S"]


def run(env, settings):
    grids = env.grids or (QUICK_GRIDS if settings.quick else GRIDS)
    npoints = env.points or (QUICK_POINTS if settings.quick else POINTS)
    results = []
    impls = implementations(env)
    for n in grids:
        for s in npoints:
            pt = make_points(n, s)
            case = f"{n}² |S|={s}"
            ref = None
            for name, factory in impls:
                res = Result("distmap", case, name, params={"n": n, "S": s})
                results.append(res)
                guess = predict(results, name, n, s)
                if guess is not None and guess > settings.max_run_s:
                    res.estimated = guess
                    res.note = f"estimated from |S|={max(r.params['S'] for r in results if r.impl == name and r.params.get('n') == n and r.estimated is None and r.typical)} (linear in |S|), not run"
                    log(settings, f"  distmap {case:>16} {name:<15} est. {fmt_time(guess)} (> {settings.max_run_s:.0f} s, not run)")
                    continue
                try:
                    t0 = time.perf_counter()
                    fn = factory(n, pt)
                    res.params["prepare_s"] = time.perf_counter() - t0  # GLSL: compile + link
                except Exception as exc:
                    res.failed = f"{type(exc).__name__}: {exc}"
                    log(settings, f"  distmap {case:>16} {name:<15} FAILED {res.failed}")
                    continue
                check = None if ref is None else (lambda v, ref=ref: compare(v, ref, **CHECK))
                # (a first run longer than the warm budget is the only run: common.run_case)
                value = run_case(res, fn, settings, check=check,
                                 gp=env.gpupy if name.startswith("gpupy") else None)
                if ref is None and name in REFERENCES and value is not None and not res.failed:
                    ref = value
                    res.note = "; ".join(x for x in (res.note, "reference") if x)
                del value
                if ref is None and name not in REFERENCES:
                    res.note = "unchecked (no reference ran)"
                log_case(settings, f"distmap {case:>16}", name, res, bad_fraction=False)
            del ref
    return results
