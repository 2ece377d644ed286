"""Contractions through the driver interface: the reduction IR every matrix
product lowers to (a product of a LOAD constant over j and a LOAD constant
over i, folded with ADD over k in chunks), on both drivers.

The OpenGL driver computes it in the tiled form (drivers/glsl/
glsl_contraction.hpp); these tests drive that form across its edges --
rows, columns and k that are not multiples of the tile or the k step, a
chunked k, batches, start/count ranges that cut a batch or a row, transposed
and negative strides, casts -- and check the result against the exact
product within the rounding bound of a sum of K products, which holds
whether or not a device fuses each multiply-add."""

import numpy as np
import pytest

from driver_abi import DTYPE, OK, OP, REDUCE_CHUNKS, IrBuilder

F32, F64 = DTYPE["FLOAT32"], DTYPE["FLOAT64"]
NUMPY = {F32: np.float32, F64: np.float64}


def contraction_ir(a_blk, a_dtype, a_map, b_blk, b_dtype, b_map, shape, dtype, b_first=False):
    """sum_k A * B over the domain `shape` = batch + (n, m, k); each operand
    (a LOAD with (base, strides)) cast to `dtype` where it is another; B's
    instructions first if `b_first` (a driver binds blocks in LOAD order)."""
    ir = IrBuilder(shape)
    operands = []
    sides = [(a_blk, a_dtype, a_map), (b_blk, b_dtype, b_map)]
    for blk, dt, (base, strides) in (sides[::-1] if b_first else sides):
        x = ir.load(blk, dt, base=base, strides=strides)
        operands.append(x if dt == dtype else ir.op("CAST", dtype, x))
    ir.op("MULTIPLY", dtype, *(operands[::-1] if b_first else operands))
    return ir


def exact_products(a_terms, b_terms):
    """The float64 sums and sums of |terms| of the contraction whose terms
    are a_terms[..., i, k] * b_terms[..., k, j] (float64 arrays)."""
    return a_terms @ b_terms, np.abs(a_terms) @ np.abs(b_terms)


def assert_within_sum_bound(got, exact, magnitude, k, dtype):
    """|got - exact| <= (k + 2) u sum|terms| (+ the least subnormal): a sum of
    k rounded products in any fusing, in increasing k, is within k u of the
    exact sum's magnitude (Higham, gamma_k); 2 more for the result's own
    rounding and a cast."""
    u = np.finfo(dtype).eps / 2
    bound = (k + 2) * u * magnitude * 1.01 + np.finfo(dtype).smallest_subnormal
    err = np.abs(got.astype(np.float64) - exact)
    worst = np.unravel_index(np.argmax(err - bound), err.shape) if err.size else None
    assert (err <= bound).all(), f"error {err[worst]:.3g} > bound {bound[worst]:.3g} at {worst}"


CASES = [
    # batch, n, m, k, chunk
    ((), 64, 64, 16, 16),      # one tile, one k step
    ((), 65, 130, 33, 33),     # partial tiles and a partial k step
    ((), 3, 5, 200, 64),       # k in chunks of 64 (4 per output)
    ((), 1, 70, 17, 17),
    ((2, 3), 20, 9, 7, 7),     # batch dimensions
]


@pytest.mark.parametrize("batch, n, m, k, chunk", CASES)
@pytest.mark.parametrize("dtypes, b_first", [((F32, F32, F32), False), ((F64, F64, F64), False),
                                             ((F32, F64, F64), False), ((F32, F64, F64), True)],
                         ids=["f32", "f64", "cast", "cast-b-first"])
