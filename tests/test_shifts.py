"""Shifts with boundaries as index maps (src/core/building/movement.cpp,
gpupy_index_map's shift and edge): numpy.roll and numpy.pad's edge, wrap,
reflect, symmetric and constant modes read their operand through one
remapped map, fused into the consumer's evaluation. NumPy is the oracle for
values, dtypes, shapes and errors, on both drivers, over views, 0-d, empty
and multi-block arrays; counters prove one evaluation per stencil step."""
import numpy as np
import pytest

import gpupy as gp

MODES = ["edge", "wrap", "reflect", "symmetric", "constant"]
SHAPES = [(), (1,), (2,), (7,), (3, 4), (1, 5), (4, 1, 3)]
# Widths below, at and far beyond the extents (a pad wider than its array
# wraps or mirrors several times), per-axis pairs and one side only.
WIDTHS = [0, 1, 2, 3, 9, (0, 4), (5, 0)]

VIEWS = {
    "whole": lambda x: x,
    "reversed": lambda x: x[::-1] if x.ndim else x,
    "strided": lambda x: x[..., ::2] if x.ndim else x,
    "transposed": lambda x: x.T,
}


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(-100, 100, shape).astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_pad_matches_numpy(gpu, mode, shape):
    a = values(shape, np.float32)
    g = gp.asarray(a)
    per_axis = [tuple((k, 2 * k + 1) for k in range(len(shape)))] if shape else []
    for w in WIDTHS + per_axis:
        gpu.assert_same(gp.pad(g, w, mode=mode), np.pad(a, w, mode=mode))


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("mode", MODES)
def test_pad_of_views_over_several_blocks(gpu, mode, view):
    gp.set_block_size(7)  # every pad reads across block boundaries
    a = values((6, 9), np.float64, seed=1)
    av, g = VIEWS[view](a), VIEWS[view](gp.asarray(a))
    for w in [1, 4, ((2, 0), (0, 11))]:
        gpu.assert_same(gp.pad(g, w, mode=mode), np.pad(av, w, mode=mode))


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float32", "float64"])
def test_pad_keeps_the_dtype(gpu, dtype):
    a = values((5, 4), dtype) if dtype != "bool" else values((5, 4), np.int8) > 0
    for mode in MODES:
        gpu.assert_same(gp.pad(gp.asarray(a), 2, mode=mode), np.pad(a, 2, mode=mode))


def test_pad_constant_values_per_axis_and_side(gpu):
    a = values((3, 4), np.int32)
    g = gp.asarray(a)
    # A later axis's value wins in the corners, as in NumPy.
    for cv in [7, (7, 8), ((7, 8), (9, 10)), -1.7]:
        gpu.assert_same(gp.pad(g, ((1, 2), (2, 1)), constant_values=cv), np.pad(a, ((1, 2), (2, 1)), constant_values=cv))
    f = values((4,), np.float32)
    gpu.assert_same(gp.pad(gp.asarray(f), 3, constant_values=np.nan), np.pad(f, 3, constant_values=np.nan))


def test_pad_of_empty_arrays(gpu):
    e = np.zeros((0, 3), np.float32)
    gpu.assert_same(gp.pad(gp.asarray(e), 2), np.pad(e, 2))
    gpu.assert_same(gp.pad(gp.asarray(e), ((0, 0), (1, 1)), mode="edge"), np.pad(e, ((0, 0), (1, 1)), mode="edge"))
    with pytest.raises(ValueError, match="can't extend empty axis 0"):
        gp.pad(gp.asarray(e), 1, mode="edge")


@pytest.mark.parametrize("call, error", [
    (lambda xp, a: xp.pad(a, -1), ValueError),
    (lambda xp, a: xp.pad(a, ((1, -2), (0, 0))), ValueError),
    (lambda xp, a: xp.pad(a, 1.5), TypeError),
    (lambda xp, a: xp.pad(a, np.uint8(1)), TypeError),
    (lambda xp, a: xp.pad(a, 1, mode="edge", constant_values=3), ValueError),
    (lambda xp, a: xp.pad(a, 1, mode="bogus"), ValueError),
    (lambda xp, a: xp.pad(a, ((1, 2, 3),)), ValueError),
])
def test_pad_errors_are_numpys(gpu, call, error):
    a = values((3, 4), np.float32)
    with pytest.raises(error):
        call(np, a)
    with pytest.raises(error):
        call(gp, gp.asarray(a))


def test_pad_modes_without_an_index_map_go_to_numpy(gpu, silent_fallback):
    a = values((5, 6), np.float64)
    g = gp.asarray(a)
    for kwargs in [dict(mode="mean"), dict(mode="linear_ramp", end_values=3), dict(mode="reflect", reflect_type="odd")]:
        before = gp.stats()["fallbacks"]
        gpu.assert_same(gp.pad(g, 2, **kwargs), np.pad(a, 2, **kwargs))
        assert gp.stats()["fallbacks"] == before + 1


