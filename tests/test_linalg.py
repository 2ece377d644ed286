"""Linear algebra against NumPy, under both placements: the host's BLAS and
LAPACK (the default, see gpupy/_placement.py) and the device's fused
multiply-and-fold products (placement "device"). Values, dtypes, shapes and
exception classes are NumPy's; the counters say where the work ran."""

import numpy as np
import pytest

import gpupy as gp


@pytest.fixture(params=["host", "device"])
def placement(request):
    previous = gp.set_placement(request.param)
    try:
        yield request.param
    finally:
        gp.set_placement(previous)


def host(shape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind in "iu":
        return rng.integers(0, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def close(got, want, dtype):
    assert isinstance(got, gp.GpuArray) or np.ndim(want) == 0, type(got)
    got = np.asarray(got)
    assert got.shape == np.shape(want) and got.dtype == np.asarray(want).dtype, (got.shape, got.dtype)
    if np.dtype(dtype).kind in "biu":
        np.testing.assert_array_equal(got, want)
    else:
        # A product of n terms summed in another order: within n ulps of
        # the sum of |terms| (here n <= 64, values ~ N(0, 1)).
        eps = np.finfo(np.asarray(want).dtype).eps
        np.testing.assert_allclose(got, want, rtol=0, atol=64 * 8 * eps * max(1.0, float(np.abs(want).max(initial=0))))


SHAPES = [((3,), (3,)), ((4, 3), (3,)), ((3,), (3, 5)), ((4, 3), (3, 5)), ((2, 4, 3), (3, 5)),
          ((2, 1, 4, 3), (3, 3, 2)), ((0, 3), (3, 2)), ((4, 0), (0, 2))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.bool_])
@pytest.mark.parametrize("sa, sb", SHAPES)
def test_matmul(gpu, silent_fallback, placement, sa, sb, dtype):
    a, b = host(sa, dtype, 1), host(sb, dtype, 2)
    gp.reset_stats()
    close(gp.asarray(a) @ gp.asarray(b), a @ b, dtype)
    close(gp.matmul(gp.asarray(a), b), np.matmul(a, b), dtype)
    placed = gp.stats()["host_placements_by_function"]
    assert placed.get("matmul", 0) == (2 if placement == "host" else 0), placed
    assert gp.stats()["fallbacks"] == 0


@pytest.mark.parametrize("sa, sb", SHAPES)
def test_dot_inner_vdot_tensordot(gpu, placement, sa, sb):
    a, b = host(sa, seed=3), host(sb, seed=4)
    ga, gb = gp.asarray(a), gp.asarray(b)
    close(gp.dot(ga, gb), np.dot(a, b), a.dtype)
    close(ga.dot(gb), a.dot(b), a.dtype)
    if a.shape[-1:] == b.shape[-1:]:
        close(gp.inner(ga, gb), np.inner(a, b), a.dtype)
    if a.size == b.size:
        close(gp.vdot(ga, gb), np.vdot(a, b), a.dtype)
    close(gp.tensordot(ga, gb, axes=([-1], [0])), np.tensordot(a, b, axes=([-1], [0])), a.dtype)
    close(gp.outer(ga, gb), np.outer(a, b), a.dtype)


def test_strided_lazy_and_negative_stride_operands(gpu, placement):
    a, b = host((6, 8), seed=5), host((8, 4), seed=6)
    ga, gb = gp.asarray(a), gp.asarray(b)
    # A lazy expression, a transposed view, a negative-stride view.
    close((ga * 2 + 1)[::2, ::-1] @ gb[::-1].T.T, ((a * 2 + 1)[::2, ::-1]) @ b[::-1], a.dtype)
    close(gp.dot(ga.T[::-1], ga), np.dot(a.T[::-1], a), a.dtype)


def test_out_argument_and_result_is_a_gpupy_array(gpu, placement):
    a, b = host((3, 4), seed=7), host((4, 2), seed=8)
    out_g, out_n = gp.zeros((3, 2)), np.zeros((3, 2))
    r = gp.matmul(gp.asarray(a), gp.asarray(b), out=out_g)
    np.matmul(a, b, out=out_n)
    assert r is out_g
    close(out_g, out_n, a.dtype)
    r = gp.dot(gp.asarray(a), gp.asarray(b), out=out_g)
    assert r is out_g
    # The result is an ordinary gpupy array: later lazy work on it fuses.
    product = gp.asarray(a) @ gp.asarray(b)
    close(product * 2 - 1, (a @ b) * 2 - 1, a.dtype)


@pytest.mark.parametrize("call", [
    lambda m, a, b: m.matmul(a, b[:3]),
    lambda m, a, b: m.matmul(a, m.asarray(2.0)),
    lambda m, a, b: m.dot(a, b[:3]),
    lambda m, a, b: m.inner(a, b),
    lambda m, a, b: m.tensordot(a, b, axes=([0], [1])),
], ids=["matmul-core", "matmul-0d", "dot-align", "inner-align", "tensordot-mismatch"])
def test_errors_are_numpys(gpu, placement, call):
    a, b = host((3, 4), seed=9), host((4, 2), seed=10)
    with pytest.raises(Exception) as want:
        call(np, a, b)
    with pytest.raises(type(want.value).__mro__[1] if type(want.value).__module__ != "builtins" else type(want.value)):
        call(gp, gp.asarray(a), gp.asarray(b))


DEVICE_PRODUCT_SHAPES = [((70, 33), (33, 130)), ((3, 65, 20), (20, 64)), ((2, 1, 9, 300), (5, 300, 7)),
                         ((130, 1000), (1000, 3)), ((1, 17), (17, 200))]


@pytest.mark.parametrize("sa, sb", DEVICE_PRODUCT_SHAPES)
@pytest.mark.parametrize("dtypes", [(np.float32, np.float32), (np.float64, np.float64), (np.float32, np.float64)],
                         ids=["f32", "f64", "mixed"])
def test_device_products_across_tiles_and_chunks(gpu, sa, sb, dtypes):
    """Products on the device whose sizes cut the tiled form's 64 x 64 tiles
    and 16-wide k steps, with batches broadcast and k summed in chunks (a
    product of few outputs splits k: 130 x 3 outputs over k = 1000), against
    the exact product: within (k + 2) u of sum |a_ik b_kj| (gamma_k; any
    fusing of multiply-adds)."""
    previous = gp.set_placement("device")
    try:
        a, b = host(sa, dtypes[0], 1), host(sb, dtypes[1], 2)
        gp.reset_stats()
        got = gp.asarray(a) @ gp.asarray(b)
        want = a @ b
        assert got.shape == want.shape and got.dtype == want.dtype
        exact = a.astype(np.float64) @ b.astype(np.float64)
        magnitude = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
        u = np.finfo(want.dtype).eps / 2
        err = np.abs(np.asarray(got).astype(np.float64) - exact)
        assert (err <= (sa[-1] + 2) * u * magnitude * 1.01).all(), err.max()
        assert gp.stats()["fallbacks"] == 0 and gp.stats()["host_placements"] == 0
    finally:
        gp.set_placement(previous)


def test_device_product_of_two_arrays_is_one_evaluation(gpu):
    """A product whose outputs alone keep a device busy (137 tiles of 64 x 64)
    sums all of k in one pass; one with few outputs (30 tiles) sums k in two
    chunks, then folds them."""
    previous = gp.set_placement("device")
    try:
        for rows, passes in ((800, 1), (175, 2)):
            a, b = gp.asarray(host((rows, 300), np.float32, 3)), gp.asarray(host((300, 700), np.float32, 4))
            gp.reset_stats()
            np.asarray(a @ b)
            assert gp.stats()["evaluations"] == passes, rows
    finally:
        gp.set_placement(previous)


EINSUM_LOWERED = [("ij,jk->ik", (4, 5), (5, 3)), ("ij,jk", (4, 5), (5, 3)), ("ij,kj->ik", (4, 5), (3, 5)),
                  ("bij,bjk->bik", (2, 4, 5), (2, 5, 3)), ("...ij,...jk->...ik", (2, 1, 4, 5), (3, 5, 3)),
                  ("ij->ji", (3, 4)), ("ij->", (3, 4)), ("ijk->ki", (2, 3, 4)), ("i,i->", (5,), (5,)),
                  ("i,j->ij", (3,), (4,)), ("ij,j->i", (3, 4), (4,)), ("ijk,jl->kil", (2, 3, 4), (3, 5)),
                  ("bA,Ac", (3, 2), (2, 4)), ("ab,cd->", (2, 3), (4, 5)), ("...j,j", (2, 3, 4), (4,)),
                  ("a...,a", (2, 3, 4), (2,)), ("ij,jk->ik", (0, 5), (5, 3)), ("pqr,qs->sp", (70, 9, 4), (9, 66))]


@pytest.mark.parametrize("subscripts, shapes", [(c[0], c[1:]) for c in EINSUM_LOWERED], ids=lambda x: str(x))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_einsum_contractions_on_the_device(gpu, subscripts, shapes, dtype):
    """Placed on the device, einsum of one or two float operands is a sum
    and a matrix product on the device: NumPy's shape and dtype, values
    within (k + 2) u of the sum of |terms| (k the summed length)."""
    previous = gp.set_placement("device")
    try:
        ops = [host(shape, dtype, seed) for seed, shape in enumerate(shapes)]
        gp.reset_stats()
        got = gp.einsum(subscripts, *[gp.asarray(x) for x in ops])
        want = np.einsum(subscripts, *ops)
        assert np.shape(got) == want.shape and np.asarray(got).dtype == want.dtype
        exact = np.einsum(subscripts, *[x.astype(np.float64) for x in ops])
        magnitude = np.einsum(subscripts, *[np.abs(x.astype(np.float64)) for x in ops])
        k = max(1, int(np.prod(ops[0].shape)) * int(np.prod(ops[-1].shape)) // max(1, want.size))
        u = np.finfo(dtype).eps / 2
        assert (np.abs(np.asarray(got, np.float64) - exact) <= (k + 2) * u * magnitude * 1.01).all()
        assert gp.stats()["host_placements"] == 0 and gp.stats()["fallbacks"] == 0
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("subscripts, operands", [
    ("ii->i", [np.eye(3)]), ("xy,yz,zw", [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 2))]),
    ("ij,jk->ik", [np.arange(6).reshape(2, 3), np.arange(6).reshape(3, 2)])], ids=["diagonal", "three", "ints"])
