"""Which arrays share memory, as NumPy decides.

A write through any array must reach exactly the arrays that view the
same memory in NumPy: views where NumPy makes views (slicing, reshapes
that need no copy, ravel of a contiguous array, asarray, astype(copy=False)),
copies where it copies (ravel of a strided view, astype, array, advanced
indexing). Whether a reshape is a view depends on the strides, so new
arrays are laid out as NumPy lays them out. NumPy memory handed to gpupy
(`asarray` of an ndarray, a memory-mapped file, out=) is viewed, not
copied; a lazy expression built on it keeps the values it was built from.
"""

import numpy as np
import pytest

import gpupy as gp


def _views(x):
    """Views of a (2, 3, 4) array, NumPy's or gpupy's alike."""
    return [x, x.T, x[::-1], x[:, ::2], x.transpose(1, 0, 2), x[..., ::-1].T, x[0], x[:, :, 1:2], x[None],
            x.T[::2], x[:, :0], x[1:, 1:, 1:]]


def _same_layout(got, want):
    """gpupy's array has NumPy's shape, dtype, values and strides (strides
    of an empty array are not compared: NumPy's vary by how it was made)."""
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    if want.size:
        assert got.strides == want.strides, (got.strides, want.strides)


def test_ravel_reshape_flatten_are_views_exactly_where_numpys_are(gpu):
    a = np.arange(24.0).reshape(2, 3, 4)
    g = gp.array(a)
    for v, w in zip(_views(a), _views(g)):
        for order in "CFAK":
            for name in ("ravel", "flatten"):
                r, q = getattr(v, name)(order), getattr(w, name)(order)
                _same_layout(q, r)
                assert gp.shares_memory(q, g) == np.shares_memory(r, a), (name, order, v.strides)
        for shape in ((-1,), (4, -1), (2, -1, 2)):
            for order in "CFA":
                try:
                    r = v.reshape(shape, order=order)
                except ValueError:
                    with pytest.raises(ValueError):
                        w.reshape(shape, order=order)
                    continue
                q = w.reshape(shape, order=order)
                _same_layout(q, r)
                assert gp.shares_memory(q, g) == np.shares_memory(r, a), (shape, order, v.strides)


def test_ravel_of_a_reversed_vector_is_a_copy(gpu):
    a = gp.asarray(np.array([0, 0]))
    r = a[::-1].ravel()
    r[0] = 5
    np.testing.assert_array_equal(np.asarray(a), [0, 0])
    assert not gp.shares_memory(a, r)


def test_reshape_with_copy_false_refuses_to_copy(gpu):
    g = gp.arange(6.0).reshape(2, 3)
    assert gp.shares_memory(g.reshape(-1, copy=False), g)
    with pytest.raises(ValueError):
        g.T.reshape(-1, copy=False)
    assert not gp.shares_memory(g.reshape(-1, copy=True), g)


@pytest.mark.parametrize("eager", [0, 1 << 20])
def test_new_arrays_are_laid_out_as_numpys(gpu, eager):
    """Elementwise results follow their operands' order (NumPy's "K"),
    reductions and scans the order of their operand, indexing results
    NumPy's index-dimensions-first layout -- computed lazily or at once."""
    gp.set_eager_threshold(eager)
    try:
        a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
        g = gp.array(a)
        i, j = np.array([0, 1]), np.array([[0], [1]])
        for v, w in zip(_views(a)[:6], _views(g)[:6]):
            _same_layout(w + 1, v + 1)
            _same_layout(gp.sqrt(w), np.sqrt(v))
            _same_layout(w * w.copy(), v * v.copy())
            _same_layout(gp.where(w > 3, w, 0.5), np.where(v > 3, v, 0.5))
            for order in "KCFA":
                _same_layout(w.astype(np.float64, order=order), v.astype(np.float64, order=order))
                _same_layout(w.copy(order=order), v.copy(order=order))
                _same_layout(gp.copy(w, order=order), np.copy(v, order=order))
                _same_layout(gp.array(w, order=order), np.array(v, order=order))
            _same_layout(gp.ascontiguousarray(w), np.ascontiguousarray(v))
            _same_layout(gp.asfortranarray(w), np.asfortranarray(v))
            for axis in range(3):
                _same_layout(w.sum(axis=axis), v.sum(axis=axis))
                _same_layout(w.max(axis=axis), v.max(axis=axis))
                _same_layout(w.cumsum(axis=axis), v.cumsum(axis=axis))
                _same_layout(gp.take(w, [0, 1], axis=axis), np.take(v, [0, 1], axis=axis))
            for key in [(i,), (slice(None), i), (slice(None), slice(None), i), (i, i), (slice(None), i, i),
                        (i, slice(None), i), (j, i), (slice(None), j, i)]:
                try:
                    want = v[key]
                except IndexError:
                    continue
                _same_layout(w[key], want)
    finally:
        gp.set_eager_threshold(0)


