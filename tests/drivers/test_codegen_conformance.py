"""Code generation conformance: every (op, dtype) a driver declares, against NumPy.

Exact (bit for bit, any NaN matching any NaN) for integer, bool and
arithmetic ops; the float math functions within the bounds float_bounds
derives (against the correctly rounded reference, not NumPy's float32). Also index maps (strided, negative, remapped), multi-block
leaves, INDEX and CONST leaves, start/count/dst_offset, both reduction
modes, 64-bit index arithmetic and program-cache reuse.
"""

import ctypes
import ctypes.util
import math
import warnings

import numpy as np
import pytest

from driver_abi import (DTYPE, DTYPES, EDGE_CLAMP, EDGE_REFLECT, EDGE_SYMMETRIC, EDGE_WRAP, NUMPY_OF_DTYPE, OK, OP, OP_CONST, OP_INDEX, OP_INFO, OP_LOAD, OP_NONE,
                        OPF_INTERNAL, OPF_PREDICATE, REDUCE_CHUNKS, REDUCE_PREFIX, IrBuilder)

from float_bounds import GLSL_DIVIDE_ULP, GLSL_SQRT_ULP, MATH_ULP, MATH_ULP_FLOAT16, flush, flush_accepts, flushes, same_bits, ulp_error

F32 = DTYPE["FLOAT32"]
N_RANDOM = 4500  # with the special-value pairs, more than one 4096-wide texture row

# The float math functions (docs/accuracy.md): float32 within MATH_ULP of
# the reference (NumPy's float64 function rounded), on both drivers. float64
# (software driver only; GLSL has no double transcendentals) calls the C
# library's double function, the one Python's math module calls: identical
# values, except hypot, which Python computes itself (both within 1 ulp).
TRANSCENDENTAL = {"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp", "logaddexp2", "power",
                  "cbrt", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "hypot", "sinh", "cosh",
                  "tanh", "arcsinh", "arccosh", "arctanh"}
LIBM_NAMES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arctan2": "atan2", "arcsinh": "asinh",
              "arccosh": "acosh", "arctanh": "atanh", "power": "pow"}
LIBM_ULP = {"hypot": 2}


def _c_library_function(name):
    """The C library's double function of that name: the math module's
    (which calls it), or, where this Python's math lacks it (cbrt and exp2
    came in Python 3.11), the C library's own through ctypes."""
    if hasattr(math, name):
        return getattr(math, name)
    function = getattr(ctypes.CDLL(ctypes.util.find_library("m")), name)  # (one argument: cbrt, exp2)
    function.restype, function.argtypes = ctypes.c_double, [ctypes.c_double]
    return function


def _libm_scalar(name, *args):
    if name == "logaddexp" or name == "logaddexp2":
        x, y = args
        base2 = name == "logaddexp2"
        if x == y:
            return x + (1.0 if base2 else math.log(2.0))
        d = x - y
        if d != d:
            return d
        big, e = (x, -d) if d > 0 else (y, d)
        return big + (1.4426950408889634 * math.log1p(_c_library_function("exp2")(e)) if base2 else math.log1p(math.exp(e)))
    return _c_library_function(LIBM_NAMES.get(name, name))(*args)


def libm_reference(name, operands):
    """float64 values from the C library through Python's math module;
    NumPy's value where math raises (domain errors, overflow)."""
    fallback = numpy_op(name, operands)
    out = fallback.copy()
    for i, args in enumerate(zip(*(o.tolist() for o in operands))):
        try:
            out[i] = _libm_scalar(name, *args)
        except (ValueError, OverflowError):
            pass
    return out


def math_reference(name, operands):
    """What a float math function is bounded against, and the bound."""
    npdt = operands[0].dtype
    if npdt in (np.float16, np.float32):
        with np.errstate(all="ignore"):
            want = getattr(np, name)(*(o.astype(np.float64) for o in operands)).astype(npdt)
        return want, MATH_ULP if npdt == np.float32 else MATH_ULP_FLOAT16
    return libm_reference(name, operands), LIBM_ULP.get(name, 0)


