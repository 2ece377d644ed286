"""Accuracy of gpupy's float32 ufuncs against NumPy: the basic functionality
test of the GpuPy thesis (Eitzen 2007, appendix A.2, table 5.1), ported to
Python 3 and extended to every float32 ufunc in gpupy's op table.

For each ufunc and input domain, the same float32 inputs go through NumPy
and through gpupy on each available driver. As in the thesis, NumPy's value
is taken as the correct answer; per element the relative error is
|gpupy - numpy| / |numpy| (|gpupy - numpy| where NumPy's value is 0), and
the table gives its mean, its standard deviation and its maximum departure
(the largest |error - mean|), all scaled by 10^9. Columns the thesis did
not have: the largest distance in ulps (units in the last place of float32)
between gpupy's and NumPy's value; the largest distance of gpupy's and of
NumPy's value from the exact result (NumPy's float64 function rounded to
float32), which says which of the two is off; and the number of
special-value mismatches (NaN where NumPy has a number or the reverse, a
different infinity, or a zero of the other sign), elements left out of the
error statistics.

Every ufunc is measured on the thesis's domain, [0, 1) for each operand, on
the special values (NaN, +-inf, +-0, denormals, the largest floats, ...) and,
where the function's behaviour depends on it, on wider domains: the whole
range of exp, large arguments of sin (argument reduction), log over every
binade, fmod with large quotients, and so on (DOMAINS below).

    PYTHONPATH=. python examples/accuracy.py                  # every driver
    PYTHONPATH=. python examples/accuracy.py --driver opengl --ops sin,cos
    PYTHONPATH=. python examples/accuracy.py --markdown       # docs/accuracy.md table
"""

import argparse
import math
import sys
import zlib

import numpy as np

F32 = np.float32

# Table 5.1 of the thesis (GeForce 7800 GT, Cg; inputs in [0, 1), 1024 of
# them): function -> (mean, standard deviation, maximum departure), x 1e9.
# `pow` there is Python's pow(), i.e. numpy.power again.
THESIS_TABLE_5_1 = {
    "absolute": (0, 0, 0), "add": (31, 44, 88), "arccos": (28981, 13771, 28981),
    "arcsin": (507330, 5255030, 129580895), "arctan": (2703, 1382, 2703), "arctan2": (2048, 1470, 2433),
    "cos": (103, 70, 260), "cosh": (72, 62, 184), "divide": (24, 38, 106), "equal": (0, 0, 0),
    "exp": (0, 0, 0), "fabs": (0, 0, 0), "fmod": (691, 6318, 183620), "log": (205, 757, 11485),
    "log10": (198, 755, 11490), "maximum": (0, 0, 0), "multiply": (13, 33, 106), "power": (57, 59, 414),
    "sin": (604, 3912, 85211), "sinh": (293, 1255, 27246), "sqrt": (32, 40, 119), "subtract": (9, 28, 109),
    "tan": (652, 3906, 85277), "tanh": (361, 2133, 37517),
}

THESIS_DOMAIN = "[0,1)"
SPECIAL_DOMAIN = "special values"


# --- input domains ----------------------------------------------------------------------------------

def uniform(lo, hi):
    """Uniform in [lo, hi)."""
    return lambda rng, n: rng.uniform(lo, hi, n).astype(F32)


def log_uniform(lo, hi, signed=False):
    """Magnitudes spread evenly over the binades of [lo, hi]; random signs if signed."""
    def draw(rng, n):
        t = rng.uniform(-1.0 if signed else 0.0, 1.0, n)  # one draw per element: sign and magnitude
        x = np.exp(math.log(lo) + np.abs(t) * (math.log(hi) - math.log(lo)))
        return np.copysign(x, t).astype(F32)
    return draw


def steps(lo, hi, step):
    """Multiples of step in [lo, hi]: exact ties for comparisons, halves for rint."""
    count = int(round((hi - lo) / step))
    return lambda rng, n: (lo + step * rng.integers(0, count + 1, n)).astype(F32)


SPECIAL_VALUES = np.array([
    np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 100.0, -100.0,
    np.pi, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 3.4028235e38, -3.4028235e38, 1e30, 88.72284, 89.5,
], dtype=F32)


def special_inputs(nin):
    """Every special value (unary), every pair of them (binary)."""
    if nin == 1:
        return (SPECIAL_VALUES.copy(),)
    a, b = np.meshgrid(SPECIAL_VALUES, SPECIAL_VALUES, indexing="ij")
    return (a.ravel().copy(), b.ravel().copy())


