"""Small work on host values runs in NumPy at once: an op whose operands are
already in host memory and whose result has at most the eager threshold's
elements (the calibrated crossover, tests/test_cost_model.py; here 1024) is
computed by NumPy's loop and becomes a gpupy
array holding host data -- no lazy node to evaluate later. Values, dtypes
and warnings are NumPy's by construction; the counters show no evaluation."""

import warnings

import numpy as np
import pytest

import gpupy as gp


@pytest.fixture
def eager(gpu):
    gp.set_eager_threshold(1024)
    gp.reset_stats()
    return gpu


def on_host(h):
    """A gpupy array of h's values (a copy: the tests write both), evaluated."""
    a = gp.array(h)
    np.asarray(a)
    return a


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.uint64, np.bool_])
def test_small_ops_on_host_values_run_in_numpy(eager, dtype):
    h = (np.arange(-6, 6) % 5).astype(dtype)
    a = on_host(h)
    gp.reset_stats()
    before = gp.stats()["nodes_created"]
    with np.errstate(all="ignore"):
        for name in ("add", "multiply", "maximum", "less", "bitwise_xor" if dtype != np.float64 and dtype != np.float32 else "divide"):
            got = getattr(gp, name)(a, a[::-1])
            want = getattr(np, name)(h, h[::-1])
            assert isinstance(got, gp.GpuArray) and got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)
    s = gp.stats()
    assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0, s
    assert s["nodes_created"] - before == 5  # one ARRAY node per result, no expression


def test_a_loop_over_small_slices_evaluates_nothing(eager):
    n = 200
    y, want = on_host(np.ones(n)), np.ones(n)
    gp.reset_stats()
    for k in range(1, n):
        y[:k] += 0.001 * gp.flip(y[:k])
        want[:k] += 0.001 * np.flip(want[:k])
    assert gp.stats()["evaluations"] == 0
    np.testing.assert_array_equal(np.asarray(y), want)


@pytest.mark.parametrize("name", ["triu", "tril"])
def test_small_triangles_run_at_once(eager, name):
    # nbody's `np.triu(e, 1)` of a 25 x 25 matrix of host values in a time
    # loop: NumPy's eager work, not an evaluation later.
    h = np.arange(625.0).reshape(25, 25)
    m = on_host(h)
    gp.reset_stats()
    got = getattr(gp, name)(m, 1)
    s = gp.stats()
    np.testing.assert_array_equal(np.asarray(got), getattr(np, name)(h, 1))
    assert s["eager_numpy_ops"] >= 1 and s["evaluations"] == 0 and s["host_engine_evaluations"] == 0, s
    assert gp.stats()["host_engine_evaluations"] + gp.stats()["evaluations"] == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.bool_])
def test_reduce_methods_of_host_values_run_in_numpy(eager, dtype):
    # `err.max()` in a loop: the C method runs NumPy's reduce at once
    # (all/any of integers are answered from the bytes, without NumPy).
    h = (np.arange(40) % 9).astype(dtype).reshape(5, 8)[:, ::-3]
    a = on_host(h)
    for name in ("sum", "prod", "max", "min", "all", "any"):
        gp.reset_stats()
        got = getattr(a, name)()
        s = gp.stats()
        direct = name in ("all", "any") and h.dtype.kind in "biu"
        assert (s["eager_numpy_ops"], s["direct_host_ops"]) == ((0, 1) if direct else (1, 0)), s
        assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0, s
        want = getattr(h, name)()
        assert got.dtype == want.dtype, name
        np.testing.assert_array_equal(np.asarray(got), want)


def test_large_or_lazy_operands_stay_lazy(eager):
    big = on_host(np.arange(5000.0))
    gp.reset_stats()
    r = big * 2  # 5000 > 1024 elements: a lazy node
    lazy = on_host(np.arange(10.0)) + 1
    lazy2 = gp.asarray(np.arange(10.0)) * 3  # the asarray is on the host: eager
    s = gp.stats()
    np.testing.assert_array_equal(np.asarray(r), np.arange(5000.0) * 2)
    np.testing.assert_array_equal(np.asarray(lazy + lazy2), np.arange(10.0) + 1 + np.arange(10.0) * 3)
    assert s["evaluations"] + s["host_engine_evaluations"] == 0  # nothing evaluated before asked


def test_threshold_zero_keeps_everything_lazy(gpu):
    gp.set_eager_threshold(0)
    a = on_host(np.arange(4.0))
    before = gp.stats()["nodes_created"]
    r = a + 1
    assert gp.stats()["nodes_created"] > before
    np.testing.assert_array_equal(np.asarray(r), np.arange(4.0) + 1)
    with pytest.raises(ValueError):
        gp.set_eager_threshold(-1)


def test_numpy_warnings_as_numpy(eager):
    a = on_host(np.array([1.0, 0.0]))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        r = a / a[::-1]
    assert any(issubclass(w.category, RuntimeWarning) for w in record)
    np.testing.assert_array_equal(np.asarray(r), np.array([np.inf, 0.0]))


