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


@pytest.mark.parametrize("value", [np.ones((1, 1)), np.ones(1, np.uint16), np.zeros(1, bool), [[1]], [1], [0]])
@pytest.mark.parametrize("key", [(), 0, (0,)])
@pytest.mark.parametrize("dtype", [np.int16, bool])
def test_setting_one_element_takes_sequences_as_numpy(gpu, key, value, dtype):
    # NumPy's item assignment takes no sequence, even of one element, where
    # a[...] or a slice broadcasts it -- except into a bool element, which
    # takes the truth value of a one-element array or of a list.
    shape = () if key == () else (3,)
    as_gpu = gp.asarray(value) if isinstance(value, np.ndarray) else value
    g, n = gp.zeros(shape, dtype), np.zeros(shape, dtype)
    try:
        n[key] = value
    except Exception:
        raises_like(lambda: g.__setitem__(key, as_gpu), lambda: np.zeros(shape, dtype).__setitem__(key, value))
    else:
        g[key] = as_gpu
        same(g, n)
    # Through a[...], an array broadcasts; a nested list may be no deeper
    # than the target.
    g, n = gp.zeros(shape, dtype), np.zeros(shape, dtype)
    try:
        n[...] = value
    except ValueError:
        raises_like(lambda: g.__setitem__(Ellipsis, as_gpu), lambda: np.zeros(shape, dtype).__setitem__(Ellipsis, value))
        return
    g[...] = as_gpu
    same(g, n)


@pytest.mark.parametrize("dtype, value", [(np.uint64, np.int32(-2)), (np.uint16, np.int64(-4)),
                                          (np.uint8, np.float32(-3.0)), (np.int8, np.int64(300)),
                                          (np.int8, np.float32(np.nan)), (np.int8, np.float64(1e300)),
                                          (np.int8, 300), (np.uint16, -4), (np.int8, 2.5)])
@pytest.mark.parametrize("key", [Ellipsis, (0,)])
def test_assigning_numpy_scalars_converts_as_numpy(gpu, dtype, value, key):
    # a[...] = np.int32(-2) into uint64 wraps in NumPy (a cast from the
    # scalar's dtype), np.int64(300) into int8 raises: NumPy's own rules.
    g, n = gp.zeros(3, dtype), np.zeros(3, dtype)
    try:
        n[key] = value
    except Exception:
        raises_like(lambda: g.__setitem__(key, value), lambda: np.zeros(3, dtype).__setitem__(key, value))
        return
    g[key] = value
    same(g, n)


@pytest.mark.parametrize("name, args", [("negative", (2**63,)), ("add", (2**63, 1)), ("add", (1, 2)),
                                        ("multiply", (2.5, 4)), ("invert", (2**63,)), ("add", (2**64, 1))])
def test_ufuncs_of_python_numbers_alone_follow_numpy(gpu, name, args):
    # No array operand: NumPy's weak-scalar rules alone decide (np.negative
    # of 2**63 is a uint64), and the result is a NumPy scalar.
    try:
        want = getattr(np, name)(*args)
    except Exception:
        raises_like(lambda: getattr(gp, name)(*args), lambda: getattr(np, name)(*args))
        return
    got = getattr(gp, name)(*args)
    assert type(got) is type(want) and got == want
    out_g, out_n = gp.zeros(2, np.uint64), np.zeros(2, np.uint64)
    try:
        getattr(np, name)(*args, out=out_n)
    except Exception:
        raises_like(lambda: getattr(gp, name)(*args, out=out_g), lambda: getattr(np, name)(*args, out=np.zeros(2, np.uint64)))
        return
    assert getattr(gp, name)(*args, out=out_g) is out_g
    same(out_g, out_n)


@pytest.mark.parametrize("target, value", [(np.zeros(3, bool), 2**63), (np.zeros(3, np.int8), 2**63),
                                           (np.zeros(3, np.int64), 2**63), (np.zeros(3, bool), np.ones((2, 2), np.uint16)),
                                           (np.ones((2, 4, 1), np.int64), np.ones((3, 0, 4, 1), np.uint64)),
                                           (np.zeros(3, np.uint64), -1)])
def test_in_place_operators_refuse_in_numpys_order(gpu, target, value):
    # `a -= b` is np.subtract(a, b, out=a): an out-of-range Python int
    # (OverflowError), then the output's casting (TypeError), then shapes.
    def run(module, a, b):
        a -= b
        return a

    as_gpu = gp.asarray(value) if isinstance(value, np.ndarray) else value
    raises_like(lambda: run(gp, gp.asarray(target), as_gpu), lambda: run(np, target.copy(), value))


def same_outcome(gp_call, np_call):
    """NumPy's result, or NumPy's exception class: what the installed NumPy
    does decides (np.where wrapped out-of-range Python ints up to NumPy 2.4
    and raises OverflowError from 2.5)."""
    try:
        want = np_call()
    except Exception:  # noqa: BLE001 -- compared by raises_like
        raises_like(gp_call, np_call)
        return
    same(gp_call(), want)