U01 = uniform(0, 1)
PM30 = log_uniform(1e-30, 1e30, signed=True)
PM18 = log_uniform(1e-18, 1e18, signed=True)
ANGLES = [("[-pi,pi]", uniform(-math.pi, math.pi)), ("[-1e4,1e4]", uniform(-1e4, 1e4)),
          ("[-1e6,1e6]", uniform(-1e6, 1e6))]
QUOTIENTS = [("[-100,100] by +-[0.01,100]", uniform(-100, 100), log_uniform(0.01, 100, True)),
             ("+-[1e-3,1e10] by +-[1e-3,1e3]", log_uniform(1e-3, 1e10, True), log_uniform(1e-3, 1e3, True))]
ROUNDING = [("[-1e4,1e4]", uniform(-1e4, 1e4)), ("halves in [-100,100]", steps(-100, 100, 0.5))]
TIES = [("quarters in [-2,2]", steps(-2, 2, 0.25), steps(-2, 2, 0.25))]
LOGS = [("[1e-38,1e38]", log_uniform(1e-38, 1e38))]

# Wider domains, per ufunc: (label, one sampler per operand). Every ufunc
# also gets the thesis's [0,1) and the special values.
DOMAINS = {
    "add": [("+-[1e-30,1e30]", PM30, PM30), ("[-1,1]", uniform(-1, 1), uniform(-1, 1))],
    "subtract": [("+-[1e-30,1e30]", PM30, PM30), ("[-1,1]", uniform(-1, 1), uniform(-1, 1))],
    "multiply": [("+-[1e-18,1e18]", PM18, PM18)],
    "divide": [("+-[1e-18,1e18]", PM18, PM18)],
    "floor_divide": QUOTIENTS, "remainder": QUOTIENTS, "fmod": QUOTIENTS,
    "power": [("[1e-3,1e3] ** [-12,12]", log_uniform(1e-3, 1e3), uniform(-12, 12)),
              ("[-10,10] ** integers in [-8,8]", uniform(-10, 10), steps(-8, 8, 1))],
    "negative": [("+-[1e-30,1e30]", PM30)], "positive": [("+-[1e-30,1e30]", PM30)],
    "absolute": [("+-[1e-30,1e30]", PM30)], "fabs": [("+-[1e-30,1e30]", PM30)],
    "sign": [("+-[1e-30,1e30]", PM30)],
    "square": [("+-[1e-18,1e18]", PM18)],
    "reciprocal": [("+-[1e-30,1e30]", PM30)],
    "sqrt": LOGS,
    "cbrt": [("+-[1e-38,1e38]", log_uniform(1e-38, 1e38, signed=True))],
    "exp": [("[-87,88]", uniform(-87, 88))],
    "exp2": [("[-126,127]", uniform(-126, 127))],
    "expm1": [("[-1,1]", uniform(-1, 1)), ("[-87,88]", uniform(-87, 88))],
    "log": LOGS, "log2": LOGS, "log10": LOGS,
    "log1p": [("(-1,1)", uniform(-0.9999999, 1)), ("[1e-10,1e30]", log_uniform(1e-10, 1e30))],
    "logaddexp": [("[-100,100]", uniform(-100, 100), uniform(-100, 100))],
    "logaddexp2": [("[-100,100]", uniform(-100, 100), uniform(-100, 100))],
    "sin": ANGLES, "cos": ANGLES, "tan": ANGLES,
    "arcsin": [("[-1,1]", uniform(-1, 1))], "arccos": [("[-1,1]", uniform(-1, 1))],
    "arctan": [("+-[1e-10,1e10]", log_uniform(1e-10, 1e10, signed=True))],
    "arctan2": [("[-1,1]", uniform(-1, 1), uniform(-1, 1)), ("+-[1e-30,1e30]", PM30, PM30)],
    "hypot": [("+-[1e-30,1e30]", PM30, PM30)],
    "sinh": [("[-89,89]", uniform(-89, 89))], "cosh": [("[-89,89]", uniform(-89, 89))],
    "tanh": [("[-10,10]", uniform(-10, 10))],
    "arcsinh": [("+-[1e-10,1e30]", log_uniform(1e-10, 1e30, signed=True))],
    "arccosh": [("[1,2]", uniform(1, 2)), ("[1,1e30]", log_uniform(1, 1e30))],
    "arctanh": [("(-1,1)", uniform(-0.9999999, 0.9999999))],
    "deg2rad": [("[-1e4,1e4]", uniform(-1e4, 1e4))], "rad2deg": [("[-1e4,1e4]", uniform(-1e4, 1e4))],
    "floor": ROUNDING, "ceil": ROUNDING, "trunc": ROUNDING, "rint": ROUNDING,
    "maximum": TIES, "minimum": TIES, "fmax": TIES, "fmin": TIES,
    "equal": TIES, "not_equal": TIES, "less": TIES, "less_equal": TIES, "greater": TIES, "greater_equal": TIES,
    "copysign": [("+-[1e-30,1e30]", PM30, PM30)],
}


