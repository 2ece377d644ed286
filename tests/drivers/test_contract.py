"""Contract tests: every interface function of driver.hpp, on every driver."""

import ctypes
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from driver_abi import (ABI_VERSION, DTYPE, DTYPES, ERROR, ERROR_NOMEM, FP_INF, FP_INF_AT_ZERO, FP_INT_OVERFLOW, FP_NAN,
                        FP_ZERO_DIVISOR, NUM_OPS, NUMPY_OF_DTYPE, OK, OP, OP_CONST, OP_INDEX, OP_LOAD, OP_NONE, Driver,
                        REDUCE_CHUNKS, REDUCE_PREFIX, IrBuilder, IrInstr, Resources, find_driver)

F32 = DTYPE["FLOAT32"]


def declared_dtypes(driver):
    return [dt for dt in range(len(DTYPES)) if driver.get_method(OP_LOAD, dt)]


def sample_values(dt, n, seed=0):
    rng = np.random.default_rng(seed)
    npdt = NUMPY_OF_DTYPE[dt]
    if npdt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if npdt.kind in "iu":
        info = np.iinfo(npdt)
        return rng.integers(info.min, info.max, n, dtype=npdt, endpoint=True)
    return (rng.standard_normal(n) * 1e3).astype(npdt)


# --- infrastructure -----------------------------------------------------------

def test_entry_table(driver):
    assert driver.api.abi_version == ABI_VERSION
    assert driver.name in ("software", "opengl")


def test_init_and_cleanup_twice(driver):
    # A second, independent instance in the same process; cleanup frees its
    # blocks; the first instance keeps working.
    other = Driver(driver.path)
    b = other.upload(np.arange(10, dtype=np.float32))
    other.alloc(F32, 5)  # left allocated on purpose: cleanup must free it
    np.testing.assert_array_equal(other.read(b, 0, 10, np.float32), np.arange(10, dtype=np.float32))
    other.close()
    b = driver.upload(np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(driver.read(b, 0, 3, np.float32), [0, 1, 2])
    driver.free(b)


def test_opengl_init_failure_is_a_one_line_reason():
    # With glvnd pointed at no EGL vendor there is no display: init must
    # return GPUPY_ERROR with a reason, not crash. Run in a child process,
    # since glvnd reads its vendor list once per process.
    path = find_driver("opengl")
    if path is None:
        pytest.skip("OpenGL driver library not found")
    try:
        ctypes.CDLL(str(path))
    except OSError as e:
        pytest.skip(f"OpenGL driver library cannot be loaded here: {e}")
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import driver_abi as a\n"
        "try:\n"
        "    a.Driver(%r)\n"
        "    print('INIT OK')\n"
        "except a.DriverError as e:\n"
        "    print('REASON', e)\n" % (str(Path(__file__).parent), str(path)))
    env = dict(os.environ, __EGL_VENDOR_LIBRARY_FILENAMES="/nonexistent/egl_vendor.json")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stdout.splitlines() if line]
    assert len(lines) == 1 and lines[0].startswith("REASON"), out.stdout
    assert "EGL" in lines[0]


def test_get_method(driver):
    # Every driver stores float32; nonsense ops and dtypes are refused.
    assert driver.get_method(OP_LOAD, F32) == 1
    assert driver.get_method(OP["ADD"], F32) == 1
    assert driver.get_method(NUM_OPS, F32) == 0
    assert driver.get_method(-5, F32) == 0
    assert driver.get_method(OP["ADD"], len(DTYPES)) == 0
    # Whatever a driver can compute on a dtype, it can also store it.
    for dt in range(len(DTYPES)):
        if any(driver.get_method(op, dt) for op in range(3, NUM_OPS)):
            assert driver.get_method(OP_LOAD, dt) == 1, DTYPES[dt]


# --- blocks -----------------------------------------------------------------

