"""Fused elementwise expressions, in the style of numexpr's own benchmarks.

Each expression is one string, evaluated three ways: as Python code with
the names bound to numpy (or gpupy) functions, and by numexpr.evaluate.
Inputs are float32 arrays a, b, c (uniform in [0.1, 1)), created once per
size; gpupy's copies are made once too (gpupy.array), so a warm gpupy run
finds them already on the device, as a numexpr run finds them in memory;
the first gpupy run includes their upload. Timed: the expression to a
NumPy array.

Polynomial coefficients are variables k0..k10: Python floats for NumPy and
gpupy (weak scalars, NEP 50: float32 arithmetic), float32 scalars for
numexpr (whose literals would otherwise promote to float64).
"""

import numpy as np

from common import Result, compare, log_case, run_case

COEFFS = [0.25, -0.5, 0.75, -1.0, 1.25, -1.5, 1.75, -2.0, 2.25, -2.5, 2.75]  # k0 + k1 a + ... + k10 a^10


def _horner(var, n):
    s = f"k{n}"
    for i in range(n - 1, -1, -1):
        s = f"({s}*{var} + k{i})"
    return s


EXPRESSIONS = [
    ("2*a + 3*b", "memory-bound, 2 inputs"),
    ("a*b + c", "memory-bound, 3 inputs"),
    ("sqrt(a**2 + b**2)", ""),
    ("sin(a)**2 + cos(b)**2", "transcendental"),
    (_horner("a", 10), "polynomial of degree 10 (Horner)"),
    ("a*b - 4.1*a > 2.5*b", "boolean result"),
    ("where(a > b, a*a, b*c)", "select"),
    ("exp(-a) * log1p(b)", "transcendental"),
    ("arctan2(a, b)", "transcendental"),
    ("a**1.5 * b", "power with a non-integer exponent"),
]
# The expression that also runs as a hand-written compute shader
# (native/distmap_glsl.cpp): the floor for memory-bound work on this GL.
HAND_WRITTEN = "2*a + 3*b"
SHORT_NAMES = {_horner("a", 10): "poly10(a)"}

SIZES = (10**3, 10**5, 10**7)
QUICK_SIZES = (10**3, 10**5, 10**7)
CHECK = dict(rtol=1e-5, atol_rel=1e-6, max_bad_fraction=0.0)
CHECK_BOOL = dict(rtol=0.0, max_bad_fraction=1e-5)  # comparisons at a rounding tie may flip


def short(expr):
    return SHORT_NAMES.get(expr, expr)


def namespace(xp):
    return {name: getattr(xp, name) for name in ("sqrt", "sin", "cos", "exp", "log1p", "arctan2", "where")}


def inputs(n, seed=1):
    rng = np.random.default_rng(seed)
    return {k: (0.1 + 0.9 * rng.random(n, dtype=np.float32)).astype(np.float32) for k in "abc"}


def run(env, settings):
    results = []
    sizes = env.elementwise_sizes or (QUICK_SIZES if settings.quick else SIZES)
    ks_py = {f"k{i}": float(v) for i, v in enumerate(COEFFS)}
    ks_32 = {f"k{i}": np.float32(v) for i, v in enumerate(COEFFS)}
    exprs = [e for e in EXPRESSIONS if not env.expressions or short(e[0]) in env.expressions]
    for n in sizes:
        data = inputs(n)
        gdata = {}
        for expr, _ in exprs:
            code = compile(expr, "<expression>", "eval")
            case = f"{short(expr)} n={n:.0e}".replace("e+0", "e")
            check_args = CHECK_BOOL if ">" in expr and "where" not in expr else CHECK
            ref = None

            impls = [("numpy", lambda: (lambda clock: np.asarray(eval(code, {**namespace(np), **ks_py}, data))))]
            if env.numexpr is not None:
                impls.append(("numexpr", lambda: (lambda clock: env.numexpr.evaluate(expr, local_dict={**data, **ks_32}))))
            if env.glsl is not None and expr == HAND_WRITTEN:
                for layout in ("ssbo", "texture"):
                    def factory(layout=layout):
                        env.glsl.ew_prepare(data["a"], data["b"], layout)  # upload: resident, as gpupy's warm inputs
                        return lambda clock: env.glsl.ew_run()

                    impls.append((f"glsl-{layout}", factory))
            variants = [(drv, False) for drv in env.gpupy_drivers]
            if "opengl" in env.gpupy_drivers and env.has_host_engine:
                variants.append(("opengl", True))
            for drv, dev in variants:
                def factory(drv=drv, dev=dev):
                    env.use_driver(drv, device_only=dev)
                    if drv not in gdata:
                        gdata[drv] = {k: env.gpupy.array(v) for k, v in data.items()}
                    g = gdata[drv]
                    ns = {**namespace(env.gpupy), **ks_py}
                    return lambda clock: np.asarray(eval(code, ns, g))

                impls.append((f"gpupy-{drv}" + ("-dev" if dev else ""), factory))
            for name, factory in impls:
                res = Result("elementwise", case, name, params={"n": n, "expr": short(expr)})
                results.append(res)
                try:
                    fn = factory()
                except Exception as exc:
                    res.failed = f"{type(exc).__name__}: {exc}"
                    continue
                check = None if ref is None else (lambda v, ref=ref: compare(v, ref, **check_args))
                value = run_case(res, fn, settings, check=check,
                                 gp=env.gpupy if name.startswith("gpupy") else None)
                if ref is None and not res.failed:
                    ref = value
                    res.note = "reference"
                elif value is not None and ref is not None and value.dtype != ref.dtype:
                    res.note = f"result dtype {value.dtype} (NumPy: {ref.dtype})"
                del value
                log_case(settings, f"elementwise {case:>32}", name, res)
            del ref
        del gdata
    return results