def test_contraction_matches_the_exact_product(driver, batch, n, m, k, chunk, dtypes, b_first):
    a_dt, b_dt, dt = dtypes
    if dt == F64 and not driver.get_method(OP["MULTIPLY"], F64):
        pytest.skip("no float64 on this device")
    rng = np.random.default_rng(n * 1000 + m + k)
    a = rng.standard_normal(batch + (n, k)).astype(NUMPY[a_dt])
    b = rng.standard_normal(batch + (k, m)).astype(NUMPY[b_dt])
    a_blk, b_blk = driver.upload(a.ravel()), driver.upload(b.ravel())
    nchunks = -(-k // chunk)
    try:
        # Domain batch + (n, m, k): A[..., i, k] does not move with j, B[..., k, j] not with i.
        a_strides = [s // a.itemsize for s in a.strides]
        b_strides = [s // b.itemsize for s in b.strides]
        a_map = (0, a_strides[:-2] + [a_strides[-2], 0, a_strides[-1]])
        b_map = (0, b_strides[:-2] + [0, b_strides[-1], b_strides[-2]])
        ir = contraction_ir(a_blk, a_dt, a_map, b_blk, b_dt, b_map, batch + (n, m, k), dt, b_first)
        outputs = int(np.prod(batch + (n, m), dtype=np.int64)) * nchunks
        dst = driver.alloc(dt, outputs + 3)
        try:
            driver.eval(ir.build(count=outputs, dst_offset=3, reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS,
                                 reduce_ndim=1, reduce_chunk=chunk, reduce_identity=0.0), dst)
            got = driver.read(dst, 3, outputs, NUMPY[dt]).reshape(batch + (n, m, nchunks))
        finally:
            driver.free(dst)
    finally:
        driver.free(a_blk)
        driver.free(b_blk)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for c in range(nchunks):
        ks = slice(c * chunk, min(k, (c + 1) * chunk))
        exact, magnitude = exact_products(a64[..., ks], b64[..., ks, :])
        assert_within_sum_bound(got[..., c], exact, magnitude, ks.stop - ks.start, NUMPY[dt])


@pytest.mark.parametrize("start, count", [(0, 1), (70, 200), (129, 130 * 65 - 129 - 5), (5 * 130 + 7, 3)])
def test_contraction_output_range(driver, start, count):
    """An evaluation of part of the output (a block boundary of the result):
    only [start, start + count) is written, at dst_offset on."""
    n, m, k = 65, 130, 40
    rng = np.random.default_rng(7)
    a = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal((k, m)).astype(np.float32)
    a_blk, b_blk = driver.upload(a.ravel()), driver.upload(b.ravel())
    try:
        ir = contraction_ir(a_blk, F32, (0, [k, 0, 1]), b_blk, F32, (0, [0, 1, m]), (n, m, k), F32)
        sentinel = np.full(count + 10, 12345.0, np.float32)
        dst = driver.upload(sentinel)
        try:
            driver.eval(ir.build(start=start, count=count, dst_offset=4, reduce_op=OP["ADD"],
                                 reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=k), dst)
            got = driver.read(dst, 0, count + 10, np.float32)
        finally:
            driver.free(dst)
    finally:
        driver.free(a_blk)
        driver.free(b_blk)
    assert (got[:4] == 12345.0).all() and (got[4 + count:] == 12345.0).all(), "wrote outside its range"
    exact, magnitude = exact_products(a.astype(np.float64), b.astype(np.float64))
    assert_within_sum_bound(got[4:4 + count], exact.ravel()[start:start + count],
                            magnitude.ravel()[start:start + count], k, np.float32)


def test_contraction_of_transposed_and_reversed_views(driver):
    """A^T[::-1] @ B[:, ::-1]: strides of any sign, through the map's base."""
    n, m, k = 37, 70, 45
    rng = np.random.default_rng(11)
    at = rng.standard_normal((k, n)).astype(np.float32)  # A = at.T[::-1]
    bb = rng.standard_normal((k, m)).astype(np.float32)  # B = bb[:, ::-1]
    a_blk, b_blk = driver.upload(at.ravel()), driver.upload(bb.ravel())
    try:
        # A[i, kk] = at[kk, n - 1 - i]: base n - 1, stride -1 over i, n over k.
        a_map = (n - 1, [-1, 0, n])
        # B[kk, j] = bb[kk, m - 1 - j]: base m - 1, stride -1 over j, m over k.
        b_map = (m - 1, [0, -1, m])
        got = None
        dst = driver.alloc(F32, n * m)
        try:
            driver.eval(contraction_ir(a_blk, F32, a_map, b_blk, F32, b_map, (n, m, k), F32).build(
                reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=k, count=n * m), dst)
            got = driver.read(dst, 0, n * m, np.float32).reshape(n, m)
        finally:
            driver.free(dst)
    finally:
        driver.free(a_blk)
        driver.free(b_blk)
    a, b = at.T[::-1].astype(np.float64), bb[:, ::-1].astype(np.float64)
    exact, magnitude = exact_products(a, b)
    assert_within_sum_bound(got, exact, magnitude, k, np.float32)


@pytest.fixture(params=["default", "shared", "registers"])
def tiled_form(request, opengl):
    """The OpenGL driver computing contractions in each tiled form: the one
    the device suits, staged through shared memory, read into registers."""
    assert opengl.set_option("tiled_products", request.param) == OK
    try:
        yield request.param
    finally:
        opengl.set_option("tiled_products", "default")


@pytest.mark.parametrize("batch, n, m, k, chunk", CASES)
def test_each_tiled_form_on_opengl(opengl, tiled_form, batch, n, m, k, chunk):
    test_contraction_matches_the_exact_product(opengl, batch, n, m, k, chunk, (F32, F64, F64), True)
    test_contraction_matches_the_exact_product(opengl, batch, n, m, k, chunk, (F32, F32, F32), False)


def test_output_range_and_views_in_each_tiled_form(opengl, tiled_form):
    for start, count in ((0, 1), (70, 200), (5 * 130 + 7, 3)):
        test_contraction_output_range(opengl, start, count)
    test_contraction_of_transposed_and_reversed_views(opengl)


def test_opengl_computes_products_in_the_tiled_form(opengl, monkeypatch, tmp_path):
    """The generated program of a contraction is a tiled one -- the form the
    device suits by default (registers on a CPU renderer, shared memory on a
    GPU), or the one asked for; with the option off the generic one, with
    the same values within the bound."""
    monkeypatch.setenv("GPUPY_GL_DUMP_SHADERS", str(tmp_path))
    n, m, k = 70, 66, 40
    rng = np.random.default_rng(5)
    a = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal((k, m)).astype(np.float32)
    a_blk, b_blk = opengl.upload(a.ravel()), opengl.upload(b.ravel())
    results, sources = {}, {}
    try:
        assert opengl.set_option("debug_glsl_append", f"// {tmp_path.name}") == OK
        for tiled in ("shared", "registers", "0"):
            assert opengl.set_option("tiled_products", tiled) == OK
            before = set(tmp_path.iterdir())
            ir = contraction_ir(a_blk, F32, (0, [k, 0, 1]), b_blk, F32, (0, [0, 1, m]), (n, m, k), F32)
            dst = opengl.alloc(F32, n * m)
            try:
                opengl.eval(ir.build(reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=k,
                                     count=n * m), dst)
                results[tiled] = opengl.read(dst, 0, n * m, np.float32).reshape(n, m)
            finally:
                opengl.free(dst)
            (new,) = set(tmp_path.iterdir()) - before
            sources[tiled] = new.read_text()
    finally:
        opengl.set_option("tiled_products", "default")
        opengl.set_option("debug_glsl_append", "")
        opengl.free(a_blk)
        opengl.free(b_blk)
    assert "tiled matrix product" in sources["shared"] and "shared " + "vec4" in sources["shared"]
    assert "tiled matrix product" in sources["registers"] and "shared " not in sources["registers"]
    assert "tiled matrix product" not in sources["0"]
    exact, magnitude = exact_products(a.astype(np.float64), b.astype(np.float64))
    for tiled in results:
        assert_within_sum_bound(results[tiled], exact, magnitude, k, np.float32)
    assert opengl.set_option("tiled_products", "2") != OK
    cpu = opengl.describe().get("cpu_renderer") == "yes"
    assert opengl.set_option("tiled_products", "default") == OK
    before = set(tmp_path.iterdir())
    opengl.set_option("debug_glsl_append", f"// {tmp_path.name} default")
    try:
        a_blk, b_blk = opengl.upload(a.ravel()), opengl.upload(b.ravel())
        dst = opengl.alloc(F32, n * m)
        ir = contraction_ir(a_blk, F32, (0, [k, 0, 1]), b_blk, F32, (0, [0, 1, m]), (n, m, k), F32)
        opengl.eval(ir.build(reduce_op=OP["ADD"], reduce_mode=REDUCE_CHUNKS, reduce_ndim=1, reduce_chunk=k,
                             count=n * m), dst)
        for blk in (a_blk, b_blk, dst):
            opengl.free(blk)
    finally:
        opengl.set_option("debug_glsl_append", "")
    (new,) = set(tmp_path.iterdir()) - before
    # (a GPU-like build, GPUPY_GL_FLOAT_PROBE, runs a GPU's form anywhere)
    gpu_like = opengl.describe().get("gpu_like_floats", "no") != "no"
    assert ("shared " in new.read_text()) == (not cpu or gpu_like), "the default form is the one the device suits"