def test_block_alloc_rejects_bad_requests(driver):
    rc, _ = driver.alloc_rc(F32, -1)
    assert rc == ERROR and driver.last_error()
    rc, empty = driver.alloc_rc(F32, 0)  # empty blocks are allowed
    assert rc == OK
    driver.free(empty)
    rc, _ = driver.alloc_rc(len(DTYPES), 10)
    assert rc == ERROR and driver.last_error()


def test_block_alloc_nomem_under_a_byte_budget(driver):
    assert driver.set_option("max_bytes", 4096) == OK
    try:
        a = driver.alloc(F32, 512)  # 2 KiB
        rc, _ = driver.alloc_rc(F32, 1024)  # 4 KiB more: over budget
        assert rc == ERROR_NOMEM
        driver.free(a)  # evicting makes room: the retry succeeds
        b = driver.alloc(F32, 1024)
        driver.free(b)
    finally:
        driver.set_option("max_bytes", 0)


@pytest.mark.parametrize("n", [1, 5, 4099, 10000])
def test_block_round_trip_every_dtype(driver, n):
    for dt in declared_dtypes(driver):
        values = sample_values(dt, n, seed=n)
        block = driver.upload(values)
        back = driver.read(block, 0, n, values.dtype)
        assert back.tobytes() == values.tobytes(), DTYPES[dt]
        driver.free(block)


def test_block_partial_read_write(driver):
    n = 9000
    for dt in declared_dtypes(driver):
        values = sample_values(dt, n, seed=dt)
        block = driver.upload(values)
        patch = sample_values(dt, 4500, seed=99 + dt)
        driver.write(block, 4000, patch)  # crosses texture rows
        expected = values.copy()
        expected[4000:8500] = patch
        assert driver.read(block, 0, n, values.dtype).tobytes() == expected.tobytes(), DTYPES[dt]
        assert driver.read(block, 4095, 3, values.dtype).tobytes() == expected[4095:4098].tobytes()
        assert driver.read(block, 8999, 1, values.dtype).tobytes() == expected[8999:].tobytes()
        driver.free(block)


def test_block_read_out_of_range_fails(driver):
    b = driver.upload(np.zeros(10, np.float32))
    out = np.empty(20, np.float32)
    assert driver.api.block_read(driver.ctx, b, 5, 6, out.ctypes.data) == ERROR
    assert driver.last_error()
    assert driver.api.block_write(driver.ctx, b, -1, 2, out.ctypes.data) == ERROR
    driver.free(b)


def test_opengl_small_texture_width_round_trip(opengl):
    # With a 7-texel-wide layout every transfer splits into partial rows.
    assert opengl.set_option("block_width", 7) == OK
    try:
        values = np.arange(100, dtype=np.int32) * 3 - 50
        b = opengl.upload(values)
        opengl.write(b, 10, np.full(23, -1, np.int32))
        values[10:33] = -1
        np.testing.assert_array_equal(opengl.read(b, 0, 100, np.int32), values)
        np.testing.assert_array_equal(opengl.read(b, 3, 12, np.int32), values[3:15])
        # Code generation follows the width too.
        ir = IrBuilder((100,))
        x = ir.load(b, DTYPE["INT32"])
        ir.op("NEGATIVE", DTYPE["INT32"], x)
        dst = opengl.alloc(DTYPE["INT32"], 100)
        opengl.eval(ir.build(), dst)
        np.testing.assert_array_equal(opengl.read(dst, 0, 100, np.int32), -values)
        # The width cannot change under live blocks.
        assert opengl.set_option("block_width", 9) == ERROR
        opengl.free(b)
        opengl.free(dst)
    finally:
        assert opengl.set_option("block_width", "default") == OK


# --- IR ---------------------------------------------------------------------

def two_op_ir(driver, n=16):
    a = driver.upload(np.arange(n, dtype=np.float32))
    ir = IrBuilder((n,))
    x = ir.load(a, F32)
    c = ir.const(F32, 2.0)
    m = ir.op("MULTIPLY", F32, x, c)
    ir.op("ADD", F32, m, x)
    return ir.build(), a


