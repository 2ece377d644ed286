"""The host engine: small evaluations run in place on the host (the software
driver's interpreter over host memory) when the active driver is a device,
instead of being uploaded, dispatched and read back."""

import numpy as np
import pytest

import gpupy as gp

F32 = np.float32


@pytest.fixture
def device_with_host_engine(opengl):
    """The OpenGL driver with small work diverted to the host engine."""
    gp.set_host_threshold(1 << 16)
    gp.reset_stats()
    return opengl


def test_small_work_runs_on_the_host_engine(device_with_host_engine):
    a = np.linspace(0, 1, 1000, dtype=F32)
    b = np.linspace(1, 2, 1000, dtype=F32)
    got = np.asarray(2 * gp.asarray(a) + 3 * gp.asarray(b))
    np.testing.assert_array_equal(got, 2 * a + 3 * b)
    s = gp.stats()
    assert s["host_engine_evaluations"] == 1
    assert s["evaluations"] == 0  # nothing dispatched on the device
    assert s["blocks_uploaded"] == 0 and s["blocks_downloaded"] == 0  # nothing moved


def test_large_work_still_runs_on_the_device(device_with_host_engine):
    gp.set_host_threshold(100)
    a = np.arange(1000, dtype=F32)
    got = np.asarray(gp.asarray(a) * 2)
    np.testing.assert_array_equal(got, a * 2)
    s = gp.stats()
    assert s["host_engine_evaluations"] == 0
    assert s["evaluations"] == 1 and s["blocks_uploaded"] == 1


def test_values_on_the_device_are_read_back_not_recomputed(device_with_host_engine):
    """A small view of a large expression evaluated on the device: the host
    reads the device's block instead of recomputing it."""
    gp.set_host_threshold(100)
    a = np.arange(1000, dtype=F32)
    e = gp.sqrt(gp.asarray(a)) + 1
    np.asarray(e)  # on the device (1000 > 100)
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(e[10:20]), np.sqrt(a[10:20]) + 1)
    assert gp.stats()["host_engine_evaluations"] == 0 and gp.stats()["evaluations"] == 0


def test_intermediates_on_the_device_feed_host_work(device_with_host_engine):
    """Host work whose operand was last evaluated on the device (a dirty
    block): the operand is read back first, then the host computes."""
    gp.set_host_threshold(500)
    big = np.arange(1000, dtype=F32)
    e = gp.exp(gp.asarray(big) * 0.001)
    e[0:1000]._flush()  # 1000 > 500: device
    small = gp.sin(e[::10])  # 100 outputs: host engine
    # exp on the device and sin on the host: each within 2 ulp of NumPy's
    # float32 functions (docs/accuracy.md), so 1e-6 (8 ulp) bounds the pair.
    np.testing.assert_allclose(np.asarray(small), np.sin(np.exp(big * F32(0.001)))[::10], rtol=1e-6)
    assert gp.stats()["host_engine_evaluations"] >= 1


def test_host_engine_runs_what_the_device_cannot(device_with_host_engine):
    """float64 transcendentals, which GLSL lacks, run on the host engine in
    double precision rather than falling back to NumPy."""
    x = np.linspace(-3, 3, 50)
    got = np.asarray(gp.sin(gp.asarray(x)))
    np.testing.assert_allclose(got, np.sin(x), rtol=1e-15, atol=1e-15)
    assert got.dtype == np.float64
    assert gp.stats()["fallbacks"] == 0 and gp.stats()["host_engine_evaluations"] == 1


def test_host_engine_reductions_and_joins(device_with_host_engine):
    m = np.arange(60, dtype=F32).reshape(6, 10)
    g = gp.asarray(m)
    np.testing.assert_array_equal(np.asarray(g.sum(axis=1)), m.sum(axis=1))
    np.testing.assert_array_equal(np.asarray(gp.concatenate([g, g * 2], axis=1)), np.concatenate([m, m * 2], 1))
    np.testing.assert_array_equal(np.asarray(gp.cumsum(g, axis=0)), np.cumsum(m, axis=0))
    np.testing.assert_array_equal(np.asarray(gp.repeat(g[:, :3], 2, axis=0)), np.repeat(m[:, :3], 2, axis=0))
    s = gp.stats()
    assert s["evaluations"] == 0 and s["host_engine_evaluations"] >= 4


