"""NumPy-differential fuzzing (programs.py) in the normal suite: a small
budget of programs per driver under five settings -- the defaults, tiny
blocks with a tiny cache, one operation per evaluation, the library's
own placement of small work (NumPy at once, the host engine), every
setting as a default process has it, and NumPy's default error state with
the floating-point warnings compared. The long
campaign (docs/testing.md) runs the same programs by the hundred thousand:
    pytest tests/fuzz --hypothesis-profile=long
or, surviving crashes, python tests/fuzz/campaign.py.
"""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gpupy as gp
from programs import Mismatch, Program

# The eager threshold a default process uses (read before any test changes it).
LIBRARY_EAGER = gp.eager_threshold()

SETTINGS = {
    # Siblings (several outputs per evaluation) from one element on: the
    # programs' small arrays meet them as large ones do.
    "defaults": {"siblings_from": 1},
    "tiny-cache": {"block_size": 7, "cache_bytes": 256, "siblings_from": 1},
    # Blocks of 64 elements in a 2 KiB cache: several blocks per array, and
    # evictions in the middle of an evaluation.
    "small-blocks": {"block_size": 64, "cache_bytes": 2048, "siblings_from": 1},
    "one-op": {"max_ops": 1, "siblings_from": 1},
    # The library's own placement: small work on host values in NumPy at
    # once, small evaluations on the host engine (the fixture turns both off).
    "placed": {"eager": 1024, "host": None},
    # Everything as a user meets it: the thresholds the cost model (or the
    # driver) chose for this process, siblings from their default size.
    "library": {"eager": LIBRARY_EAGER, "host": None},
    # Built in NumPy's default error state: gpupy's floating-point warnings
    # must be among NumPy's.
    "warnings": {"siblings_from": 1, "warnings": True},
}


def apply(gpu, name):
    s = SETTINGS[name]
    if "block_size" in s:
        gp.set_block_size(s["block_size"])
    if "cache_bytes" in s:
        gp.set_cache_bytes(s["cache_bytes"])
    if "max_ops" in s:
        gpu.option("max_ops", s["max_ops"])
    if "eager" in s:
        gp.set_eager_threshold(s["eager"])
        gp.set_host_threshold(s["host"])


@pytest.fixture
def siblings_default():
    previous = gp._core.set_sibling_min_elements(1 << 14)
    gp._core.set_sibling_min_elements(previous)
    yield
    gp._core.set_sibling_min_elements(previous)


@pytest.mark.parametrize("setting", sorted(SETTINGS))
def test_programs_agree_with_numpy(gpu, silent_fallback, siblings_default, setting):
    apply(gpu, setting)
    if "siblings_from" in SETTINGS[setting]:
        gp._core.set_sibling_min_elements(SETTINGS[setting]["siblings_from"])

    ran = [0]

    @settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                    HealthCheck.function_scoped_fixture])
    @given(st.data())
    def run(data):
        program = Program(data, signed_zeros=gpu.name != "opengl", warnings=SETTINGS[setting].get("warnings", False))
        try:
            program.run()
            ran[0] += 1  # completed (hypothesis also stops draws that exceed its budget)
        except Mismatch as e:
            raise Mismatch(f"{e}\nprogram ({gpu.name}, {setting}):\n{program.report()}") from None

    hits_before = gp.stats().get("program_cache_hits", 0)
    run()
    if gpu.name == "opengl" and setting == "defaults":
        # The suite checks program keys (GPUPY_GL_CHECK_PROGRAM_KEYS): every
        # program the fuzzer's graphs found in the cache by key was written
        # again from the graph and compared with the cached source, so
        # graphs with equal keys produced identical shaders. Some must have.
        assert gp._core.driver_describe().count("check_program_keys: yes") == 1
        assert gp.stats().get("program_cache_hits", 0) > hits_before
    # For the campaign (pytest -s): how many programs agreed with NumPy.
    print(f"\nfuzz programs agreed: {ran[0]} ({gpu.name}, {setting})")
