"""gpupy's float32 ufuncs stay within the bounds their algorithms guarantee.

Every case of examples/accuracy.py (each float32 ufunc of the op table on
the thesis's [0,1), on the special values, and on the wider domains that
matter for it) runs on every available driver in fallback mode "raise" and
is checked against bounds derived in docs/accuracy.md (tests/drivers/
float_bounds.py), which hold on any conforming implementation -- llvmpipe
on any x86-64 CPU, or a GPU -- whatever NumPy's own float32 loops do there:

* No special-value mismatches against NumPy (NaN-ness, infinities, the sign
  of zero; maximum/minimum/fmax/fmin compare zeros by value, see
  ZERO_SIGN_FREE in examples/accuracy.py).
* Ops outside TRANSCENDENTAL are one IEEE operation, a comparison or a bit
  manipulation: bit-identical to NumPy (on the OpenGL driver, division and
  square root within GLSL's own bounds).
* TRANSCENDENTAL ops are within MATH_ULP of the reference (NumPy's float64
  function rounded to float32): 1 ulp from the correctly rounded result by
  construction, 1 more for the reference.
* Where GLSL allows denormals to be flushed, the flushed result passes.

The measured figures (ulps from NumPy and from the reference, mean relative
errors) are in docs/accuracy.md; the test asserts the guarantees, not them.
test_bounds_catch_regressions shows that a function 3 ulps off everywhere,
or 50 ulps off on 1% of its inputs, fails.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp

_spec = importlib.util.spec_from_file_location("gpupy_example_accuracy",
                                               Path(__file__).resolve().parents[1] / "examples" / "accuracy.py")
acc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(acc)

import float_bounds as fb  # noqa: E402 -- tests/drivers, on the path from conftest.py

N = 1 << 16
SEED = 2007

OPS = acc.float32_ufuncs(gp._core.ufunc_names())
CASES = acc.cases(OPS)

# Evaluated by polynomial kernels (glsl_math on OpenGL) or the C library's
# double functions rounded once (the software driver's own kernels, when
# NumPy's loops are not used). Everything else is exact.
TRANSCENDENTAL = {"cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2",
                  "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh", "tanh",
                  "arcsinh", "arccosh", "arctanh", "power"}
# GLSL's own bounds for the builtins behind these (float_bounds).
GLSL_BUILTIN_ULP = {"divide": fb.GLSL_DIVIDE_ULP, "reciprocal": fb.GLSL_DIVIDE_ULP, "sqrt": fb.GLSL_SQRT_ULP}


def allowed_ulp(driver, op):
    """ulps from the reference allowed for op on driver (0: bit-identical to NumPy)."""
    if op in TRANSCENDENTAL:
        return fb.MATH_ULP
    return GLSL_BUILTIN_ULP.get(op, 0) if driver == "opengl" else 0


def described():
    """The active driver's describe() as a dict."""
    lines = gp._core.driver_describe().splitlines()
    return dict(ln.strip().split(": ", 1) for ln in lines if ": " in ln)


def violations(driver, op, xs, got):
    """What in one case's results breaks a bound."""
    want = acc.numpy_value(op, xs)
    exact = acc.exact_value(op, xs)
    bound = allowed_ulp(driver, op)
    zero_free = op in acc.ZERO_SIGN_FREE
    transcendental = op in TRANSCENDENTAL

    def ok(g, w, e):
        if g.dtype.kind != "f":
            return g == w
        special = ~np.isfinite(w) | (w == 0)
        right = fb.same_bits(g, w, zero_free)
        # Special results (NaN, infinities, zeros with their sign) are NumPy's.
        right |= ~special & (fb.ulp_error(g, e if transcendental else w) <= bound)
        return right

    good = ok(got, want, exact)
    if driver == "opengl" and not good.all():
        def evaluate(flushed):
            return np.stack([acc.numpy_value(op, flushed), acc.exact_value(op, flushed)])
        good |= fb.flush_accepts(got, want, xs, evaluate, lambda g, we: ok(g, we[0], we[1]),
                                 internal=fb.flushes(described()))
    bad = np.flatnonzero(~good)
    if not bad.size:
        return []
    k = bad[:3]
    return [f"{bad.size} of {got.size} values beyond {bound} ulp{' from the reference' if transcendental else ''}"
            f" or with other special values, e.g. at {[x[k] for x in xs]}: got {got[k]!r}, NumPy {want[k]!r}, "
            f"reference {exact[k]!r}"]