def float32_ufuncs(names):
    """The op-table ufuncs NumPy runs on float32 operands (drops the
    integer-only ones: bitwise_*, invert, shifts)."""
    result = []
    for name in names:
        uf = getattr(np, name)
        try:
            uf.resolve_dtypes((np.dtype(F32),) * uf.nin + (None,) * uf.nout)
        except TypeError:
            continue
        result.append(name)
    return result


def cases(ops):
    """(op, domain label, samplers or None for the special values) in table order."""
    out = []
    for op in ops:
        nin = getattr(np, op).nin
        out.append((op, THESIS_DOMAIN, (U01,) * nin))
        for label, *samplers in DOMAINS.get(op, ()):
            assert len(samplers) == nin, (op, label)
            out.append((op, label, tuple(samplers)))
        out.append((op, SPECIAL_DOMAIN, None))
    return out


def inputs_for(op, domain, samplers, n, seed):
    """The case's float32 inputs, the same for every driver and run. Each
    operand has its own random stream and takes one draw per element, so
    the first k of n inputs do not depend on n (tests/test_accuracy.py
    measures a prefix of what docs/accuracy.md measured)."""
    if samplers is None:
        return special_inputs(getattr(np, op).nin)
    key = [seed, zlib.crc32(op.encode()), zlib.crc32(domain.encode())]
    return tuple(draw(np.random.default_rng(key + [i]), n) for i, draw in enumerate(samplers))


# --- error measures ---------------------------------------------------------------------------------

def _ordered(x):
    """float32 -> integers, monotonic, adjacent floats one apart, +-0 both 0."""
    bits = x.view(np.int32).astype(np.int64)
    return np.where(bits < 0, -(bits & 0x7FFFFFFF), bits)


# IEEE 754 leaves the sign of maximum(+0, -0) open, and NumPy's own loops
# answer differently (fmax's SIMD body and scalar tail disagree): zeros of
# either sign count as equal for these.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin"}


def compare(value, actual, zero_sign=True):
    """Thesis statistics of value (gpupy) against actual (NumPy), plus the
    largest ulp distance and the special-value mismatches (a zero of the
    other sign is one unless zero_sign is False)."""
    value, actual = np.asarray(value), np.asarray(actual)
    if value.dtype != actual.dtype or value.shape != actual.shape:
        raise AssertionError(f"gpupy gave {value.dtype}{value.shape}, NumPy {actual.dtype}{actual.shape}")
    v, a = value.ravel().astype(np.float64), actual.ravel().astype(np.float64)
    v_nan, a_nan = np.isnan(v), np.isnan(a)
    both_nan = v_nan & a_nan
    same_inf = np.isinf(a) & (v == a)
    mismatch = (v_nan != a_nan) | (np.isinf(v) != np.isinf(a)) | (np.isinf(a) & ~same_inf & ~v_nan)
    if zero_sign:
        mismatch |= (v == 0) & (a == 0) & (np.signbit(v) != np.signbit(a))
    finite = ~(both_nan | same_inf | mismatch)
    v, a = v[finite], a[finite]
    with np.errstate(all="ignore"):
        re = np.where(a != 0, np.abs((v - a) / np.where(a != 0, a, 1)), np.abs(v - a))
    if re.size:
        mean = re.mean()
        dev = np.abs(re - mean)
        std, max_dep = math.sqrt(float(np.mean(dev * dev))), float(dev.max())
    else:
        mean = std = max_dep = 0.0
    if actual.dtype == F32:
        ulp = np.abs(_ordered(value.ravel()[finite]) - _ordered(actual.ravel()[finite]))
    else:  # bool results: 0 or 1 "ulp"
        ulp = np.abs(v - a)
    return {"mean": float(mean), "std": std, "max_dep": max_dep, "max_rel": float(re.max()) if re.size else 0.0,
            "max_ulp": int(ulp.max()) if ulp.size else 0, "mismatches": int(mismatch.sum()), "n": int(value.size)}


