"""Gather on the device (gpupy/_indexing_reads.py, the GATHER op): integer-array
indexing in NumPy's forms, numpy.take and take_along_axis read the array's
storage at positions computed from the index arrays, fused with the index
expression and with what uses the result; boolean masks, nonzero and its
relatives and searchsorted are a prefix sum and a binary search of gathers; an
assignment through a boolean mask is a select.
NumPy is the oracle for values, shapes, dtypes and IndexError messages, on
both drivers, over views, empty and multi-block arrays."""
import re

import numpy as np
import pytest

import gpupy as gp

RNG = np.random.default_rng(7)
A = RNG.standard_normal((6, 7, 5))
I = RNG.integers(-6, 6, (3, 4))
J = RNG.integers(-7, 7, (4,))
K = RNG.integers(0, 5, (3, 1))

KEYS = {
    "one array": (I,),
    "two arrays broadcast": (I, J),
    "three arrays": (I, J, K),
    "after a slice": (slice(None), J),
    "separated by a slice": (I, slice(None), K),
    "with a partial slice": (slice(1, 5), J),
    "after an ellipsis": (Ellipsis, K),
    "a list": ([1, 2, -1],),
    "an int and an array": (2, J),
    "an array and an int": (I, 3),
    "reversed and strided slices": (slice(None, None, -1), J, slice(None, None, 2)),
    "empty index": (np.zeros((0,), np.int64),),
}