def test_check_ir_fits_and_reports_resources(driver):
    ir, a = two_op_ir(driver)
    rc, res = driver.check_ir(ir)
    assert rc == 1
    assert driver.api.resource_check(driver.ctx, ctypes.byref(res)) == 1
    driver.free(a)


def test_check_ir_does_not_fit_under_max_ops(driver):
    ir, a = two_op_ir(driver)
    assert driver.set_option("max_ops", 1) == OK
    try:
        rc, res = driver.check_ir(ir)
        assert rc == 0
        assert driver.api.resource_check(driver.ctx, ctypes.byref(res)) == 0
    finally:
        driver.set_option("max_ops", "default")
    driver.free(a)


def test_check_ir_rejects_malformed_ir(driver):
    ir = IrBuilder((4,))
    ir.op("ADD", F32, 0, 1)  # operands that do not exist
    rc, _ = driver.check_ir(ir.build())
    assert rc == ERROR and "operand" in driver.last_error()


def test_block_wrap_evaluates_in_host_memory(driver):
    """The optional capability: CPU drivers compute on host memory in place
    (the core's host engine); a GPU driver leaves it null."""
    if not driver.can_wrap():
        assert driver.name != "software", "the software driver is the core's host engine"
        return
    src = np.arange(16, dtype=np.float32)
    dst = np.full(16, -1.0, dtype=np.float32)
    a, d = driver.wrap(src), driver.wrap(dst)
    ir = IrBuilder((16,))
    x = ir.load(a, F32)
    ir.op("ADD", F32, ir.op("MULTIPLY", F32, x, ir.const(F32, 2.0)), x)
    driver.eval(ir.build(), d)
    np.testing.assert_array_equal(dst, src * np.float32(2) + src)  # written in place
    driver.free(a)
    driver.free(d)
    # block_free released the block, not the memory it wrapped.
    np.testing.assert_array_equal(src, np.arange(16, dtype=np.float32))


def test_finish_waits_for_the_work_handed_over(driver):
    """The optional finish: once eval_ir has handed work to the device,
    finish returns OK (with nothing pending too), and the results are
    there to read. A device that computes asynchronously must offer it
    (the calibration times passes through it)."""
    if not driver.api.finish:
        assert driver.name == "software", "a device driver waits for its work through finish"
        return
    assert driver.api.finish(driver.ctx) == OK  # nothing pending
    x = np.arange(1 << 16, dtype=np.float32)
    a = driver.upload(x)
    dst = driver.alloc(F32, x.size)
    ir = IrBuilder(x.shape)
    ir.op("MULTIPLY", F32, ir.load(a, F32), ir.const(F32, 3.0))
    driver.eval(ir.build(), dst)
    assert driver.api.finish(driver.ctx) == OK
    np.testing.assert_array_equal(driver.read(dst, 0, x.size, np.float32), x * np.float32(3))
    driver.free(a)
    driver.free(dst)


HOST_LOOP = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64),
                             ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p)


