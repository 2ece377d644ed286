"""The shaded sphere of thesis appendix A.1 (by Robert R. Lewis).

The NumPy program computes, for every pixel, the ray/sphere intersection
and a diffuse shade: about 40 elementwise operations, three `where`
channels. gpupy runs the same function with `xp` = gpupy; numexpr runs it
as one evaluate() per statement. Timed: everything up to the three
channels as NumPy arrays (the PNG encoding of the thesis's last lines is
left out, it is the same PIL call for all).
"""

import numpy as np

from common import Result, compare, log_case, run_case

SIZES = (512, 2048)
QUICK_SIZES = (512, 2048)
# Pixels where disc is within rounding of 0 may take the other `where`
# branch; anything else must agree to float32 rounding.
CHECK = dict(rtol=1e-5, max_bad_fraction=1e-4)


def parameters(w, h):
    return dict(
        r=0.4 * min(w, h),            # sphere radius
        v=(w / 2, h / 2, w),          # viewer position
        l=(-1, 1, 1),                 # light direction
        bg=(0.0, 0.0, 0.5),           # background color
        ka=(0.1, 0.2, 0.3),           # ambient sphere color
        kd=(0.2, 0.5, 0.6),           # diffuse sphere color
        c=(w / 2, h / 2, 0),          # sphere position
    )


def thesis_program(xp, w, h, clock=None):
    """Appendix A.1 lines 6-48 with `from numpy import *` as xp."""
    p = parameters(w, h)
    r = p["r"]
    (vx, vy, vz) = p["v"]
    (lx, ly, lz) = p["l"]
    bg, ka, kd = p["bg"], p["ka"], p["kd"]
    (cx, cy, cz) = p["c"]

    # Start with pixel coordinates.
    x = xp.fromfunction(lambda x, y: x, (w, h), dtype=xp.float32)
    y = xp.fromfunction(lambda x, y: y, (w, h), dtype=xp.float32)
    z = 0  # on the image plane

    (dx, dy, dz) = (x - vx, y - vy, z - vz)  # viewing direction

    # Solve the quadratic equation for each pixel
    a = dx**2 + dy**2 + dz**2
    b = 2 * dx * (vx - cx) + 2 * dy * (vy - cy) + 2 * dz * (vz - cz)
    c = cx**2 + cy**2 + cz**2 + vx**2 + vy**2 + vz**2 \
        - 2 * (cx*vx + cy*vy + cz*vz) - r**2
    disc = b*b - 4*a*c  # discriminant

    t = (-b - xp.sqrt(disc)) / (2 * a)  # the ray parameter

    # intersection
    (ix, iy, iz) = (vx + t * dx, vy + t * dy, vz + t * dz)

    # normal to sphere at intersection (guaranteed of unit length)
    (nx, ny, nz) = ((ix - cx) / r, (iy - cy) / r, (iz - cz) / r)

    # dot product of sphere normal and light normal
    nDotL = nx*lx + ny*ly + nz*lz

    # Where the ray hits the sphere, set to the shaded diffuse
    # color, otherwise set to the background color.
    channels = [255 *
                xp.where(disc > 0,
                         xp.where(nDotL > 0, ka_i + nDotL * kd_i, ka_i),
                         bg_i) for (bg_i, ka_i, kd_i) in zip(bg, ka, kd)]
    if clock:
        clock.mark("build")
    out = [np.asarray(ch) for ch in channels]
    if clock:
        clock.mark("evaluate+readback")
    return out


def numpy_program(w, h, clock=None):
    with np.errstate(invalid="ignore"):  # sqrt of a negative discriminant: NaN, masked by where
        return thesis_program(np, w, h, clock)