def on_device(key):
    return tuple(gp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


@pytest.mark.parametrize("name", sorted(KEYS))
def test_integer_array_keys_match_numpy(gpu, name):
    key = KEYS[name]
    gpu.assert_same(gp.asarray(A)[on_device(key)], A[key])


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float32", "float64"])
@pytest.mark.parametrize("index_dtype", ["int8", "uint8", "int32", "uint64", "int64"])
def test_every_dtype_and_index_dtype(gpu, dtype, index_dtype):
    a = (RNG.integers(-100, 100, (9, 4)) > 0) if dtype == "bool" else RNG.integers(-100, 100, (9, 4)).astype(dtype)
    i = RNG.integers(0, 9, (5,)).astype(index_dtype)
    gpu.assert_same(gp.asarray(a)[gp.asarray(i)], a[i])
    gpu.assert_same(gp.asarray(a)[gp.asarray(i), gp.asarray(i % 4)], a[i, i % 4])


@pytest.mark.parametrize("view", [
    lambda x: x[::-1, 1:, ::2],
    lambda x: x.transpose(2, 0, 1),
    lambda x: np.broadcast_to(x[:1], (4,) + x.shape[1:]) if isinstance(x, np.ndarray) else
    gp.broadcast_to(x[:1], (4,) + x.shape[1:]),
], ids=["strided", "transposed", "broadcast"])
def test_keys_into_views(gpu, view):
    av, gv = view(A), view(gp.asarray(A))
    i = RNG.integers(-av.shape[0], av.shape[0], (2, 3))
    gpu.assert_same(gv[gp.asarray(i), :2], av[i, :2])
    gpu.assert_same(gv[:, gp.asarray(i % av.shape[1])], av[:, i % av.shape[1]])


def test_a_source_over_several_blocks(gpu):
    gp.set_block_size(64)  # 210 elements: four blocks, all bound to one evaluation
    a = RNG.standard_normal((30, 7))
    i = RNG.integers(-30, 30, (40,))
    gp.reset_stats()
    gpu.assert_same(gp.asarray(a)[gp.asarray(i)], a[i])
    assert gp.stats()["fallbacks"] == 0


def test_a_source_beyond_what_one_evaluation_binds_is_gathered_on_the_host(gpu, silent_fallback):
    gp.set_block_size(7)
    a = RNG.standard_normal((30, 7))
    i = RNG.integers(-30, 30, (40,))
    gpu.assert_same(gp.asarray(a)[gp.asarray(i)], a[i])


@pytest.mark.parametrize("key", [(np.array([6]),), (I, np.array([7])), (slice(None), np.array([-8])),
                                 (np.array([[0], [-7]]), slice(None), K)], ids=str)
def test_out_of_range_indices_raise_numpys_index_error(gpu, key):
    with pytest.raises(IndexError) as want:
        A[key]
    with pytest.raises(IndexError) as got:
        gp.asarray(A)[on_device(key)]
    assert str(got.value) == str(want.value)


def test_an_index_into_an_empty_axis_raises(gpu):
    e = np.zeros((0, 3))
    with pytest.raises(IndexError):
        gp.asarray(e)[gp.asarray(np.array([0]))]
    gpu.assert_same(gp.asarray(e)[gp.asarray(np.zeros(0, np.int64))], e[np.zeros(0, np.int64)])


def test_writes_into_empty_arrays_through_index_arrays(gpu):
    """An empty expression (a sum, a gather that selects nothing) gets no
    host buffer: writes into it through integer arrays (host writes) do
    nothing and never touch one (found by the fuzzer as a crash)."""
    for shape, key in [((0, 5), (slice(None), np.array([0, 0, -1, 0, 0]))), ((0,), np.zeros(0, np.int64)),
                       ((3, 0), (np.array([0, 2]), slice(None)))]:
        a = np.zeros(shape, np.int64)
        for g in (gp.asarray(a) + 1, gp.asarray(np.ones((4,) + shape[1:], np.int64))[gp.asarray(np.zeros(0, np.int64))]):
            if g.shape != a.shape:
                continue
            g[key] = np.int64(5)
            want = a + 1 if g.size == 0 else a
            want[key] = 5
            gpu.assert_same(g, want)


def test_the_gather_fuses_with_its_index_and_its_consumer(gpu):
    img = RNG.random((20, 30)).astype(np.float32)
    iy, ix = RNG.integers(0, 19, (20, 30)), RNG.integers(0, 29, (20, 30))
    g, giy, gix = gp.asarray(img), gp.asarray(iy), gp.asarray(ix)
    r = 0.5 * g[giy + 1, gix] + 0.25
    ops = [i["op"] for i in gp._core._ir(r, 0)]
    assert "take" in ops and "multiply" in ops and "add" in ops  # index, gather and arithmetic: one IR
    assert "load" in ops
    gpu.assert_same(r, 0.5 * img[iy + 1, ix] + np.float32(0.25))


def test_a_gather_is_a_copy(gpu):
    a = RNG.standard_normal((5, 4))
    g = gp.array(a)
    i = gp.asarray(np.array([0, 2]))
    r = g[i]
    g[0, 0] = 100.0  # the gather keeps the values it was taken from
    r[1, 1] = -1.0   # and writing it leaves its source alone
    want = a[[0, 2]].copy()
    want[1, 1] = -1.0
    a[0, 0] = 100.0
    gpu.assert_same(r, want)
    gpu.assert_same(g, a)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take(gpu, axis):
    idx = RNG.integers(-5, 5, (2, 3))
    gpu.assert_same(gp.take(gp.asarray(A), gp.asarray(idx), axis=axis), np.take(A, idx, axis=axis))
    gpu.assert_same(gp.asarray(A).take(gp.asarray(idx), axis=axis), A.take(idx, axis=axis))


def test_take_errors_and_other_modes(gpu, silent_fallback):
    g = gp.asarray(A)
    with pytest.raises(np.exceptions.AxisError):
        gp.take(g, gp.asarray(np.array([0])), axis=3)
    with pytest.raises(IndexError):
        gp.take(g, gp.asarray(np.array([500])))
    idx = np.array([-9, 3, 40])
    for mode in ["clip", "wrap"]:
        gpu.assert_same(gp.take(g, gp.asarray(idx), mode=mode), np.take(A, idx, mode=mode))


def test_forms_left_to_numpy_are_counted(gpu, silent_fallback):
    g = gp.asarray(A)
    mask = A[:, 0, 0] > 0
    gp.reset_stats()
    gpu.assert_same(g[gp.asarray(mask), 1:], A[mask, 1:])
    gpu.assert_same(g[None, gp.asarray(I)], A[None, I])
    assert gp.stats()["fallbacks"] == 2


# --- data-dependent shapes: a prefix sum and a binary search -------------------------------------

@pytest.fixture(params=["device", "auto"])
def placement(request):
    """With the device forced, and as placed by cost (on a CPU renderer:
    NumPy, as a host placement)."""
    previous = gp.set_placement(request.param)
    yield request.param
    gp.set_placement(previous)


def with_zeros(shape, seed=1):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    a[a > 0.4] = 0
    return a


@pytest.mark.parametrize("shape", [(1,), (17,), (6, 7), (3, 4, 5), (0,), (4, 0)], ids=str)
def test_masks_and_nonzero(gpu, placement, shape):
    a = with_zeros(shape)
    g = gp.asarray(a)
    gp.reset_stats()
    gpu.assert_same(g[gp.asarray(a > 0)], a[a > 0])
    gpu.assert_same(g[a < 0], a[a < 0])  # a NumPy mask
    if len(shape) > 1:
        rows = a.sum(axis=tuple(range(1, len(shape)))) > 0
        gpu.assert_same(g[gp.asarray(rows)], a[rows])
    for got, want in zip(gp.nonzero(g), np.nonzero(a)):
        gpu.assert_same(got, want)
    for got, want in zip(gp.where(g), np.where(a)):
        gpu.assert_same(got, want)
    gpu.assert_same(gp.argwhere(g), np.argwhere(a))
    gpu.assert_same(gp.flatnonzero(g), np.flatnonzero(a))
    gpu.assert_same(gp.extract(g > 0, g), np.extract(a > 0, a))
    assert gp.stats()["fallbacks"] == 0


def test_a_mask_is_counted_on_the_device_when_forced(gpu):
    previous = gp.set_placement("device")
    try:
        a = with_zeros((40, 30))
        gp.reset_stats()
        gpu.assert_same(gp.asarray(a)[gp.asarray(a != 0)], a[a != 0])
        assert gp.stats()["host_placements"] == 0 and gp.stats()["fallbacks"] == 0
        assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] > 0
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("n", [1, 2, 5, 64, 1000])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_with_nans_last(gpu, placement, n, side):
    s = np.sort(RNG.integers(0, 20, n)).astype(np.float64)
    if n > 3:
        s[-2:] = np.nan
    v = np.array([[-1, 0, 3], [3.5, 19, np.nan]])
    gpu.assert_same(gp.searchsorted(gp.asarray(s), gp.asarray(v), side=side), np.searchsorted(s, v, side=side))
    got = gp.searchsorted(gp.asarray(s), 3.0, side=side)
    assert got == np.searchsorted(s, 3.0, side=side)
    ints = np.sort(RNG.integers(-50, 50, n)).astype(np.int32)
    q = RNG.integers(-60, 60, 9)
    gpu.assert_same(gp.searchsorted(gp.asarray(ints), gp.asarray(q), side=side), np.searchsorted(ints, q, side=side))