def test_offer_host_loop_is_called_for_the_ops_taken(driver):
    """The optional capability: the core offers NumPy's inner loops; a host
    driver takes those it wants (the math functions) and calls them, with
    contiguous operands, instead of its own kernels."""
    if not driver.api.offer_host_loop:
        assert driver.name != "software", "the software driver takes NumPy's math loops"
        return
    other = Driver(driver.path)  # its own instance: the loop stays out of other tests
    calls = []

    def fake_sin(args, n, steps, data):
        # out = in + 1000 (recognisably not a sine), via the pointers given
        count, (step_in, step_out) = n[0], (steps[0], steps[1])
        assert step_in == step_out == 4 and data == 1234
        src = np.ctypeslib.as_array(ctypes.cast(args[0], ctypes.POINTER(ctypes.c_float)), (count,))
        dst = np.ctypeslib.as_array(ctypes.cast(args[1], ctypes.POINTER(ctypes.c_float)), (count,))
        dst[:] = src + np.float32(1000)
        calls.append(count)

    loop = HOST_LOOP(fake_sin)
    try:
        fn = ctypes.cast(loop, ctypes.c_void_p)
        assert other.api.offer_host_loop(other.ctx, OP["SIN"], F32, fn, 1234) == 1
        assert other.api.offer_host_loop(other.ctx, OP["ADD"], F32, fn, 1234) == 0  # its own kernel is inline
        assert other.api.offer_host_loop(other.ctx, OP["SIN"], DTYPE["INT32"], fn, 1234) == 0
        x = np.arange(100, dtype=np.float32)
        a = other.upload(x)
        dst = other.alloc(F32, 100)
        ir = IrBuilder((100,))
        ir.op("ADD", F32, ir.op("SIN", F32, ir.load(a, F32)), ir.const(F32, 0.5))
        other.eval(ir.build(), dst)
        assert sum(calls) == 100
        np.testing.assert_array_equal(other.read(dst, 0, 100, np.float32), x + np.float32(1000.5))
        assert other.set_option("host_loops", "off") == OK
        other.eval(ir.build(), dst)
        assert sum(calls) == 100  # its own kernel ran
        # (its C-library sine: within an ulp or so of NumPy's)
        np.testing.assert_allclose(other.read(dst, 0, 100, np.float32), np.sin(x) + np.float32(0.5), atol=1e-6)
    finally:
        other.close()


def test_eval_ir(driver):
    ir, a = two_op_ir(driver)
    dst = driver.alloc(F32, 16)
    driver.eval(ir, dst)
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(driver.read(dst, 0, 16, np.float32), x * np.float32(2) + x)
    driver.free(a)
    driver.free(dst)


def test_eval_ir_errors(driver):
    ir, a = two_op_ir(driver)
    assert driver.eval_rc(ir, a) == ERROR  # destination is also a leaf
    assert driver.last_error()
    wrong = driver.alloc(DTYPE["INT32"], 16) if driver.get_method(OP_LOAD, DTYPE["INT32"]) else None
    if wrong is not None:
        assert driver.eval_rc(ir, wrong) == ERROR  # result dtype != destination's
        driver.free(wrong)
    short = driver.alloc(F32, 8)
    assert driver.eval_rc(ir, short) == ERROR  # output range outside the block
    driver.free(short)
    driver.free(a)


# --- floating-point error checks (gpupy_ir.check) ---------------------------------

def _checked_quotient(driver, npdt, a_values, b_values, also=()):
    """Evaluates a / b (then * 2) with both instructions checked; returns
    the flags of each and the destination's values."""
    dt = DTYPE[np.dtype(npdt).name.upper()]
    n = len(a_values)
    a = driver.upload(np.asarray(a_values, dtype=npdt))
    b = driver.upload(np.asarray(b_values, dtype=npdt))
    ir = IrBuilder((n,))
    q = ir.op("DIVIDE", dt, ir.load(a, dt), ir.load(b, dt))
    twice = ir.op("MULTIPLY", dt, q, ir.const(dt, 2.0))
    built = ir.build(checks=[q, twice])
    values = _evaluated(driver, built, dt, n, npdt, (a, b))
    return built.check_flags(), values


def _evaluated(driver, built, dt, count, npdt, inputs):
    """Evaluates `built` into a fresh block of `count` elements and reads
    it; frees that block and the `inputs` blocks."""
    dst = driver.alloc(dt, count)
    try:
        driver.eval(built, dst)
        return driver.read(dst, 0, count, npdt)
    finally:
        for blk in (*inputs, dst):
            driver.free(blk)


def _skip_without(driver, op, npdt):
    if not driver.get_method(OP[op], DTYPE[np.dtype(npdt).name.upper()]):
        pytest.skip(f"{driver.name} has no {np.dtype(npdt).name} {op.lower()}")