def test_einsum_forms_not_lowered_are_numpys(gpu, subscripts, operands):
    previous = gp.set_placement("device")
    try:
        gp.reset_stats()
        got = gp.einsum(subscripts, *[gp.asarray(x) for x in operands])
        np.testing.assert_array_equal(np.asarray(got), np.einsum(subscripts, *operands))
        assert gp.stats()["host_placements_by_function"] == {"einsum": 1}
        with pytest.raises(ValueError):  # NumPy's error for mismatched sizes
            gp.einsum("ij,jk->ik", gp.ones((4, 5)), gp.ones((6, 3)))
    finally:
        gp.set_placement(previous)


def test_einsum_and_linalg_run_lapack_on_the_host(gpu):
    a = host((5, 5), seed=11) + 5 * np.eye(5)
    b = host((5, 2), seed=12)
    ga, gb = gp.asarray(a), gp.asarray(b)
    gp.reset_stats()
    close(gp.einsum("ij,jk->ik", ga, gb), np.einsum("ij,jk->ik", a, b), a.dtype)
    close(gp.linalg.solve(ga, gb), np.linalg.solve(a, b), a.dtype)
    close(gp.linalg.inv(ga), np.linalg.inv(a), a.dtype)
    np.testing.assert_allclose(float(gp.linalg.det(ga)), np.linalg.det(a), rtol=1e-12)
    q, r = gp.linalg.qr(ga)
    close(q @ r, a, a.dtype)
    w = gp.linalg.eigvalsh(ga + ga.T)
    close(w, np.linalg.eigvalsh(a + a.T), a.dtype)
    placed = gp.stats()["host_placements_by_function"]
    assert {"einsum", "linalg.solve", "linalg.inv", "linalg.det", "linalg.qr", "linalg.eigvalsh"} <= set(placed)
    assert gp.stats()["fallbacks"] == 0  # a placement is not a fallback (and the fixture's mode is "raise")
    with pytest.raises(np.linalg.LinAlgError):
        gp.linalg.inv(gp.zeros((3, 3)))