def test_searchsorted_errors(gpu):
    with pytest.raises(ValueError):
        gp.searchsorted(gp.asarray(np.arange(4.0)), 2.0, side="middle")


def test_compress(gpu, placement):
    a = RNG.standard_normal((5, 6)).astype(np.float32)
    c = np.array([True, False, True, True, False])
    gpu.assert_same(gp.compress(gp.asarray(c), gp.asarray(a), axis=0), np.compress(c, a, axis=0))
    gpu.assert_same(gp.compress(gp.asarray(c[:3]), gp.asarray(a), axis=1), np.compress(c[:3], a, axis=1))
    gpu.assert_same(gp.compress(gp.asarray(c), gp.asarray(a)), np.compress(c, a))
    gpu.assert_same(gp.asarray(a).compress(gp.asarray(c), axis=0), a.compress(c, axis=0))


@pytest.mark.parametrize("axis", [0, 1, -1, None])
def test_take_along_axis(gpu, axis):
    a = RNG.standard_normal((5, 6)).astype(np.float32)
    shape = {0: (3, 6), 1: (5, 4), -1: (5, 2), None: (7,)}[axis]
    n = a.size if axis is None else a.shape[axis]
    idx = RNG.integers(-n, n, shape)
    gpu.assert_same(gp.take_along_axis(gp.asarray(a), gp.asarray(idx), axis=axis), np.take_along_axis(a, idx, axis=axis))
    with pytest.raises(IndexError):
        gp.take_along_axis(gp.asarray(a), gp.asarray(idx + 3 * n), axis=axis)


# --- assignment through a boolean mask: a select --------------------------------------------------

def outcome(action):
    try:
        action()
        return None
    except Exception as e:  # noqa: BLE001 - compared with NumPy's
        return type(e)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "float32"])
