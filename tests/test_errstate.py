"""np.errstate / np.seterr, with NumPy's semantics.

* "warn" (NumPy's default for divide, over and invalid): the device checks
  the values of each ufunc built in that state as it computes them (an
  extra output of the same pass, never a second pass), and the evaluation
  that found an error gives NumPy's RuntimeWarning, in NumPy's words, once
  per op (src/core/execution/fp_errors.hpp).
* "ignore": nothing is checked.
* "raise", "call" (and "print", "log"): the ufunc runs in NumPy, whose
  loops raise or call at the op.
What counts is the state an op was built in (NumPy checks at the call),
not the state it is evaluated in.
"""

import warnings

import numpy as np
import pytest

import gpupy as gp


@pytest.mark.parametrize("call, kind", [(lambda a, z: a / z, "divide by zero"), (lambda a, z: gp.log(z), "divide by zero"),
                                        (lambda a, z: gp.sqrt(-a - 1), "invalid value"),
                                        (lambda a, z: z / z, "invalid value"),
                                        (lambda a, z: (a + 1e300) * 1e300, "overflow"),
                                        (lambda a, z: gp.arange(3) // 0, "divide by zero")])
def test_raise_gives_numpys_floating_point_error(gpu, silent_fallback, call, kind):
    a, z = gp.arange(4.0), gp.zeros(4)
    with np.errstate(all="raise"):
        with pytest.raises(FloatingPointError, match=kind):
            call(a, z)
    with np.errstate(all="ignore"):
        call(a, z)  # and nothing without


def test_call_reaches_the_callback(gpu, silent_fallback):
    seen = []
    previous = np.seterrcall(lambda kind, flag: seen.append(kind))
    try:
        with gp.errstate(invalid="call"):
            r = gp.sqrt(gp.asarray([-1.0, 4.0]))
    finally:
        np.seterrcall(previous)
    assert seen == ["invalid value"]
    np.testing.assert_array_equal(np.asarray(r), [np.nan, 2.0])


def test_seterr_is_honoured_until_reset(gpu, silent_fallback):
    old = np.seterr(divide="raise")
    try:
        with pytest.raises(FloatingPointError):
            gp.arange(3.0) / 0
    finally:
        np.seterr(**old)
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):  # the default again
        np.testing.assert_array_equal(np.asarray(gp.ones(2) / gp.zeros(2)), [np.inf, np.inf])


def test_the_default_state_stays_on_the_device(gpu):
    # The gpu fixture refuses any fallback: under NumPy's default state the
    # division runs on the device, gives NumPy's values and NumPy's warnings.
    with np.errstate(all="ignore"):
        want = np.arange(4.0) / np.zeros(4)
    with pytest.warns(RuntimeWarning) as seen:
        np.testing.assert_array_equal(np.asarray(gp.arange(4.0) / gp.zeros(4)), want)
    assert messages(seen) == ["divide by zero encountered in divide", "invalid value encountered in divide"]
    with np.errstate(divide="ignore"), pytest.warns(RuntimeWarning) as seen:
        np.testing.assert_array_equal(np.asarray(gp.arange(4.0) / gp.zeros(4)), want)
    assert messages(seen) == ["invalid value encountered in divide"]


# --- "warn": errors found on the device -------------------------------------------------

def messages(seen):
    return sorted({str(w.message) for w in seen if w.category is RuntimeWarning})


def special_values(dtype):
    info = np.finfo(dtype)
    return np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 100.0, 1000.0, info.max, -info.max / 3, info.tiny,
                     np.inf, -np.inf, np.nan], dtype=dtype)


UNARY = ["sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin",
         "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "square",
         "reciprocal", "negative", "absolute", "floor", "ceil", "trunc", "rint", "sign"]
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power", "arctan2", "hypot",
          "logaddexp", "logaddexp2", "maximum", "minimum", "fmax", "fmin", "copysign"]


def on_device(ufunc, nin, dtype):
    """Whether this driver computes the ufunc for the dtype itself (else
    gpupy hands it to NumPy, which the fixture's raise mode refuses)."""
    try:
        with np.errstate(all="ignore"):
            np.asarray(ufunc(*[gp.full(4, 0.5, dtype)] * nin))
        return True
    except gp.FallbackError:
        return False