@pytest.mark.parametrize("npdt", [np.float32, np.float64])
def test_checks_report_what_the_values_show(driver, npdt):
    _skip_without(driver, "DIVIDE", npdt)
    big = np.finfo(npdt).max
    cases = [
        ([1.0, 2.0, 3.0], [1.0, 4.0, 8.0], [0, 0]),             # finite throughout: nothing
        ([1.0, 2.0, 3.0], [1.0, 0.0, 8.0], [FP_INF_AT_ZERO, 0]),  # 2 / 0: an infinity at a zero
        ([0.0, 2.0, 3.0], [0.0, 1.0, 8.0], [FP_NAN, 0]),        # 0 / 0: a NaN from no NaN (then carried)
        ([big, 2.0, 3.0], [0.5, 1.0, 8.0], [FP_INF, 0]),         # an overflow in the quotient
        ([big * 0.75, 2.0, 3.0], [1.0, 1.0, 8.0], [0, FP_INF]),  # an overflow in the product
        ([np.nan, np.inf, 3.0], [1.0, 1.0, 8.0], [0, 0]),       # NaN and inf carried, not made
        ([np.inf, 2.0, 3.0], [np.inf, 1.0, 8.0], [FP_NAN, 0]),   # inf / inf
    ]
    for a, b, want in cases:
        flags, values = _checked_quotient(driver, npdt, a, b)
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(values, np.asarray(a, npdt) / np.asarray(b, npdt) * npdt(2))
        assert flags == want, (a, b)


def test_checks_flag_every_nan_of_logaddexp(driver):
    # NumPy's logaddexp flags a NaN operand (an ordered comparison); an
    # addition carries it unflagged.
    if not driver.get_method(OP["LOGADDEXP"], F32):
        pytest.skip(f"{driver.name} has no float32 logaddexp")
    a = driver.upload(np.array([np.nan, 1.0, 2.0], np.float32))
    b = driver.upload(np.array([1.0, 1.0, 2.0], np.float32))
    ir = IrBuilder((3,))
    x, y = ir.load(a, F32), ir.load(b, F32)
    total = ir.op("ADD", F32, x, y)
    both = ir.op("LOGADDEXP", F32, total, y)
    built = ir.build(checks=[total, both])
    dst = driver.alloc(F32, 3)
    driver.eval(built, dst)
    assert built.check_flags() == [0, FP_NAN]
    for blk in (a, b, dst):
        driver.free(blk)


def test_checks_find_integer_division_by_zero(driver):
    i32 = DTYPE["INT32"]
    if not driver.get_method(OP["FLOOR_DIVIDE"], i32):
        pytest.skip(f"{driver.name} has no int32 floor_divide")
    lowest = np.iinfo(np.int32).min
    for dividends, divisors, want in (([5, 6, 7, 8], [1, 2, 3, 4], 0), ([5, 6, 7, 8], [1, 2, 0, 4], FP_ZERO_DIVISOR),
                                      ([5, lowest, 7, 8], [-1, -1, 3, 4], FP_INT_OVERFLOW),
                                      ([lowest, 6, 7, 8], [1, -1, 0, 4], FP_ZERO_DIVISOR)):
        a = driver.upload(np.asarray(dividends, dtype=np.int32))
        b = driver.upload(np.asarray(divisors, dtype=np.int32))
        ir = IrBuilder((4,))
        q = ir.op("FLOOR_DIVIDE", i32, ir.load(a, i32), ir.load(b, i32))
        built = ir.build(checks=[q])
        dst = driver.alloc(i32, 4)
        driver.eval(built, dst)
        assert built.check_flags() == [want]
        for blk in (a, b, dst):
            driver.free(blk)


def test_checks_cover_a_reductions_body(driver):
    # Every point a reduction folds is checked: one zero among 10,000
    # divisors, far from the first chunk, is found.
    n = 10_000
    divisors = np.ones(n, dtype=np.float32)
    divisors[7_777] = 0.0
    b = driver.upload(divisors)
    ir = IrBuilder((n,))
    q = ir.op("DIVIDE", F32, ir.const(F32, 1.0), ir.load(b, F32))
    built = ir.build(checks=[q], count=1, reduce_op=OP["ADD"], reduce_ndim=1, reduce_chunk=n, reduce_identity=0.0)
    dst = driver.alloc(F32, 1)
    driver.eval(built, dst)
    assert built.check_flags() == [FP_INF_AT_ZERO]
    assert driver.read(dst, 0, 1, np.float32)[0] == np.inf
    for blk in (b, dst):
        driver.free(blk)