def numexpr_program(ne, w, h, clock=None):
    """The same statements, one numexpr.evaluate each. Scalars are passed as
    float32 so numexpr computes in float32 as NumPy does (NEP 50)."""
    f = np.float32
    p = parameters(w, h)
    r = p["r"]
    (vx, vy, vz) = p["v"]
    (lx, ly, lz) = p["l"]
    (cx, cy, cz) = p["c"]
    x, y = np.indices((w, h), dtype=np.float32)
    dz = 0 - vz
    s = dict(vx=f(vx), vy=f(vy), dz2=f(dz**2), bx=f(vx - cx), by=f(vy - cy), bz=f(2 * dz * (vz - cz)),
             c=f(cx**2 + cy**2 + cz**2 + vx**2 + vy**2 + vz**2 - 2 * (cx*vx + cy*vy + cz*vz) - r**2),
             two=f(2), four=f(4), vz=f(vz), dz=f(dz), cx=f(cx), cy=f(cy), cz=f(cz), r=f(r),
             lx=f(lx), ly=f(ly), lz=f(lz), f255=f(255))
    e = ne.evaluate
    dx = e("x - vx", local_dict=dict(x=x, **s))
    dy = e("y - vy", local_dict=dict(y=y, **s))
    a = e("dx**2 + dy**2 + dz2", local_dict=dict(dx=dx, dy=dy, **s))
    b = e("two * dx * bx + two * dy * by + bz", local_dict=dict(dx=dx, dy=dy, **s))
    disc = e("b*b - four*a*c", local_dict=dict(a=a, b=b, **s))
    t = e("(-b - sqrt(disc)) / (two * a)", local_dict=dict(a=a, b=b, disc=disc, **s))
    nDotL = e("((vx + t * dx) - cx) / r * lx + ((vy + t * dy) - cy) / r * ly + ((vz + t * dz) - cz) / r * lz",
              local_dict=dict(t=t, dx=dx, dy=dy, **s))
    channels = []
    for bg_i, ka_i, kd_i in zip(p["bg"], p["ka"], p["kd"]):
        channels.append(e("f255 * where(disc > 0, where(nDotL > 0, ka + nDotL * kd, ka), bg)",
                          local_dict=dict(disc=disc, nDotL=nDotL, ka=f(ka_i), kd=f(kd_i), bg=f(bg_i), **s)))
    if clock:
        clock.mark("evaluate")
    return channels


def check_channels(got, ref):
    oks, errs, fracs = zip(*(compare(g, r, **CHECK) for g, r in zip(got, ref)))
    return all(oks), max(errs), max(fracs)


def run(env, settings):
    results = []
    sizes = env.sphere_sizes or (QUICK_SIZES if settings.quick else SIZES)
    impls = [("numpy", lambda n: (lambda clock: numpy_program(n, n, clock)))]
    if env.numexpr is not None:
        impls.append(("numexpr", lambda n: (lambda clock: numexpr_program(env.numexpr, n, n, clock))))
    for drv in env.gpupy_drivers:
        def factory(n, drv=drv):
            env.use_driver(drv)
            return lambda clock: thesis_program(env.gpupy, n, n, clock)

        impls.append((f"gpupy-{drv}", factory))
    if "opengl" in env.gpupy_drivers and env.has_host_engine:
        def factory(n):
            env.use_driver("opengl", device_only=True)
            return lambda clock: thesis_program(env.gpupy, n, n, clock)

        impls.append(("gpupy-opengl-dev", factory))
    for n in sizes:
        ref = None
        case = f"{n}²"
        for name, factory in impls:
            res = Result("sphere", case, name, params={"n": n})
            results.append(res)
            try:
                fn = factory(n)
            except Exception as exc:
                res.failed = f"{type(exc).__name__}: {exc}"
                continue
            check = None if ref is None else (lambda v, ref=ref: check_channels(v, ref))
            value = run_case(res, fn, settings, check=check, gp=env.gpupy if name.startswith("gpupy") else None)
            if ref is None and not res.failed:
                ref = value
                res.note = "reference"
            del value
            log_case(settings, f"sphere  {case:>16}", name, res)
        del ref
    return results