def test_placement_setting():
    previous = gp.get_placement()
    try:
        assert gp.set_placement("device") == previous
        assert gp.get_placement() == "device"
        with pytest.raises(ValueError):
            gp.set_placement("gpu")
        assert gp.get_placement() == "device"
    finally:
        gp.set_placement(previous)


VECTOR_PAIRS = {
    "contiguous": lambda x, n: (x[:n], x[n:2 * n]),
    "reversed": lambda x, n: (x[:n][::-1], x[n:2 * n]),
    "strided_and_reversed": lambda x, n: (x[::3][:n], x[:n][::-1]),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 1000])
@pytest.mark.parametrize("pair", list(VECTOR_PAIRS) + ["broadcast"])
@pytest.mark.parametrize("call", ["dot", "matmul", "operator"])
def test_products_of_vectors_are_numpys_to_the_bit(gpu, dtype, n, pair, call):
    # The core runs a dot of two float vectors itself with the dtype's dot
    # function: the strides it passes must be those NumPy passes (np.dot
    # copies a reversed or broadcast vector first, matmul does not), or the
    # summation order -- and the last bits -- differ.
    h = np.random.default_rng(n).standard_normal(3 * n).astype(dtype)
    g = gp.asarray(h)
    if pair == "broadcast":
        a, b = np.broadcast_to(h[:1], (n,)), h[:n]
        ga, gb = gp.broadcast_to(g[:1], (n,)), g[:n]
    else:
        a, b = VECTOR_PAIRS[pair](h, n)
        ga, gb = VECTOR_PAIRS[pair](g, n)
    f, gf = {"dot": (np.dot, gp.dot), "matmul": (np.matmul, gp.matmul),
             "operator": (lambda x, y: x @ y, lambda x, y: x @ y)}[call]
    gp.reset_stats()
    want, got = f(a, b), gf(ga, gb)
    assert type(got) is type(want)  # a NumPy scalar, as NumPy gives
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert gp.stats()["host_placements_by_function"] == {"dot" if call == "dot" else "matmul": 1}


