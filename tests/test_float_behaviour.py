"""The OpenGL driver measures its device's float arithmetic at start
(drivers/opengl/float_probe.cpp) and generates code for what it found.

GLSL allows `/` to 2.5 ulp, sqrt() to a few ulp and float32 subnormals to be
flushed; llvmpipe does none of that, NVIDIA's driver all three. The paths a
GPU takes are run here in the driver's GPU-like build (GPUPY_GL_FLOAT_PROBE):
its shaders really flush float32 subnormals and round `/` and sqrt() up to
2 ulp off, and the probe finds that; in fresh processes, since the driver
reads the setting at start. Every result is compared bit for bit with
NumPy's.
"""
import json
import os

import numpy as np
import pytest

from fresh_python import run_python

# Each test takes the `opengl` fixture: skipped where the driver is
# unavailable (the children then could not use it either).

# A child that computes float32/float64 quotients, reciprocals and roots on
# the device (placement forced) and reports bitwise equality with NumPy,
# where each ran (counters) and the driver's description.
CHILD = r"""
import json, sys
import numpy as np
import gpupy as gp
gp.set_fallback("silent")
gp.set_eager_threshold(0)   # no eager NumPy for small operations
gp.set_host_threshold(0)    # every evaluation on the device
rng = np.random.default_rng(7)
n = 1 << 16
bits = rng.integers(0x12800000, 0x6c800000, n, dtype=np.uint32)
a32 = bits.view(np.float32)   # every float32 in [2^-90, 2^90): quotients stay normal
b32 = (rng.random(n) * 1e3 + 1e-3).astype(np.float32)
squares = (np.arange(1, n + 1, dtype=np.float32) ** 2)  # exact roots
sub = np.array([1e-45, -1e-45, 1.1754942e-38, 5e-39], dtype=np.float32)
a64 = rng.random(n) * 1e6 + 1e-6
b64 = rng.random(n) * 1e3 + 1e-3
out = {}
def same(name, got, want):
    got = np.asarray(got)
    out[name] = bool(got.dtype == want.dtype and got.tobytes() == want.tobytes())
gp.reset_stats()
same("divide32", gp.asarray(a32) / gp.asarray(b32), a32 / b32)
same("reciprocal32", gp.reciprocal(gp.asarray(b32)), np.reciprocal(b32))
same("sqrt32", gp.sqrt(gp.asarray(a32)), np.sqrt(a32))
same("sqrt32_exact_roots", gp.sqrt(gp.asarray(squares)), np.sqrt(squares))
out["float32_host_evaluations"] = gp.stats()["host_evaluations"]
same("subnormals32", gp.asarray(sub) * gp.asarray(np.float32(1.0)) + gp.asarray(sub), sub * np.float32(1.0) + sub)
gp.reset_stats()
same("divide64", gp.asarray(a64) / gp.asarray(b64), a64 / b64)
same("sqrt64", gp.sqrt(gp.asarray(a64)), np.sqrt(a64))
out["float64_host_evaluations"] = gp.stats()["host_evaluations"]
out["describe"] = gp._core.driver_describe()
print(json.dumps(out))
"""


def run_child(findings=None, policy=None, dump=None):
    env = dict(os.environ, GPUPY_DRIVER="opengl", GPUPY_PLACEMENT="device")
    for key, value in (("GPUPY_GL_FLOAT_PROBE", findings), ("GPUPY_FLOAT32_SUBNORMALS", policy),
                       ("GPUPY_GL_DUMP_SHADERS", dump)):
        env.pop(key, None)
        if value is not None:
            env[key] = value
    r = run_python(["-c", CHILD], env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    out["stderr"] = r.stderr
    return out


def described(out, key):
    for line in out["describe"].splitlines():
        if line.strip().startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"describe() has no {key} line:\n{out['describe']}")


RESULTS = ("divide32", "reciprocal32", "sqrt32", "sqrt32_exact_roots", "divide64", "sqrt64")
FLUSH_NOTE = "GPUPY_FLOAT32_SUBNORMALS=exact computes float32 on the host"


def test_what_the_device_measured_is_described_and_results_match_numpy(opengl):
    out = run_child()
    subnormals = described(out, "float32_subnormals")
    assert subnormals in ("kept", "flushed (GPUPY_FLOAT32_SUBNORMALS=exact keeps them, on the host)")
    # A device that flushes says so once, on stderr, unless the user chose.
    assert (FLUSH_NOTE in out["stderr"]) == (subnormals != "kept")
    for key in ("float32_division", "float32_sqrt"):
        assert described(out, key) in ("exact", "approximate (corrected)")
    assert described(out, "float64_division") in ("exact", "approximate (on the host)", "none")
    # (float64's root has a correctly rounded routine: NVIDIA's needs it)
    assert described(out, "float64_sqrt") in ("exact", "approximate (corrected)", "none")
    for name in RESULTS:
        assert out[name], name
    assert out["subnormals32"] == (subnormals == "kept")