def test_joined_padded_rolled_and_like_arrays_are_laid_out_as_numpys(gpu):
    a = np.arange(12.0).reshape(3, 4)
    for x in (a, a.T, a[:, ::2], np.array(a.T[::-1])):
        g = gp.array(x)
        for call in (lambda m, y: m.concatenate([y, y]), lambda m, y: m.concatenate([y, y], axis=1),
                     lambda m, y: m.stack([y, y]), lambda m, y: m.stack([y, y], axis=-1),
                     lambda m, y: m.hstack([y, y]), lambda m, y: m.vstack([y, y]),
                     lambda m, y: m.pad(y, ((1, 0), (2, 1))), lambda m, y: m.pad(y, 1, constant_values=((1, 2), (3, 4))),
                     lambda m, y: m.pad(y, 2, mode="reflect"), lambda m, y: m.roll(y, 1, axis=0),
                     lambda m, y: m.roll(y, (1, 2), axis=(0, 1)), lambda m, y: m.zeros_like(y),
                     lambda m, y: m.ones_like(y, order="F"), lambda m, y: m.full_like(y, 2.0, order="A"),
                     lambda m, y: m.zeros_like(y, shape=5), lambda m, y: m.zeros_like(y, shape=(6, 2))):
            _same_layout(call(gp, g), call(np, x))


def test_rounded_integers_keep_their_layout(gpu):
    # Integers rounded to 0 or more decimals are a copy in NumPy's "K"
    # order: a transposed operand gives a transposed result.
    x = np.arange(24, dtype=np.int8).reshape(2, 3, 4).transpose(0, 2, 1)
    for decimals in (0, 2):
        _same_layout(gp.round(gp.asarray(x), decimals), np.round(x, decimals))
        _same_layout(gp.asarray(x).round(decimals), x.round(decimals))


def test_conjugate_and_nan_to_num_are_laid_out_as_numpys(gpu):
    # conjugate of real numbers is a ufunc's result (the operand's order,
    # a broadcast axis carrying none); nan_to_num a copy as np.array makes
    # it (a broadcast axis fastest), replacements written into it.
    row = np.array([1.0, np.nan, np.inf], dtype=np.float32)
    for x in (np.arange(6, dtype=np.int16).reshape(2, 3).T, np.broadcast_to(row, (2, 3)),
              np.broadcast_to(row, (4, 3)).T.astype(np.float64).T):
        g = gp.asarray(x)
        _same_layout(gp.conjugate(g), np.conjugate(x))
        _same_layout(gp.nan_to_num(g), np.nan_to_num(x))


def test_copies_of_broadcast_views_are_laid_out_as_numpys(gpu):
    """A new array made like a view (astype, copy, array, *_like: NumPy's
    PyArray_NewLikeArray) sorts the view's axes by their steps, a
    broadcast axis (step 0) the fastest -- not as the iterator of an
    elementwise result does, where it carries no step. So a copy of a
    broadcast row is Fortran-ordered, and its C-order reshape a copy."""
    row, col = np.arange(3.0), np.arange(2.0)[:, None]
    cases = [(row, (2, 3), None), (col, (2, 3), None), (row, (2, 4, 3), None), (row, (4, 2, 3), (1, 2, 0)),
             (col[::-1], (2, 2), (1, 0))]
    for source, shape, axes in cases:
        x = np.broadcast_to(source, shape).transpose(axes)
        made = gp.broadcast_to(gp.array(source), shape).transpose(axes)  # a gpupy view
        lent = gp.asarray(x)  # NumPy's view, lent
        for g in (made, lent):
            for call in (lambda m, y: y.astype(np.float32), lambda m, y: y.astype(y.dtype),
                         lambda m, y: y.copy(order="K"), lambda m, y: m.copy(y, order="K"), lambda m, y: m.array(y),
                         lambda m, y: m.zeros_like(y), lambda m, y: m.add(y, 1), lambda m, y: y.sum(axis=0)):
                _same_layout(call(gp, g), call(np, x))
            want, got = x.astype(bool), g.astype(bool)
            assert np.shares_memory(want, want.reshape(1, -1)) == gp.shares_memory(got, got.reshape(1, -1))