def test_threshold_setting(opengl):
    previous = gp.host_threshold()
    try:
        gp.set_host_threshold(12345)
        assert gp.host_threshold() == 12345
        with pytest.raises(ValueError):
            gp.set_host_threshold(-1)
        gp.set_host_threshold(None)  # the driver's cost model decides
        assert gp.host_threshold() is None
    finally:
        gp.set_host_threshold(previous)


@pytest.fixture
def driver_judges():
    """No threshold and no calibrated cost model: the driver's judgement
    (tests/test_cost_model.py covers the model); the model comes back after."""
    from gpupy import _calibration

    gp.set_host_threshold(None)
    gp._core.set_cost_model({})
    yield
    _calibration.hand_to_core()


def test_driver_cost_model_routes_by_arithmetic(opengl, driver_judges):
    """Without a calibration the driver judges: on a CPU renderer (llvmpipe)
    an expression with little arithmetic per element runs on the host engine
    even when large, an arithmetic-heavy one on the device."""
    if "cpu_renderer: yes" not in gp._core.driver_describe():
        pytest.skip("the OpenGL driver is a real GPU here; its cost model differs")
    n = 1 << 18
    x = gp.asarray(np.linspace(0, 1, n, dtype=F32))
    gp.reset_stats()
    np.asarray(x * 2 + 1)  # 2 operations per element
    assert gp.stats()["host_engine_evaluations"] == 1 and gp.stats()["evaluations"] == 0
    heavy = x
    for k in range(40):  # 80 operations per element
        heavy = gp.sqrt(heavy * heavy + F32(k))
    gp.reset_stats()
    np.asarray(heavy)
    assert gp.stats()["host_engine_evaluations"] == 0 and gp.stats()["evaluations"] >= 1


def test_software_driver_keeps_its_own_blocks(software):
    """The software driver as the active device computes on the host itself:
    no diversion, so its blocks (and the cache mechanisms) stay exercised."""
    gp.set_host_threshold(1 << 20)
    a = np.arange(100, dtype=F32)
    np.testing.assert_array_equal(np.asarray(gp.asarray(a) + 1), a + 1)
    s = gp.stats()
    assert s["host_engine_evaluations"] == 0 and s["evaluations"] == 1


def test_host_engine_runs_numpys_own_math_loops(device_with_host_engine):
    """The core offers NumPy's ufunc loops to the host engine, which takes
    them for the math functions: NumPy's values (vectorised, as fast as
    NumPy's) inside fused host evaluations; inline ops keep their kernels."""
    taken = set(gp._core.host_engine_describe().split("host_loops:")[1].splitlines()[0].split())
    assert {"sin/float32", "arctan2/float32", "exp/float64", "log1p/float32", "power/float64"} <= taken
    assert {"less/float64", "greater_equal/float32", "not_equal/float64"} <= taken  # comparisons too
    assert not {"add/float32", "sqrt/float32", "sin/int32", "less/int32"} & taken
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(5000) * 100).astype(F32)
    b = (rng.standard_normal(5000) * 100).astype(F32)
    ga, gb = gp.asarray(a), gp.asarray(b)
    got = np.asarray(gp.sin(ga) * 2 + gp.arctan2(ga, gb) - gp.exp(gb / 100))
    assert gp.stats()["host_engine_evaluations"] == 1  # one fused evaluation
    want = np.sin(a) * F32(2) + np.arctan2(a, b) - np.exp(b / F32(100))
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_comparisons_with_one_value_read_it_once(device_with_host_engine, dtype):
    """A comparison against a constant or a 0-d array broadcast over the
    domain (`r1 <= radius` in a loop) runs NumPy's comparison loop, which
    reads that operand with step 0 as NumPy reads a scalar: NumPy's values
    on either side, with NaN and infinities, in one fused evaluation."""
    rng = np.random.default_rng(3)
    h = rng.standard_normal(60_000).astype(dtype)  # under the host threshold
    h[::97] = np.nan
    h[1::89] = np.inf
    h[2::83] = -np.inf
    a = gp.asarray(h)
    r0 = gp.asarray(np.asarray(dtype(0.25)))  # a 0-d gpupy array: a load broadcast over the domain
    for lo, hi in [(r0, dtype(1.5)), (dtype(-0.5), r0)]:
        gp.reset_stats()
        got = np.asarray(gp.logical_and(lo <= a, a < hi) | (a == hi) | (hi != a))
        assert gp.stats()["host_engine_evaluations"] == 1
        l, u = np.asarray(lo), np.asarray(hi)
        np.testing.assert_array_equal(got, np.logical_and(l <= h, h < u) | (h == u) | (u != h))
    got = np.asarray((a > r0) == (r0 <= a))  # the 0-d operand first and second
    np.testing.assert_array_equal(got, (h > np.asarray(r0)) == (np.asarray(r0) <= h))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.int32, np.float32, np.int64, np.float64])