def ulp_from_exact(value, exact):
    """Largest ulp distance of float32 `value` from `exact` (the float64
    result rounded to float32) where both are finite; 0 for bool results."""
    value, exact = np.asarray(value).ravel(), np.asarray(exact).ravel()
    if value.dtype != F32:
        return 0
    both = np.isfinite(value) & np.isfinite(exact)
    d = np.abs(_ordered(value[both]) - _ordered(exact[both]))
    return int(d.max()) if d.size else 0


def numpy_value(op, xs, dtype=None):
    with np.errstate(all="ignore"):
        if dtype is None:
            return getattr(np, op)(*xs)
        return getattr(np, op)(*(x.astype(dtype) for x in xs))


def exact_value(op, xs):
    """The correctly rounded result, near enough: NumPy's float64 function
    on the same inputs, rounded to float32 (float64 carries 29 more bits
    than float32 needs; add, subtract, multiply, divide and sqrt come out
    correctly rounded exactly)."""
    with np.errstate(all="ignore"):
        return numpy_value(op, xs, np.float64).astype(numpy_value(op, tuple(x[:1] for x in xs)).dtype)


def gpupy_value(gp, op, xs):
    # Under the error state NumPy's values are computed in (the inputs
    # reach the edges of each domain on purpose).
    with np.errstate(all="ignore"):
        result = getattr(gp, op)(*(gp.asarray(x) for x in xs))
    if not isinstance(result, gp.GpuArray):
        raise AssertionError(f"gpupy.{op} returned {type(result).__name__}, not a GpuArray")
    return np.asarray(result)


def measure(gp, op, domain, samplers, n, seed):
    """Statistics of one case: compare()'s, plus `exact_ulp` and
    `numpy_exact_ulp`, the largest distances of gpupy's and of NumPy's
    values from the exact result."""
    xs = inputs_for(op, domain, samplers, n, seed)
    got, want, exact = gpupy_value(gp, op, xs), numpy_value(op, xs), exact_value(op, xs)
    stats = compare(got, want, zero_sign=op not in ZERO_SIGN_FREE)
    stats["exact_ulp"] = ulp_from_exact(got, exact)
    stats["numpy_exact_ulp"] = ulp_from_exact(want, exact)
    return stats


def device_name(gp, name):
    """The renderer the driver reports (show_config), else the driver's name."""
    gp.use_driver(name)
    for line in gp._core.driver_describe().splitlines():
        key, _, value = line.strip().partition(":")
        if key in ("renderer", "device"):
            return value.strip()
    return name


def available_drivers(gp, wanted):
    found = []
    for name in wanted:
        try:
            gp.use_driver(name)
        except gp.DriverError as exc:
            print(f"# {name} driver unavailable: {str(exc).strip().splitlines()[0]}", file=sys.stderr)
            continue
        found.append(name)
    return found


# --- output -----------------------------------------------------------------------------------------

def scaled(x):
    return round(x * 1e9)


def text_table(name, rows):
    lines = [f"== {name} ==",
             "x 1e9: mean, standard deviation and maximum departure of the relative error against NumPy;",
             "ulp: largest distance from NumPy's value; exact: largest distance of gpupy's (g) and NumPy's (np)",
             "value from the float64 result rounded to float32; mism: special-value mismatches; n: elements",
             f"{'function':<14} {'domain':<30} {'mean':>7} {'std dev':>8} {'max dep':>10} {'ulp':>4} "
             f"{'g':>3} {'np':>3} {'mism':>4} {'n':>8}"]
    for (op, domain), r in rows.items():
        lines.append(f"{op:<14} {domain:<30} {scaled(r['mean']):>7} {scaled(r['std']):>8} "
                     f"{scaled(r['max_dep']):>10} {r['max_ulp']:>4} {r['exact_ulp']:>3} {r['numpy_exact_ulp']:>3} "
                     f"{r['mismatches']:>4} {r['n']:>8}")
    return "\n".join(lines)


