"""Several outputs per evaluation (src/core/planning/siblings.hpp): when a
block of an expression is evaluated, recent expressions of its shape that
share unevaluated work with it -- or were made by the same call, divmod's
and modf's results -- are written by the same pass; reading them later
costs no evaluation. The counters prove it; NumPy's values are the oracle.
On both drivers, on the device and on the host engine, with several
blocks, and around writes."""

import sys
from pathlib import Path

import numpy as np
import pytest

import gpupy as gp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from sphere import thesis_program  # noqa: E402  (the thesis's appendix A.1 program)

N = 1 << 15  # above the least size worth looking for partners (recent_nodes.hpp)


def channels(xp, x, y):
    """Three results of one shared intermediate, as an image's channels."""
    d = x * 2.0 + y
    e = d * d - y
    return [e + 1.0, e * 3.0, xp.where(e > 0.5, d, e)]


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N), rng.standard_normal(N)


def test_channels_of_one_intermediate_are_one_evaluation(gpu):
    hx, hy = inputs()
    want = channels(np, hx, hy)
    out = channels(gp, gp.asarray(hx), gp.asarray(hy))
    gp.reset_stats()
    first = np.asarray(out[0])
    assert gp.stats()["evaluations"] == 1 and gp.stats()["sibling_outputs"] == 2
    rest = [np.asarray(c) for c in out[1:]]
    assert gp.stats()["evaluations"] == 1, "the siblings were read from where the first pass wrote them"
    for got, w in zip([first] + rest, want):
        np.testing.assert_array_equal(got, w)


def test_sphere_channels_in_one_pass(gpu):
    """The thesis's shaded sphere: three `where` channels over the same ray
    and shading terms are one evaluation, on the device."""
    previous = gp.set_placement("device")
    try:
        n = 256
        with np.errstate(invalid="ignore"):  # sqrt of the negative discriminants, as the thesis has it
            want = thesis_program(np, n, n)
            gp.reset_stats()
            got = thesis_program(gp, n, n)
        assert gp.stats()["evaluations"] == 1 and gp.stats()["sibling_outputs"] == 2, gp.stats()
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3)
    finally:
        gp.set_placement(previous)


def test_on_the_host_engine(gpu):
    gp.set_host_threshold(2 * N)  # everything this size runs on the host engine
    hx, hy = inputs(1)
    out = channels(gp, gp.asarray(hx), gp.asarray(hy))
    gp.reset_stats()
    got = [np.asarray(c) for c in out]
    s = gp.stats()  # (the software driver computes on the host itself: no host engine of its own)
    assert s["evaluations"] + s["host_engine_evaluations"] == 1 and s["sibling_outputs"] == 2, s
    for g, w in zip(got, channels(np, hx, hy)):
        np.testing.assert_array_equal(g, w)


def test_over_several_blocks(gpu):
    gp.set_block_size(N // 4 + 3)
    hx, hy = inputs(2)
    out = channels(gp, gp.asarray(hx)[::-1], gp.asarray(hy))
    gp.reset_stats()
    got = [np.asarray(c) for c in out]
    assert gp.stats()["sibling_outputs"] == 2 * 4, gp.stats()
    for g, w in zip(got, channels(np, hx[::-1], hy)):
        np.testing.assert_array_equal(g, w)


def test_what_is_not_a_sibling(gpu):
    hx, hy = inputs(3)
    x, y = gp.asarray(hx), gp.asarray(hy)
    d = x * 2.0 + y                 # inside the root: computed there, not stored
    other_shape = (d[:-1] * 5.0)     # shares d, another shape
    leaves_only = x * y - 1.0        # reads the same arrays, shares no operation
    root = d * d + 1.0
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(root), (hx * 2.0 + hy) ** 2 + 1.0)
    assert gp.stats()["sibling_outputs"] == 0
    gp.reset_stats()
    for got, want in ((d, hx * 2.0 + hy), (other_shape, (hx * 2.0 + hy)[:-1] * 5.0), (leaves_only, hx * hy - 1.0)):
        np.testing.assert_array_equal(np.asarray(got), want)
    assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] == 3