@pytest.mark.parametrize("shape", [(7,), (3, 4), (2, 3, 4)], ids=str)
def test_mask_assignment(gpu, placement, shape, dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 9, shape).astype(dtype)
    gp.reset_stats()
    for lead in range(1, len(shape) + 1):
        mask = rng.random(shape[:lead]) < 0.5
        count, tail = int(mask.sum()), shape[lead:]
        for value in (3, 2.7, np.float32(1.5), rng.integers(0, 5, (count,) + tail).astype(np.float64),
                      np.array([7]), rng.integers(0, 5, (1,) + tail), np.ones(count + 1), 300, -1):
            want, got = a.copy(), gp.asarray(a)
            on_device = gp.asarray(value) if isinstance(value, np.ndarray) else value
            error = outcome(lambda: want.__setitem__(mask, value))
            assert outcome(lambda: got.__setitem__(gp.asarray(mask), on_device)) is error
            if error is None:
                gpu.assert_same(got, want)
    assert gp.stats()["fallbacks"] == 0
    # Values through a mask: NumPy's masked assignment where data-dependent
    # work is placed on the host, the device's ranks where it is forced.
    on_host = gp._placement.data_dependent_shapes_on_host()
    assert on_host == (placement != "device" and gp._core.products_on_host())
    assert (gp.stats()["host_placements_by_function"].get("__setitem__", 0) > 0) == on_host


@pytest.mark.parametrize("shapes", [((0, 0, 0), (0, 0), (0, 0, 0)), ((1, 0), (1, 0), (1, 0)), ((4, 1, 0), (4, 1), (4, 1, 0)),
                                    ((4, 1, 0), (4, 1), (3, 5, 0)), ((3, 4), (3, 4), (2, 2)),
                                    ((3, 4), (3,), (2, 4)), ((3, 4), (3, 4), (1, 2)), ((3, 4), (3,), (1, 1, 4))],
                         ids=str)
def test_mask_assignment_value_shapes_as_numpy(gpu, placement, shapes):
    # NumPy's own rules (found by the fuzz campaign): a mask over every
    # dimension takes a value of at most one dimension (TypeError), an
    # empty selection takes any empty value.
    shape, mask_shape, value_shape = shapes
    a = np.zeros(shape, np.int32)
    mask = np.zeros(mask_shape, bool)
    mask.reshape(-1)[:2] = True
    value = np.arange(int(np.prod(value_shape)), dtype=np.int32).reshape(value_shape)
    got = gp.asarray(a)
    error = outcome(lambda: a.__setitem__(mask, value))
    assert outcome(lambda: got.__setitem__(gp.asarray(mask), gp.asarray(value))) is error
    gpu.assert_same(got, a)


def test_mask_assignment_through_a_view_keeps_lazy_dependents(gpu, placement):
    a = np.arange(20.0).reshape(4, 5)
    g = gp.array(a)
    before = g * 1  # still lazy: must see the old values
    v = g[1:3]
    v[v > 7] = 0
    want = a.copy()
    w = want[1:3]
    w[w > 7] = 0
    gpu.assert_same(g, want)
    gpu.assert_same(before, a)


def test_mask_assignment_into_a_read_only_array(gpu, silent_fallback):
    g = gp.asarray(np.arange(4.0))
    g.flags.writeable = False
    with pytest.raises(ValueError):
        g[g > 1] = 0


# --- assignment through integer arrays: sorted writes, a search per element -----------------------

@pytest.mark.parametrize("name", sorted(KEYS))
def test_integer_array_assignment(gpu, placement, name):
    key = KEYS[name]
    rng = np.random.default_rng(5)
    try:
        shape = A[key].shape
    except IndexError:
        shape = (1,)
    gp.reset_stats()
    for value in (3, 2.5, rng.standard_normal(shape), rng.standard_normal(shape[-1:]), np.ones((1,) + shape),
                  np.ones(shape[:-1] + (shape[-1] + 1,)) if shape else np.ones(2)):
        want, got = A.copy(), gp.asarray(A)
        error = outcome(lambda: want.__setitem__(key, value))
        on_device = gp.asarray(value) if isinstance(value, np.ndarray) else value
        assert outcome(lambda: got.__setitem__(on_device_key(key), on_device)) is error
        if error is None:
            gpu.assert_same(got, want)
    assert gp.stats()["fallbacks"] == 0


