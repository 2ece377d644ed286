"""Regression tests for what the differential fuzzer (tests/fuzz) and the
reliability review found: each case failed before its fix, on the driver(s)
named by the fixture. NumPy is the oracle for values, dtypes, shapes and
exception classes."""

import ctypes

import numpy as np
import pytest

import gpupy as gp


def same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def raises_like(gp_call, np_call):
    """Both raise, and gpupy's exception is an instance of NumPy's class's
    nearest builtin base (NumPy's own subclasses are private)."""
    with pytest.raises(Exception) as want:
        np_call()
    base = next(c for c in type(want.value).__mro__ if c.__module__ == "builtins")
    with pytest.raises(base):
        gp_call()


# --- the cache smaller than the work ---------------------------------------------------------------

# The reproducer is tests/test_core_mechanisms.py::
# test_shared_operand_read_back_after_eviction_is_uploaded_not_recomputed.

def test_evaluation_needing_more_blocks_than_the_cache_holds(gpu):
    # Eight operands of 64 float64 blocks each, a cache of two blocks: every
    # pass needs more blocks than fit, so the planner splits and evicts.
    gp.set_block_size(64)
    gp.set_cache_bytes(2 * 64 * 8)
    rng = np.random.default_rng(7)
    hosts = [rng.standard_normal(64 * 64) for _ in range(8)]
    arrays = [gp.asarray(h) for h in hosts]
    got = arrays[0]
    want = hosts[0]
    for a, h in zip(arrays[1:], hosts[1:]):
        got = got * 0.5 + a
        want = want * 0.5 + h
    same(got, want)
    # A float sum's rounding depends on its order (blocks vs NumPy's pairwise
    # sum): within n * eps of the values' magnitude.
    np.testing.assert_allclose(float(got.sum()), want.sum(), rtol=0, atol=want.size * 2.3e-16 * np.abs(want).sum())
    # The cache is consistent afterwards: the next operation works.
    same(arrays[3][::-5] + 1, hosts[3][::-5] + 1)


# --- exceptions in NumPy's order, values where NumPy has them --------------------------------------

def test_out_dtype_is_refused_before_its_shape(gpu):
    x = np.arange(3.0)
    raises_like(lambda: gp.add(gp.asarray(x), gp.asarray(x), out=gp.zeros(4, np.int32)),
                lambda: np.add(x, x, out=np.zeros(4, np.int32)))
    raises_like(lambda: gp.add(gp.asarray(x), gp.asarray(x), out=gp.zeros(4)),
                lambda: np.add(x, x, out=np.zeros(4)))


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "any", "all", "argmax", "argmin", "cumsum",
                                  "cumprod", "count_nonzero", "mean", "var"])
@pytest.mark.parametrize("axis", [0, -1, 1, (0,)])
def test_reductions_of_0d_arrays_take_axis_as_numpy(gpu, name, axis):
    x = np.asarray(3.0)
    try:
        want = getattr(np, name)(x, axis=axis)
    except Exception:
        raises_like(lambda: getattr(gp, name)(gp.asarray(x), axis=axis), lambda: getattr(np, name)(x, axis=axis))
        return
    same(getattr(gp, name)(gp.asarray(x), axis=axis), np.asarray(want))


def test_setting_an_element_with_a_sequence(gpu):
    raises_like(lambda: gp.zeros(3).__setitem__(0, [1, 2]), lambda: np.zeros(3).__setitem__(0, [1, 2]))


def test_fallback_paths_accept_ndarrays(gpu, silent_fallback):
    same(gp.expand_dims(np.arange(3), 0), np.expand_dims(np.arange(3), 0))
    same(gp.broadcast_to(np.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))
    cond = np.array([True, False])
    same(gp.where(gp.asarray(cond), np.uint64(2**64 - 1), -1), np.where(cond, np.uint64(2**64 - 1), -1))


def test_copyto_a_view_and_broadcast_assignment(gpu):
    g, n = gp.zeros((4, 4)), np.zeros((4, 4))
    gp.copyto(g[1:3, 1:3], 5.0)
    np.copyto(n[1:3, 1:3], 5.0)
    same(g, n)
    g, n = gp.zeros((1, 1, 5)), np.zeros((1, 1, 5))
    g[...] = gp.ones((1, 1, 1, 5))
    n[...] = np.ones((1, 1, 1, 5))
    same(g, n)


# --- allocation errors ------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,dtype", [(10**13, np.float64), ((10**6, 10**6), np.int32), (2**62, np.float64),
                                         ((2**40, 2**40), np.int8)])
def test_impossible_allocations_fail_at_the_call_like_numpy(gpu, shape, dtype):
    with pytest.raises((MemoryError, ValueError)) as want:
        np.zeros(shape, dtype)
    expected = MemoryError if isinstance(want.value, MemoryError) else ValueError
    for make in (gp.zeros, gp.ones, gp.empty):
        with pytest.raises(expected) as got:
            make(shape, dtype)
        assert str(got.value) == str(want.value)
    assert "bad_alloc" not in str(want.value)


def test_allocation_size_text():
    sizes = [(1, "1 bytes"), (1023, "1023 bytes"), (1024, "1 KiB"), (1536, "1.5 KiB"), (1048575, "1 MiB"),
             (80 * 10**12, "72.8 TiB")]
    for n, text in sizes:
        assert gp._core.allocation_size_text(n) == text


# --- the buffer protocol ----------------------------------------------------------------------------

def test_buffer_exports_are_read_only(gpu):
    base = gp.zeros((4, 4))
    for a in (base, base[:, ::2], base * 2):
        view = memoryview(a)
        assert view.readonly
        with pytest.raises(TypeError):
            view.cast("B")[0] = 1
        with pytest.raises((BufferError, TypeError)):
            (ctypes.c_double * a.size).from_buffer(a)
    same(base, np.zeros((4, 4)))
    same(np.frombuffer(base[:, ::2], np.float64), np.zeros(8))


def test_scipy_output_argument_raises_instead_of_losing_the_result(gpu):
    ndimage = pytest.importorskip("scipy.ndimage")
    x = np.random.default_rng(1).random((8, 8))
    out = gp.zeros((8, 16))[:, ::2]
    try:
        ndimage.gaussian_filter(x, 1, output=out)
    except (ValueError, TypeError, BufferError):
        same(out, np.zeros((8, 8)))  # refused, nothing half-written
    else:
        np.testing.assert_allclose(np.asarray(out), ndimage.gaussian_filter(x, 1))


@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_extrema_with_constant_nan_operands(gpu, name, dtype):
    # Found by the fuzzer: maximum(0, nan) gave 0 on the OpenGL driver (a
    # NaN-free constant let the shader use a select Mesa turns into fmax).
    if not gpu.declares(name, dtype):
        pytest.skip(f"{gpu.name} does not run {name} for {np.dtype(dtype)}")
    values = [0.0, np.nan, -1.5]
    for a in values:
        for b in values:
            want = getattr(np, name)(np.full(3, a, dtype), np.full(3, b, dtype))
            consts = gp.full((3,), a, dtype=dtype), gp.full((3,), b, dtype=dtype)
            loads = gp.asarray(np.full(3, a, dtype)), gp.asarray(np.full(3, b, dtype))
            for x, y in [consts, (consts[0], loads[1]), (loads[0], consts[1]), loads]:
                same(getattr(gp, name)(x, y), want)
