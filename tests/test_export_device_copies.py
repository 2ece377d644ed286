"""Device copies kept through exports (src/core/building/export_watch.hpp).

Handing an array's bytes to NumPy (`np.asarray(g)`) lets NumPy write them
unseen. The device copy is kept, and used again only when the bytes are
found unchanged once the last export has ended; while an export lives,
expressions read one snapshot of the bytes for as long as they stay the
same, and that snapshot takes the device copy. Every test writes through
an export somewhere and checks that gpupy sees exactly what NumPy would,
and counts the uploads where nothing was written.
"""

import numpy as np
import pytest

import gpupy as gp


def _board(n=64):
    return (np.random.default_rng(0).random((n, n)) < 0.3).astype(np.uint8)


def _on_device(h):
    """A gpupy array computed on the device (the gpu fixture keeps work there)."""
    g = gp.asarray(h) ^ 1
    g.sum()  # evaluated there, not read back
    return g


def _uploads():
    return gp.stats()["bytes_uploaded"]


def _step(b):
    """Life's neighbour count: eight rolls of one array."""
    return sum(gp.roll(gp.roll(b, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))


def _np_step(b):
    return sum(np.roll(np.roll(b, i, 0), j, 1) for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))


def test_a_result_read_back_keeps_its_device_copy(gpu):
    h = _board()
    b = _on_device(h)
    np.asarray(b)  # an export, ended at once
    before, kept = _uploads(), gp.stats()["exports_kept_device_copies"]
    got = np.asarray(b + 1)
    np.testing.assert_array_equal(got, (h ^ 1) + 1)
    assert _uploads() == before
    assert gp.stats()["exports_kept_device_copies"] == kept + 1


def test_a_loop_reading_its_result_every_step_uploads_nothing_after_the_first(gpu):
    h = _board()
    b, ref = gp.asarray(h), h.copy()
    frames = []
    for step in range(4):
        b, ref = (_step(b) == 3).astype(np.uint8), (_np_step(ref) == 3).astype(np.uint8)
        frames.append(np.asarray(b))  # every frame kept: the exports live on
        if step == 0:
            after_first = _uploads()
    np.testing.assert_array_equal(frames[-1], ref)
    assert _uploads() == after_first
    assert gp.stats()["device_copies_adopted"] >= 3


def test_a_write_through_an_ended_export_is_seen(gpu):
    h = _board()
    b = _on_device(h)
    e = np.asarray(b)
    e[0, 0] = 99
    del e
    want = (h ^ 1) + 1
    want[0, 0] = 100
    np.testing.assert_array_equal(np.asarray(b + 1), want)
    assert gp._core._cached_blocks(b) <= 1


def test_writes_through_a_live_export_reach_only_what_is_built_after_them(gpu):
    h = _board()
    b = _on_device(h)
    e = np.asarray(b)
    first = b + 1  # reads the bytes as they are now
    e[...] = 5
    second = b + 1
    e[0, 0] = 7
    third = b * 1
    np.testing.assert_array_equal(np.asarray(first), (h ^ 1) + 1)
    np.testing.assert_array_equal(np.asarray(second), np.full_like(h, 6))
    want = np.full_like(h, 5)
    want[0, 0] = 7
    np.testing.assert_array_equal(np.asarray(third), want)
    del e
    np.testing.assert_array_equal(np.asarray(b - 1), want - 1)


def test_one_snapshot_serves_every_node_built_while_the_bytes_are_unchanged(gpu):
    h = _board()
    b = _on_device(h)
    e = np.asarray(b)
    taken, reused = gp.stats()["export_snapshots"], gp.stats()["snapshots_reused"]
    parts = [gp.roll(b, k, 0) for k in range(1, 5)]
    assert gp.stats()["export_snapshots"] == taken + 1
    assert gp.stats()["snapshots_reused"] == reused + 3
    e[1, 1] = 42  # a change: the next node takes a new snapshot
    later = gp.roll(b, 1, 0)
    assert gp.stats()["export_snapshots"] == taken + 2
    for k, p in enumerate(parts, 1):
        np.testing.assert_array_equal(np.asarray(p), np.roll(h ^ 1, k, 0))
    changed = h ^ 1
    changed[1, 1] = 42
    np.testing.assert_array_equal(np.asarray(later), np.roll(changed, 1, 0))


