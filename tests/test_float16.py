"""float16 as gpupy holds it: 16 bits per element, every operation computed
in float32 and rounded to float16 as NumPy's float16 loops do, on both
drivers.

The elementwise ops over special values run through the ufunc, array and
driver conformance suites with every other dtype; this file holds what is
particular to float16: every conversion bit for bit, the accumulation type
of reductions (float32, rounded once) against a scan's per-step rounding,
NumPy's promotion with Python and NumPy scalars, overflow warnings, and
views, layouts, tiny blocks and a tiny cache.
"""

import warnings

import numpy as np
import pytest

import gpupy as gp

F16 = np.float16


def bits(a):
    return np.asarray(a).view(np.uint16)


def assert_same_float16(got, want, nan_payloads=True):
    """Same shape, dtype float16 and bits (NaNs by payload where asked,
    else any NaN for any NaN)."""
    got = np.asarray(got)
    assert got.dtype == want.dtype == F16 and got.shape == want.shape
    same = bits(got) == bits(want)
    if not nan_payloads:
        same |= np.isnan(got) & np.isnan(want)
    bad = np.flatnonzero(~same.ravel())
    assert bad.size == 0, f"{bad.size} differ, first {bad[:5]}: got {got.ravel()[bad[:5]]}, want {want.ravel()[bad[:5]]}"


def every_float16():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)


# --- conversions ------------------------------------------------------------------------------

def test_every_float16_widens_exactly(gpu):
    h = every_float16()
    for t in (np.float32, np.float64):
        got = np.asarray(gp.asarray(h).astype(t) * 1)  # (* 1: computed, not a host copy)
        want = h.astype(t)
        same = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
        # A device may not keep a NaN's payload through a register (GLSL
        # does not promise it): any NaN there.
        assert (same | (np.isnan(got) & np.isnan(want))).all(), t


def test_floats_round_to_nearest_even(gpu):
    rng = np.random.default_rng(16)
    h = every_float16()
    finite = h[np.isfinite(h)].astype(np.float32)
    # every midpoint between neighbouring float16 values and the floats
    # just either side of it, the overflow threshold 65520, subnormals
    mid = ((finite[:-1].astype(np.float64) + finite[1:]) / 2).astype(np.float32)
    near = np.concatenate([mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf))])
    f32 = np.concatenate([near, np.float32([65504, 65519.996, 65520, 65536, 1e30, np.inf, -np.inf, 2 ** -25,
                                            2 ** -24, 3 * 2 ** -26, 1e-45, -0.0]),
                          rng.standard_normal(20000).astype(np.float32) * np.float32(1000)])
    with np.errstate(over="ignore"):
        assert_same_float16(gp.asarray(f32).astype(F16) * 1, f32.astype(F16))
    # float64 rounds once: x.astype(float32).astype(float16) would round
    # 1 + 2^-11 + 2^-40 to 1 (a tie after the first rounding).
    f64 = np.concatenate([mid.astype(np.float64) + d for d in (2.0 ** -40, -(2.0 ** -40), 0.0)])
    f64 = np.concatenate([f64, [1 + 2 ** -11 + 2 ** -40, -(1 + 2 ** -11 + 2 ** -40), 65519.99999, 2 ** -25 * (1 + 2 ** -40)]])
    with np.errstate(over="ignore"):
        want = f64.astype(F16)
        assert_same_float16(gp.asarray(f64).astype(F16) * 1, want)
        assert (want != f64.astype(np.float32).astype(F16)).any()  # the inputs do tell one rounding from two


def test_nan_payloads_as_numpy_keeps_them(software):
    # A float NaN keeps the top ten payload bits; one whose kept bits are
    # all zero stays a NaN (0x7c01), never an infinity.
    f32 = np.array([0x7FC00000, 0x7F800001, 0x7F802000, 0xFFC00001, 0x7FA00000], np.uint32).view(np.float32)
    f64 = np.array([0x7FF8000000000000, 0x7FF0000000000001, 0x7FF4000000000000], np.uint64).view(np.float64)
    assert_same_float16(gp.asarray(f32).astype(F16), f32.astype(F16))
    assert_same_float16(gp.asarray(f64).astype(F16), f64.astype(F16))


