"""Several Python threads using gpupy at once (docs/threads.md): shared
read-only inputs, private arrays written in place, evaluation triggered from
any thread, host fallbacks in between, under the tiny-cache settings. NumPy's
values, no deadlock, no error."""

import threading

import numpy as np
import pytest

import gpupy as gp
from gpupy import _fallback

THREADS = 4
PROGRAMS = 60
JOIN_SECONDS = 300


def program(rng, shared, shared_np):
    """One random program on private arrays reading the shared ones; returns
    (gpupy results, NumPy results)."""
    n = int(rng.integers(1, shared_np.size))
    x_np = rng.standard_normal(n)
    x = gp.asarray(x_np)
    y, y_np = x * 2 + shared[:n], x_np * 2 + shared_np[:n]
    # float64 sin: the OpenGL driver has no double transcendentals, so this
    # is host evaluation (the core's fallback hook) in the middle of it all.
    z, z_np = gp.where(y > 0, gp.sin(y), y ** 2), np.where(y_np > 0, np.sin(y_np), y_np ** 2)
    x[::2] = z[::2]
    x_np[::2] = z_np[::2]
    s, s_np = (x - 1.5).cumsum(), (x_np - 1.5).cumsum()
    k = int(rng.integers(0, n))
    return ([np.asarray(x), np.asarray(s), gp.argmax(z), x[k], shared[::-3].sum()],
            [x_np, s_np, np.argmax(z_np), x_np[k], shared_np[::-3].sum()])


@pytest.mark.parametrize("block,cache", [(7, 256), (64, 2048), (None, None)])
def test_threads_running_programs_agree_with_numpy(gpu, silent_fallback, block, cache):
    if block is not None:
        gp.set_block_size(block)
        gp.set_cache_bytes(cache)
    shared_np = np.random.default_rng(0).standard_normal(300)
    shared = gp.asarray(shared_np)
    failures = []

    def worker(seed):
        rng = np.random.default_rng(seed)
        try:
            for i in range(PROGRAMS):
                got, want = program(rng, shared, shared_np)
                for g, w in zip(got, want):
                    np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12, atol=1e-12 * shared_np.size)
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            failures.append(f"thread {seed}, program {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_SECONDS)
    assert not any(t.is_alive() for t in threads), "a thread is still running: deadlock"
    assert not failures, failures
    np.testing.assert_array_equal(np.asarray(shared), shared_np)  # read-only inputs untouched


def test_the_fallback_hook_runs_outside_evaluations(gpu, silent_fallback):
    """The core calls Python (the fallback hook) only once an evaluation is
    complete: a hook that itself evaluates gpupy expressions -- as another
    thread could while the hook runs -- finds the core consistent."""
    seen = []

    def hook(name):
        _fallback._note_host_evaluation(name)
        a = gp.arange(50.0)
        seen.append((name, float((a * 3)[::-7].sum())))

    gp._core.set_host_evaluation_hook(hook)
    try:
        gp.set_block_size(7)
        gp.set_cache_bytes(256)
        x = gp.asarray(np.linspace(0.1, 1, 40))
        # float64 sin runs on the host on the OpenGL driver; on the software
        # driver, the host engine runs what the driver declines, if anything.
        got = np.asarray(gp.sin(x) * 2 + 1)
        np.testing.assert_array_equal(got, np.sin(np.linspace(0.1, 1, 40)) * 2 + 1)
    finally:
        gp._core.set_host_evaluation_hook(_fallback._note_host_evaluation)
    expected = float((np.arange(50.0) * 3)[::-7].sum())
    assert all(v == expected for _, v in seen), seen
    if not gpu.declares("sin", np.float64):
        assert seen and seen[0][0] == "sin"


def test_raise_mode_refuses_before_host_work(gpu):
    """With fallback mode "raise" the core refuses a host evaluation before
    doing it: the array stays lazy and a later evaluation counts it."""
    if gpu.declares("sin", np.float64):
        pytest.skip("the driver runs float64 sin itself")
    x = gp.sin(gp.asarray(np.linspace(0.1, 1, 7)))
    with pytest.raises(gp.FallbackError):
        np.asarray(x)
    before = gp.stats()["host_evaluations"]
    with gp.fallback_mode("silent"):
        np.testing.assert_array_equal(np.asarray(x), np.sin(np.linspace(0.1, 1, 7)))
    assert gp.stats()["host_evaluations"] == before + 1