def internal_overflow(name, *operands):
    """The one difference: NumPy's logaddexp(x, y) computes x - y first,
    which overflows for finite operands further apart than the float range
    (max and -max/3), and warns of that although its result is finite.
    gpupy checks each op's result, which is right."""
    if name not in ("logaddexp", "logaddexp2"):
        return False
    x, y = operands
    with np.errstate(all="ignore"):
        return bool(np.isfinite(x) and np.isfinite(y) and np.isinf(x - y))


def cpu_dependent(name, got, *operands):
    """NumPy's own warnings that depend on the CPU it runs on: its AVX-512
    power loops (x86 CPUs with AVX512_SKX and later) warn "divide by zero"
    for 0 ** -inf and "overflow" for (-)huge ** inf, where IEEE 754 (9.2.1)
    and its other loops raise nothing. gpupy follows IEEE 754 on every
    CPU; there it must give no warning (any other is wrong)."""
    return name == "power" and bool(np.isinf(operands[1])) and got == []


@pytest.fixture(params=["device", "host"])
def placement(request):
    """Lazy work forced onto the device, or onto the host engine."""
    previous = gp.set_placement(request.param)
    yield request.param
    gp.set_placement(previous)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_warnings_are_numpys_for_every_special_value(gpu, placement, dtype):
    """Each ufunc over every special value (every pair for binary ones):
    the elements NumPy warns about one call each, the rest in one call,
    with gpupy's warnings equal to NumPy's for each call."""
    v = special_values(dtype)
    checked, wrong = 0, []
    for name in UNARY + BINARY:
        f, g = getattr(np, name), getattr(gp, name)
        if not on_device(g, f.nin, dtype):
            continue
        operands = [v] if f.nin == 1 else [np.repeat(v, v.size), np.tile(v, v.size)]
        quiet = np.ones(operands[0].size, dtype=bool)
        for i in range(operands[0].size):
            one = [o[i:i + 1] for o in operands]
            want = gpu.warnings_of(lambda: f(*one))
            if want:
                quiet[i] = False
                got = gpu.warnings_of(lambda: np.asarray(g(*[gp.asarray(o) for o in one])))
                if got != want and not internal_overflow(name, *[o[0] for o in one]) \
                        and not cpu_dependent(name, got, *[o[0] for o in one]):
                    wrong.append((name, [float(o[0]) for o in one], got, want))
                checked += 1
        rest = [o[quiet] for o in operands]
        got = gpu.warnings_of(lambda: np.asarray(g(*[gp.asarray(o) for o in rest])))
        if got:
            wrong.append((name, "where NumPy gives none", got))
    assert wrong == []
    assert checked > 50


def test_an_op_warns_by_the_state_it_was_built_in(gpu):
    x = gp.asarray(np.array([1.0, 0.0, 2.0]))
    with np.errstate(divide="ignore"):
        quiet = 1 / x
    loud = 2 / x
    assert gpu.warnings_of(lambda: np.asarray(quiet)) == []
    with np.errstate(all="ignore"):  # evaluated here, built in the default state
        with pytest.warns(RuntimeWarning, match="divide by zero encountered in divide"):
            np.asarray(loud)


def test_each_error_is_reported_once_per_op(gpu):
    gp.set_block_size(1024)  # (the fixture puts it back)
    d = np.ones(10_000, dtype=np.float32)
    d[::1000] = 0.0  # a zero in every block
    r = 1 / gp.asarray(d)
    with pytest.warns(RuntimeWarning) as seen:
        np.asarray(r)
    assert [str(w.message) for w in seen] == ["divide by zero encountered in divide"]
    assert gp.stats()["fp_errors_reported"] >= 1
    assert gpu.warnings_of(lambda: (np.asarray(r[5:]), np.asarray(r * 2))) == []