def test_two_exports_one_writes_after_the_other_ended(gpu):
    h = _board()
    b = _on_device(h)
    e1, e2 = np.asarray(b), np.asarray(b)
    assert np.shares_memory(e1, e2)
    del e1
    e2[3, 3] = 200
    mid = b + 0
    del e2
    want = h ^ 1
    want[3, 3] = 200
    np.testing.assert_array_equal(np.asarray(mid), want)
    np.testing.assert_array_equal(np.asarray(b * 1), want)


def test_an_export_of_a_view_writes_through_to_the_array(gpu):
    h = _board()
    b = _on_device(h)
    v = np.asarray(b[2:, ::2])
    v[0, 0] = 77
    del v
    want = h ^ 1
    want[2, 0] = 77
    np.testing.assert_array_equal(np.asarray(b + 0), want)


def test_an_export_exported_again_before_anything_ran_is_checked_first(gpu):
    h = _board()
    b = _on_device(h)
    e = np.asarray(b)
    e[5, 5] = 11
    del e  # ended, not yet checked
    e = np.asarray(b)  # checked here: the device copy is stale
    del e
    want = h ^ 1
    want[5, 5] = 11
    np.testing.assert_array_equal(np.asarray(b + 0), want)


def test_an_expression_built_before_the_export_is_not_found_again_after_a_write(gpu):
    h = _board().astype(np.float32)
    a = gp.asarray(h)
    c = a * 2
    c.sum()  # on the device; c's operands released once it is complete
    e = np.asarray(c)
    e[...] = -1
    del e
    np.testing.assert_array_equal(np.asarray(a * 2), h * 2)  # not c's bytes
    np.testing.assert_array_equal(np.asarray(c), np.full_like(h, -1))


def test_a_gpupy_write_after_an_ended_export_wins(gpu):
    h = _board()
    b = _on_device(h)
    np.asarray(b)
    b[0, :] = 3
    want = h ^ 1
    want[0, :] = 3
    np.testing.assert_array_equal(np.asarray(b + 0), want)


@pytest.mark.parametrize("block", [64, 1 << 22])
def test_under_small_blocks_and_a_tiny_cache(gpu, block):
    gp.set_block_size(block)
    gp.set_cache_bytes(4096 if block == 64 else 1 << 30)
    h = _board(32)
    b = _on_device(h)
    frames, ref = [], h ^ 1
    for _ in range(3):
        frames.append(np.asarray(b))
        frames[-1][0, 0] ^= 1  # NumPy writes every frame
        ref = ref.copy()
        ref[0, 0] ^= 1
        b, ref = (_step(b) == 3).astype(np.uint8), (_np_step(ref) == 3).astype(np.uint8)
    np.testing.assert_array_equal(np.asarray(b), ref)


def test_products_of_ndarrays_handed_to_gpupy_upload_them_once(gpu):
    """A product reads its operands through broadcast views (a[:, None, :]):
    the snapshot of lent memory is of the array, reused while its bytes are
    unchanged -- not a copy of the n-times-larger view, taken per product."""
    saved = gp.get_placement()
    gp.set_placement("device")
    try:
        rng = np.random.default_rng(1)
        ha, hb = rng.random((48, 40), dtype=np.float32), rng.random((40, 56), dtype=np.float32)
        a, b = gp.asarray(ha), gp.asarray(hb)  # views of NumPy's memory, which NumPy may write
        first = _uploads()
        np.testing.assert_allclose(np.asarray(a @ b), ha @ hb, rtol=1e-5)
        assert _uploads() - first <= ha.nbytes + hb.nbytes  # the arrays, not their broadcasts
        before = _uploads()
        for _ in range(3):
            np.testing.assert_allclose(np.asarray(a @ b), ha @ hb, rtol=1e-5)
        assert _uploads() == before
        hb[0, 0] = 7.0  # written through NumPy: the next product sees it
        np.testing.assert_allclose(np.asarray(a @ b), ha @ hb, rtol=1e-5)
    finally:
        gp.set_placement(saved)