def markdown_tables(results, drivers, labels=None):
    """The two Markdown tables of docs/accuracy.md: the thesis's domain next
    to table 5.1, then the wider domains and the special values. `labels`
    names the drivers' columns (default: the driver names)."""
    def stats(r):
        cell = f"{scaled(r['mean'])} / {scaled(r['std'])} / {scaled(r['max_dep'])}"
        return cell + (f" ({r['mismatches']} mismatches)" if r["mismatches"] else "")

    def ulps(op, domain):
        rs = [results[d][(op, domain)] for d in drivers]
        return (" | " + ", ".join(str(r["max_ulp"]) for r in rs) + " | "
                + ", ".join(str(r["exact_ulp"]) for r in rs) + f", {rs[0]['numpy_exact_ulp']}")

    labels = labels or {d: d for d in drivers}
    names = ", ".join(drivers)
    first = results[drivers[0]]
    out = ["| function | " + " | ".join(labels[d] for d in drivers) + f" | GeForce 7800 GT (thesis) | ulp vs NumPy ({names}) "
           f"| ulp from exact ({names}, NumPy) |",
           "|---|" + "---:|" * (len(drivers) + 3)]
    for (op, domain) in first:
        if domain == THESIS_DOMAIN:
            thesis = THESIS_TABLE_5_1.get(op)
            t = " / ".join(str(v) for v in thesis) if thesis else ""
            out.append(f"| {op} | " + " | ".join(stats(results[d][(op, domain)]) for d in drivers)
                       + f" | {t}{ulps(op, domain)} |")
    out += ["", "| function | domain | " + " | ".join(labels[d] for d in drivers) + f" | ulp vs NumPy ({names}) "
            f"| ulp from exact ({names}, NumPy) |", "|---|---|" + "---:|" * (len(drivers) + 2)]
    for (op, domain) in first:
        if domain != THESIS_DOMAIN:
            out.append(f"| {op} | {domain} | " + " | ".join(stats(results[d][(op, domain)]) for d in drivers)
                       + f"{ulps(op, domain)} |")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description="gpupy's float32 ufuncs against NumPy (thesis table 5.1)")
    parser.add_argument("-n", "--size", type=int, default=1 << 20,
                        help="random inputs per case (default 2**20; the thesis used 1024)")
    parser.add_argument("--seed", type=int, default=2007)
    parser.add_argument("--driver", action="append", choices=("opengl", "software"),
                        help="driver(s) to measure (default: every one that initialises)")
    parser.add_argument("--ops", help="comma-separated ufunc names (default: every float32 ufunc)")
    parser.add_argument("--markdown", action="store_true", help="print the Markdown tables of docs/accuracy.md")
    parser.add_argument("--json", metavar="FILE", help="also write every statistic to FILE as JSON")
    parser.add_argument("--software-kernels", action="store_true",
                        help="measure the software driver's own C-library kernels; by default it runs "
                             "NumPy's loops for the math functions and so matches NumPy exactly")
    args = parser.parse_args(argv)

    import gpupy as gp

    gp.set_fallback("raise")  # every value measured must come from the device...
    gp.set_host_threshold(0)  # ...the one named, not the host engine a cost model would pick
    ops = float32_ufuncs(gp._core.ufunc_names())
    if args.ops:
        wanted = args.ops.split(",")
        unknown = sorted(set(wanted) - set(ops))
        if unknown:
            parser.error(f"not float32 ufuncs of gpupy's op table: {', '.join(unknown)}")
        ops = [op for op in ops if op in wanted]
    drivers = available_drivers(gp, args.driver or ("opengl", "software"))
    if not drivers:
        parser.error("no driver initialises")

    results = {}
    for name in drivers:
        gp.use_driver(name)
        if name == "software" and args.software_kernels:
            gp.set_driver_option("host_loops", "off")
        results[name] = {(op, domain): measure(gp, op, domain, samplers, args.size, args.seed)
                         for op, domain, samplers in cases(ops)}
    if args.json:
        import json

        with open(args.json, "w") as f:
            json.dump({d: [{"op": op, "domain": domain, **r} for (op, domain), r in rows.items()]
                       for d, rows in results.items()}, f, indent=1)
    if args.markdown:
        labels = {d: f"{d} ({device_name(gp, d).split()[0]})" for d in drivers}
        print(markdown_tables(results, drivers, labels))
    else:
        for name in drivers:
            print(text_table(f"{name} driver: {device_name(gp, name)}", results[name]))
            print()
    return results


if __name__ == "__main__":
    main()