def test_errors_in_work_fused_away_from_the_result(gpu):
    x = np.array([2.0, 0.0, -1.0, 4.0] * 64, dtype=np.float32)
    g = gp.asarray(x)
    # NumPy computes 1/x everywhere before choosing; the shader does too.
    for call in (lambda m, a: m.where(a != 0, 1 / a, 0.0),
                 lambda m, a: m.minimum(m.exp(a * 1000), 1.0),
                 lambda m, a: m.sum(m.sqrt(a)),
                 lambda m, a: m.max(m.log(a) + 1)):
        assert gpu.warnings_of(lambda: np.asarray(call(gp, g))) == gpu.warnings_of(lambda: call(np, x))


def test_only_the_elements_computed_are_checked(gpu):
    # A lazy result of which part is read is checked on that part: a
    # view of 1/x that skips the zero finds nothing (NumPy, computing all
    # of 1/x at the call, would warn).
    gp.set_block_size(1024)  # (the fixture puts it back)
    x = gp.asarray(np.array([0.0] + [1.0] * 4095))
    r = 1 / x
    # (Exporting the view itself would export -- so evaluate -- the whole
    # array; work on it reads only its own elements.)
    assert gpu.warnings_of(lambda: np.asarray(r[1024:] * 2)) == []  # blocks 1 to 3
    assert gpu.warnings_of(lambda: np.asarray(r)) == ["divide by zero encountered in divide"]


def test_integer_division_by_zero(gpu):
    a = gp.asarray(np.arange(1, 5, dtype=np.int32))
    z = gp.asarray(np.array([1, 0, 2, 3], dtype=np.int32))
    for name in ("floor_divide", "remainder", "fmod"):
        want = gpu.warnings_of(lambda: getattr(np, name)(np.arange(1, 5, dtype=np.int32), np.array([1, 0, 2, 3], np.int32)))
        assert gpu.warnings_of(lambda: np.asarray(getattr(gp, name)(a, z))) == want == [
            f"divide by zero encountered in {name}"]