def test_where_converts_python_ints_beyond_the_dtype_as_numpy(gpu):
    cond = np.array([True, False])
    a = np.array([1, 2], np.uint8)
    same_outcome(lambda: gp.where(gp.asarray(cond), gp.asarray(a), 2**63), lambda: np.where(cond, a, 2**63))
    same_outcome(lambda: gp.where(gp.asarray(cond), gp.asarray(a.astype(np.int64)), 2**63 + 5),
                 lambda: np.where(cond, a.astype(np.int64), 2**63 + 5))
    same_outcome(lambda: gp.where(gp.asarray(cond), gp.asarray(a), 1000), lambda: np.where(cond, a, 1000))
    raises_like(lambda: gp.where(gp.asarray(cond), gp.asarray(a), 2**64), lambda: np.where(cond, a, 2**64))


def test_shape_functions_take_fallback_results_of_dtypes_gpupy_cannot_hold(gpu, silent_fallback):
    # sqrt of a bool array is float16 in NumPy: a host ndarray in gpupy,
    # which the shape functions then receive.
    half = gp.sqrt(gp.asarray(np.array([[True, False]])))
    want = np.sqrt(np.array([[True, False]]))
    same(gp.broadcast_to(half, (3, 1, 2)), np.broadcast_to(want, (3, 1, 2)))
    same(gp.expand_dims(half, 0), np.expand_dims(want, 0))
    same(gp.stack([half, half], axis=-1), np.stack([want, want], axis=-1))
    for got, ref in zip(gp.broadcast_arrays(half, gp.arange(2)), np.broadcast_arrays(want, np.arange(2))):
        same(got, ref)
    for got, ref in zip(gp.meshgrid(half[0], gp.arange(3)), np.meshgrid(want[0], np.arange(3))):
        same(got, ref)


def test_fallback_paths_accept_ndarrays(gpu, silent_fallback):
    same(gp.expand_dims(np.arange(3), 0), np.expand_dims(np.arange(3), 0))
    same(gp.broadcast_to(np.arange(3), (2, 3)), np.broadcast_to(np.arange(3), (2, 3)))
    cond = np.array([True, False])
    same_outcome(lambda: gp.where(gp.asarray(cond), np.uint64(2**64 - 1), -1),
                 lambda: np.where(cond, np.uint64(2**64 - 1), -1))


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