def on_device_key(key):
    return tuple(gp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)


def test_repeated_indices_keep_the_last_write(gpu, placement):
    idx = np.array([1, 1, 2, -5, 5, 2, 1])
    vals = np.arange(7.0)
    want, got = np.zeros(6), gp.zeros(6)
    want[idx] = vals
    got[gp.asarray(idx)] = gp.asarray(vals)
    gpu.assert_same(got, want)
    grid, g = np.zeros((3, 4), np.int32), gp.zeros((3, 4), np.int32)
    rows, cols = np.array([0, 2, 0, 0]), np.array([1, 3, 1, 1])
    grid[rows, cols] = [7, 8, 9, 10]
    g[gp.asarray(rows), gp.asarray(cols)] = gp.asarray(np.array([7, 8, 9, 10]))
    gpu.assert_same(g, grid)


def test_integer_assignment_out_of_range_raises_and_writes_nothing(gpu, placement):
    g = gp.asarray(np.arange(5.0))
    with pytest.raises(IndexError):
        g[gp.asarray(np.array([0, 5]))] = 1.0
    gpu.assert_same(g, np.arange(5.0))


# --- put, place and putmask: values repeated into positions, masks -------------------------------

A12 = np.arange(12.0).reshape(3, 4)
PUT_CASES = {
    "repeats_last_wins": (lambda m, x: m.put(x, [0, 5, -1, 5], [9, 8, 7, 6])),
    "short_values": (lambda m, x: m.put(x, [1, 2, 3], [9])),
    "float_indices": (lambda m, x: m.put(x, [1.7, 2], [9, 3])),
    "wrap": (lambda m, x: m.put(x, [20, -15], [9, 8], mode="wrap")),
    "clip": (lambda m, x: m.put(x, [20, -15], [9, 8], mode="clip")),
    "no_values": (lambda m, x: m.put(x, [1], [])),
    "transposed_view": (lambda m, x: m.put(x.T, [0, 1, 2], [5, 6, 7])),
    "method": (lambda m, x: x.put([0, 1], [5, 6])),
    "place": (lambda m, x: m.place(x, x > 4, [1, 2, 3])),
    "place_nothing": (lambda m, x: m.place(x, x > 40, [])),
    "putmask": (lambda m, x: m.putmask(x, x > 4, [1, 2, 3])),
    "putmask_no_values": (lambda m, x: m.putmask(x, x > 4, [])),
    "putmask_reversed": (lambda m, x: m.putmask(x[:, ::-1], (x > 4)[:, ::-1], np.arange(12.0))),
}


@pytest.mark.parametrize("name", list(PUT_CASES))
def test_put_place_putmask(gpu, placement, name):
    want, got = A12.copy(), gp.array(A12)
    gp.reset_stats()
    assert PUT_CASES[name](np, want) is None and PUT_CASES[name](gp, got) is None
    gpu.assert_same(got, want)
    assert gp.stats()["fallbacks"] == 0


PUT_ERRORS = {
    "put_out_of_range": (lambda m, x: m.put(x, [20], [9])),
    "put_negative_out_of_range": (lambda m, x: m.put(x, [-13], [9])),
    "put_into_empty": (lambda m, x: m.put(x[:0], [0], [1])),
    "put_no_values_into_empty": (lambda m, x: m.put(x[:0], [0], [])),
    "place_empty_values": (lambda m, x: m.place(x, x > 4, [])),
    "place_mask_size": (lambda m, x: m.place(x, [True, False], [1])),
    "putmask_mask_size": (lambda m, x: m.putmask(x, [True], [1])),
}


PUT_ERRORS.update({
    # Including what NumPy leaves written: nothing, except that put writes
    # the elements before the first bad index into a C-contiguous array;
    # into any other, NumPy puts into a copy that an error drops (both
    # found by the fuzzer).
    "put_stops_at_a_bad_index": (lambda m, x: m.put(x, [0, 5, 20, 1], [9, 8])),
    "put_into_a_transposed_view_stops_before_writing": (lambda m, x: m.put(x.T, [-1, 20], [9])),
    "put_into_a_column_stops_at_a_bad_index": (lambda m, x: m.put(x[:, 1], [0, 1, 7], [9])),
    "put_into_a_row_stops_at_a_bad_index": (lambda m, x: m.put(x[1], [0, 1, 7], [9])),
})