def test_out_argument(eager):
    a = on_host(np.arange(6, dtype=np.int32))
    out = on_host(np.zeros(6, np.int64))
    assert gp.add(a, a, out=out) is out
    np.testing.assert_array_equal(np.asarray(out), np.arange(6) * 2)
    with pytest.raises(TypeError):
        gp.add(a, 0.5, out=gp.zeros(6, np.int32))


def test_small_in_place_ops_write_where_the_values_live(eager):
    """`y[:k] op= v` on host values: NumPy's loop writes into y's host
    memory (no result node, no write-back), with NumPy's overlap rules."""
    h = np.arange(10.0)
    y = on_host(h)
    gp.reset_stats()
    nodes = gp.stats()["nodes_created"]
    y[:4] += 1.0
    h[:4] += 1.0
    y[1:] += y[:-1]  # overlapping in and out: NumPy buffers as for ndarrays
    h[1:] += h[:-1]
    gp.multiply(y[::2], y[1::2], out=y[::2])
    np.multiply(h[::2], h[1::2], out=h[::2])
    s = gp.stats()
    assert s["eager_numpy_ops"] == 3 and s["evaluations"] == 0 and s["host_engine_evaluations"] == 0
    assert s["nodes_created"] == nodes
    np.testing.assert_array_equal(np.asarray(y), h)


def test_small_in_place_ops_keep_values_others_still_need(eager):
    h = np.arange(6.0)
    y = on_host(h)
    shared = gp.zeros(6)
    shared[:] = y  # the same value, shared: a write to y must not reach it
    y[:3] += 10.0
    y[4] = -1.0
    np.testing.assert_array_equal(np.asarray(shared), h)
    np.testing.assert_array_equal(np.asarray(y), [10.0, 11.0, 12.0, 3.0, -1.0, 5.0])


def test_small_in_place_ops_refuse_as_numpy(eager):
    y = on_host(np.arange(4))
    with pytest.raises(TypeError):  # numpy._core._exceptions._UFuncOutputCastingError
        y[:2] += 1.5  # same_kind casting: float into int refused, nothing written
    np.testing.assert_array_equal(np.asarray(y), np.arange(4))
    frozen = on_host(np.arange(4.0))
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        frozen[1:3] = frozen[1:3]
    with pytest.raises(ValueError, match="read-only"):
        frozen[1] = 5.0
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError):
            on_host(np.ones(3))[:2] /= 0.0


def test_one_element_writes_land_in_place(eager):
    h = np.zeros(5, dtype=np.int16)
    y = on_host(h)
    gp.reset_stats()
    nodes = gp.stats()["nodes_created"]
    for k in range(5):
        y[k] = k * 3
    assert gp.stats()["nodes_created"] == nodes and gp.stats()["evaluations"] == 0
    np.testing.assert_array_equal(np.asarray(y), np.arange(5, dtype=np.int16) * 3)
    with pytest.raises(OverflowError):
        y[0] = 2 ** 20  # NumPy's refusal of an out-of-range Python int


def test_small_reductions_of_host_values_run_in_numpy(eager):
    h = np.linspace(-1.0, 2.0, 60).reshape(6, 10)
    a = on_host(h)
    gp.reset_stats()
    got = [a.sum(), a.max(axis=0), a.min(axis=1), (a > 0).any(), a.prod(axis=(0, 1)), a.mean()]
    want = [h.sum(), h.max(axis=0), h.min(axis=1), (h > 0).any(), h.prod(axis=(0, 1)), h.mean()]
    s = gp.stats()
    assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0
    assert s["eager_numpy_ops"] >= 6
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), w)  # NumPy's own reduce: bit for bit


def test_small_filled_arrays_are_host_arrays(eager):
    gp.reset_stats()
    z = gp.zeros((5, 7), dtype=np.int16)
    f = gp.full(9, 2.5, dtype=np.float32)
    z[1:3, 2:4] = 4  # no fill to evaluate first
    f[::3] += 1.0
    s = gp.stats()
    assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0
    want = np.zeros((5, 7), dtype=np.int16)
    want[1:3, 2:4] = 4
    np.testing.assert_array_equal(np.asarray(z), want)
    np.testing.assert_array_equal(np.asarray(f), np.where(np.arange(9) % 3 == 0, 3.5, 2.5).astype(np.float32))
    big = gp.ones(2000)  # above the threshold: lazy, as before
    np.testing.assert_array_equal(np.asarray(big), np.ones(2000))


def test_rows_of_a_lazy_expression_evaluate_it_once(eager):
    """Small work on slices of a lazy expression that fits one block: the
    expression is evaluated whole at the first slice, the rest run at once."""
    h = np.arange(40 * 30, dtype=np.float64).reshape(40, 30)
    a = on_host(h)
    assert a.size > gp.eager_threshold()  # so this is a lazy node
    lazy = a * 0.5 + 1.0
    gp.reset_stats()
    rows = [lazy[i, :] * 2.0 for i in range(40)]
    s = gp.stats()
    assert s["evaluations"] + s["host_engine_evaluations"] == 1
    for i, r in enumerate(rows):
        np.testing.assert_array_equal(np.asarray(r), (h[i] * 0.5 + 1.0) * 2.0)