def exact_op_bound(driver, numpy_name, npdt):
    """ulps allowed for an op NumPy computes exactly: 0, except GLSL's
    division and square root (see float_bounds) on the OpenGL driver, whose
    float64 is only promised float32's precision."""
    if driver.name != "opengl" or npdt.kind != "f":
        return 0
    ulp = {"divide": GLSL_DIVIDE_ULP, "reciprocal": GLSL_DIVIDE_ULP, "sqrt": GLSL_SQRT_ULP}.get(numpy_name, 0)
    return ulp << 29 if npdt == np.float64 else ulp


# Ties between +0 and -0 may come back as either zero from NumPy's own
# loops (SIMD body vs scalar tail), so these compare zeros by value.
ZERO_SIGN_FREE = {"maximum", "minimum", "fmax", "fmin"}


def float_specials(npdt):
    fi = np.finfo(npdt)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 7.5,
              fi.max, -fi.max, fi.tiny, -fi.tiny, fi.smallest_subnormal, -fi.smallest_subnormal,
              fi.tiny / 3, 1e-30, 123456.7, -98765.4, 16777217.0, 1e20, -1e20, np.pi, 0.1, 100.0]
    if npdt == np.float16:  # (the large ones above are its infinities; these are inside its range)
        values += [2049.0, -4097.0, 65504.0 / 3, 1.0 / 3]
    with np.errstate(over="ignore"):
        return np.array(values, dtype=np.float64).astype(npdt)


def int_specials(npdt):
    if npdt == np.bool_:
        return np.array([False, True])
    info = np.iinfo(npdt)
    bits = info.bits
    vals = [0, 1, 2, 3, 7, bits - 1, bits, bits + 1, info.max, info.max - 1, info.min, info.min + 1,
            -1, -2, -7, -bits, 100]
    return np.array([v for v in vals if info.min <= v <= info.max], dtype=npdt)


def random_values(npdt, n, rng, op_name=""):
    if npdt == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if npdt.kind in "iu":
        info = np.iinfo(npdt)
        if op_name in ("left_shift", "right_shift", "power"):
            small = rng.integers(max(info.min, -3), min(info.max, info.bits + 3), n, endpoint=True)
            return small.astype(npdt)
        return rng.integers(info.min, info.max, n, dtype=npdt, endpoint=True)
    domain = {"arcsin": 1.0, "arccos": 1.0, "arctanh": 1.0, "exp": 88.0, "exp2": 127.0, "expm1": 88.0,
              "sinh": 89.0, "cosh": 89.0, "sin": 100.0, "cos": 100.0, "tan": 100.0, "power": 8.0}
    scale = domain.get(op_name)
    if scale is not None:
        with np.errstate(over="ignore"):
            return (rng.uniform(-scale, scale, n)).astype(npdt)
    # magnitudes spread over many binades (float16's: 2^-24 to 65504)
    lo, hi = (-17, 11) if npdt == np.float16 else (-30, 30)
    mag = np.exp(rng.uniform(lo, hi, n))
    with np.errstate(over="ignore"):
        return (mag * rng.choice([-1, 1], n)).astype(npdt)


def operand_sets(npdt, arity, op_name, seed):
    rng = np.random.default_rng(seed)
    specials = int_specials(npdt) if npdt == np.bool_ or npdt.kind in "iu" else float_specials(npdt)
    if arity == 1:
        return [np.concatenate([specials, random_values(npdt, N_RANDOM, rng, op_name)])]
    # every pair of specials, then random pairs
    a = np.repeat(specials, len(specials))
    b = np.tile(specials, len(specials))
    cols = [a, b] + [specials[:1].repeat(len(a))] * (arity - 2)
    out = []
    for k in range(arity):
        r = random_values(npdt, N_RANDOM, rng, op_name)
        out.append(np.concatenate([cols[k], r]))
    if op_name == "power" and npdt.kind == "i":
        # The core sends integer powers to a driver only with exponents
        # >= 0 (NumPy raises for negative ones, so those run in NumPy).
        out[1] = np.where(out[1] < 0, ~out[1], out[1]).astype(npdt)
    return out


def run_ir(driver, ir, n, result_dtype, **build_args):
    dst = driver.alloc(result_dtype, n)
    try:
        driver.eval(ir.build(**build_args), dst)
        return driver.read(dst, 0, n, NUMPY_OF_DTYPE[result_dtype])
    finally:
        driver.free(dst)