# Sizes no machine can hold: beyond x86-64's 128 TiB of user address space
# (a smaller "impossible" size is allocated lazily where memory is
# overcommitted, as on a 128 GiB GPU machine), or beyond what NumPy indexes.
@pytest.mark.parametrize("shape,dtype", [(10**14, np.float64), ((10**7, 10**7), np.int32), (2**62, np.float64),
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
    # NumPy's texts (numpy/_core/_exceptions.py): "%#.3g", or "%#.0f" from 1000 units.
    sizes = [(1, "1 bytes"), (1023, "1023 bytes"), (1024, "1.00 KiB"), (1536, "1.50 KiB"), (1048575, "1.00 MiB"),
             (80 * 10**12, "72.8 TiB"), (8 * 10**14, "728. TiB"), (1000 * 1024, "1000. KiB"),
             (5 * 1024**4, "5.00 TiB")]
    for n, text in sizes:
        assert gp._core.allocation_size_text(n) == text


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


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("join", ["concatenate", "stack"])
def test_reshape_of_a_joined_array_is_a_view_that_sees_writes(gpu, join, axis):
    # NumPy's joins are C-ordered, so reshaping one is a view; gpupy's join
    # along axis 1 was a swapped view, its reshape a copy: a later write to
    # the joined array was lost from the reshaped one (found by the fuzzer).
    h = np.arange(12, dtype=np.int8).reshape(3, 4)
    results = []
    for xp in (np, gp):
        x = xp.asarray(h)
        joined = getattr(xp, join)([x, x], axis=axis)
        flat = joined.reshape(1, -1)
        joined += 1
        joined[(0,) * joined.ndim] = 100
        results.append((np.asarray(flat).copy(), np.asarray(joined).copy()))
    same(results[1][0], results[0][0])
    same(results[1][1], results[0][1])


@pytest.mark.parametrize("call", [
    lambda xp, c: xp.repeat(xp.reshape(c, (2, 2, 1)), 3, axis=2), lambda xp, c: xp.tile(c, 2),
    lambda xp, c: xp.diff(c), lambda xp, c: xp.diagonal(xp.reshape(c, (2, 2))), lambda xp, c: xp.roll(c, 1),
], ids=["repeat", "tile", "diff", "diagonal", "roll"])
def test_shape_functions_hand_arrays_of_other_dtypes_to_numpy(gpu, call):
    # npbench's Stockham FFT repeats a complex array: gpupy passed the
    # ndarray to its device remap ("remap(): incompatible function arguments").
    c = np.exp(1j * np.arange(4.0))
    want = call(np, c)
    got = call(gp, c)
    assert type(got) is np.ndarray
    same(got, want)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin", "sum", "prod"])
def test_reductions_of_fallback_results_of_dtypes_gpupy_cannot_hold(gpu, silent_fallback, name):
    # rint of an int8 array is float16 in NumPy, a host array in gpupy; max
    # passed it dtype=None, which ndarray.max does not take (fuzzer).
    half = gp.rint(gp.asarray(np.arange(-3, 3, dtype=np.int8)))
    want = getattr(np, name)(np.rint(np.arange(-3, 3, dtype=np.int8)), axis=None)
    same(np.asarray(getattr(gp, name)(half, axis=None)), np.asarray(want))


@pytest.mark.parametrize("write", ["element", "slice", "in-place op"])
def test_an_expression_rebuilt_after_a_write_sees_the_new_values(gpu, write):
    """A complete expression drops its operands but stays hash-consed; a
    write in place to an operand gives the operand a new identity, so the
    same expression built again is a new node, not the stale one (sin(a)
    gave sin of the old values: 0.0 where sin(100) was due)."""
    h = np.arange(5.0)
    a = gp.asarray(h)
    b = a * a
    np.testing.assert_array_equal(np.asarray(b), h * h)
    if write == "element":
        a[0] = 100.0
        h[0] = 100.0
    elif write == "slice":
        a[0:2] = np.array([100.0, 50.0])
        h[0:2] = [100.0, 50.0]
    else:
        a[:2] += 100.0
        h[:2] += 100.0
    np.testing.assert_array_equal(np.asarray(a * a), h * h)
    np.testing.assert_array_equal(np.asarray(b), np.arange(5.0) ** 2)


@pytest.mark.parametrize("dtype", [np.int8, np.float32])
def test_the_square_of_an_evaluated_absolute_value(gpu, dtype):
    """square(|x|) is rewritten as square(x); an evaluated |x| has dropped
    its operand, so it stays as it is (it raised IndexError with a C++
    vector message; found by the fuzzer's campaign, one op per evaluation)."""
    h = np.arange(-4, 5, dtype=dtype)
    a = gp.absolute(gp.asarray(h))
    np.testing.assert_array_equal(np.asarray(a), np.absolute(h))  # evaluated: its operand dropped
    np.testing.assert_array_equal(np.asarray(gp.square(a)), np.square(np.absolute(h)))
    b = gp.asarray(h.copy())
    gp.absolute(b, out=b)
    np.asarray(b)  # the campaign's program evaluated it through a fancy index
    np.testing.assert_array_equal(np.asarray(gp.square(b)), np.square(np.absolute(h)))


@pytest.mark.parametrize("write", [
    lambda v: v.__ior__(7),
    lambda v: v.__setitem__((0, 0), 7),
    lambda v: v.__setitem__(slice(None), 7),
], ids=["in-place or", "element", "slice"])
@pytest.mark.parametrize("whole", [
    lambda x: x.__setitem__((), 0),
    lambda x: x.__setitem__(Ellipsis, 0),
], ids=["x[()] = 0", "x[...] = 0"])
def test_a_write_into_a_constant_the_array_took_whole_is_kept(gpu, whole, write):
    # Found by the fuzz campaign: a 0-d array assigned a number whole takes
    # the (shared) constant node as its value; a partial write through a
    # (1, 1) view of it then wrote into the constant's memory, so reading
    # the array gave the new value but every expression of it (which reads
    # the constant as a literal) the old one: `x + 3` was 3, not 10.
    for xp in (np, gp):
        x = xp.asarray(np.array(5, np.int8))
        xp.negative(x, out=x)  # lazy: the element store cannot go in place
        other = xp.asarray(np.array(1, np.int8))
        whole(x)
        whole(other)  # the same constant, shared
        v = x.reshape((1, -1))
        write(v)
        got = (int(np.asarray(x + np.int8(3))), int(np.asarray(x)), int(np.asarray(other + np.int8(0))))
        if xp is np:
            want = got
        else:
            assert got == want == (10, 7, 0)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_a_reduction_over_no_element_pairs_folds_into_the_start_value(gpu, name):
    # A 0-d array reduced (over all its axes, or its axis 0 as NumPy allows)
    # is its value folded into the start value, as NumPy computes it: a
    # float sum of -0.0 is +0.0 (found by the fuzzer: gpupy gave -0.0).
    h = np.array(-0.0, np.float32)
    for kwargs in ({}, {"axis": 0}, {"axis": None}):
        want = getattr(np, name)(h, **kwargs)
        got = getattr(gp, name)(gp.array(h), **kwargs)
        assert np.signbit(float(got)) == np.signbit(want), (kwargs, got, want)
        assert got.dtype == want.dtype