def test_an_expression_containing_the_root_is_not_one(gpu):
    hx, hy = inputs(4)
    x, y = gp.asarray(hx), gp.asarray(hy)
    inner = x * 3.0 - y
    outer = gp.sqrt(gp.abs(inner)) + inner  # contains the root below
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(inner), hx * 3.0 - hy)
    assert gp.stats()["sibling_outputs"] == 0
    np.testing.assert_array_equal(np.asarray(outer), np.sqrt(np.abs(hx * 3.0 - hy)) + (hx * 3.0 - hy))


def test_writes_after_a_sibling_was_computed(gpu):
    """A sibling computed early keeps the value it had when it was made
    (copy-on-write, as for any lazy result); a write into it afterwards
    lands, and a write into an operand does not reach it."""
    hx, hy = inputs(5)
    x, y = gp.asarray(hx), gp.asarray(hy)
    a, b, c = channels(gp, x, y)
    wa, wb, wc = channels(np, hx, hy)
    np.asarray(a)  # b and c computed too
    x[:10] = 1e6
    b[3:7] = -1.0
    wb[3:7] = -1.0
    np.testing.assert_array_equal(np.asarray(b), wb)
    np.testing.assert_array_equal(np.asarray(c), wc)


def test_divmod_and_modf_are_one_evaluation(gpu):
    hx, hy = (v.astype(np.float32) for v in inputs(6))  # (float64 floor_divide is not exact in GLSL)
    hy = np.abs(hy) + np.float32(0.5)
    gp.reset_stats()
    q, r = divmod(gp.asarray(hx * 10), gp.asarray(hy))
    np.testing.assert_array_equal(np.asarray(q), np.floor_divide(hx * 10, hy))
    np.testing.assert_array_equal(np.asarray(r), np.remainder(hx * 10, hy))
    f, w = gp.modf(gp.asarray(hx) * 3)
    np.testing.assert_array_equal(np.asarray(w), np.modf(hx * 3)[1])
    np.testing.assert_array_equal(np.asarray(f), np.modf(hx * 3)[0])
    s = gp.stats()
    assert s["evaluations"] + s["host_engine_evaluations"] == 2 and s["sibling_outputs"] == 2, s


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_modf_is_numpys(gpu, dtype):
    special = [2.5, -2.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, -3.0, 0.75, 1e-40, -7.999]
    if np.dtype(dtype).kind == "f":
        with np.errstate(over="ignore"):
            h = np.array(special).astype(dtype)  # (1e30 is inf in float32; 1e-40 subnormal)
    else:
        h = np.arange(-6, 6).astype(dtype)
    got = gp.modf(gp.asarray(h))
    want = np.modf(h)
    assert isinstance(got, tuple) and len(got) == 2
    flushed = np.modf(gpu.flush_subnormals(h)) if gpu.flushes_float32 else (None, None)
    for g, w, f in zip(got, want, flushed):
        gpu.assert_same(g, w, flushed=f)


def test_modf_to_float16_is_numpys(gpu, silent_fallback):
    """int8 and int16 give float16 parts, which the device does not hold:
    NumPy's modf, counted."""
    h = np.arange(-6, 6).astype(np.int8)
    gp.reset_stats()
    for g, w in zip(gp.modf(gp.asarray(h)), np.modf(h)):
        assert np.asarray(g).dtype == w.dtype == np.float16
        np.testing.assert_array_equal(np.asarray(g), w)
    assert gp.stats()["fallbacks_by_function"] == {"modf": 1}


@pytest.fixture
def no_siblings():
    """Siblings off (a size no expression reaches), for comparisons."""
    def turn_off():
        return gp._core.set_sibling_min_elements(1 << 62)

    previous = turn_off()
    gp._core.set_sibling_min_elements(previous)
    yield turn_off
    gp._core.set_sibling_min_elements(previous)