def eval_op(driver, op, in_dtype, out_dtype, operands):
    n = operands[0].size
    blocks = [driver.upload(v) for v in operands]
    try:
        ir = IrBuilder((n,))
        leaves = [ir.load(b, DTYPE_OF(v)) for b, v in zip(blocks, operands)]
        ir.op(OP_INFO[op][0], out_dtype, *leaves)
        return run_ir(driver, ir, n, out_dtype)
    finally:
        for b in blocks:
            driver.free(b)


def DTYPE_OF(values):
    return {np.dtype(n): i for i, (_, n, _) in enumerate(DTYPES)}[values.dtype]


def assert_exact(got, want, what, zero_sign_free=False):
    assert got.dtype == want.dtype, what
    same = same_bits(got, want, zero_sign_free) if want.dtype.kind == "f" else got == want
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{what}: {bad.size} mismatches, first at {bad[:5]}: got {got[bad[:5]]}, want {want[bad[:5]]}"


def numpy_op(name, operands):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*operands)


TABLE_OPS = [op for op, row in OP_INFO.items() if not row[3] & OPF_INTERNAL]


@pytest.mark.parametrize("op", TABLE_OPS, ids=[OP_INFO[o][1] for o in TABLE_OPS])
def test_ufunc_matches_numpy(driver, op):
    name, numpy_name, arity, flags = OP_INFO[op]
    ufunc = getattr(np, numpy_name)
    declared = [dt for dt in range(len(DTYPES)) if driver.get_method(op, dt)]
    if not declared:
        pytest.skip(f"{driver.name} declares no dtype for {numpy_name}")
    for dt in declared:
        npdt = NUMPY_OF_DTYPE[dt]
        out_npdt = np.dtype(np.bool_) if flags & OPF_PREDICATE else npdt
        # The driver may only declare loops NumPy has for this dtype -- or,
        # where the installed NumPy is older than the loop (floor, ceil and
        # trunc of integers and bools keep the dtype in later releases;
        # NumPy 2.0 computes them in floats), loops whose values are NumPy's
        # object loop's (Python's own, exact), in that dtype.
        sig = npdt.char * arity + "->" + out_npdt.char
        numpy_has_the_loop = sig in ufunc.types
        operands = operand_sets(npdt, arity, numpy_name, seed=op * 31 + dt)
        got = eval_op(driver, op, dt, DTYPE_OF(np.empty(0, out_npdt)), operands)
        want = numpy_op(numpy_name, operands)
        what = f"{driver.name} {numpy_name}({npdt})"
        if not numpy_has_the_loop:
            assert "O" * arity + "->O" in ufunc.types, f"{numpy_name} declared for {npdt} but NumPy has no {sig} loop"
            want = numpy_op(numpy_name, [o.astype(object) for o in operands]).astype(out_npdt)
        # GLSL lets an implementation flush denormals (float_bounds).
        may_flush = driver.name == "opengl" and npdt.kind == "f"
        if numpy_name in TRANSCENDENTAL and npdt.kind == "f":
            want, bound = math_reference(numpy_name, operands)
            ok = lambda g, v: ulp_error(g, v) <= bound  # noqa: E731
            evaluate = lambda xs: math_reference(numpy_name, xs)[0]  # noqa: E731
        else:
            bound = exact_op_bound(driver, numpy_name, npdt)
            zero_free = numpy_name in ZERO_SIGN_FREE
            if out_npdt.kind == "f":
                ok = lambda g, v: same_bits(g, v, zero_free) | (ulp_error(g, v) <= bound)  # noqa: E731
            else:
                ok = lambda g, v: g == v  # noqa: E731
            evaluate = lambda xs: numpy_op(numpy_name, xs)  # noqa: E731
        assert got.dtype == want.dtype, what
        good = ok(got, want)
        if may_flush and not good.all():
            good |= flush_accepts(got, want, operands, evaluate, ok, internal=flushes(driver.describe()))
        bad = np.flatnonzero(~good)
        assert bad.size == 0, (f"{what}: {bad.size} values beyond {bound} ulp, first at "
                               f"{[o[bad[:3]] for o in operands]}: got {got[bad[:3]]!r}, want {want[bad[:3]]!r}")