ARG_CASES = {
    "rows": (lambda h: h, 1), "columns": (lambda h: h, 0), "all": (lambda h: h, None),
    "ties": (lambda h: np.round(h), 1), "nan": (lambda h: np.where(h > 1.5, np.nan, h), 1),
    "int": (lambda h: (h * 3).astype(np.int32), 0),
}


@pytest.mark.parametrize("case", list(ARG_CASES))
@pytest.mark.parametrize("name", ["argmin", "argmax"])
def test_arg_reductions_under_both_placements(gpu, placement, name, case):
    # On the host placement NumPy's arg-reduction runs on the host values
    # (one pass, counted as a placement); on the device, the extreme, the
    # hits and the first hit. Both give NumPy's indices -- the first of
    # ties, the first NaN -- as gpupy arrays, 0-d included.
    make, axis = ARG_CASES[case]
    h = make(host((40, 7), seed=3))
    gp.reset_stats()
    got = getattr(gp, name)(gp.asarray(h) * 1, axis=axis)  # a lazy operand
    want = getattr(np, name)(h * 1, axis=axis)
    assert isinstance(got, gp.GpuArray)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert np.asarray(got).dtype == want.dtype
    placed = gp.stats()["host_placements_by_function"]
    assert placed == ({name: 1} if placement == "host" else {})


def _blas_is_openblas():
    """NumPy's BLAS is OpenBLAS with its per-thread count, which gpupy sets
    (NumPy 2.5's scipy-openblas build does not export it)."""
    config = np.show_config(mode="dicts") or {}
    openblas = "openblas" in str(config.get("Build Dependencies", {}).get("blas", {})).lower()
    return openblas and gp._core.blas_threads_settable()


@pytest.mark.parametrize("n, threads_pay", [(40, False), (600, True)])
def test_small_products_keep_blas_on_the_calling_thread(gpu, n, threads_pay):
    # BLAS's worker threads spin after each product they join and take the
    # host engine's cores: a product too short to gain from them runs on
    # the calling thread alone (600^3 x 2 flops is past the threshold).
    # Values are NumPy's either way.
    previous = gp.set_placement("host")
    try:
        a, b = host((n, n)), host((n, n), seed=1)
        ga, gb = gp.asarray(a), gp.asarray(b)
        gp.reset_stats()
        close(ga @ gb, a @ b, np.float64)
        held = gp.stats()["products_on_calling_thread"]
        if not _blas_is_openblas():
            assert held == 0  # another BLAS: nothing to hold
        else:
            assert held == (0 if threads_pay else 1)
        close(gp.matmul(gb, ga), b @ a, np.float64)
    finally:
        gp.set_placement(previous)


def test_small_decompositions_keep_blas_on_the_calling_thread(gpu):
    # gpupy's host calls of NumPy's linear algebra (a solve in a loop)
    # hold BLAS's threads off the same way, sized by their largest operand.
    previous = gp.set_placement("host")
    try:
        a = host((30, 30)) + 30 * np.eye(30)
        b = host((30,), seed=1)
        gp.reset_stats()
        close(gp.linalg.solve(gp.asarray(a), gp.asarray(b)), np.linalg.solve(a, b), np.float64)
        assert gp.stats()["products_on_calling_thread"] == (1 if _blas_is_openblas() else 0)
    finally:
        gp.set_placement(previous)