def test_approximate_division_and_sqrt_are_corrected_to_numpys_rounding(opengl, tmp_path):
    out = run_child(findings="division_inexact,sqrt_inexact,float64_division_inexact", dump=str(tmp_path))
    assert described(out, "float32_division") == "approximate (corrected)"
    assert described(out, "float32_sqrt") == "approximate (corrected)"
    for name in RESULTS:
        assert out[name], name
    # float32 ran on the device, through the correctly rounded routines.
    assert out["float32_host_evaluations"] == 0
    shaders = "".join(p.read_text() for p in tmp_path.iterdir())
    assert "gp__div_rn(" in shaders and "gp__sqrt_rn(" in shaders
    # float64's root has one too (glsl_runtime/float64_roots.glsl); its
    # division has none and ran on the host.
    if described(out, "float64_division") != "none":
        assert described(out, "float64_sqrt") == "approximate (corrected)"
        assert "gpo_sqrt_rn_f64(" in shaders
        assert out["float64_host_evaluations"] == 1


def test_the_gpu_like_build_is_what_the_probe_finds(opengl):
    """The findings are measured, not pretended: each word changes the
    shaders, and the probe sees exactly what was built loose -- and, of
    what no word names, what the device does by itself (llvmpipe: exact,
    subnormals kept; a GPU may flush and round loosely already)."""
    device = run_child()
    out = run_child(findings="division_inexact")
    assert described(out, "gpu_like_floats") == "division_inexact"
    assert described(out, "float32_division") == "approximate (corrected)"
    assert described(out, "float32_subnormals") == described(device, "float32_subnormals")
    flush = run_child(findings="subnormals_flushed")
    for key in ("float32_division", "float32_sqrt"):
        assert described(flush, key) == described(device, key)
    # The flush is real: a subnormal operand of a product reads as zero.
    assert not flush["subnormals32"]
    for name in RESULTS:
        assert out[name] and flush[name], name


def test_flushed_subnormals_are_said_and_exact_puts_float32_on_the_host(opengl):
    # The default: float32 on the device, the flush said once.
    out = run_child(findings="subnormals_flushed")
    assert described(out, "float32_subnormals") == "flushed (GPUPY_FLOAT32_SUBNORMALS=exact keeps them, on the host)"
    assert FLUSH_NOTE in out["stderr"]
    assert out["float32_host_evaluations"] == 0
    # Accepted: the same, without the note.
    accepted = run_child(findings="subnormals_flushed", policy="flush")
    assert described(accepted, "float32_subnormals") == "flushed (accepted)"
    assert FLUSH_NOTE not in accepted["stderr"]
    assert accepted["float32_host_evaluations"] == 0
    # NumPy's subnormals asked for: float32 runs on the host, exactly.
    exact = run_child(findings="subnormals_flushed", policy="exact")
    assert described(exact, "float32_subnormals") == "flushed by the device (float32 runs on the host)"
    assert FLUSH_NOTE not in exact["stderr"]
    assert exact["float32_host_evaluations"] >= 4
    for name in RESULTS + ("subnormals32",):
        assert exact[name], name


@pytest.mark.parametrize("env", [{"GPUPY_FLOAT32_SUBNORMALS": "sometimes"}, {"GPUPY_GL_FLOAT_PROBE": "fast"}])
def test_a_wrong_setting_is_reported(opengl, env):
    name = next(iter(env))
    base = {k: v for k, v in os.environ.items() if k != "GPUPY_DRIVER"}
    # The OpenGL driver asked for by name: its error, naming the setting.
    code = "import gpupy as gp; print('DRIVER', gp.driver())"
    r = run_python(["-c", code], env=dict(base, GPUPY_DRIVER="opengl", **env), timeout=120)
    assert r.returncode != 0 and "DriverError" in r.stderr and name in r.stderr, (r.stdout, r.stderr)
    # The default choice: the software driver, with a message saying why.
    r = run_python(["-c", code], env=dict(base, **env), timeout=120)
    assert r.returncode == 0 and "DRIVER software" in r.stdout, (r.stdout, r.stderr)
    assert name in r.stderr
