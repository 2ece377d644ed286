"""Several outputs per evaluation (gpupy_ir.noutputs, driver ABI 5), on
every driver: one pass over an IR list writes the values of several of its
instructions, each into its own destination block at the same offsets --
values exactly as one evaluation per output gives them -- and a malformed
request is an error with a reason, never a crash or a wrong write."""

import numpy as np
import pytest

from driver_abi import DTYPE, ERROR, OP, REDUCE_CHUNKS, IrBuilder

F32, F64, I32, BOOL = DTYPE["FLOAT32"], DTYPE["FLOAT64"], DTYPE["INT32"], DTYPE["BOOL"]


def shared_ir(blk, n):
    """d = x * 2 - 1 (shared); outputs: d * d (last), d > 0 (bool), int32(d)."""
    ir = IrBuilder((n,))
    x = ir.load(blk, F32)
    d = ir.op("SUBTRACT", F32, ir.op("MULTIPLY", F32, x, ir.const(F32, 2.0)), ir.const(F32, 1.0))
    positive = ir.op("GREATER", BOOL, d, ir.const(F32, 0.0))
    as_int = ir.op("CAST", I32, d)
    ir.op("MULTIPLY", F32, d, d)
    return ir, [positive, as_int]


def test_three_outputs_of_one_list(driver):
    n = 5000  # more than one 4096-wide texture row
    x = np.random.default_rng(1).uniform(-300, 300, n).astype(np.float32)
    blk = driver.upload(x)
    dsts = [driver.alloc(F32, n + 7), driver.alloc(BOOL, n + 7), driver.alloc(I32, n + 7)]
    try:
        ir, extra = shared_ir(blk, n)
        driver.eval(ir.build(start=3, count=n - 10, dst_offset=7, outputs=extra), dsts)
        got = [driver.read(dsts[0], 7, n - 10, np.float32), driver.read(dsts[1], 7, n - 10, np.bool_),
               driver.read(dsts[2], 7, n - 10, np.int32)]
    finally:
        for b in dsts + [blk]:
            driver.free(b)
    d = x[3:n - 7] * np.float32(2) - np.float32(1)
    np.testing.assert_array_equal(got[0], d * d)
    np.testing.assert_array_equal(got[1], d > 0)
    np.testing.assert_array_equal(got[2], d.astype(np.int32))


def test_outputs_equal_one_evaluation_each(driver):
    """Output k of a shared list is bit for bit what an IR ending at that
    instruction gives alone (the same code computes it)."""
    n = 300
    x = np.linspace(-5, 5, n, dtype=np.float32)
    blk = driver.upload(x)
    try:
        ir, extra = shared_ir(blk, n)
        dsts = [driver.alloc(F32, n), driver.alloc(BOOL, n), driver.alloc(I32, n)]
        driver.eval(ir.build(outputs=extra), dsts)
        together = [driver.read(b, 0, n, t) for b, t in zip(dsts, (np.float32, np.bool_, np.int32))]
        for b in dsts:
            driver.free(b)
        for k, (dtype, np_dtype) in enumerate(((BOOL, np.bool_), (I32, np.int32))):
            alone, _ = shared_ir(blk, n)
            alone.instrs = alone.instrs[:extra[k] + 1]
            dst = driver.alloc(dtype, n)
            driver.eval(alone.build(), dst)
            assert driver.read(dst, 0, n, np_dtype).tobytes() == together[k + 1].tobytes()
            driver.free(dst)
    finally:
        driver.free(blk)


def test_an_output_may_be_a_leaf_or_a_constant(driver):
    n = 100
    x = np.arange(n, dtype=np.float64)
    blk = driver.upload(x)
    ir = IrBuilder((n,))
    load = ir.load(blk, F64)
    c = ir.const(F64, 2.5)
    ir.op("ADD", F64, load, c)
    dsts = [driver.alloc(F64, n), driver.alloc(F64, n), driver.alloc(F64, n)]
    try:
        driver.eval(ir.build(outputs=[load, c]), dsts)
        np.testing.assert_array_equal(driver.read(dsts[0], 0, n, np.float64), x + 2.5)
        np.testing.assert_array_equal(driver.read(dsts[1], 0, n, np.float64), x)
        np.testing.assert_array_equal(driver.read(dsts[2], 0, n, np.float64), np.full(n, 2.5))
    finally:
        for b in dsts + [blk]:
            driver.free(b)


@pytest.mark.parametrize("case", ["none", "too_many", "duplicate", "out_of_range", "reduction", "dtype",
                                  "same_block", "reads_destination"])