# --- advanced indexing of small host values -----------------------------------------------------

ADVANCED_KEYS = [
    lambda h: np.array([0, -1, 2, 2]),  # repeated and negative indices
    lambda h: h > 3,  # a boolean mask
    lambda h: (np.array([1, 0]), np.array([[2], [3]])),  # broadcast index arrays
    lambda h: (slice(None, None, -1), np.array([0, 4])),  # mixed with a reversed slice
    lambda h: (1, [0, 3, 1]),  # an integer and a list
    lambda h: (h > 3)[:, 0],  # a mask over the first axis
    lambda h: np.array([], dtype=np.intp),
]


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=range(len(ADVANCED_KEYS)))
@pytest.mark.parametrize("gpu_key", [False, True], ids=["ndarray-key", "gpupy-key"])
def test_small_advanced_reads_run_in_numpy(eager, key, gpu_key):
    h = np.arange(20.0).reshape(4, 5)
    a = on_host(h)
    k = key(h)
    if gpu_key:
        k = tuple(on_host(x) if isinstance(x, np.ndarray) else x for x in k) if isinstance(k, tuple) else on_host(k)
    gp.reset_stats()
    got = a[k]
    # (a gpupy boolean mask of the array's own shape, or a gpupy integer
    # index array alone, is applied in C++)
    direct = isinstance(k, gp.GpuArray) and (k.shape == a.shape if k.dtype == bool else k.ndim > 0)
    s = gp.stats()
    assert s["fallbacks"] == 0 and (s["eager_numpy_ops"], s["direct_host_ops"]) == ((0, 1) if direct else (1, 0))
    assert s["evaluations"] == 0
    want = h[key(h)]
    assert isinstance(got, gp.GpuArray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("key", ADVANCED_KEYS, ids=range(len(ADVANCED_KEYS)))
def test_small_advanced_writes_land_in_place(eager, key):
    h = np.arange(20.0).reshape(4, 5)
    a = on_host(h.copy())
    storage = np.asarray(a).__array_interface__["data"][0]
    gp.reset_stats()
    a[key(h)] = -7.5
    want = h.copy()
    want[key(h)] = -7.5
    s = gp.stats()
    assert s["fallbacks"] == 0 and s["eager_numpy_ops"] == 1 and s["write_copies"] == 0, s
    np.testing.assert_array_equal(np.asarray(a), want)
    assert np.asarray(a).__array_interface__["data"][0] == storage


def test_small_advanced_writes_keep_values_others_need(eager):
    h = np.arange(10.0)
    a = on_host(h.copy())
    shared = a.copy()  # shares a's node
    gp.set_eager_threshold(0)
    lazy = a * 3  # a lazy dependent (eager work would compute it at once)
    gp.set_eager_threshold(1024)
    gp.reset_stats()
    a[[0, 0, 9]] = [1.0, 2.0, 3.0]  # repeated index: the last write wins, as NumPy
    want = h.copy()
    want[[0, 0, 9]] = [1.0, 2.0, 3.0]
    assert gp.stats()["write_copies"] == 1
    np.testing.assert_array_equal(np.asarray(a), want)
    np.testing.assert_array_equal(np.asarray(shared), h)
    np.testing.assert_array_equal(np.asarray(lazy), h * 3)


def test_small_advanced_writes_from_the_target_itself(eager):
    h = np.arange(8.0)
    a = on_host(h.copy())
    a[h > 2] = a[::-1][h > 2]  # the value overlaps the target's memory: NumPy buffers it
    want = h.copy()
    want[h > 2] = h[::-1][h > 2]
    np.testing.assert_array_equal(np.asarray(a), want)
    b = on_host(h.copy())
    b[[1, 2, 3]] = b[0:3]  # a basic view of the target as the value
    want = h.copy()
    want[[1, 2, 3]] = h[0:3]
    np.testing.assert_array_equal(np.asarray(b), want)


def test_small_advanced_writes_into_a_view_reach_the_array(eager):
    h = np.arange(12.0).reshape(3, 4)
    a = on_host(h.copy())
    v = a[1:, ::2]
    v[v > 5] = 0
    want = h.copy()
    w = want[1:, ::2]
    w[w > 5] = 0
    np.testing.assert_array_equal(np.asarray(a), want)


def test_small_advanced_indexing_refuses_as_numpy(eager):
    h = np.arange(6.0)
    a = on_host(h.copy())
    for key in (np.array([6]), np.array([-7]), np.array([True, False]), np.array([1.5])):
        for op in (lambda x: x[key], lambda x: x.__setitem__(key, 1.0)):
            with pytest.raises(Exception) as numpy_error:
                op(h.copy())
            with pytest.raises(numpy_error.type):
                op(a)
    with pytest.raises(ValueError):
        a[[0, 1]] = [1.0, 2.0, 3.0]  # shape mismatch
    np.testing.assert_array_equal(np.asarray(a), h)  # nothing written by a refused write
    ro = on_host(h.copy())
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        ro[[0]] = 1.0


def test_large_or_lazy_arrays_take_the_device_path(eager):
    big = on_host(np.arange(5000.0))
    with gp.fallback_mode("silent"):
        gp.reset_stats()
        r = big[np.array([3, 4])]
        big[np.array([0, 1])] = -1.0
        lazy = on_host(np.arange(10.0))
        gp.set_eager_threshold(0)
        lazy = lazy * 2  # not in host memory yet
        gp.set_eager_threshold(1024)
        r2 = lazy[np.array([1, 2])]
    # Not the small arrays' shortcut: integer-array reads are gathers on the
    # device and the assignment a select (on a CPU renderer placed in
    # NumPy), none of them a fallback.
    assert gp.stats()["fallbacks_by_function"] == {}
    np.testing.assert_array_equal(np.asarray(r), [3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(big)[:3], [-1.0, -1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(r2), [2.0, 4.0])


# --- every ufunc, every pair of dtypes: NumPy writes the result into the
# new array's memory (out= of the dtype gpupy resolved, casting="safe"), so
# value and dtype must be exactly what NumPy returns without out=.

EAGER_DTYPES = [np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                      "float32", "float64")]


def _operands(dtype, n=7):
    if dtype == np.bool_:
        return np.array([True, False, True, True, False, False, True])[:n]
    if dtype.kind == "f":
        return np.array([-2.5, 0.0, 1.0, 3.75, np.nan, np.inf, -0.0], dtype)[:n]
    info = np.iinfo(dtype)
    return np.array([info.min, 0, 1, 2, 3, info.max, info.max // 3], dtype)[:n]


@pytest.mark.parametrize("name", list(gp._core.ufunc_names()))
def test_every_ufunc_on_every_dtype_pair_gives_numpys_result(eager, name):
    arity = gp._core.ufunc_arity(name)
    pairs = [(d,) for d in EAGER_DTYPES] if arity == 1 else \
        [(d, e) for d in EAGER_DTYPES for e in EAGER_DTYPES] + [(d, s) for d in EAGER_DTYPES for s in (3, -1.5, True)]
    checked = 0
    for types in pairs:
        hosts = [_operands(t) if isinstance(t, np.dtype) else t for t in types]
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                want = getattr(np, name)(*hosts)
            except Exception as e:
                with pytest.raises(type(e)):
                    getattr(gp, name)(*[on_host(h) if isinstance(h, np.ndarray) else h for h in hosts])
                continue
            if want.dtype not in EAGER_DTYPES:
                continue  # float16 and the like: not gpupy's to hold
            args = [on_host(h) if isinstance(h, np.ndarray) else h for h in hosts]
            gp.reset_stats()
            with gp.fallback_mode("silent"):
                got = getattr(gp, name)(*args)
        s = gp.stats()
        if s["fallbacks"]:
            continue  # a loop gpupy hands to NumPy whole (tests/test_ufunc_conformance.py)
        assert s["eager_numpy_ops"] == 1 and s["evaluations"] == 0, (types, s)
        assert got.dtype == want.dtype, (types, got.dtype, want.dtype)
        np.testing.assert_array_equal(np.asarray(got), want, err_msg=str(types))
        checked += 1
    assert checked > 0


def test_small_concatenations_of_host_values_run_in_numpy(eager):
    a, b = np.arange(6.0).reshape(2, 3), np.arange(4, dtype=np.int32).reshape(2, 2)
    ga, gb = on_host(a), on_host(b)
    for got_f, want_f in ((lambda: gp.hstack((ga, gb)), lambda: np.hstack((a, b))),
                          (lambda: gp.concatenate((ga, gb), axis=-1), lambda: np.concatenate((a, b), axis=-1)),
                          (lambda: gp.concatenate((ga.T, ga[::-1].T)), lambda: np.concatenate((a.T, a[::-1].T))),
                          (lambda: gp.vstack((ga, ga)), lambda: np.vstack((a, a)))):
        gp.reset_stats()
        before = gp.stats()["nodes_created"]  # cumulative
        got, want = got_f(), want_f()
        s = gp.stats()
        assert s["eager_numpy_ops"] == 1 and s["evaluations"] == 0 and s["nodes_created"] - before == 1, s
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
    for bad in ((ga, on_host(np.ones(3))), (ga, on_host(np.ones((3, 3))))):
        with pytest.raises(ValueError) as numpy_error:
            np.concatenate(tuple(np.asarray(x) for x in bad), axis=1)
        with pytest.raises(ValueError, match=str(numpy_error.value).replace("(", r"\(").replace(")", r"\)")):
            gp.concatenate(bad, axis=1)


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float32, np.int64, np.float64])
def test_small_concatenations_along_the_first_axis_copy_runs(eager, dtype):
    # Pieces of one dtype along axis 0 are copied from their host values
    # straight into the result, each one run of it: every layout of piece
    # (strided, reversed, transposed, broadcast, empty) lands in place.
    h = (np.arange(60) % 7).astype(dtype).reshape(5, 12)
    g = on_host(h)
    pieces = [
        (lambda x: x[1:3], lambda x: x[::-2], lambda x: x[:0], lambda x: x[:, ::-1][:2]),
        (lambda x: x.T[:4, :5], lambda x: x.T[::3, ::-1]),
        (lambda x: x[2, ::2], lambda x: x[0, 1:7], lambda x: np.broadcast_to(x[1, :1], (4,))
         if isinstance(x, np.ndarray) else gp.broadcast_to(x[1, :1], (4,))),
    ]
    for views in pieces:
        gp.reset_stats()
        before = gp.stats()["nodes_created"]  # cumulative
        got = gp.concatenate([v(g) for v in views])
        want = np.concatenate([v(h) for v in views])
        s = gp.stats()
        assert s["eager_numpy_ops"] == 1 and s["evaluations"] == 0 and s["nodes_created"] - before == 1, s
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)
    lazy = gp.arange(12).astype(dtype)  # an index expression, not in host memory: the lazy join
    assert not lazy._is_complete()
    got = gp.concatenate([lazy, g[4]])
    np.testing.assert_array_equal(np.asarray(got), np.concatenate([np.arange(12).astype(dtype), h[4]]))


def test_whole_assignment_of_a_small_host_view_copies_it_now(eager):
    """`col[:] = a[:, :, k]` in a loop: the strided view's host values are
    copied at once (a lazy copy would make every later op on `col` lazy,
    and a loop feeding `col` into its next value would build a chain)."""
    h = np.arange(60.0).reshape(3, 4, 5)
    a = on_host(h.copy())
    col = gp.zeros((3, 4))
    want_col = np.zeros((3, 4))
    for k in range(4, -1, -1):
        gp.reset_stats()
        col[:] = a[:, :, k]  # a strided view of host values
        col[:] = col[::-1]  # a view of the target itself
        col += k  # on host values: NumPy in place, at once
        want_col[:] = h[:, :, k]
        want_col[:] = want_col[::-1]
        want_col += k
        s = gp.stats()
        assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0 and s["eager_numpy_ops"] == 1, s
        assert col._is_complete()
    np.testing.assert_array_equal(np.asarray(col), want_col)
    b = gp.zeros((3, 4), dtype=np.float32)
    b[:] = a[:, :, 0]  # another dtype: a lazy cast, as before
    np.testing.assert_array_equal(np.asarray(b), h[:, :, 0].astype(np.float32))


def test_small_partial_writes_of_another_dtype_cast_in_numpy(eager):
    """`out[:, i] = float64 values` into a float32 array: NumPy's setitem
    casts into the target's host memory at once (no lazy cast to evaluate),
    with NumPy's rounding, overflow and copy-on-write for dependents."""
    out, want = gp.zeros((3, 4), np.float32), np.zeros((3, 4), np.float32)
    out[0, 0]
    gp.set_eager_threshold(0)
    lazy = out + 1  # a dependent that needs the old values
    gp.set_eager_threshold(1024)
    values = np.array([0.1, 1e300, -2.5])
    v = on_host(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's overflow warning for 1e300 -> float32
        for i in range(4):
            gp.reset_stats()
            out[:, i] = v * (i + 1)
            want[:, i] = values * (i + 1)
            s = gp.stats()
            assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0 and s["eager_numpy_ops"] == 2, s
    np.testing.assert_array_equal(np.asarray(out), want)
    np.testing.assert_array_equal(np.asarray(lazy), np.ones((3, 4), np.float32))
    ints = gp.zeros(4, np.int8)
    ints[0]
    ints[1:3] = on_host(np.array([3.7, -2.9]))  # float -> int8: NumPy's truncation
    np.testing.assert_array_equal(np.asarray(ints), np.array([0, 3, -2, 0], np.int8))
    with pytest.raises(ValueError, match="could not broadcast"):
        ints[1:3] = on_host(np.array([1.0, 2.0, 3.0]))


def test_numpys_inner_loop_runs_directly_on_host_memory(eager):
    """The common eager op -- operands of the loop's own dtype in host
    memory (any strides, broadcast included) or scalars -- runs NumPy's
    inner loop on gpupy's memory directly; anything else takes NumPy's
    call."""
    h = np.arange(1.0, 61.0).reshape(6, 10)
    a = on_host(h)
    direct = [(lambda x: 1.5 * x[:, 3], lambda: 1.5 * h[:, 3]),  # a strided column
              (lambda x: x[2] + x[4], lambda: h[2] + h[4]),
              (lambda x: x[1:3] - x[3:5], lambda: h[1:3] - h[3:5]),  # whole rows: one run
              (lambda x: x[::-1, 2] < 30.0, lambda: h[::-1, 2] < 30.0),  # negative step, bool result
              (lambda x: gp.sqrt(x[0]), lambda: np.sqrt(h[0])),
              (lambda x: x[0] * np.float64(0.25), lambda: h[0] * np.float64(0.25)),
              (lambda x: x[::2, ::3] + 1.0, lambda: h[::2, ::3] + 1.0),  # a loop per row
              (lambda x: x[:, :3] * x[0, :3], lambda: h[:, :3] * h[0, :3]),  # a broadcast row
              (lambda x: x[::-2, None, 1:4] - x[None, 0:3, 5], lambda: h[::-2, None, 1:4] - h[None, 0:3, 5]),
              (lambda x: x[2, 3] * x, lambda: h[2, 3] * h)]  # a 0-d view of the array times it
    through_numpy = [(lambda x: x[0] + x[1].astype(np.float32), lambda: h[0] + h[1].astype(np.float32)),
                     (lambda x: x[0] + x[1].astype(np.int32), lambda: h[0] + h[1].astype(np.int32))]
    for cases, expected in ((direct, 1), (through_numpy, 0)):
        for got_f, want_f in cases:
            gp.reset_stats()
            got = got_f(a)
            s = gp.stats()
            assert s["direct_numpy_loops"] == expected and s["evaluations"] == 0, s
            want = want_f()
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), want)
    y, want = on_host(np.arange(10.0)), np.arange(10.0)
    gp.reset_stats()
    y[:6] += 0.5 * gp.flip(y[:6])  # in place, the value overlapping the target
    want[:6] += 0.5 * np.flip(want[:6])
    assert gp.stats()["direct_numpy_loops"] == 2
    np.testing.assert_array_equal(np.asarray(y), want)