def test_a_warning_filtered_into_an_error_raises_at_evaluation(gpu):
    r = gp.log(gp.asarray(np.array([1.0, 0.0, 3.0], dtype=np.float32)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            np.asarray(r)
        # The values were computed and kept; read again, nothing is raised.
        with np.errstate(divide="ignore"):
            want = np.log(np.float32([1.0, 0.0, 3.0]))
        np.testing.assert_array_equal(np.asarray(r), want)


def test_powers_warn_in_numpys_words(gpu):
    # `a ** 2` is NumPy's square and `a ** -1` its reciprocal (so are their
    # warnings); np.power(a, 2) is "power" throughout.
    zero, big = np.float32([0.0, 2.0]), np.float32([1e30, 2.0])
    for host, call, message in ((zero, lambda a: a ** -1, "divide by zero encountered in reciprocal"),
                                (zero, lambda a: a ** -1.5, "divide by zero encountered in power"),
                                (big, lambda a: a ** 2, "overflow encountered in square"),
                                (zero, lambda a: np.power(a, -1), "divide by zero encountered in power"),
                                (big, lambda a: np.power(a, 2), "overflow encountered in power")):
        assert gpu.warnings_of(lambda: np.asarray(call(gp.asarray(host)))) == gpu.warnings_of(lambda: call(host)) == [message]


def test_ignore_checks_nothing(gpu):
    x = gp.asarray(np.array([1.0, 0.0, 2.0] * 100, dtype=np.float32))
    gp.reset_stats()
    with np.errstate(all="ignore"):
        r = gp.exp(1 / x) * 2
    np.asarray(r)
    assert gp.stats()["checked_ops"] == 0
    gp.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.asarray(gp.exp(1 / x) * 3)
    assert gp.stats()["checked_ops"] >= 3  # divide, exp, multiply: one pass
    assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] == 1


def test_in_place_under_raise_writes_then_raises(gpu, silent_fallback):
    target, want = gp.full(1 << 15, 1e300), np.full(1 << 15, 1e300)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        target *= 1e308
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow"):
        want *= 1e308
    np.testing.assert_array_equal(np.asarray(target), want)


def test_opengl_runs_the_full_checks_only_where_a_value_is_not_finite(opengl):
    # The checks run first in a quick form (was every value finite?); only
    # an evaluation that met a NaN or an infinity runs again in the full
    # form, which names the error: one more program, built once.
    gp.set_placement("device")
    try:
        x = gp.asarray(np.linspace(1, 2, 5000, dtype=np.float32))
        gp.reset_stats()
        assert opengl.warnings_of(lambda: np.asarray((x + 3) * x - 1)) == []
        assert gp.stats()["programs_compiled"] == 1
        z = gp.asarray(np.r_[np.zeros(1, np.float32), np.linspace(1, 2, 4999, dtype=np.float32)])
        gp.reset_stats()
        assert opengl.warnings_of(lambda: np.asarray((x + 4) / z - 1)) == ["divide by zero encountered in divide"]
        assert gp.stats()["programs_compiled"] == 2  # quick, then full
        gp.reset_stats()
        assert opengl.warnings_of(lambda: np.asarray((x + 5) / z - 1)) == ["divide by zero encountered in divide"]
        assert gp.stats()["programs_compiled"] == 0  # both cached
    finally:
        gp.set_placement("auto")


def test_divmod_warns_as_divmod(gpu):
    for a, b in ((np.arange(1, 5, dtype=np.int32), np.array([1, 0, 2, 3], np.int32)),
                 (np.float32([1, 0, 2, 3]), np.float32([1, 0, 0, 3]))):
        want = gpu.warnings_of(lambda: divmod(a, b))
        assert gpu.warnings_of(lambda: [np.asarray(r) for r in divmod(gp.asarray(a), gp.asarray(b))]) == want
        assert all("divmod" in w for w in want) and want


def test_divmod_of_a_dtype_gpupy_does_not_hold_is_numpys_one_call(gpu, silent_fallback):
    # An int8 zero by a float16 zero (modf's part of an int8 is float16):
    # the results are float16, so NumPy computes them -- in one divmod, with
    # its one warning, not as a floor_divide and a remainder warning apart
    # (found by the differential campaign).
    zero8 = np.array(0, np.int8)
    for a, b in ((zero8, np.modf(zero8)[0]), (np.int8([3, 0]), np.float16([0, 0]))):
        want = gpu.warnings_of(lambda: divmod(a, b))
        got = gpu.warnings_of(lambda: [np.asarray(r) for r in divmod(gp.asarray(a), b)])
        assert got == want and want and all("divmod" in w for w in want)
        with np.errstate(invalid="ignore", divide="ignore"):
            pairs = list(zip(divmod(gp.asarray(a), b), np.divmod(a, b)))
        for r, w in pairs:
            np.testing.assert_array_equal(np.asarray(r), w)
            assert np.asarray(r).dtype == w.dtype


# --- reductions and scans ---------------------------------------------------------

def _rows(dtype):
    """Rows whose folds overflow, meet infinities, carry NaNs or stay finite
    (sums and products alike), 700 wide: more than one chunk of a
    reduction (the package's CHUNK is 256), so the core's chains of REDUCE
    nodes and a scan's totals are checked too."""
    big = np.finfo(dtype).max / 4
    rows = np.ones((6, 700), dtype=dtype)
    rows[1, 300:310] = big                  # overflows in the second chunk
    rows[2, 10], rows[2, 600] = np.inf, -np.inf  # inf - inf: invalid
    rows[3, 5] = np.nan                     # carried: nothing
    rows[4, :] = 1.5                        # 1.5 ** 700 overflows a product only
    rows[5, 100:120] = -big                 # overflows towards -inf
    # (Not here: data whose sum overflows in one order and not in another,
    # big and -big alternating. NumPy's pairwise sum and gpupy's chunks
    # add in different orders; each warns about what its own sum met.)
    return rows


REDUCTIONS = {
    "sum": lambda m, x: m.sum(x, axis=1),
    "sum_all": lambda m, x: m.sum(x),
    "sum_method": lambda m, x: x.sum(1),
    "prod": lambda m, x: m.prod(x, axis=1),
    "mean": lambda m, x: m.mean(x, axis=1),
    "nansum": lambda m, x: m.nansum(x, axis=1),
    "add_reduce": lambda m, x: m.add.reduce(x, axis=1),
    "multiply_reduce_columns": lambda m, x: m.multiply.reduce(x.T, axis=0),
    "cumsum": lambda m, x: m.cumsum(x, axis=1),
    "cumprod": lambda m, x: m.cumprod(x, axis=1),
    "add_accumulate": lambda m, x: m.add.accumulate(x, axis=1),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_warn_as_numpy(gpu, placement, dtype, name):
    """Each row alone, then all of them: gpupy's warnings are NumPy's
    (overflow, invalid value, "encountered in reduce" / "in accumulate")."""
    call = REDUCTIONS[name]
    rows = _rows(dtype)
    if name == "sum_all":
        rows = rows[:, :3].copy()  # 6 x 3 values in one total, two the largest float: an overflow in any order
        rows[1, 1] = rows[1, 2] = np.finfo(dtype).max
    wrong = []
    for which in [[i] for i in range(len(rows))] + [list(range(len(rows)))]:
        x = rows[which]
        want = gpu.warnings_of(lambda: call(np, x))
        got = gpu.warnings_of(lambda: np.asarray(call(gp, gp.asarray(x))))
        if got != want:
            wrong.append((which, got, want))
    assert wrong == []


def test_reductions_warn_once_per_call(gpu):
    gp.set_block_size(1024)  # several blocks, each with its own chains (the fixture puts it back)
    x = np.full(100_000, np.finfo(np.float32).max / 2, np.float32)
    for call, what in ((lambda m, a: m.sum(a), "reduce"), (lambda m, a: m.cumsum(a), "accumulate")):
        with pytest.warns(RuntimeWarning) as seen:
            np.asarray(call(gp, gp.asarray(x)))
        assert [str(w.message) for w in seen] == [f"overflow encountered in {what}"]
        with pytest.warns(RuntimeWarning) as seen:
            call(np, x)
        assert [str(w.message) for w in seen] == [f"overflow encountered in {what}"]


def test_reductions_under_raise_and_ignore(gpu, silent_fallback):
    x = gp.asarray(np.full(5000, 1e300))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in reduce"):
        np.sum(x * 1e8)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in accumulate"):
        np.cumsum(x * 1e8)
    gp.reset_stats()
    with np.errstate(all="ignore"):
        total = np.sum(x * 1e8)
    assert float(total) == np.inf
    assert gp.stats()["checked_ops"] == 0


def test_products_and_integer_sums_are_not_fold_checked(gpu):
    # NumPy's integer sums wrap silently; gpupy's matrix product on the
    # device (a reduction inside) is not NumPy's reduce.
    ints = gp.asarray(np.full(1000, 2**62, np.int64))
    assert gpu.warnings_of(lambda: np.asarray(ints.sum())) == []
    gp.set_placement("device")
    try:
        gp.reset_stats()
        a = gp.asarray(np.ones((40, 40), np.float32))
        np.asarray(a @ a)
        assert gp.stats()["checked_ops"] <= 1  # the products' multiply, not the fold
    finally:
        gp.set_placement("auto")


@pytest.mark.parametrize("dtype", [np.float16, np.float32], ids=str)
def test_a_python_number_that_overflows_the_loop_warns_as_numpy(gpu, dtype):
    """A weak Python number becomes the loop's dtype as NumPy's scalar type
    makes it: a finite number beyond the dtype's range is an infinity, with
    NumPy's "overflow encountered in cast" (FloatingPointError under
    over="raise"); an infinity given is no overflow."""
    big = 1e5 if dtype == np.float16 else 1e300
    h = np.array([1, 2], dtype)
    for call in (lambda xp: xp.asarray(h) + big, lambda xp: xp.asarray(h) * 10 ** 60,
                 lambda xp: xp.asarray(h) < big, lambda xp: xp.asarray(h) + float("inf")):
        want = gpu.warnings_of(lambda: np.asarray(call(np)))
        assert gpu.warnings_of(lambda: np.asarray(call(gp))) == want
        with np.errstate(all="ignore"):
            gpu.assert_same(call(gp), call(np))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in cast"):
        gp.asarray(h) + big