def test_integers_to_float16_and_back(gpu):
    for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.int64, np.uint64):
        info = np.iinfo(t)
        v = np.array(sorted(x for x in {0, 1, -1, 2047, 2049, 4097, 65504, 65519, 65520, -65519, info.min, info.max}
                            if info.min <= x <= info.max), t)
        with np.errstate(over="ignore"):
            assert_same_float16(gp.asarray(v).astype(F16), v.astype(F16))
    h = np.array([0.0, -0.0, 1.5, -1.5, 2.5, 255.9, -128.9, 65504, -65504, 300.7], F16)
    for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.bool_):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want = h.astype(t)
        got = np.asarray(gp.asarray(h).astype(t))
        assert got.dtype == want.dtype and np.array_equal(got, want), t


# --- arithmetic, layouts, blocks ----------------------------------------------------------------

def operands(n, seed):
    rng = np.random.default_rng(seed)
    mag = np.exp(rng.uniform(-17, 11, n)) * rng.choice([-1.0, 1.0], n)
    with np.errstate(over="ignore"):
        return mag.astype(F16)


EXPRESSIONS = {
    "a * b + a": lambda xp, a, b: a * b + a,
    "(a - b) / (b + 1)": lambda xp, a, b: (a - b) / (b + 1),
    "sqrt(abs(a)) * 3": lambda xp, a, b: xp.sqrt(xp.abs(a)) * 3,
    "a ** 2 - b": lambda xp, a, b: a ** 2 - b,
    "where(a > b, a, -b)": lambda xp, a, b: xp.where(a > b, a, -b),
    "floor(a / 7) % 5": lambda xp, a, b: xp.floor(a / 7) % 5,
    "maximum(a, b) - minimum(a, 0.5)": lambda xp, a, b: xp.maximum(a, b) - xp.minimum(a, 0.5),
}


@pytest.mark.parametrize("name", EXPRESSIONS)
@pytest.mark.parametrize("layout", ["contiguous", "reversed", "strided", "broadcast", "0-d", "empty"])
def test_fused_expressions_round_every_step(gpu, name, layout):
    f = EXPRESSIONS[name]
    a, b = operands(3000, 1), operands(3000, 2)
    if layout == "reversed":
        a, b = a[::-1], b[::-1]
    elif layout == "strided":
        a, b = a[::3], b[1::3]
    elif layout == "broadcast":
        a, b = a[:60].reshape(60, 1), b[:50]
    elif layout == "0-d":
        a, b = np.array(a[5]), np.array(b[7])
    elif layout == "empty":
        a, b = a[:0], b[:0]
    with np.errstate(all="ignore"):
        want = np.asarray(f(np, a, b))
        got = f(gp, gp.asarray(a), gp.asarray(b))
        assert_same_float16(got, want, nan_payloads=False)
        # Each step rounds: the same expression in float32, rounded once at
        # the end, is not float16's answer.
        if layout == "contiguous" and name == "a * b + a":
            assert (f(np, a.astype(np.float32), b.astype(np.float32)).astype(F16) != want).any()


@pytest.mark.parametrize("block, cache", [(7, None), (64, 4096)])
def test_tiny_blocks_and_a_tiny_cache(gpu, block, cache):
    gp.set_block_size(block)
    if cache is not None:
        gp.set_cache_bytes(cache)
    a, b = operands(2000, 3), operands(2000, 4)
    ga, gb = gp.asarray(a), gp.asarray(b)
    with np.errstate(all="ignore"):
        for name, f in EXPRESSIONS.items():
            assert_same_float16(f(gp, ga, gb), np.asarray(f(np, a, b)), nan_payloads=False)
        ga[::5] = gb[::5] * 2  # writes through a strided view of a multi-block array
        a[::5] = b[::5] * 2
        assert_same_float16(ga, a)


def test_arrays_share_memory_as_numpys_do(gpu):
    h = np.arange(6, dtype=F16)
    g = gp.asarray(h)
    h[2] = 7.5  # a later write to the ndarray is seen through the gpupy array
    assert float(g[2]) == 7.5
    g[3] = -1.25
    assert h[3] == -1.25 and np.shares_memory(np.asarray(g), h)


# --- reductions and scans -----------------------------------------------------------------------