def test_malformed_outputs_are_errors(driver, case):
    n = 64
    x = np.arange(n, dtype=np.float32)
    blk = driver.upload(x)
    ir, extra = shared_ir(blk, n)
    dsts = [driver.alloc(F32, n), driver.alloc(BOOL, n), driver.alloc(I32, n)]
    allocated = dsts + [blk]
    sentinel = np.full(n, 77.0, np.float32)
    driver.write(dsts[0], 0, sentinel)
    build = dict(outputs=extra)
    try:
        if case == "none":
            built = ir.build(**build)
            built.struct.noutputs = 0
        elif case == "too_many":
            built = ir.build(outputs=[0, 1, 2])
            built.struct.noutputs = 5
        elif case == "duplicate":
            built = ir.build(outputs=[extra[0], extra[0]])
            dsts = dsts[:2] + [driver.alloc(BOOL, n)]
            allocated.append(dsts[2])
        elif case == "out_of_range":
            built = ir.build(outputs=[extra[0], 99])
        elif case == "reduction":
            built = ir.build(count=1, reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=n,
                             outputs=extra)
        elif case == "dtype":
            built = ir.build(outputs=extra[::-1])
        elif case == "same_block":
            built = ir.build(outputs=[extra[0], extra[0] - 1])  # two float32 outputs
            dsts = [dsts[0], dsts[0], dsts[2]]
        else:
            built = ir.build(outputs=extra)
            dsts = [dsts[0], dsts[1], blk]
        assert driver.eval_rc(built, dsts) == ERROR
        assert driver.last_error()
        if case != "reads_destination":
            assert driver.read(dsts[0], 0, n, np.float32).tobytes() == sentinel.tobytes(), "wrote on an error"
    finally:
        for b in allocated:
            driver.free(b)


def test_opengl_keys_programs_by_their_outputs(opengl):
    """Which instructions are written is structure: a new wiring is a new
    program, the same wiring with new values reuses it."""
    n = 50
    blk = opengl.upload(np.arange(n, dtype=np.float32))
    try:
        def run(extra):
            ir, outs = shared_ir(blk, n)
            outs = [outs[i] for i in extra]
            dsts = [opengl.alloc(F32, n)] + [opengl.alloc(BOOL if i == 0 else I32, n) for i in extra]
            opengl.eval(ir.build(outputs=outs), dsts)
            for b in dsts:
                opengl.free(b)

        run([0, 1])
        before = opengl.counters()
        run([0, 1])
        assert opengl.counters().programs_compiled == before.programs_compiled
        run([1])
        assert opengl.counters().programs_compiled == before.programs_compiled + 1
    finally:
        opengl.free(blk)


def sequential_fold(ufunc, values, identity, dtype):
    acc = np.array(identity, dtype)
    with np.errstate(all="ignore"):
        for v in values:
            acc = ufunc(acc, v).astype(dtype)
    return acc


def test_a_reduction_with_several_outputs(driver):
    """Chunked folds of several instructions, each with its own op and
    identity, in one pass: the sum and the maximum of x, and the sum of
    x * x -- each exactly as a fold of its own in increasing order."""
    outer, inner, chunk = 3, 50, 16
    x = np.random.default_rng(4).standard_normal(outer * inner).astype(np.float32)
    blk = driver.upload(x)
    ir = IrBuilder((outer, inner))
    load = ir.load(blk, F32)
    square = ir.op("MULTIPLY", F32, load, load)
    nchunks = -(-inner // chunk)
    n = outer * nchunks
    dsts = [driver.alloc(F32, n) for _ in range(3)]
    try:
        built = ir.build(count=n, reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=chunk,
                         reduce_identity=0.0, outputs=[load, square])
        # outputs: 0 = ADD of x * x (the last instruction), 1 = MAXIMUM of x, 2 = ADD of x
        built.struct.output[0], built.struct.output[1], built.struct.output[2] = square, load, load
        built.struct.output_reduce_op[1], built.struct.output_identity[1].f = OP["MAXIMUM"], -np.inf
        built.struct.output_reduce_op[2], built.struct.output_identity[2].f = OP["ADD"], 0.0
        driver.eval(built, dsts)
        got = [driver.read(b, 0, n, np.float32) for b in dsts]
    finally:
        for b in dsts + [blk]:
            driver.free(b)
    rows = x.reshape(outer, inner)
    pieces = [rows[o, c * chunk:(c + 1) * chunk] for o in range(outer) for c in range(nchunks)]
    want = [np.array([sequential_fold(np.add, p * p, 0.0, np.float32) for p in pieces], np.float32),
            np.array([sequential_fold(np.maximum, p, -np.inf, np.float32) for p in pieces], np.float32),
            np.array([sequential_fold(np.add, p, 0.0, np.float32) for p in pieces], np.float32)]
    for g, w in zip(got, want):
        assert g.tobytes() == w.tobytes()


@pytest.mark.parametrize("case", ["scan", "not_a_fold"])
def test_malformed_reductions_with_several_outputs(driver, case):
    n = 32
    blk = driver.upload(np.arange(n, dtype=np.float32))
    dsts = [driver.alloc(F32, n), driver.alloc(F32, n)]
    try:
        ir = IrBuilder((n,))
        load = ir.load(blk, F32)
        ir.op("NEGATIVE", F32, load)
        mode = REDUCE_CHUNKS if case == "not_a_fold" else 1  # REDUCE_PREFIX
        built = ir.build(count=1 if mode == REDUCE_CHUNKS else n, reduce_op=OP["ADD"], reduce_mode=mode,
                         reduce_ndim=1, reduce_chunk=n, outputs=[load])
        built.struct.output_reduce_op[1] = OP["NEGATIVE"] if case == "not_a_fold" else OP["ADD"]
        assert driver.eval_rc(built, dsts) == ERROR
        assert driver.last_error()
    finally:
        for b in dsts + [blk]:
            driver.free(b)