def test_cast_matches_astype_unsafe(driver):
    for src in range(len(DTYPES)):
        if not driver.get_method(OP["CAST"], src):
            continue
        npsrc = NUMPY_OF_DTYPE[src]
        values = operand_sets(npsrc, 1, "cast", seed=src)[0]
        if npsrc.kind == "f":  # values around every integer range edge
            edges = [2.0 ** k for k in (7, 8, 15, 16, 31, 32, 63, 64)]
            with np.errstate(over="ignore"):  # (float16's infinities from 2^16 up)
                extra = np.array([s * (e + d) for e in edges for d in (-1.5, -0.5, 0, 0.5, 1) for s in (1, -1)]
                                 ).astype(npsrc)
            values = np.concatenate([values, extra])
        block = driver.upload(values)
        try:
            for dst in range(len(DTYPES)):
                if not driver.get_method(OP_LOAD, dst):
                    continue
                npdst = NUMPY_OF_DTYPE[dst]
                ir = IrBuilder((values.size,))
                ir.op("CAST", dst, ir.load(block, src))
                got = run_ir(driver, ir, values.size, dst)
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)  # "invalid value encountered in cast"
                    want = values.astype(npdst, casting="unsafe")
                keep = slice(None)
                if npsrc.kind == "f" and npdst.kind in "iu":
                    # Float -> int of NaN, inf or a value whose truncation is
                    # outside the target range is undefined in C; NumPy warns
                    # and its output then depends on the platform and even on
                    # the position in the array (x86-64, NumPy 2.4: -1e19 gave
                    # 0x80000000 but -1.8e19 gave 0 as uint32 in one call).
                    info = np.iinfo(npdst)
                    with np.errstate(all="ignore"):
                        t = np.trunc(values.astype(np.float64))
                    keep = np.isfinite(t) & (t >= info.min) & (t <= info.max)
                if npsrc == np.float32 and flushes(driver.describe()):
                    # A device that flushes reads a subnormal as a zero.
                    with np.errstate(all="ignore"):
                        as_flushed = flush(values).astype(npdst, casting="unsafe")
                    same = same_bits(got, as_flushed) if npdst.kind == "f" else got == as_flushed
                    want = np.where(same, as_flushed, want)
                assert_exact(got[keep], want[keep], f"{driver.name} cast {npsrc} -> {npdst}")
        finally:
            driver.free(block)


def test_where(driver):
    rng = np.random.default_rng(5)
    for dt in range(len(DTYPES)):
        if not driver.get_method(OP["WHERE"], dt):
            continue
        npdt = NUMPY_OF_DTYPE[dt]
        n = 3000
        cond = rng.integers(0, 2, n).astype(np.bool_)
        a, b = (random_values(npdt, n, rng) for _ in range(2))
        blocks = [driver.upload(cond), driver.upload(a), driver.upload(b)]
        ir = IrBuilder((n,))
        c, x, y = ir.load(blocks[0], DTYPE["BOOL"]), ir.load(blocks[1], dt), ir.load(blocks[2], dt)
        ir.op("WHERE", dt, c, x, y)
        assert_exact(run_ir(driver, ir, n, dt), np.where(cond, a, b), f"where {npdt}")
        for blk in blocks:
            driver.free(blk)


def test_no_fma_contraction(driver):
    # a*b + c rounds twice in NumPy; a fused multiply-add would round once.
    rng = np.random.default_rng(11)
    n = 4096
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    blocks = [driver.upload(v) for v in (a, b, c)]
    ir = IrBuilder((n,))
    x, y, z = (ir.load(blk, F32) for blk in blocks)
    ir.op("ADD", F32, ir.op("MULTIPLY", F32, x, y), z)
    got = run_ir(driver, ir, n, F32)
    want = a * b + c
    assert_exact(got, want, "a*b+c")
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    assert (fused != want).any()  # the inputs do tell the two apart
    for blk in blocks:
        driver.free(blk)


# --- index maps and leaves ------------------------------------------------------

def test_strided_and_negative_strides(driver):
    src = np.arange(200, dtype=np.float32) * 1.5
    blk = driver.upload(src)
    ir = IrBuilder((4, 6))
    x = ir.load(blk, F32, base=180, strides=[-30, 2])  # rows backwards, every other column
    ir.op("NEGATIVE", F32, x)
    got = run_ir(driver, ir, 24, F32)
    want = -np.array([[src[180 - 30 * i + 2 * j] for j in range(6)] for i in range(4)], np.float32).ravel()
    assert_exact(got, want, "strided")
    driver.free(blk)