def case_id(case):
    op, domain, _ = case
    return f"{op}:{domain.replace(' ', '_')}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_accuracy(gpu, case):
    op, domain, samplers = case
    xs = acc.inputs_for(op, domain, samplers, N, SEED)
    got = acc.gpupy_value(gp, op, xs)
    if gpu.name == "software" and op in TRANSCENDENTAL:
        # The software driver runs NumPy's own loops for these (offered by
        # the core): NumPy's values, bit for bit...
        want = acc.numpy_value(op, xs)
        assert fb.same_bits(got, want).all(), f"software {op} on {domain}: not NumPy's values although NumPy's loop runs"
        # ...and its own kernels stay within the bound.
        gpu.option("host_loops", "off")
        got = acc.gpupy_value(gp, op, xs)
    problems = violations(gpu.name, op, xs, got)
    assert not problems, f"{gpu.name} {op} on {domain} ({got.size} inputs): " + "; ".join(problems)


def test_transcendental_are_table_ops():
    assert TRANSCENDENTAL <= set(OPS), sorted(TRANSCENDENTAL - set(OPS))


def test_float32_ufuncs_cover_the_op_table():
    """Every op-table ufunc is measured unless NumPy has no float32 loop for it."""
    skipped = set(gp._core.ufunc_names()) - set(OPS)
    assert skipped <= {"bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"}, skipped


# --- the measure itself (no driver) ----------------------------------------------------------------

def _shift_ulps(x, k):
    """x moved k ulps away from zero (finite nonzero float32 values)."""
    bits = x.view(np.int32) + np.int32(k)
    return bits.view(np.float32)


def test_error_measures():
    a = np.array([1.0, 2.0, 0.0, np.nan, np.inf, -0.0, 4.0], np.float32)
    v = np.array([np.nextafter(np.float32(1), np.float32(2)), 2.0, 1e-30, np.nan, np.inf, 0.0, np.nan], np.float32)
    r = acc.compare(v, a)
    # relative error 2^-23 at 1, 0 at 2, |1e-30 - 0| where NumPy has 0; NaN == NaN and inf == inf count as
    # agreement, +0 for -0 and NaN for 4 as mismatches (left out of the statistics).
    assert r["mismatches"] == 2 and r["n"] == 7
    re = np.array([2.0**-23, 0.0, float(np.float32(1e-30))])
    assert r["mean"] == pytest.approx(re.mean())
    assert r["max_dep"] == pytest.approx(np.abs(re - re.mean()).max())
    assert r["std"] == pytest.approx(re.std())
    assert r["max_ulp"] == int(np.float32(1e-30).view(np.int32))  # from +0
    assert acc.compare(v, a, zero_sign=False)["mismatches"] == 1
    b = np.array([True, False]), np.array([True, True])
    assert acc.compare(*b)["max_ulp"] == 1 and acc.compare(b[0], b[0])["max_ulp"] == 0


@pytest.mark.parametrize("op,domain", [("sin", "[-pi,pi]"), ("exp", "[-87,88]"), ("log", "[1e-38,1e38]"),
                                       ("power", "[1e-3,1e3] ** [-12,12]"), ("logaddexp2", "[-100,100]")])
@pytest.mark.parametrize("driver", ["opengl", "software"])
def test_bounds_catch_regressions(driver, op, domain):
    """The reference moved 3 ulps everywhere, or 50 ulps on 1% of the
    inputs, fails the bounds; the reference itself passes."""
    samplers = dict((d, s) for o, d, s in CASES if o == op)[domain]
    xs = acc.inputs_for(op, domain, samplers, N, SEED)
    exact = acc.exact_value(op, xs)
    assert not violations(driver, op, xs, exact)
    ok = np.isfinite(exact) & (exact != 0)
    three = exact.copy()
    three[ok] = _shift_ulps(exact[ok], 3)
    assert violations(driver, op, xs, three), "3 ulps off everywhere passed"
    fifty = exact.copy()
    some = ok & (np.arange(exact.size) % 100 == 0)
    fifty[some] = _shift_ulps(exact[some], 50)
    assert violations(driver, op, xs, fifty), "50 ulps off on 1% of inputs passed"