def test_where_selects_every_width_bit_for_bit(device_with_host_engine, dtype):
    """The interpreter's select works on element widths 1, 2, 4 and 8 with
    a mask, not a branch: every bit of the chosen side arrives (NaN
    payloads, -0.0, any pattern of the random bits)."""
    rng = np.random.default_rng(11)
    n = 5000
    bits = rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype=np.uint8)
    x = bits.view(dtype) if dtype != np.bool_ else bits % 2 == 0
    y = x[::-1].copy()
    c = rng.random(n) < 0.5
    gx, gy, gc = gp.asarray(x), gp.asarray(y), gp.asarray(c)
    gp.reset_stats()
    got = np.asarray(gp.where(gc, gx, gy))
    want = np.where(c, x, y)
    assert gp.stats()["host_engine_evaluations"] == 1
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int16, np.float32, np.float64])
@pytest.mark.parametrize("block", [None, 64])
def test_strided_views_are_read_a_row_at_a_time(software, dtype, block):
    """The interpreter copies a strided view of one block row by row (a
    memcpy per row where the last axis is contiguous, a strided loop where
    not); with small blocks (several per view) the per-element path runs:
    both give NumPy's values, for steps, negative steps, transposes,
    broadcasts, rows shorter and longer than the interpreter's chunk."""
    if block:
        gp.set_block_size(block)
    rng = np.random.default_rng(7)
    h = (rng.random((37, 300, 3)) * 100).astype(dtype)
    a = gp.asarray(h)
    views = [
        lambda x: x[1:-1, 2:, 1],
        lambda x: x[::-2, ::3, :],
        lambda x: x[:, ::-1, ::-1],
        lambda x: x.transpose(2, 0, 1),
        lambda x: x[5, :, :].T,
        lambda x: x[:, 7:8, :],
        lambda x: x[3, 4, 2],
        lambda x: x[:, :1, 0].reshape(37, 1) + x[0, :, 0],  # stride-0 broadcasts both ways
    ]
    for view in views:
        want = view(h)
        got = view(a)
        if want.dtype != np.bool_ and dtype != np.bool_:
            got, want = got + 1, want + 1  # an expression reading the view, not a copy of it
        np.testing.assert_array_equal(np.asarray(got), want)


FORKED_CHILD_EVALUATES = r"""
import os, sys
import numpy as np
import gpupy as gp
gp.set_driver_option("threads", 2)
h = np.linspace(-1.0, 1.0, 1 << 18)   # two parts of 2^17: the worker pool runs one
a = gp.asarray(h)
np.testing.assert_array_equal(np.asarray(a * 3.0 + 1.0), h * 3.0 + 1.0)  # the pool's workers start
pid = os.fork()
if pid == 0:
    # The parent's workers are not in this process: the child's evaluation
    # must start its own (or hang here).
    ok = np.array_equal(np.asarray(a * 5.0 - 2.0), h * 5.0 - 2.0)
    os._exit(0 if ok else 3)
_, status = os.waitpid(pid, 0)
np.testing.assert_array_equal(np.asarray(a * 7.0), h * 7.0)  # the parent's pool still serves
print("child", os.waitstatus_to_exitcode(status))
"""


def test_a_forked_child_evaluates_in_parallel_too():
    from fresh_python import run_python
    import os
    out = run_python(["-c", FORKED_CHILD_EVALUATES], env=dict(os.environ, GPUPY_DRIVER="software"), timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-2:] == ["child", "0"]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64])