def test_a_direct_loop_that_raises_a_flag_is_numpys_call(eager):
    """Division by zero, overflow, invalid and underflow: the direct loop's
    result is dropped and NumPy's call gives its warnings or errors."""
    z = on_host(np.array([0.0, 1.0, 2.0]))
    tiny = on_host(np.array([1e-300, 1.0]))
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        r = 1.0 / z
    np.testing.assert_array_equal(np.asarray(r), [np.inf, 1.0, 0.5])
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        1.0 / z
    with np.errstate(under="raise"), pytest.raises(FloatingPointError):
        tiny * 1e-300
    with np.errstate(all="ignore"):
        gp.reset_stats()
        r = 1.0 / z
        assert gp.stats()["direct_numpy_loops"] == 0 and gp.stats()["eager_numpy_ops"] == 1
    target, want = on_host(np.array([1e10, 2.0])), np.array([1e10, 2.0])
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        target *= 1e308  # the in-place form: as NumPy, the result is written, then the error raised
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        want *= 1e308
    np.testing.assert_array_equal(np.asarray(target), want)
    with pytest.raises(ValueError, match="negative integer powers"):
        on_host(np.array([2, 3])) ** -1


@pytest.mark.parametrize("shape", [(0,), (0, 3), (3, 0), (2, 0, 4)])
def test_eager_ops_on_empty_arrays(eager, shape):
    h = np.zeros(shape)
    a = on_host(h)
    for got, want in ((a + 1.0, h + 1.0), (a * a, h * h), (gp.sqrt(a), np.sqrt(h)), (a < 2, h < 2)):
        assert got.shape == want.shape and got.dtype == want.dtype
    b = on_host(h.copy())
    b += 1.0
    assert b.shape == shape