def test_asarray_of_an_ndarray_views_its_memory(gpu):
    base = np.arange(48.0).reshape(6, 8)
    for view in (base, base[::2, 1::3], base[::-1], base.T, base[2, 3:4], base[1, 1, ...]):
        g = gp.asarray(view)
        assert gp.shares_memory(g, view) and np.shares_memory(g, view)
        assert gp.shares_memory(g, base) == np.shares_memory(view, base)
        g[...] = -1.0  # gpupy's write reaches NumPy's array
        assert (view == -1.0).all()
        view[...] = 7.0  # and NumPy's reaches gpupy's
        np.testing.assert_array_equal(np.asarray(g), np.full(view.shape, 7.0))
        assert g.strides == view.strides


def test_asarray_of_a_read_only_ndarray_is_read_only(gpu):
    h = np.arange(4.0)
    h.flags.writeable = False
    g = gp.asarray(h)
    with pytest.raises(ValueError, match="read-only"):
        g[0] = 1.0
    with pytest.raises(ValueError, match="read-only"):
        gp.add(g, 1, out=g)


def test_writes_through_asarray_of_a_memmap_reach_the_file(gpu, tmp_path):
    path = tmp_path / "data.bin"
    m = np.memmap(path, dtype="float32", mode="w+", shape=(4,))
    g = gp.asarray(m)
    g[:] = 7
    gp.multiply(g, 2, out=g)
    m.flush()
    np.testing.assert_array_equal(np.fromfile(path, dtype="float32"), [14.0] * 4)
    del g, m


def test_out_into_an_ndarray_or_its_asarray_writes_its_memory(gpu):
    c7 = np.zeros(3)
    c8 = gp.asarray(c7)
    gp.multiply(gp.asarray(np.arange(3.0)), 2, out=c8)
    np.testing.assert_array_equal(c7, [0.0, 2.0, 4.0])
    out = np.zeros(3)
    assert gp.add(gp.ones(3), 1, out=out) is out
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
    assert gp.stats()["fallbacks"] == 0


def test_a_view_of_an_ndarray_made_by_a_gpupy_function_sees_its_writes(gpu):
    e = np.sin(np.array([True, False]))  # float16: an ndarray, handed through
    c = e.astype("float64")
    w = gp.squeeze(c)
    c[...] = 5
    np.testing.assert_array_equal(np.asarray(w), [5.0, 5.0])


def test_lazy_expressions_keep_the_values_of_ndarray_memory_they_were_built_from(gpu):
    h = np.arange(6.0)
    g = gp.asarray(h)
    before = g * 2  # lazy (the fixture keeps work lazy): a snapshot of h
    h[0] = 100.0  # NumPy's write, after the expression was built
    np.testing.assert_array_equal(np.asarray(before), np.arange(6.0) * 2)
    np.testing.assert_array_equal(np.asarray(g * 2), h * 2)  # built after: sees it
    np.testing.assert_array_equal(np.asarray(g), h)


def test_ndarray_memory_nobody_else_holds_is_read_without_a_snapshot(gpu):
    g = gp.asarray(np.arange(6.0))  # the ndarray is gpupy's alone
    snapshots = gp.stats()["export_snapshots"]
    np.testing.assert_array_equal(np.asarray(g * 2 + g), np.arange(6.0) * 3)
    assert gp.stats()["export_snapshots"] == snapshots
    h = np.arange(6.0)
    g = gp.asarray(h)  # h is still the caller's: expressions read snapshots
    np.testing.assert_array_equal(np.asarray(g * 2), h * 2)
    assert gp.stats()["export_snapshots"] == snapshots + 1