def test_a_zero_d_operand_broadcast_over_many_chunks(dtype):
    # A load of one element broadcast over the whole domain is read once
    # per evaluation (the interpreter fills its register at the start):
    # every chunk and every thread's part must see it, for every item size.
    h = (np.arange(300_000) % 97).astype(dtype)
    a = gp.asarray(h)
    c = gp.asarray(np.array(40, dtype=dtype)) + 2   # a lazy 0-d array
    s = gp.asarray(np.array(3, dtype=dtype))        # an evaluated one
    np.testing.assert_array_equal(np.asarray((c <= a) & (a < c + s)), (42 <= h) & (h < 45))
    np.testing.assert_array_equal(np.asarray(a * s + c), h * dtype(3) + dtype(42))


@pytest.mark.parametrize("view", ["broadcast_rows", "broadcast_columns", "transposed", "reversed", "stepped"])
def test_index_sequences_in_every_layout(gpu, view):
    # A lazy arange read across the domain is computed a run at a time (an
    # arithmetic sequence per innermost run): broadcasts, transposes and
    # negative or larger steps must give NumPy's values.
    n, k = 30_000, 16
    label = (np.arange(n) * 7) % k
    g = gp.asarray(label)
    make = {
        "broadcast_rows": lambda xp, lab: lab[:, None] == xp.arange(k)[None, :],
        "broadcast_columns": lambda xp, lab: xp.arange(k)[:, None] + lab[None, :],
        "transposed": lambda xp, lab: xp.arange(n * k).reshape(n, k).T * 2 + 1,
        "reversed": lambda xp, lab: xp.arange(n * k).reshape(n, k)[::-1, ::-1] - lab[:, None],
        "stepped": lambda xp, lab: xp.arange(3 * n * k).reshape(3 * n, k)[::3, ::5] + lab[::1, None],
    }[view]
    np.testing.assert_array_equal(np.asarray(make(gp, g)), make(np, label))


def sequential_chunked_sum(a, chunk):
    """gpupy's order of a float32 sum over the last axis, written with NumPy:
    each chunk of `chunk` consecutive values folded in order (add.accumulate
    is sequential), the chunks' totals again, until one value a row."""
    while a.shape[-1] > 1:
        c = min(chunk, a.shape[-1])
        totals = [np.add.accumulate(a[..., s:s + c], axis=-1, dtype=F32)[..., -1]
                  for s in range(0, a.shape[-1], c)]
        a = np.stack(totals, axis=-1)
    return a[..., 0]


@pytest.mark.parametrize("cols", [256 * 9, 256 * 9 + 100, 256 * 3 + 1])
def test_sums_fold_each_chunk_in_order(software, cols):
    # The software driver folds several outputs' chunks side by side
    # (independent chains the CPU overlaps); each output must still fold its
    # own values in order, the bits of one fold at a time. Rows of 9 full
    # chunks, with and without a partial last chunk, and rows of 3 + 1.
    from gpupy._registry import REDUCE_CHUNK
    rng = np.random.default_rng(7)
    a = rng.standard_normal((40, cols)).astype(F32)
    chunk = min(REDUCE_CHUNK, gp.block_size())
    g = gp.asarray(a) * F32(1.5)  # lazy: the sum is gpupy's own, fused
    want_rows = sequential_chunked_sum(a * F32(1.5), chunk)
    np.testing.assert_array_equal(np.asarray(gp.sum(g, axis=1)), want_rows)
    flat = (a * F32(1.5)).ravel()
    assert np.asarray(gp.sum(g)) == sequential_chunked_sum(flat, chunk)
    # A row's sum is the same fold whichever rows are evaluated with it.
    np.testing.assert_array_equal(np.asarray(gp.sum(g[7:9], axis=1)), want_rows[7:9])


def test_a_large_sum_split_across_threads_keeps_its_bits(software):
    # A chunked reduction's outputs count their chunks' points when the
    # interpreter shares work out: 2^20 values in 4097 outputs are split in
    # pieces across threads, each output still its own fold in order.
    from gpupy._registry import REDUCE_CHUNK
    a = np.random.default_rng(11).standard_normal((1 << 20) + 300).astype(F32)
    got = np.asarray(gp.sum(gp.asarray(a) * F32(0.5)))
    assert got == sequential_chunked_sum(a * F32(0.5), min(REDUCE_CHUNK, gp.block_size()))