@pytest.mark.parametrize("name", list(PUT_ERRORS))
def test_put_place_putmask_errors_are_numpys(gpu, name):
    call = PUT_ERRORS[name]
    want, got = A12.copy(), gp.array(A12)
    with pytest.raises(Exception) as expected:
        call(np, want)
    with pytest.raises(type(expected.value), match=re.escape(str(expected.value))):
        call(gp, got)
    gpu.assert_same(got, want)


def test_put_of_a_zero_d_array_and_casts(gpu):
    got, want = gp.asarray(np.array(3.0)), np.array(3.0)
    np.put(want, [0], [5])
    gp.put(got, [0], [5])
    gpu.assert_same(got, want)
    got, want = gp.asarray(np.arange(4)), np.arange(4)
    np.put(want, [0, 1], [1.5, 2.5])  # (values cast to the array's dtype, unsafely, as NumPy)
    gp.put(got, gp.asarray(np.array([0, 1])), gp.asarray(np.array([1.5, 2.5])))
    gpu.assert_same(got, want)


# --- add.at and bincount: sums of integers by sorted writes ----------------------------------------

@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int32", "int64"])
def test_add_at_of_integers(gpu, placement, dtype):
    rng = np.random.default_rng(9)
    a = rng.integers(0, 5, (6, 4)).astype(dtype)
    cases = [((rng.integers(-6, 6, 20),), 1),
             ((rng.integers(0, 6, 9), rng.integers(0, 4, 9)), rng.integers(0, 200, 9)),  # int8 sums wrap
             (rng.integers(0, 6, 7), rng.integers(0, 3, (7, 4)).astype(np.int8))]
    gp.reset_stats()
    for indices, values in cases:
        want, got = a.copy(), gp.asarray(a)
        np.add.at(want, indices, values)
        on_device = tuple(gp.asarray(i) for i in indices) if isinstance(indices, tuple) else gp.asarray(indices)
        assert np.add.at(got, on_device, gp.asarray(values) if isinstance(values, np.ndarray) else values) is None
        gpu.assert_same(got, want)
    assert gp.stats()["fallbacks"] == 0


UFUNC_AT_CASES = [("add", np.float64, np.float64), ("add", np.float32, np.float64), ("add", np.float32, np.float32),
                  ("multiply", np.float64, np.float64), ("maximum", np.float32, np.float32),
                  ("fmin", np.float64, np.float64), ("subtract", np.float64, np.int32),
                  ("minimum", np.int32, np.int32), ("bitwise_or", np.int32, np.int32)]


@pytest.mark.parametrize("name, a_dtype, b_dtype", UFUNC_AT_CASES)
def test_ufunc_at_in_the_order_written(gpu, placement, name, a_dtype, b_dtype):
    """Each element sees its writes one after another in the order
    written, rounded (and cast back) after each: NumPy's values to the bit,
    NaNs (any NaN for a NaN: gpu.bytes_of) and repeated indices included."""
    rng = np.random.default_rng(11)
    a = (rng.standard_normal(20) * 10).astype(a_dtype)
    indices = rng.integers(-20, 20, 100)
    b = (rng.standard_normal(100) * 3).astype(b_dtype)
    if np.dtype(b_dtype).kind == "f":
        b[::17] = np.nan
    want, got = a.copy(), gp.asarray(a)
    with np.errstate(all="ignore"):
        getattr(np, name).at(want, indices, b)
    gp.reset_stats()
    with np.errstate(all="ignore"):  # (placed on the host, it is NumPy's loop, which warns of NaN)
        assert getattr(gp, name).at(got, gp.asarray(indices), gp.asarray(b)) is None
    assert gpu.bytes_of(np.asarray(got)) == gpu.bytes_of(want)
    assert gp.stats()["fallbacks"] == 0