def test_one_expression_reading_ndarray_memory_twice_takes_one_snapshot(gpu):
    h = np.arange(8.0)
    g = gp.asarray(h)  # h is the caller's: expressions on it read snapshots
    snapshots = gp.stats()["export_snapshots"]
    d = g[1:] - g[:-1]
    assert gp.stats()["export_snapshots"] == snapshots + 1
    h[:] = 0.0
    np.testing.assert_array_equal(np.asarray(d), np.ones(7))


def test_out_into_a_gathered_array_reaches_its_views(gpu):
    a0 = gp.asarray(np.arange(96.0).reshape(8, 12))
    n0 = np.arange(96.0).reshape(8, 12)
    w1, v1 = a0[:, np.array([-2, -4, -4])], n0[:, np.array([-2, -4, -4])]
    c3, d3 = gp.asarray(w1), np.asarray(v1)
    w8, v8 = w1[...].T.reshape(-1)[4:6], v1[...].T.reshape(-1)[4:6]
    assert gp.shares_memory(w8, w1) == np.shares_memory(v8, v1)
    gp.negative(c3, out=c3)
    np.negative(d3, out=d3)
    np.testing.assert_array_equal(np.asarray(w8), v8)
    np.testing.assert_array_equal(np.asarray(w1), v1)


def test_a_whole_assignment_from_lent_memory_copies_it(gpu):
    x0, x1 = gp.asarray(np.array(False)), gp.asarray(np.array(True))
    x0[()] = x1
    assert not gp.shares_memory(x0, x1)
    x1[()] = False
    assert bool(x0) is True


def test_shares_memory_agrees_with_numpy(gpu):
    a = np.arange(24.0).reshape(4, 6)
    g = gp.array(a)
    m = np.arange(24.0).reshape(4, 6)
    lent = gp.asarray(m)
    numpy_side = [a, a[::2], a[1::2], a[:, 1:3], a[:, 3:], a.T, a.copy(), a.ravel(), a.T.ravel(), a[0], a[:, 0],
                  m, m[::2], m[1::2], m.T]
    gpupy_side = [g, g[::2], g[1::2], g[:, 1:3], g[:, 3:], g.T, g.copy(), g.ravel(), g.T.ravel(), g[0], g[:, 0],
                  lent, lent[::2], m[1::2], lent.T]
    for i, (x, y) in enumerate(zip(numpy_side, gpupy_side)):
        for u, v in zip(numpy_side[i:], gpupy_side[i:]):
            assert gp.shares_memory(y, v) == np.shares_memory(x, u)
            assert gp.may_share_memory(y, v) == np.may_share_memory(x, u)
    export = np.asarray(g)  # NumPy's view of gpupy's memory
    assert gp.shares_memory(export, g) and np.shares_memory(export, g[1:])
    assert gp.shares_memory(gp.asarray(export), g)


def test_copyto_from_an_export_of_its_own_memory_reads_the_source_first(gpu):
    # copyto(flip(x), np.asarray(x)): the source is the target's own memory
    # under another owner; NumPy copies as if it read the source first
    # (found by the fuzzer, tiny blocks: the copy read what it had written).
    for block in (None, 7):
        if block:
            gp.set_block_size(block)
            gp.set_cache_bytes(256)
        h = np.array([[1, 2, 3]], np.int8)
        x = gp.array(h)
        export = np.asarray(x)
        export[0, 0] = 0
        gp.copyto(gp.flip(x), export)
        want = h.copy()
        want[0, 0] = 0
        np.copyto(np.flip(want), want.copy())
        np.testing.assert_array_equal(np.asarray(x), want)


def test_a_partial_write_from_a_view_of_lent_memory_reads_the_view(gpu):
    # The value is read through a snapshot of the elements the view reads;
    # the snapshot's own layout, not the view's, is what is read (found by
    # the fuzzer and by the strided-copy tests).
    src = (np.arange(6 * 7)[::-1] % 5).astype(np.int16).reshape(6, 7)
    views = [lambda x: x[2:, :-2], lambda x: x[::-1, 2:][1:5], lambda x: x[:1, :5], lambda x: x[None, :1, 2:],
             lambda x: x.T[1:6, :4].T]
    for view in views:
        want = np.zeros((6, 7), np.int16)
        a, b = gp.zeros((6, 7), np.int16), gp.asarray(src)
        want[1:-1, 1:-1] = view(src)
        a[1:-1, 1:-1] = view(b)
        np.testing.assert_array_equal(np.asarray(a), want)
