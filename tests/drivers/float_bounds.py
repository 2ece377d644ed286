"""The error bounds gpupy guarantees for float results, and how to check them.

Each bound follows from how the value is computed, not from a measurement
(docs/accuracy.md, "What the tests enforce"):

* MATH_ULP: a float32 transcendental function (glsl_math on the OpenGL
  driver, the double-precision C library rounded once on the software
  driver) is within 1 ulp of the correctly rounded result: both evaluate
  to well under an ulp and round once. The reference the tests use is
  NumPy's float64 function rounded to float32, itself the correctly rounded
  result or (when the exact value lies within ~2^-50 of a midpoint) its
  neighbour: 1 + 1 ulp from the reference.
* MATH_ULP_FLOAT16: a float16 transcendental function is computed as
  NumPy's float16 loops compute it, in float32 and rounded to float16
  (the software driver's float32 function, itself the double function
  rounded once). Against the reference (the float64 function rounded to
  float16), both round values within a float32 ulp of the exact result,
  so they can differ only where the exact value lies that close to a
  float16 midpoint, by the one step across it: 1 ulp.
* GLSL_DIVIDE_ULP, GLSL_SQRT_ULP: GLSL 4.50 (section 4.7.1) lets `a / b`
  be 2.5 ulp off and sqrt inherit inversesqrt's 2 ulp through a division;
  llvmpipe rounds both correctly, a GPU need not. +, -, * and conversions
  are correctly rounded everywhere.
* Denormals: GLSL lets an implementation flush any denormal input or result
  to zero. Where a driver may flush (`may_flush`), an element with a
  denormal input or a denormal reference also passes when it equals the
  result for the flushed inputs, or is a zero where the reference is a
  denormal.
"""

import numpy as np

MATH_ULP = 2
MATH_ULP_FLOAT16 = 1
GLSL_DIVIDE_ULP = 3
GLSL_SQRT_ULP = 5


def ordered(x):
    """float bits mapped to integers that order like the floats (Python ints)."""
    bits = x.itemsize * 8
    i = x.view(f"i{x.itemsize}").astype(object)
    return np.where(i < 0, -(2 ** (bits - 1)) - i, i)


def ulp_error(got, want):
    """Distance in ulps of the operands' own dtype; a NaN mismatch is huge."""
    both_nan = np.isnan(got) & np.isnan(want)
    err = np.abs(ordered(got) - ordered(want))
    err = np.where(both_nan, 0, err)
    err = np.where(np.isnan(got) != np.isnan(want), 2 ** 70, err)
    return err


def same_bits(got, want, zero_sign_free=False):
    """Elementwise: identical floats (any NaN matches any NaN)."""
    same = (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")) | (np.isnan(got) & np.isnan(want))
    if zero_sign_free:
        same |= (got == 0) & (want == 0)
    return same


def subnormal(x):
    x = np.asarray(x)
    if x.dtype.kind != "f":
        return np.zeros(x.shape, bool)
    return (x != 0) & (np.abs(x) < np.finfo(x.dtype).tiny)


def flushes(described):
    """True where a driver's describe() (a dict) says it flushes float32
    subnormals on the device (a GPU, or the OpenGL driver's GPU-like build)."""
    value = described.get("float32_subnormals", "kept")
    return value.startswith("flushed") and "runs on the host" not in value


def flush(x):
    """x with its float32 subnormals flushed, each to a zero of its sign."""
    x = np.asarray(x)
    return np.where(subnormal(x), np.copysign(np.asarray(0.0, x.dtype), x), x) if x.dtype == np.float32 else x


def flush_accepts(got, reference, inputs, evaluate, ok, internal=False):
    """Where a denormal input or reference is involved: got counts as right
    if `ok(got, value)` holds for the result of the flushed inputs (each a
    zero of its own sign, as NVIDIA flushes, or all of one sign), or got is
    a zero where the reference is a denormal. `internal`: the driver does
    flush (flushes()), and a denormal made inside the computation may have
    been flushed too, which moves a result by less than the smallest normal
    number: such a difference passes everywhere.
    `evaluate(inputs)` recomputes the reference; returns a boolean mask."""
    involved = subnormal(reference).copy()
    for x in inputs:
        involved |= subnormal(x)
    accept = np.zeros(got.shape, bool)
    if internal and got.dtype.kind == "f":
        with np.errstate(all="ignore"):
            accept |= np.abs(got.astype(np.float64) - reference.astype(np.float64)) < np.finfo(got.dtype).tiny
    if not involved.any():
        return accept
    if got.dtype.kind == "f":
        accept |= involved & subnormal(reference) & (got == 0)
    for zero in (None, 0.0, -0.0):
        flushed = [np.where(subnormal(x), np.copysign(np.asarray(0.0, x.dtype), x) if zero is None
                            else np.asarray(zero, x.dtype), x) if x.dtype.kind == "f" else x for x in inputs]
        accept |= involved & ok(got, evaluate(flushed))
    return accept