@pytest.mark.parametrize("placed", ["device", "auto"])
def test_reductions_of_one_operand_are_one_pass(gpu, no_siblings, placed):
    """The minimum and the maximum of an expression of x, the sums of x
    and of x * x: all four read x, and their first passes over it are one
    (each reduction's later passes fold its chunks), with the values of
    separate passes, bit for bit."""
    previous = gp.set_placement(placed)
    try:
        hx, _ = inputs(7)
        x = gp.asarray(hx.astype(np.float32))

        def run():
            d = x * 2.0 + 1.0
            results = [d.min(), d.max(), x.sum(), (x * x).sum()]
            return [np.asarray(r) for r in results]

        gp.reset_stats()
        together = run()
        s = gp.stats()
        assert s["sibling_outputs"] == 3, s
        passes = s["evaluations"] + s["host_engine_evaluations"]
        no_siblings()
        gp.reset_stats()
        apart = run()
        s = gp.stats()
        assert s["sibling_outputs"] == 0 and s["evaluations"] + s["host_engine_evaluations"] == passes + 3
        for a, b in zip(together, apart):
            assert a.tobytes() == b.tobytes()
        d = hx.astype(np.float32) * 2.0 + 1.0
        assert together[0] == d.min() and together[1] == d.max()
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("axis", [0, -1])
def test_stacked_channels_share_their_work(gpu, axis):
    """Channels stacked at the end (demosaicing's `stack([r, g, b], -1)`):
    a join plans one part per operand, and parts are not siblings, so each
    channel computed the shared terms again. Operands that share work are
    evaluated first, the first taking the others as siblings, and the join
    copies their stored values: one evaluation of the shared work, then the
    join's own."""
    hx, hy = inputs()
    want = np.stack(channels(np, hx, hy), axis=axis)
    gp.reset_stats()
    out = channels(gp, gp.asarray(hx), gp.asarray(hy))
    got = np.asarray(gp.stack(out, axis=axis))
    assert gp.stats()["sibling_outputs"] == 2, gp.stats()
    np.testing.assert_array_equal(got, want)
    gp.reset_stats()
    for c, w in zip(out, channels(np, hx, hy)):
        np.testing.assert_array_equal(np.asarray(c), w)
    assert gp.stats()["evaluations"] == gp.stats()["host_engine_evaluations"] == 0, "the channels were stored"


def test_joined_operands_that_share_nothing_are_fused_into_the_join(gpu):
    """Only operands sharing work are staged: independent ones are still
    computed by the join's own parts, never stored on their own (reading
    one afterwards costs an evaluation)."""
    hx, hy = inputs()
    want = np.concatenate([hx * 2.0 + 1.0, hy - 3.0])
    first, second = gp.asarray(hx) * 2.0 + 1.0, gp.asarray(hy) - 3.0
    gp.reset_stats()
    got = np.asarray(gp.concatenate([first, second]))
    assert gp.stats()["sibling_outputs"] == 0
    np.testing.assert_array_equal(got, want)
    gp.reset_stats()
    np.testing.assert_array_equal(np.asarray(first), hx * 2.0 + 1.0)
    assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] >= 1, "the operand was not staged"


def test_stacked_channels_under_tiny_blocks_and_a_tiny_cache(gpu):
    """Staging a join's operands asks for every block of each; a cache of a
    few blocks evicts some of them again before the join reads them. The
    join then reads each block where it is (host or device) -- no hang, no
    recomputation loop, NumPy's values."""
    gp.set_block_size(1024)  # (the fixture puts both back)
    gp.set_cache_bytes(8 * 1024 * 8)
    previous = gp.set_placement("device")
    try:
        hx, hy = inputs(3)
        want = np.stack(channels(np, hx, hy), axis=-1)
        got = np.asarray(gp.stack(channels(gp, gp.asarray(hx), gp.asarray(hy)), axis=-1))
        np.testing.assert_array_equal(got, want)
    finally:
        gp.set_placement(previous)


def test_the_search_follows_no_chain_behind_a_stored_result(gpu):
    """The thesis's distance map in small: a chain of minima stored on the
    device (its maximum is asked for first, so its values are stored, with
    the chain kept behind them to recompute an evicted block), then scaled
    by that maximum. The search for siblings follows a handful of nodes --
    the chain is the root's own expression, or older than what reads it --
    where it followed thousands; the values are NumPy's."""
    previous = gp.set_placement("device")
    try:
        hx, _ = inputs(3)

        def program(xp):
            x = xp.asarray((np.abs(hx) + 1).astype(np.float32))
            d = x * 1000.0
            for i in range(300):
                d = xp.minimum(d, x * float(i % 7 + 1) + float(i))
            m = d.max()
            return 255 * (d - 0) / (m - 0)

        want = program(np)
        gp.reset_stats()
        got = np.asarray(program(gp))
        assert gp.stats()["sibling_search_nodes"] <= 20, gp.stats()
        # (A device may fuse x * k + i into one rounding and divide within
        # 2.5 ulp: a few float32 ulps in all, 1e-6 is ~17.)
        np.testing.assert_allclose(got, want, rtol=1e-6)
    finally:
        gp.set_placement(previous)