def test_small_where_of_host_values_runs_in_numpy(eager):
    h = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    a, i = on_host(h), on_host(np.arange(4, dtype=np.int16))
    cases = [((a > 0, a, 0.5), (h > 0, h, 0.5)),
             ((a > 0, a, i), (h > 0, h, np.arange(4, dtype=np.int16))),  # broadcast, promotion
             ((a > 0, 2, i), (h > 0, 2, np.arange(4, dtype=np.int16))),  # a weak int
             ((h[0] > 0, a, np.float64(1.5)), (h[0] > 0, h, np.float64(1.5)))]
    for args, want_args in cases:
        gp.reset_stats()
        got = gp.where(*args)
        s = gp.stats()
        assert s["evaluations"] == 0 and s["host_engine_evaluations"] == 0, s
        want = np.where(*want_args)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), want)


class TestHostMasks:
    """`a[mask]` of a small host array by a boolean gpupy mask of its own
    shape: the selected elements copied into a new array at once (stats
    direct_host_ops, no NumPy call, no evaluation), NumPy's values, order and
    dtype; any other key takes NumPy's indexing, and its errors."""

    CASES = {
        "1-d": lambda h, k: (h[:30], k[:30]),
        "2-d": lambda h, k: (h[:30].reshape(5, 6), k[:30].reshape(5, 6)),
        "strided": lambda h, k: (h[::2], k[1::2]),
        "reversed": lambda h, k: (h[::-1], k),
        "transposed": lambda h, k: (h[:30].reshape(5, 6).T, k[:30].reshape(6, 5)),
        "all false": lambda h, k: (h[:8], k[:8] & False),
        "all true": lambda h, k: (h[:8], k[:8] | True),
        "empty": lambda h, k: (h[:0], k[:0]),
    }

    @pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "float32", "int64", "float64"])
    @pytest.mark.parametrize("case", CASES)
    def test_values_order_and_dtype(self, eager, dtype, case):
        rng = np.random.default_rng(3)
        h = (rng.random(60) * 100).astype(dtype)
        k = rng.random(60) < 0.5
        hv, kv = self.CASES[case](h, k)
        a, m = on_host(h), on_host(k)
        av, mv = self.CASES[case](a, m)
        gp.reset_stats()
        got = av[mv]
        assert gp.stats()["direct_host_ops"] == 1 and gp.stats()["eager_numpy_ops"] == 0
        assert gp.stats()["evaluations"] == 0
        want = hv[kv]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)
        if want.size:
            got[0] = got[0] + 1  # a copy: the array is not written
            np.testing.assert_array_equal(np.asarray(av), hv)

    def test_other_keys_take_numpys_indexing(self, eager):
        h = np.arange(12.0).reshape(3, 4)
        a = gp.asarray(h)
        rows = np.array([0, 2])
        for key, numpy_key in ((gp.asarray(h[:, 0] > 3), h[:, 0] > 3), (h > 5, h > 5),
                               ((gp.asarray(rows), slice(None)), (rows, slice(None)))):
            gp.reset_stats()
            np.testing.assert_array_equal(np.asarray(a[key]), h[numpy_key])
            assert gp.stats()["direct_host_ops"] == 0
        with pytest.raises(IndexError):
            h[np.ones(5, dtype=bool)]
        with pytest.raises(IndexError):
            a[gp.asarray(np.ones(5, dtype=bool))]


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "uint64"])
@pytest.mark.parametrize("fill", ["mixed", "zeros", "ones", "one zero", "high byte"])
@pytest.mark.parametrize("view", [lambda x: x, lambda x: x[::-2], lambda x: x.reshape(4, 6).T])
def test_all_and_any_of_small_host_integers_scan_the_bytes(eager, dtype, fill, view):
    """all()/any() of a small boolean or integer array on the host over every
    axis: answered from its bytes at once (stats direct_host_ops), NumPy's
    answer and result type."""
    h = {"mixed": np.arange(24) % 3, "zeros": np.zeros(24), "ones": np.ones(24),
         "one zero": np.where(np.arange(24) == 17, 0, 1), "high byte": np.where(np.arange(24) == 5, 256, 0)}[fill]
    h = h.astype(dtype)
    a = on_host(h)
    for name in ("all", "any"):
        gp.reset_stats()
        got = getattr(view(a), name)()
        want = getattr(view(h), name)()
        assert gp.stats()["direct_host_ops"] == 1 and gp.stats()["eager_numpy_ops"] == 0
        assert got.dtype == want.dtype and got.shape == want.shape and bool(got) == bool(want)