def test_ufunc_at_forms(gpu):
    # A Python number takes the array's dtype (NEP 50), as in NumPy; a 2-D
    # target through a tuple of index arrays.
    want, got = np.ones(5, np.float32), gp.ones(5, np.float32)
    np.add.at(want, [0, 0, 1], 0.1)
    gp.add.at(got, gp.asarray(np.array([0, 0, 1])), 0.1)
    assert np.asarray(got).tobytes() == want.tobytes()
    want, got = np.zeros((3, 4)), gp.zeros((3, 4))
    rows, cols = np.array([0, 2, 0, 0]), np.array([1, 3, 1, 1])
    np.multiply.at(want + 0, (rows, cols), 2.0)
    np.add.at(want, (rows, cols), [0.1, 0.2, 0.3, 0.4])
    gp.add.at(got, (gp.asarray(rows), gp.asarray(cols)), gp.asarray(np.array([0.1, 0.2, 0.3, 0.4])))
    assert np.asarray(got).tobytes() == want.tobytes()
    with pytest.raises(IndexError):
        gp.add.at(gp.zeros(3), gp.asarray(np.array([3])), 1.0)


def test_ufunc_at_with_many_repeats_is_numpys(gpu, silent_fallback):
    # An element written more than _MAX_REPEATS_IN_ORDER times: NumPy's
    # loop, even with the device forced.
    previous = gp.set_placement("device")
    try:
        want, got = np.zeros(3), gp.zeros(3)
        indices = np.zeros(100, np.int64)
        np.add.at(want, indices, np.full(100, 0.1))
        gp.reset_stats()
        np.add.at(got, gp.asarray(indices), gp.asarray(np.full(100, 0.1)))
        gpu.assert_same(got, want)
        assert gp.stats()["fallbacks_by_function"] == {"add.at": 1}
    finally:
        gp.set_placement(previous)


@pytest.mark.parametrize("n", [1, 10, 1000])
def test_bincount(gpu, placement, n):
    x = np.random.default_rng(n).integers(0, 17, n)
    for minlength in (0, 30):
        gpu.assert_same(gp.bincount(gp.asarray(x), minlength=minlength), np.bincount(x, minlength=minlength))
    with pytest.raises(ValueError, match="negative"):
        gp.bincount(gp.asarray(np.array([1, -1])))


@pytest.mark.parametrize("value", [300, np.int64(300), np.float64(2.7), 2.7, np.array(300), -1, np.uint8(255), True],
                         ids=repr)
@pytest.mark.parametrize("key", ["mask", "indices"])
def test_values_assigned_through_masks_and_indices_convert_as_numpy(gpu, value, key):
    """A NumPy scalar converts as an array does (unsafely: np.uint8(255)
    into int8 is -1), a Python number with NumPy's OverflowError -- unlike
    `a[...] = v`, which refuses both out of range (found by the fuzzer)."""
    k = np.array([True, False]) if key == "mask" else np.array([0])
    want, got = np.zeros(2, np.int8), gp.zeros(2, np.int8)
    try:
        want[k] = value
    except OverflowError:
        with pytest.raises(OverflowError):
            got[gp.asarray(k)] = value
        return
    got[gp.asarray(k)] = value
    gpu.assert_same(got, want)


def evaluations():
    s = gp.stats()
    return s["evaluations"] + s["host_engine_evaluations"]


def test_indices_bounded_by_construction_need_no_check(gpu):
    """A gather's indices are checked for NumPy's IndexError by one pass over
    them -- unless the graph proves them inside the axis (value_bounds):
    clipped, from indices/arange, shifted by constants. Bilinear rotation's
    four gathers are such."""
    img = RNG.random((40, 30)).astype(np.float32)
    g = gp.asarray(img)
    y, x = gp.indices(img.shape)
    sx = 0.8 * (x - 14.5) + 0.6 * (y - 19.5) + 14.5
    ix = gp.clip(gp.floor(sx), 0, 28).astype(np.intp)
    iy = gp.clip(gp.floor(0.8 * (y - 19.5) - 0.6 * (x - 14.5) + 19.5), 0, 38).astype(np.intp)
    gp.reset_stats()
    r = g[iy, ix + 1] - g[iy + 1, -1 - ix]  # negative indices proven too
    assert evaluations() == 0  # nothing evaluated at the calls
    ny, nx = np.indices(img.shape)
    nix = np.clip(np.floor(0.8 * (nx - 14.5) + 0.6 * (ny - 19.5) + 14.5), 0, 28).astype(np.intp)
    niy = np.clip(np.floor(0.8 * (ny - 19.5) - 0.6 * (nx - 14.5) + 19.5), 0, 38).astype(np.intp)
    gpu.assert_same(r, img[niy, nix + 1] - img[niy + 1, -1 - nix])