@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 4), (4, 1, 3), (0, 3)], ids=str)
def test_roll_matches_numpy(gpu, shape):
    a = values(shape, np.int32)
    g = gp.asarray(a)
    cases = [(1, None), (-8, None), (0, None)]
    if len(shape):
        cases += [(3, 0), (-1, -1), (len(shape) * 5 + 1, 0)]
    if len(shape) > 1:
        cases += [((1, -2), (0, 1)), ((1, 2), (0, 0)), (((2, -3)), (-1, -1))]
    for shift, axis in cases:
        gpu.assert_same(gp.roll(g, shift, axis), np.roll(a, shift, axis))


def test_roll_of_views_over_several_blocks(gpu):
    gp.set_block_size(7)
    a = values((6, 9), np.float32)
    for view in VIEWS.values():
        av, g = view(a), view(gp.asarray(a))
        for shift, axis in [(2, 0), (-4, 1), ((1, 1), (0, 1)), (5, None)]:
            gpu.assert_same(gp.roll(g, shift, axis), np.roll(av, shift, axis))


def test_roll_errors_are_numpys(gpu):
    a = values((3, 4), np.float32)
    for xp, x in [(np, a), (gp, gp.asarray(a))]:
        with pytest.raises(np.exceptions.AxisError):
            xp.roll(x, 1, axis=2)
        with pytest.raises(ValueError):
            xp.roll(x, (1, 2, 3), axis=(0, 1))


def test_a_roll_is_a_copy(gpu):
    a = values((4, 5), np.float32)
    g = gp.array(a)
    r = gp.roll(g, 1, 0)
    g[0, 0] = 1000  # the roll keeps the value it was made from
    r[1, 1] = -1    # and writing it leaves its operand alone
    want = np.roll(a, 1, 0)
    want[1, 1] = -1
    a[0, 0] = 1000
    gpu.assert_same(r, want)
    gpu.assert_same(g, a)


def life_step(xp, z):
    neighbours = sum(xp.roll(xp.roll(z, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    return ((neighbours == 3) | ((z == 1) & (neighbours == 2))).astype(np.int32)


def torus_stencil_step(xp, x):
    p = xp.pad(x, 1, mode="wrap")
    return 0.2 * (p[1:-1, 1:-1] + p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])


@pytest.mark.parametrize("step, make", [
    (life_step, lambda: (np.random.default_rng(2).random((40, 50)) < 0.35).astype(np.int32)),
    (torus_stencil_step, lambda: np.random.default_rng(3).random((40, 50))),
])
def test_a_torus_step_is_one_evaluation(gpu, step, make):
    x0 = make()
    want, g = x0, gp.asarray(x0)
    gp.reset_stats()
    for _ in range(4):
        want, g = step(np, want), step(gp, g)
        g.__array__()  # evaluate each step: its rolls or slices of one pad read the last step's array
    stats = gp.stats()
    assert stats["evaluations"] == 4
    assert stats["fallbacks"] == 0
    gpu.assert_same(g, want)


def test_a_roll_written_in_place_is_read_as_it_is_now(gpu):
    # Found by the fuzz campaign: a remap of a remap whose values were
    # evaluated and then written in place (which drops its operand).
    a = np.array([[True, False], [False, True]])
    g = gp.asarray(a)
    r = gp.roll(g, 1, axis=0)
    r.__array__()  # evaluated
    r[:, ::2] = False  # then written in place
    want = np.roll(a, 1, axis=0)
    want[:, ::2] = False
    for pad_width in (0, 1):
        gpu.assert_same(gp.pad(r, pad_width, mode="edge"), np.pad(want, pad_width, mode="edge"))
    gpu.assert_same(gp.roll(r, 1, axis=1), np.roll(want, 1, axis=1))


def test_nested_rolls_read_the_operand_once(gpu):
    g = gp.asarray(values((5, 6), np.float32))
    twice = gp.roll(gp.roll(g, 1, 0), 2, 1)
    again = gp.roll(gp.roll(g, 3, 0), -1, 0)  # same axis: the shifts add up
    loads = [i for i in gp._core._ir(twice + again, 0) if i["op"] == "load"]
    assert len(loads) == 2
    gpu.assert_same(twice + again, np.roll(np.roll(np.asarray(g), 1, 0), 2, 1) + np.roll(np.asarray(g), 2, 0))


@pytest.mark.parametrize("mode", ["edge", "constant"])
def test_a_reduction_across_a_padded_array_in_tiny_blocks(gpu, mode):
    """sum over axis 0 of a padded array reads it transposed, too many
    blocks to bind: the leaf is packed on the host, in whole blocks of its
    view. A block of the reduction's outputs ended inside one of those, and
    only the values that block read had been read back (an internal error
    -- found by the fuzz campaign)."""
    gp.set_block_size(7)
    h = np.arange(6, dtype=np.float32).reshape(3, 2)
    x = gp.pad(gp.asarray(h), (2, 5), mode=mode)
    gpu.assert_same(x.sum(axis=0), np.pad(h, (2, 5), mode=mode).sum(axis=0))