def test_all_and_any_of_floats_are_numpys(eager):
    h = np.array([-0.0, 0.0, np.nan, 2.0])
    a = on_host(h)
    for part in (h[:2], h[2:], h):
        for name in ("all", "any"):
            gp.reset_stats()
            got = getattr(on_host(part), name)()
            assert bool(got) == bool(getattr(part, name)()) and gp.stats()["direct_host_ops"] == 0
    assert bool(a.any(axis=0)) and gp.stats()["direct_host_ops"] == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 16, 17, 127, 128, 129, 130, 255, 257, 1000, 1024, 8192])
@pytest.mark.parametrize("shape", ["1-d", "2-d"])
def test_small_float_folds_run_numpys_loop_bit_for_bit(eager, dtype, n, shape):
    """x.sum()/prod()/max()/min() of a small C-contiguous float array on the
    host: NumPy's inner loop run as NumPy's reduce runs it (add's pairwise
    summation, identities, -0.0, NaN), the bytes NumPy gives."""
    gp.set_eager_threshold(8192)
    rng = np.random.default_rng(n)
    cases = [(rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(dtype),
             np.full(n, -0.0, dtype), np.where(np.arange(n) % 3 == 0, -0.0, rng.random(n)).astype(dtype)]
    nan = cases[0].copy()
    nan[n // 2] = np.nan
    cases.append(nan)
    for h in cases:
        h = h.reshape((n,) if shape == "1-d" else (1, n))
        a = on_host(h)
        for name in ("sum", "prod", "max", "min"):
            gp.reset_stats()
            with np.errstate(over="ignore", under="ignore"):
                got = getattr(a, name)()
                want = getattr(h, name)()
            s = gp.stats()
            assert got.dtype == want.dtype and np.asarray(got).tobytes() == np.asarray(want).tobytes(), (name, h)
            # (only a product overflows or underflows here: a flag, NumPy's call)
            assert s["eager_numpy_ops"] == 1 and (s["direct_numpy_loops"] == 1 or name == "prod"), (name, s)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(16, 24), (3, 5, 7), (64, 128), (2, 4096)])