def test_indices_the_graph_cannot_bound_are_still_checked(gpu):
    a = np.arange(10.0)
    g = gp.asarray(a)
    i = gp.arange(12)
    # Clipped one past the end: not proven, checked, NumPy's error.
    with pytest.raises(IndexError) as want:
        a[np.clip(np.arange(12), 0, 10)]
    with pytest.raises(IndexError) as got:
        g[gp.clip(i, 0, 10)]
    assert str(got.value) == str(want.value)
    # Not proven (an array's values), inside all the same: checked, no error.
    gp.reset_stats()
    r = g[gp.asarray(np.array([9, -10, 3]))]
    assert evaluations() > 0  # the check
    gpu.assert_same(r, a[[9, -10, 3]])
    # A NaN clipped stays NaN; as an index it is NumPy's IndexError.
    f = gp.asarray(np.array([np.nan, 2.0]))
    with pytest.raises(IndexError):
        g[gp.clip(f, 0, 9).astype(np.intp)]
    # Beyond the axis from arithmetic: checked and refused.
    with pytest.raises(IndexError):
        g[gp.arange(5) * 3]


def test_value_bounds_follow_the_graph(gpu):
    vb = gp._core.value_bounds
    y, x = gp.indices((5, 7))
    # (Bounds are a node's: the two planes of one stacked array share them.)
    assert vb(x) == (0, 6) and vb(y) == (0, 6)
    assert vb(gp.arange(10) * 3 - 5) == (-5, 22)
    assert vb(gp.where(x > 2, x, -y)) == (-6, 6)
    assert vb(gp.maximum(gp.arange(4), 2)) == (2, 3)
    assert vb(x > 3) == (0, 1)  # any bool
    lo, hi = vb(gp.clip(gp.floor(x * 0.7 + 0.5), 0, 3).astype(np.int32))
    assert (lo, hi) == (0, 3)
    # Float results are widened to cover rounding, never narrowed.
    lo, hi = vb(x.astype(np.float32) * np.float32(0.1))
    assert lo <= 0 and 0.6 <= hi < 0.6 * (1 + 1e-5)
    # What cannot be proven: memory, NaN, division, overflow, reductions.
    assert vb(gp.asarray(np.arange(5))) is None
    assert vb(gp.maximum(x.astype(np.float64), np.nan)) is None
    assert vb(x / 2) is None
    assert vb(gp.arange(100, dtype=np.int8) * np.int8(2)) is None  # may wrap
    assert vb(gp.arange(3, dtype=np.uint8) - np.uint8(1)) is None  # may wrap below zero
    assert vb(gp.sum(x, axis=0)) is None


@pytest.mark.parametrize("seed", range(20))
def test_value_bounds_hold_the_evaluated_values(gpu, seed):
    """Random expressions of the ops the analysis follows: every evaluated
    value lies within the proven bounds."""
    rng = np.random.default_rng(seed)
    y, x = gp.indices((9, 11), dtype=rng.choice([np.int64, np.int32, np.float32, np.float64]))
    e = x
    for _ in range(6):
        k = rng.choice(["add", "sub", "mul", "neg", "abs", "floor", "clip", "where", "cast", "square"])
        c = float(rng.uniform(-3, 3)) if e.dtype.kind == "f" else int(rng.integers(-3, 4))
        if k == "add":
            e = e + y
        elif k == "sub":
            e = e - c
        elif k == "mul":
            e = e * c
        elif k == "neg":
            e = -e
        elif k == "abs":
            e = gp.abs(e)
        elif k == "floor":
            e = gp.floor(e)
        elif k == "clip":
            e = gp.clip(e, -4, 7)
        elif k == "where":
            e = gp.where(y > 4, e, x)
        elif k == "cast":
            e = e.astype(rng.choice([np.float32, np.float64, np.int64]))
        else:
            e = gp.square(e)
    bounds = gp._core.value_bounds(e)
    assert bounds is not None
    values = np.asarray(e)
    assert bounds[0] <= values.min() and values.max() <= bounds[1]