def _fold_flags(driver, npdt, rows, op="ADD", mode=None, chunk=None):
    """Folds each row of `rows` with `op` (CHUNKS: one output per row;
    PREFIX: a running value per element) with output 0's folds checked;
    the flags and the values."""
    values = np.asarray(rows, dtype=npdt)
    dt = DTYPE[values.dtype.name.upper()]
    n_rows, n = values.shape
    a = driver.upload(values.ravel())
    ir = IrBuilder((n_rows, n))
    ir.load(a, dt)
    prefix, chunk = mode == "prefix", chunk or n
    count = n_rows * n if prefix else n_rows * -(-n // chunk)
    built = ir.build(count=count, reduce_op=OP[op], reduce_mode=REDUCE_PREFIX if prefix else REDUCE_CHUNKS,
                     reduce_ndim=1, reduce_chunk=chunk, reduce_identity=1.0 if op == "MULTIPLY" else 0.0,
                     check_folds=1)
    values = _evaluated(driver, built, dt, count, npdt, (a,))
    return built.fold_flags()[0], values


@pytest.mark.parametrize("npdt", [np.float32, np.float64])
def test_fold_checks_report_what_the_folds_show(driver, npdt):
    _skip_without(driver, "ADD", npdt)
    big = np.finfo(npdt).max
    inf, nan = np.inf, np.nan
    cases = [
        ("ADD", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], 0),            # finite throughout
        ("ADD", [[1.0, 2.0, 3.0], [big, big, 6.0]], FP_INF),       # one row overflows
        ("ADD", [[inf, -inf, 3.0], [1.0, 2.0, 3.0]], FP_NAN),      # inf - inf
        ("ADD", [[big, big, -big], [-big, -big, 1.0]], FP_INF),    # each row overflows, one way or the other
        ("ADD", [[inf, 2.0, 3.0], [nan, big, big]], 0),            # carried, not made (a NaN hides the rest)
        ("MULTIPLY", [[big, 2.0, 1.0], [1.0, 2.0, 3.0]], FP_INF),  # an overflow in the product
        ("MULTIPLY", [[inf, 0.0, 1.0], [1.0, 2.0, 3.0]], FP_NAN),  # inf * 0
        ("MULTIPLY", [[-inf, 2.0, 1.0], [1.0, 2.0, 3.0]], 0),
    ]
    for op, rows, want in cases:
        flags, values = _fold_flags(driver, npdt, rows, op)
        fold = np.add if op == "ADD" else np.multiply
        with np.errstate(all="ignore"):
            np.testing.assert_array_equal(values, fold.reduce(np.asarray(rows, npdt), axis=1))
        assert flags == want, (op, rows)
    # Over several chunks of one row, as the core's chains of REDUCE nodes
    # fold: each output its own chunk.
    flags, _ = _fold_flags(driver, npdt, [[1.0] * 300 + [big, big] + [1.0] * 300], chunk=64)
    assert flags == FP_INF
    # A scan checks every running value.
    flags, values = _fold_flags(driver, npdt, [[1.0, big, big, -big], [1.0, 2.0, 3.0, 4.0]], mode="prefix")
    assert flags == FP_INF
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(values, np.cumsum(np.asarray([[1.0, big, big, -big], [1.0, 2.0, 3.0, 4.0]], npdt),
                                                         axis=1).ravel())
    assert _fold_flags(driver, npdt, [[1.0, inf, -inf, 4.0]], mode="prefix")[0] == FP_NAN
    assert _fold_flags(driver, npdt, [[1.0, 2.0, 3.0, 4.0]], mode="prefix")[0] == 0