def test_small_float_folds_of_n_d_arrays_are_numpys_too(eager, dtype, shape):
    # NumPy's reduce over every axis of a C-contiguous array runs its loop
    # once over all the elements, as over their ravel.
    gp.set_eager_threshold(8192)
    h = (np.random.default_rng(len(shape)).standard_normal(shape) * 1e3).astype(dtype)
    a = on_host(h)
    for name in ("sum", "max", "min"):
        gp.reset_stats()
        got, want = getattr(a, name)(), getattr(h, name)()
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes() and gp.stats()["direct_numpy_loops"] == 1


def test_a_small_float_fold_that_overflows_warns_as_numpy(eager):
    h = np.array([3e38, 3e38, 1.0], dtype=np.float32)
    a = on_host(h)
    with pytest.warns(RuntimeWarning, match="overflow"):
        want = h.sum()
    gp.reset_stats()
    with pytest.warns(RuntimeWarning, match="overflow"):
        got = a.sum()
    assert np.asarray(got) == want and gp.stats()["direct_numpy_loops"] == 0


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64])
def test_flags_raised_by_numpys_integer_loops_reach_numpys_warning(eager, dtype):
    # INT_MIN // -1: NumPy's loop raises the overflow flag (glibc raises it
    # through the x87 unit, apart from SSE's flags): the direct loop's
    # result is discarded, and NumPy's call warns as NumPy does.
    low = np.iinfo(dtype).min
    h = np.array([low, 7, -9], dtype)
    a = on_host(h)
    with pytest.warns(RuntimeWarning, match="overflow encountered in floor_divide"):
        want = h // dtype(-1)
    gp.reset_stats()
    with pytest.warns(RuntimeWarning, match="overflow encountered in floor_divide"):
        got = a // dtype(-1)
    assert gp.stats()["direct_numpy_loops"] == 0 and gp.stats()["eager_numpy_ops"] == 1
    np.testing.assert_array_equal(np.asarray(got), want)
    # The flags were cleared for the next loop: no warning, the direct loop.
    gp.reset_stats()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(a // dtype(3)), h // dtype(3))
    assert gp.stats()["direct_numpy_loops"] == 1


class TestHostTakes:
    """`a[idx]` of a small host array by a gpupy integer index array alone:
    the rows of a's first axis it names copied into a new array at once
    (stats direct_host_ops, no NumPy call), NumPy's values, shape, dtype
    and IndexError; unsigned 64-bit and 0-d indices take NumPy's indexing."""

    @pytest.mark.parametrize("index_dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32"])
    @pytest.mark.parametrize("values", ["1-d", "2-d", "strided 2-d", "bool"])
    @pytest.mark.parametrize("index", ["1-d", "2-d", "strided", "empty"])
    def test_rows_named(self, eager, index_dtype, values, index):
        rng = np.random.default_rng(4)
        h = {"1-d": rng.random(9), "2-d": rng.random((9, 3)), "strided 2-d": rng.random((9, 6))[:, ::2],
             "bool": rng.random(9) < 0.5}[values]
        signed = np.dtype(index_dtype).kind == "i"
        raw = np.array([0, 8, 3, 3, -1, -9] if signed else [0, 8, 3, 3, 1, 5])
        k = {"1-d": raw, "2-d": raw.reshape(2, 3), "strided": np.repeat(raw, 2)[::2], "empty": raw[:0]}[index]
        k = k.astype(index_dtype)
        a = on_host(h) if values != "strided 2-d" else on_host(np.ascontiguousarray(h.base))[:, ::2]
        g = on_host(np.repeat(k, 2)) [::2] if index == "strided" else on_host(k)
        gp.reset_stats()
        got = a[g]
        assert gp.stats()["direct_host_ops"] == 1 and gp.stats()["eager_numpy_ops"] == 0
        want = h[k]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), want)

    @pytest.mark.parametrize("bad", [9, -10])
    def test_numpys_index_error(self, eager, bad):
        h = np.arange(9.0)
        with pytest.raises(IndexError) as want:
            h[np.array([1, bad])]
        with pytest.raises(IndexError) as got:
            on_host(h)[on_host(np.array([1, bad]))]
        assert str(got.value) == str(want.value)

    def test_other_integer_keys_take_numpys_indexing(self, eager):
        h = np.arange(9.0)
        a = on_host(h)
        for key in (np.array([1, 2], np.uint64), np.array(4)):
            gp.reset_stats()
            got = a[on_host(key)]
            assert gp.stats()["direct_host_ops"] == 0
            np.testing.assert_array_equal(np.asarray(got), h[key])