def test_remapped_repeat_and_tile(driver):
    # index = ((n0 / 2) % 3) * 10 + ((n1 / 1) % 4) * 1, a repeat over rows
    # and a tile over columns.
    src = np.arange(40, dtype=np.int32) if driver.get_method(OP_LOAD, DTYPE["INT32"]) else None
    dt = DTYPE["INT32"] if src is not None else F32
    if src is None:
        src = np.arange(40, dtype=np.float32)
    blk = driver.upload(src)
    ir = IrBuilder((6, 8))
    x = ir.load(blk, dt, base=0, strides=[10, 1], div=[2, 1], mod=[3, 4])
    ir.op("POSITIVE", dt, x)
    got = run_ir(driver, ir, 48, dt)
    want = np.array([[src[((i // 2) % 3) * 10 + (j % 4)] for j in range(8)] for i in range(6)]).ravel()
    assert_exact(got, want.astype(src.dtype), "remapped")
    # mod 0 means no modulo
    ir = IrBuilder((6, 8))
    x = ir.load(blk, dt, base=1, strides=[5, 1], div=[3, 2], mod=[0, 0])
    ir.op("POSITIVE", dt, x)
    want = np.array([[src[1 + (i // 3) * 5 + (j // 2)] for j in range(8)] for i in range(6)]).ravel()
    assert_exact(run_ir(driver, ir, 48, dt), want.astype(src.dtype), "remapped, no modulo")
    driver.free(blk)


def map_coordinate(n, div, shift, mod, edge):
    """gpupy_map_coordinate (include/gpupy/driver.hpp), written again."""
    c = n // div + shift
    if edge == EDGE_CLAMP:
        return min(max(c, 0), mod - 1)
    if edge in (EDGE_REFLECT, EDGE_SYMMETRIC):
        period = 2 * mod - 2 if edge == EDGE_REFLECT else 2 * mod
        top = period if edge == EDGE_REFLECT else period - 1
        t = c % period
        return min(t, top - t)
    return c % mod if mod else c


@pytest.mark.parametrize("edge", [EDGE_WRAP, EDGE_CLAMP, EDGE_REFLECT, EDGE_SYMMETRIC],
                         ids=["wrap", "clamp", "reflect", "symmetric"])
def test_remapped_edges(driver, edge):
    # A 5 x 7 operand read over a 13 x 30 domain: shifts that go below 0
    # (clamp) or start within the period, coordinates within one period and
    # several periods beyond it (the code generator's two forms), div > 1.
    src = np.arange(35, dtype=np.float32) * 0.5
    blk = driver.upload(src)
    cases = [((1, 1), (3, 2), (5, 7)), ((2, 1), (1, 0), (5, 7)), ((1, 3), (4, 5), (5, 7))]
    for div, shift, mod in cases:
        if edge == EDGE_CLAMP:
            shift = (shift[0] - 4, -shift[1])
        ir = IrBuilder((13, 30))
        x = ir.load(blk, F32, base=0, strides=[7, 1], div=list(div), mod=list(mod), shift=list(shift), edge=[edge] * 2)
        ir.op("POSITIVE", F32, x)
        got = run_ir(driver, ir, 13 * 30, F32)
        want = np.array([[src[map_coordinate(i, div[0], shift[0], mod[0], edge) * 7
                              + map_coordinate(j, div[1], shift[1], mod[1], edge)] for j in range(30)]
                         for i in range(13)], np.float32).ravel()
        assert_exact(got, want, f"edge {edge}, div {div}, shift {shift}")
    driver.free(blk)


def test_gather_reads_the_element_its_index_names(driver):
    # A source of 250 elements in blocks of 100, 100, 50 read at int64
    # positions held by another block; positions outside the source read
    # the nearest element (the core checks indices; a driver never reads
    # outside the blocks it was given).
    if not driver.get_method(OP["GATHER"], F32):
        pytest.skip("the driver has no GATHER (it needs 64-bit integers)")
    whole = np.arange(250, dtype=np.float32) * 0.25 - 7
    parts = [driver.upload(whole[k:k + 100]) for k in (0, 100, 200)]
    where = np.array([0, 249, 100, 99, 7, 150, 200, -5, 260, 2**40, -2**40, 199], np.int64)
    index = driver.upload(where)
    ir = IrBuilder((where.size,))
    i = ir.load(index, DTYPE["INT64"])
    ir.gather(parts, F32, i, nelems=250, block_elems=100)
    got = run_ir(driver, ir, where.size, F32)
    assert_exact(got, whole[np.clip(where, 0, 249)], "gather")
    for b in parts + [index]:
        driver.free(b)


def test_multi_block_leaf(driver):
    # One array of 250 elements in blocks of 100, 100, 50; the leaf starts at
    # element 100 of the array (block_first) and reads 230 - 100 elements
    # through blocks 1..3 of a 4-block view.
    whole = np.arange(350, dtype=np.float32) * 0.25
    parts = [driver.upload(whole[k:k + 100]) for k in (0, 100, 200)] + [driver.upload(whole[300:350])]
    ir = IrBuilder((200,))
    x = ir.load(parts, F32, base=120, block_first=0, block_elems=100)
    ir.op("SQUARE", F32, x)
    got = run_ir(driver, ir, 200, F32)
    assert_exact(got, whole[120:320] ** 2, "multi-block")
    # strided across blocks, backwards
    ir = IrBuilder((40,))
    x = ir.load(parts[1:], F32, base=345, strides=[-6], block_first=100, block_elems=100)
    ir.op("POSITIVE", F32, x)
    assert_exact(run_ir(driver, ir, 40, F32), whole[345:105:-6][:40], "multi-block strided")
    for p in parts:
        driver.free(p)


def test_index_and_const_leaves(driver):
    # value = (map index / div) % mod: an arange, and a 2-D "indices" row.
    ir = IrBuilder((5, 7))
    i = ir.index(F32, base=3, contiguous=True)
    c = ir.const(F32, 0.5)
    ir.op("MULTIPLY", F32, i, c)
    assert_exact(run_ir(driver, ir, 35, F32), (np.arange(3, 38) * np.float32(0.5)).astype(np.float32), "arange")
    if driver.get_method(OP_LOAD, DTYPE["INT32"]):
        ir = IrBuilder((5, 7))
        i = ir.index(DTYPE["INT32"], base=0, strides=[7, 1], div=7, mod=0)
        ir.op("POSITIVE", DTYPE["INT32"], i)
        assert_exact(run_ir(driver, ir, 35, DTYPE["INT32"]), np.indices((5, 7))[0].ravel().astype(np.int32), "indices")
        ir = IrBuilder((5, 7))
        i = ir.index(DTYPE["INT32"], base=0, strides=[7, 1], div=1, mod=7)
        ir.op("POSITIVE", DTYPE["INT32"], i)
        assert_exact(run_ir(driver, ir, 35, DTYPE["INT32"]), np.indices((5, 7))[1].ravel().astype(np.int32), "indices 1")
    for dt in range(len(DTYPES)):
        if not driver.get_method(OP_CONST, dt) or not driver.get_method(OP["CAST"], dt):
            continue
        npdt = NUMPY_OF_DTYPE[dt]
        for v in (int_specials(npdt) if npdt.kind in "biu" else float_specials(npdt))[:12]:
            ir = IrBuilder((3,))
            ir.op("CAST", dt, ir.const(dt, v))
            assert_exact(run_ir(driver, ir, 3, dt), np.full(3, v, npdt), f"const {npdt} {v!r}")


def test_start_count_dst_offset(driver):
    src = np.arange(100, dtype=np.float32)
    blk = driver.upload(src)
    ir = IrBuilder((10, 10))
    ir.op("NEGATIVE", F32, ir.load(blk, F32, strides=[1, 10]))  # transpose
    dst = driver.alloc(F32, 50)
    driver.write(dst, 0, np.full(50, 7, np.float32))
    driver.eval(ir.build(start=33, count=20, dst_offset=15), dst)
    got = driver.read(dst, 0, 50, np.float32)
    want = np.full(50, 7, np.float32)
    want[15:35] = -src.reshape(10, 10).T.ravel()[33:53]
    assert_exact(got, want, "start/count/dst_offset")
    driver.free(blk)
    driver.free(dst)


def test_wide_index_values(driver):
    # INDEX values beyond int32 force 64-bit index arithmetic.
    i64 = DTYPE["INT64"]
    if not driver.get_method(OP_INDEX, i64):
        pytest.skip(f"{driver.name} has no int64")
    ir = IrBuilder((4, 5))
    ir.op("POSITIVE", i64, ir.index(i64, base=3_000_000_000, strides=[1_000_000_000, 7]))
    want = np.array([3_000_000_000 + 1_000_000_000 * i + 7 * j for i in range(4) for j in range(5)], np.int64)
    assert_exact(run_ir(driver, ir, 20, i64), want, "wide INDEX")


# --- reductions -----------------------------------------------------------------

def sequential_fold(ufunc, x, identity, dtype):
    acc = np.array(identity, dtype)
    out = []
    with np.errstate(all="ignore"):
        for v in x:
            acc = ufunc(acc, v).astype(dtype)
            out.append(acc)
    return np.array(out, dtype)


@pytest.mark.parametrize("mode", [REDUCE_CHUNKS, REDUCE_PREFIX], ids=["chunks", "prefix"])
@pytest.mark.parametrize("opname,identity", [("ADD", 0), ("MAXIMUM", -np.inf), ("MULTIPLY", 1)])
def test_reduction(driver, mode, opname, identity):
    rng = np.random.default_rng(3)
    outer, inner_shape, chunk = 3, (4, 5), 6
    inner = 20
    x = rng.standard_normal((outer,) + inner_shape).astype(np.float32)
    blk = driver.upload(x.ravel())
    ir = IrBuilder((outer,) + inner_shape)
    # body: x * 1.5 (so the body is more than a leaf)
    ir.op("MULTIPLY", F32, ir.load(blk, F32), ir.const(F32, 1.5))
    body = (x * np.float32(1.5)).reshape(outer, inner)
    ufunc = getattr(np, OP_INFO[OP[opname]][1])
    nchunks = -(-inner // chunk)
    if mode == REDUCE_CHUNKS:
        n = outer * nchunks
        want = np.array([sequential_fold(ufunc, body[o, c * chunk:(c + 1) * chunk], identity, np.float32)[-1]
                         for o in range(outer) for c in range(nchunks)], np.float32)
    else:
        n = outer * inner
        want = np.concatenate([sequential_fold(ufunc, body[o, c * chunk:(c + 1) * chunk], identity, np.float32)
                               for o in range(outer) for c in range(nchunks)])
    got = run_ir(driver, ir, n, F32, count=n, reduce_op=OP[opname], reduce_mode=mode, reduce_ndim=2,
                 reduce_chunk=chunk, reduce_identity=identity)
    assert_exact(got, want, f"{opname} {mode}")
    driver.free(blk)


def test_integer_and_bool_reductions(driver):
    for dtname, opname, identity in (("INT32", "ADD", 0), ("BOOL", "LOGICAL_AND", 1), ("UINT8", "MAXIMUM", 0)):
        dt = DTYPE[dtname]
        if not driver.get_method(OP[opname], dt):
            continue
        npdt = NUMPY_OF_DTYPE[dt]
        x = random_values(npdt, 60, np.random.default_rng(9))
        blk = driver.upload(x)
        ir = IrBuilder((60,))
        ir.op("POSITIVE" if dtname != "BOOL" else "LOGICAL_NOT", dt, ir.load(blk, dt))
        ir.instrs[-1].op = OP["POSITIVE"] if dtname != "BOOL" else OP["LOGICAL_NOT"]
        body = x if dtname != "BOOL" else ~x
        got = run_ir(driver, ir, 2, dt, count=2, reduce_op=OP[opname], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1,
                     reduce_chunk=30, reduce_identity=identity, identity_dtype=dt)
        ufunc = getattr(np, OP_INFO[OP[opname]][1])
        want = np.array([sequential_fold(ufunc, body[c * 30:(c + 1) * 30], identity, npdt)[-1] for c in range(2)],
                        npdt)
        assert_exact(got.astype(npdt), want, f"{opname} {dtname}")
        driver.free(blk)


# --- program cache ----------------------------------------------------------------

def test_program_cache_reuses_one_program(driver):
    # Same structure, new constants, new blocks, new shape, new start/count/
    # dst_offset and a new map: nothing new is compiled.
    def build(n, const, base, stride, start):
        src = np.arange(3 * n + 10, dtype=np.float32)
        blk = driver.upload(src)
        ir = IrBuilder((n,))
        ir.op("ADD", F32, ir.load(blk, F32, base=base, strides=[stride]), ir.const(F32, const))
        dst = driver.alloc(F32, n + 5)
        driver.eval(ir.build(start=start, count=n - start, dst_offset=2), dst)
        got = driver.read(dst, 2, n - start, np.float32)
        want = src[base + stride * np.arange(start, n)] + np.float32(const)
        assert_exact(got, want, "cached program")
        driver.free(blk)
        driver.free(dst)

    build(50, 1.25, 3, 2, 0)
    before = driver.counters()
    build(70, -8.5, 5, 3, 4)
    build(33, 1e30, 0, 1, 1)
    after = driver.counters()
    assert after.programs_compiled == before.programs_compiled
    if driver.name == "opengl":
        assert after.program_cache_hits == before.program_cache_hits + 2


# --- values proven never NaN --------------------------------------------------------------------

NAN_FACTS_DATA = np.array([np.nan, 0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, 3.0, np.nan, 7.25, 0.5, 2.0], np.float32)


def distance_vs_data_ir(driver, blk, c, op, distance_first):
    """op(sqrt((i - c)**2), data) or op(data, ...): the distance map's step,
    with an operand the code generator can prove never NaN (c finite)."""
    ir = IrBuilder((NAN_FACTS_DATA.size,))
    d = ir.op("SQRT", F32, ir.op("SQUARE", F32, ir.op("SUBTRACT", F32, ir.index(F32, contiguous=True),
                                                      ir.const(F32, c))))
    m = ir.load(blk, F32)
    ir.op(op, F32, *((d, m) if distance_first else (m, d)))
    return ir


@pytest.mark.parametrize("c", [1.5, np.nan, np.inf, -np.inf, 0.0])
@pytest.mark.parametrize("op", ["MINIMUM", "MAXIMUM"])
@pytest.mark.parametrize("distance_first", [True, False])
def test_maximum_minimum_with_a_never_nan_operand(driver, c, op, distance_first):
    """NaNs in the data still propagate, a NaN constant makes every value NaN
    (its program is not the one compiled for a finite constant: the key
    holds what the code assumes of constants), ties and infinities as NumPy."""
    blk = driver.upload(NAN_FACTS_DATA)
    try:
        got = run_ir(driver, distance_vs_data_ir(driver, blk, c, op, distance_first), NAN_FACTS_DATA.size, F32)
    finally:
        driver.free(blk)
    i = np.arange(NAN_FACTS_DATA.size, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        d = np.sqrt(np.square(i - np.float32(c)))
    ufunc = np.minimum if op == "MINIMUM" else np.maximum
    want = ufunc(d, NAN_FACTS_DATA) if distance_first else ufunc(NAN_FACTS_DATA, d)
    assert_exact(got, want, f"{op} c={c}", zero_sign_free=True)


def test_opengl_drops_the_nan_test_only_where_it_is_proven(opengl, monkeypatch, tmp_path):
    """The generated GLSL of minimum(distance to a, distance to b) has no
    isnan when both constants are finite, and keeps it when one is NaN. With
    only one operand proven NaN-free the other is still tested: Mesa turns a
    bare compare-and-select into fmin, which drops NaN (maximum(0, nan) gave
    0 on llvmpipe; tests/test_reliability.py)."""
    monkeypatch.setenv("GPUPY_GL_DUMP_SHADERS", str(tmp_path))
    sources = {}
    try:
        # A comment of its own puts these programs under new keys: compiled
        # (and dumped) here even if an earlier test built the same IR.
        assert opengl.set_option("debug_glsl_append", f"// {tmp_path.name}") == OK
        for c in (1.5, np.nan):
            before = set(tmp_path.iterdir())
            ir = IrBuilder((NAN_FACTS_DATA.size,))

            def distance(to):
                i = ir.index(F32, contiguous=True)
                return ir.op("SQRT", F32, ir.op("SQUARE", F32, ir.op("SUBTRACT", F32, i, ir.const(F32, to))))

            ir.op("MINIMUM", F32, distance(2.5), distance(c))
            run_ir(opengl, ir, NAN_FACTS_DATA.size, F32)
            (new,) = set(tmp_path.iterdir()) - before
            sources[c] = new.read_text()
    finally:
        opengl.set_option("debug_glsl_append", "")
    assert "isnan" not in sources[1.5]
    assert "isnan" in sources[np.nan]