def test_fold_checks_need_a_float_sum_or_product_and_their_flags(driver):
    ir, a = two_op_ir(driver)
    ir.struct.check_folds = 1  # an elementwise IR
    dst = driver.alloc(F32, 4)
    assert driver.eval_rc(ir, dst) == ERROR
    driver.free(dst)
    driver.free(a)
    # Folds that can come back to finite values, or of integers, are not checked.
    i32 = DTYPE["INT32"]
    for op, dt, npdt in (("MAXIMUM", F32, np.float32), ("ADD", i32, np.int32)):
        if not driver.get_method(OP[op], dt):
            continue
        a = driver.upload(np.arange(8, dtype=npdt))
        ir = IrBuilder((8,))
        ir.load(a, dt)
        built = ir.build(count=1, reduce_op=OP[op], reduce_ndim=1, reduce_chunk=8, identity_dtype=dt, check_folds=1)
        dst = driver.alloc(dt, 1)
        assert driver.eval_rc(built, dst) == ERROR, op
        driver.free(dst)
        driver.free(a)


def test_malformed_checks_are_refused(driver):
    ir, a = two_op_ir(driver)
    ir.struct.ncheck = 1  # no check list
    dst = driver.alloc(F32, 16)
    assert driver.eval_rc(ir, dst) == ERROR
    assert "check" in driver.last_error()
    driver.free(dst)
    driver.free(a)


def test_opengl_calls_from_several_threads(opengl):
    # One context, calls from different OS threads (never overlapping).
    n = 1000
    a = opengl.upload(np.arange(n, dtype=np.float32))
    dst = opengl.alloc(F32, n)
    ir = IrBuilder((n,))
    ir.op("SQUARE", F32, ir.load(a, F32))
    built = ir.build()
    results = []

    def worker(k):
        opengl.eval(built, dst)
        results.append(opengl.read(dst, 0, n, np.float32))

    for k in range(4):
        t = threading.Thread(target=worker, args=(k,))
        t.start()
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, np.arange(n, dtype=np.float32) ** 2)
    opengl.free(a)
    opengl.free(dst)


def test_opengl_compile_error_reports_numbered_source(opengl):
    ir, a = two_op_ir(opengl)
    dst = opengl.alloc(F32, 16)
    assert opengl.set_option("debug_glsl_append", "this is not glsl;") == OK
    try:
        assert opengl.eval_rc(ir, dst) == ERROR
        msg = opengl.last_error()
        assert "compile failed" in msg
        assert ">>" in msg and "this is not glsl;" in msg  # the failing line, numbered and marked
        assert "error" in msg.lower()
    finally:
        opengl.set_option("debug_glsl_append", "")
    opengl.eval(ir, dst)  # and the driver keeps working
    opengl.free(a)
    opengl.free(dst)


# --- resources --------------------------------------------------------------

def test_resource_arithmetic(driver):
    node = IrInstr()
    node.op, node.dtype, node.nblocks = OP["ADD"], F32, 0
    one = driver.resource_get(node)
    acc = Resources()
    driver.api.resource_zero(driver.ctx, ctypes.byref(acc))
    assert list(acc.slot) == [0] * 8
    for _ in range(3):
        driver.api.resource_add(driver.ctx, ctypes.byref(acc), ctypes.byref(one))
    assert list(acc.slot) == [3 * s for s in one.slot]
    driver.api.resource_sub(driver.ctx, ctypes.byref(acc), ctypes.byref(one))
    assert list(acc.slot) == [2 * s for s in one.slot]
    assert driver.api.resource_check(driver.ctx, ctypes.byref(acc)) == 1


def test_resource_get_bounds_check_ir(driver):
    # The per-node upper bounds summed over an IR never undercount check_ir.
    ir, a = two_op_ir(driver)
    total = Resources()
    for k in range(ir.struct.ninstr):
        r = driver.resource_get(ir.struct.instr[k])
        driver.api.resource_add(driver.ctx, ctypes.byref(total), ctypes.byref(r))
    rc, exact = driver.check_ir(ir)
    assert rc == 1
    assert all(t >= e for t, e in zip(total.slot, exact.slot))
    driver.free(a)