def test_reductions_accumulate_in_float32_and_round_once(gpu):
    # 0.1 in float16 is 1638 * 2^-14; 10,000 of them sum exactly in float32
    # (16,380,000 * 2^-14 < 2^24 * 2^-14), in any order, to 999.76, which
    # rounds to 1000; a float16 accumulator stops growing at 256.
    h = np.full(10000, 0.1, F16)
    g = gp.asarray(h)
    for name in ("sum", "mean"):
        got, want = getattr(g, name)(), getattr(h, name)()
        assert_same_float16(np.asarray(got), np.asarray(want))
    assert float(g.sum()) == 1000.0
    x = operands(4000, 5)
    x = np.abs(x[np.isfinite(x)]) % 4
    gx = gp.asarray(x)
    with np.errstate(all="ignore"):
        for name in ("max", "min", "var", "std"):
            assert_same_float16(np.asarray(getattr(gx, name)()), np.asarray(getattr(x, name)()))
        two = x[:600].reshape(20, 30)
        for axis in (0, 1):
            assert_same_float16(gp.asarray(two).sum(axis=axis), two.sum(axis=axis))
            assert_same_float16(gp.asarray(two).max(axis=axis), two.max(axis=axis))
        assert_same_float16(np.asarray(gp.prod(gp.asarray(x[:12]))), np.asarray(np.prod(x[:12])))
    assert int(gp.argmax(gx)) == int(np.argmax(x)) and int(gp.argmin(gx)) == int(np.argmin(x))
    n = np.array([1.0, np.nan, 3.0], F16)
    assert np.isnan(float(gp.asarray(n).max())) and float(gp.nanmax(gp.asarray(n))) == 3.0


def test_scans_round_every_step_as_numpys_accumulate(gpu):
    h = np.full(3000, 0.1, F16)
    before = gp.stats()["host_placements_by_function"].get("cumsum", 0)
    got = gp.cumsum(gp.asarray(h))
    assert_same_float16(got, np.cumsum(h))
    assert float(got[-1]) == 256.0  # NumPy's float16 accumulate stalls here
    assert gp.stats()["host_placements_by_function"]["cumsum"] == before + 1  # NumPy's own, counted
    assert_same_float16(gp.add.accumulate(gp.asarray(h)), np.add.accumulate(h))
    assert_same_float16(gp.cumprod(gp.asarray(h[:6])), np.cumprod(h[:6]))
    two = operands(60, 6).reshape(6, 10)
    with np.errstate(all="ignore"):
        assert_same_float16(gp.cumsum(gp.asarray(two), axis=0), np.cumsum(two, axis=0))
    assert_same_float16(gp.maximum.accumulate(gp.asarray(two), axis=1), np.maximum.accumulate(two, axis=1))


# --- promotion, scalars, warnings ---------------------------------------------------------------

@pytest.mark.parametrize("other", [np.int8(3), np.uint8(3), np.int16(3), np.int32(3), np.float32(1.5),
                                   np.float64(1.5), F16(1.5), True, 3, 1.5, -2])
def test_promotion_as_numpys(gpu, other):
    h = np.array([1.0, -2.5, 0.1], F16)
    for expr in (lambda a: a + other, lambda a: other * a, lambda a: a < other):
        want = expr(h)
        got = expr(gp.asarray(h))
        assert got.dtype == want.dtype, other
        assert np.array_equal(np.asarray(got), want)
    arrays = [np.ones(2, t) for t in (np.int8, np.uint8, np.int16, np.int32, np.float32, np.float64, np.bool_)]
    for arr in arrays:
        assert (gp.asarray(h[:2]) + gp.asarray(arr)).dtype == np.result_type(h, arr)


def test_overflow_warns_as_numpy(gpu):
    h = np.array([65504, 2, -65504], F16)
    with pytest.warns(RuntimeWarning, match="overflow encountered in multiply"):
        got = np.asarray(gp.asarray(h) * F16(2))
    assert np.isinf(got[[0, 2]]).all() and got[1] == 4
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.asarray(gp.asarray(h) * F16(0.5))  # in range: nothing


def test_a_cast_into_nothing_warns_of_nothing(gpu):
    # uint16's 65535 overflows float16; copied into an empty array, NumPy
    # casts no element (the differential fuzzer's program warned).
    for dst_shape in ((0, 0), (0,), (2,)):
        for src in (np.uint16(65535), np.array(65535, np.uint16)):
            def call(xp):
                dst = xp.asarray(np.zeros(dst_shape, F16))
                xp.copyto(dst, src)
                return np.asarray(dst)
            want = gpu.warnings_of(lambda: call(np))
            assert gpu.warnings_of(lambda: call(gp)) == want == ([] if 0 in dst_shape else ["overflow encountered in cast"])


def test_scalars_and_dtype_names(gpu):
    g = gp.arange(4, dtype=gp.float16)
    assert g.dtype == F16 and gp.float16 is np.float16
    assert type(g[1]) is np.float16 and g[1] == 1
    assert type(g.sum()) in (np.float16, gp.GpuArray) and float(g.sum()) == 6.0
    assert gp.zeros(3, "e").dtype == F16 and gp.asarray([1.5], dtype="float16").dtype == F16