def test_opengl_texture_limit(opengl):
    # Each LOAD block takes one texture unit; max_textures lowers the limit.
    blocks = [opengl.upload(np.full(4, k, np.float32)) for k in range(3)]
    ir = IrBuilder((4,))
    leaves = [ir.load(b, F32) for b in blocks]
    s = ir.op("ADD", F32, leaves[0], leaves[1])
    ir.op("ADD", F32, s, leaves[2])
    built = ir.build()
    rc, res = opengl.check_ir(built)
    assert rc == 1 and res.slot[0] == 3
    assert opengl.set_option("max_textures", 2) == OK
    try:
        assert opengl.check_ir(built)[0] == 0
        node = built.struct.instr[0]
        r = opengl.resource_get(node)
        acc = Resources()
        for _ in range(3):
            opengl.api.resource_add(opengl.ctx, ctypes.byref(acc), ctypes.byref(r))
        assert opengl.api.resource_check(opengl.ctx, ctypes.byref(acc)) == 0
    finally:
        opengl.set_option("max_textures", "default")
    for b in blocks:
        opengl.free(b)


# --- reporting ---------------------------------------------------------------

def test_last_error_after_failure(driver):
    assert driver.set_option("no_such_option", "1") == ERROR
    assert driver.last_error()


def test_describe(driver):
    info = driver.describe()
    assert info
    if driver.name == "opengl":
        for key in ("vendor", "renderer", "gl_version", "glsl_version", "block_texture_width",
                    "max_compute_texture_image_units", "max_compute_uniform_components", "max_texture_size",
                    "shader_cache_dir"):
            assert info.get(key), key
        assert info["gl_version"].startswith("4.")
        assert "glsl_library_errors" not in info, info.get("glsl_library_errors")


def test_set_option(driver):
    assert driver.set_option("max_ops", "not a number") == ERROR
    assert driver.set_option("max_ops", "0") == ERROR
    assert driver.set_option("no_such_option", "1") == ERROR


def test_get_counters(driver):
    before = driver.counters()
    ir, a = two_op_ir(driver, n=32)
    dst = driver.alloc(F32, 32)
    driver.eval(ir, dst)
    driver.eval(ir, dst)
    after = driver.counters()
    for field in ("programs_compiled", "program_cache_hits", "compile_ns", "first_run_ns"):
        assert getattr(after, field) >= getattr(before, field) >= 0, field
    if driver.name == "opengl":
        # Two evaluations of one structure: at most one build, then a hit.
        built = after.programs_compiled - before.programs_compiled
        hits = after.program_cache_hits - before.program_cache_hits
        assert built + hits == 2 and hits >= 1
        if built:
            assert after.compile_ns > before.compile_ns and after.first_run_ns > before.first_run_ns
    driver.free(a)
    driver.free(dst)


def test_opengl_shader_cache_dir_falls_back_to_a_writable_place(opengl, tmp_path):
    # With no MESA_SHADER_CACHE_DIR and an unwritable default location, the
    # driver points Mesa at a writable directory before creating the context.
    code = (
        "import sys; sys.path.insert(0, %r)\n"
        "import driver_abi as a, os\n"
        "d = a.Driver(%r)\n"
        "import ctypes; getenv = ctypes.CDLL(None).getenv; getenv.restype = ctypes.c_char_p\n"
        "print(d.describe()['shader_cache_dir']); print(getenv(b'MESA_SHADER_CACHE_DIR').decode())\n"
        % (str(Path(__file__).parent), str(opengl.path)))
    env = {k: v for k, v in os.environ.items() if k not in ("MESA_SHADER_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = "/proc/nonexistent-home"
    env["TMPDIR"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    described, exported = out.stdout.split()
    assert described == exported and described.startswith(str(tmp_path))
    assert os.access(described, os.W_OK)
