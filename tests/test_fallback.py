"""Fallback you can see: the mode ("silent", "warn", "raise"; GPUPY_FALLBACK
or gpupy.set_fallback), the per-function counters in gpupy.stats(), the
GpupyFallbackWarning pointing at the user's line, FallbackError instead of
a result computed on the CPU (nothing written back, nothing counted) while
input NumPy rejects raises NumPy's own error -- on every path by which
gpupy hands work to NumPy.

Every test runs on each available driver (the `gpu` fixture, which starts
in "raise" mode and restores every setting afterwards).
"""

import io
import os
import sys
import warnings

import numpy as np
import pytest

import gpupy as gp
from fresh_python import run_python


def fallbacks():
    return gp.stats()["fallbacks_by_function"]


def vec(n=6, dtype=np.float32):
    return gp.asarray(np.arange(n, dtype=dtype) - 2)


# Every path from gpupy to NumPy, and the name it is counted under. Each
# entry builds fresh inputs, so it can run once per mode.
def _paths():
    def host_ufunc():
        return gp.gcd(gp.arange(6), 4)

    def numpy_host_ufunc():
        return np.gcd(gp.arange(6), 4)

    def ufunc_method():
        # (reduceat is a host placement: tests/test_host_placements.py)
        return np.add.outer(vec(), vec(), dtype=np.float64)

    def ufunc_at():
        a = vec()
        np.negative.at(a, [0, 1])  # (binary ufuncs' .at run on the device)
        return a

    def complex_operand():
        return vec() + 1j

    def wrapper():
        return gp.nanmedian(vec())

    def array_function():
        return np.nanmedian(vec())

    def array_function_unlisted():
        # a NumPy function gpupy's namespace does not wrap by name
        return np.lib.stride_tricks.sliding_window_view(vec(), 2)

    def submodule():
        return gp.fft.fft(vec())

    def random_function():
        return gp.random.rand(3)

    def random_method():
        return gp.random.default_rng(0).random(3)

    def method():
        return vec().byteswap()  # (sort and partition run on the device or are placements)

    def getitem():
        a = vec()
        return a[a > 0, ...]  # (a mask alone is gathered: gpupy/_indexing_reads.py)

    def setitem():
        a = vec()
        a[None, [0, 2]] = 0  # (masks and integer arrays alone are selects: gpupy/_indexing_writes.py)
        return a

    def mutating():
        a = vec()
        np.put_along_axis(a, np.array([0]), 5, axis=0)  # (put, place, putmask run on the device)
        return a

    def index_helper():
        return gp.r_[vec(), vec()]

    def vectorized():
        return gp.vectorize(lambda x: x + 1)(vec())

    def masked():
        return gp.ma.masked_greater(vec(), 0)

    def flat_assignment():
        a = vec()
        a.flat[[0, 2]] = 7
        return a

    return [
        ("gcd", host_ufunc), ("gcd", numpy_host_ufunc), ("add.outer", ufunc_method), ("negative.at", ufunc_at),
        ("add", complex_operand), ("nanmedian", wrapper), ("nanmedian", array_function),
        ("lib.stride_tricks.sliding_window_view", array_function_unlisted), ("fft.fft", submodule),
        ("random.rand", random_function), ("random.Generator.random", random_method), ("ndarray.byteswap", method),
        ("__getitem__", getitem), ("__setitem__", setitem), ("put_along_axis", mutating), ("r_", index_helper),
        ("vectorize", vectorized), ("ma.masked_greater", masked), ("flat.__setitem__", flat_assignment),
    ]


PATHS = _paths()
PATH_IDS = [f"{name}-{f.__name__}" for name, f in PATHS]


# --- the mode ------------------------------------------------------------------------------------

class TestMode:
    def test_modes_and_previous_value(self, gpu):
        assert gp.get_fallback() == "raise"
        assert gp.set_fallback("warn") == "raise"
        assert gp.get_fallback() == "warn"
        assert gp.set_fallback("silent") == "warn"
        assert gp.set_fallback("raise") == "silent"

    @pytest.mark.parametrize("bad", ["loud", "", None, "RAISE"])
    def test_bad_mode_is_rejected(self, gpu, bad):
        with pytest.raises(ValueError, match="fallback mode"):
            gp.set_fallback(bad)
        assert gp.get_fallback() == "raise"

    def test_context_manager_restores_even_on_error(self, gpu):
        with pytest.raises(ZeroDivisionError):
            with gp.fallback_mode("silent"):
                assert gp.get_fallback() == "silent"
                gp.nanmedian(vec())
                1 / 0
        assert gp.get_fallback() == "raise"

    def test_classes(self):
        assert issubclass(gp.FallbackError, RuntimeError)
        assert issubclass(gp.GpupyFallbackWarning, UserWarning)
        assert gp.FallbackError.__module__.startswith("gpupy")
        assert gp.GpupyFallbackWarning.__module__.startswith("gpupy")

    def test_config_shows_the_mode(self, gpu):
        out = io.StringIO()
        sys_stdout, sys.stdout = sys.stdout, out
        try:
            gp.show_config()
        finally:
            sys.stdout = sys_stdout
        assert "fallback mode: raise" in out.getvalue()


def _run_with_env(code, value):
    return run_python(["-W", "error", "-c", code], dict(os.environ, GPUPY_FALLBACK=value, GPUPY_DRIVER="software"))


class TestEnvironment:
    CODE = ("import gpupy as gp, warnings\n"
            "print(gp.get_fallback())\n"
            "try:\n"
            "    with warnings.catch_warnings(record=True) as w:\n"
            "        warnings.simplefilter('always')\n"
            "        gp.nanmedian(gp.arange(5.0))\n"
            "    print(len(w), w[0].category.__name__ if w else '-')\n"
            "except gp.FallbackError:\n"
            "    print('FallbackError')\n"
            "print(gp.stats()['fallbacks_by_function'])\n")

    @pytest.mark.parametrize("value, lines", [
        ("silent", ["silent", "0 -", "{'nanmedian': 1}"]),
        ("warn", ["warn", "1 GpupyFallbackWarning", "{'nanmedian': 1}"]),
        ("raise", ["raise", "FallbackError", "{}"]),
        (" Raise ", ["raise", "FallbackError", "{}"]),
        ("", ["silent", "0 -", "{'nanmedian': 1}"]),
    ])
    def test_gpupy_fallback_variable(self, value, lines):
        proc = _run_with_env(self.CODE, value)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split("\n")[:3] == lines

    def test_bad_value_fails_the_import(self):
        proc = _run_with_env("import gpupy", "loud")
        assert proc.returncode != 0
        assert "GPUPY_FALLBACK must be one of" in proc.stderr


# --- every path is counted, warned about, refused ----------------------------------------------

class TestEveryPath:
    @pytest.mark.parametrize("name, path", PATHS, ids=PATH_IDS)
    def test_counted_under_its_name(self, gpu, name, path):
        with gp.fallback_mode("silent"):
            gp.reset_stats()
            path()
            counts = fallbacks()
        assert counts.get(name, 0) >= 1, counts
        assert gp.stats()["fallbacks"] == sum(counts.values())

    @pytest.mark.parametrize("name, path", PATHS, ids=PATH_IDS)
    def test_raise_mode_refuses(self, gpu, name, path):
        gp.reset_stats()
        with pytest.raises(gp.FallbackError, match="gpupy would run .* in NumPy on the CPU"):
            path()
        assert fallbacks() == {}

    @pytest.mark.parametrize("name, path", PATHS, ids=PATH_IDS)
    def test_warning_points_at_the_caller(self, gpu, name, path):
        with gp.fallback_mode("warn"):
            with pytest.warns(gp.GpupyFallbackWarning) as record:
                path()
        assert any(name in str(w.message) for w in record), [str(w.message) for w in record]
        # The warning names the line that called gpupy/NumPy (in this file), not gpupy's internals.
        assert {w.filename for w in record} == {__file__}

    def test_counts_accumulate_and_reset(self, gpu):
        with gp.fallback_mode("silent"):
            gp.reset_stats()
            for _ in range(3):
                gp.nanmedian(vec())
            np.nanmedian(vec())
            gp.fft.fft(vec())
            assert fallbacks() == {"nanmedian": 4, "fft.fft": 1}
            assert gp.stats()["fallbacks"] == 5
            gp.reset_stats()
            assert fallbacks() == {} and gp.stats()["fallbacks"] == 0

    def test_raise_happens_before_any_write(self, gpu):
        a = vec()
        before = np.array(a)
        with pytest.raises(gp.FallbackError):
            np.put_along_axis(a, np.array([0]), 99, axis=0)
        with pytest.raises(gp.FallbackError):
            gp.random.shuffle(a)
        with pytest.raises(gp.FallbackError):
            a[None, [0, 1]] = -1
        np.testing.assert_array_equal(np.asarray(a), before)

    @pytest.mark.parametrize("bad", [
        lambda: gp.median(vec(), axis=3),
        lambda: np.median(vec(), axis=3),
        lambda: gp.linalg.inv(vec()),
        lambda: vec()[[0, 10]],
        lambda: vec()["a"],
        lambda: vec().__setitem__([0, 1], [1, 2, 3]),
        lambda: gp.gcd(vec(), 2),
        lambda: gp.gcd(),
        lambda: np.add.reduceat(vec(), [0, 99]),
        lambda: np.put(vec(), [99], 1),
        lambda: vec().sort(axis=2),
        lambda: gp.ma.masked_greater(vec(), "x"),
        lambda: setattr(vec(), "flat", [[1, 2], [3]]),
    ], ids=["median-axis", "np-median-axis", "inv-1d", "index-out-of-bounds", "index-str", "setitem-shape",
            "gcd-float", "gcd-no-args", "reduceat-bounds", "put-bounds", "sort-axis", "ma-str", "flat-ragged"])
    def test_bad_input_raises_numpys_error_in_every_mode(self, gpu, bad):
        """An error in the input is not work to hand to NumPy: NumPy's own
        exception in "raise" mode too, and nothing counted."""
        with gp.fallback_mode("silent"):
            with pytest.raises(Exception) as silent:
                bad()
        assert not isinstance(silent.value, gp.FallbackError)
        gp.reset_stats()
        with pytest.raises(type(silent.value)) as raised:
            bad()
        assert str(raised.value) == str(silent.value)
        assert fallbacks() == {}

    def test_raise_mode_does_not_draw_random_numbers(self, gpu):
        state = np.random.get_state()[1].copy()
        with pytest.raises(gp.FallbackError):
            gp.random.rand(3)
        np.testing.assert_array_equal(np.random.get_state()[1], state)

    def test_device_work_is_not_a_fallback(self, gpu):
        a = vec()
        b = (a * 2 + 1)[1:]
        np.copyto(a, 3.0, where=a > 0)
        r = np.where(a > 1, a, -a) + np.maximum(a, 0)
        float(np.asarray(r)[0] + np.asarray(b)[0])
        assert fallbacks() == {}


class TestNotFallbacks:
    """Reading values back to show or store them is not work the device
    could have done: allowed in raise mode, not counted."""

    def test_printing_and_saving(self, gpu, tmp_path):
        a = vec()
        repr(a), str(a), format(a), a.tolist(), list(a), np.asarray(a), np.array(a)
        np.array2string(a), np.array_repr(a), np.array_str(a), gp.array2string(a)
        np.save(tmp_path / "a.npy", a)
        np.savez(tmp_path / "b.npz", x=a, y=[a, a])
        np.savetxt(tmp_path / "c.txt", a)
        a.tobytes(), a.dumps()
        assert fallbacks() == {}
        np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.asarray(a))

    def test_reading_data_in(self, gpu, tmp_path):
        """Host data read in is like gpupy.array(list): an upload, not a fallback."""
        a = np.arange(6, dtype=np.float32)
        np.save(tmp_path / "a.npy", a)
        np.savetxt(tmp_path / "a.txt", a)
        a.tofile(tmp_path / "a.bin")
        for got in (gp.load(tmp_path / "a.npy"), gp.loadtxt(tmp_path / "a.txt", dtype=np.float32),
                    gp.genfromtxt(tmp_path / "a.txt", dtype=np.float32), gp.fromfile(tmp_path / "a.bin", np.float32),
                    gp.frombuffer(a.tobytes(), np.float32), gp.fromiter(range(6), np.float32)):
            assert isinstance(got, gp.GpuArray)
            np.testing.assert_array_equal(np.asarray(got), a)
        assert fallbacks() == {}

    def test_testing_functions_read_values(self, gpu):
        a = vec()
        gp.testing.assert_allclose(a, np.asarray(a))
        gp.testing.assert_array_equal(a, a)
        gp.testing.assert_equal(a, np.asarray(a))
        gp.testing.assert_array_less(a, a + 1)
        with pytest.raises(AssertionError):
            gp.testing.assert_array_equal(a, a + 1)
        assert fallbacks() == {}

    def test_metadata_questions(self, gpu):
        a = vec()
        assert gp.result_type(a, 1.0) == np.result_type(a.dtype, 1.0) == np.result_type(a, 1.0)
        assert np.can_cast(a, np.float64) and not gp.can_cast(a, np.int8)
        assert np.min_scalar_type(a) == a.dtype
        assert gp.min_scalar_type(gp.asarray(np.uint16(300))) == np.min_scalar_type(np.uint16(300))
        assert np.common_type(a) == np.float32
        assert not np.iscomplexobj(a) and np.isrealobj(a)
        assert np.may_share_memory(a, a[1:]) and not np.may_share_memory(a, vec())
        assert np.ndim(a) == 1 and np.shape(a) == (6,) and np.size(a) == 6
        assert np.isfortran(a) is False and gp.isscalar(a) is False and np.iterable(a)
        assert fallbacks() == {}

    def test_configuration_functions_are_numpys(self):
        for name in ("set_printoptions", "get_printoptions", "printoptions", "seterr", "geterr", "errstate",
                     "promote_types", "issubdtype", "finfo", "iinfo", "broadcast_shapes"):
            assert getattr(gp, name) is getattr(np, name)
        assert gp.random.seed is np.random.seed


class TestDriverDeclines:
    """An expression node whose op or dtype the driver declines is
    evaluated by NumPy -- the same visibility as a function fallback."""

    def test_declined_op_is_a_fallback(self, gpu):
        x = gp.asarray(np.linspace(0.1, 1, 7))  # float64
        if gpu.declares("sin", np.float64):
            np.testing.assert_array_equal(np.asarray(gp.sin(x)), np.sin(np.linspace(0.1, 1, 7)))
            assert fallbacks() == {}
            return
        with pytest.raises(gp.FallbackError):
            np.asarray(gp.sin(x))
        with gp.fallback_mode("silent"):
            np.testing.assert_array_equal(np.asarray(gp.sin(x)), np.sin(np.linspace(0.1, 1, 7)))
        assert fallbacks() == {"sin": 1}


# --- what a fallback says ---------------------------------------------------------------------------

_DANGLING = {"for", "of", "with", "to", "by", "in", "on", "from", "a", "an", "the", "and", "or", ""}


def _reason_literals():
    """Every reason string the package hands to call_numpy / note_fallback
    (the literal parts of f-strings too), with where it is."""
    import ast
    from pathlib import Path

    for path in sorted(Path(gp.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            texts = [k.value for k in node.keywords if k.arg == "reason"]
            if name == "note_fallback" and len(node.args) >= 2:
                texts.append(node.args[1])
            while texts:
                t = texts.pop()
                if isinstance(t, ast.IfExp):
                    texts += [t.body, t.orelse]
                elif isinstance(t, ast.Constant) and isinstance(t.value, str):
                    yield f"{path.name}:{node.lineno}", t.value
                elif isinstance(t, ast.JoinedStr):  # an f-string: each value read as a word
                    yield f"{path.name}:{node.lineno}", "".join(
                        v.value if isinstance(v, ast.Constant) else "VALUE" for v in t.values)


def test_every_fallback_reason_is_a_clause():
    reasons = list(_reason_literals())
    assert len(reasons) > 40
    for where, text in reasons:
        words = text.strip().split(" ")
        assert text.strip(), where
        # "gpupy runs X in NumPy on the CPU: <reason>." must read as a sentence.
        assert words[-1].lower() not in _DANGLING and not text.rstrip().endswith((",", ":")), (where, text)


def test_fallback_warnings_are_sentences_naming_the_function():
    from gpupy.lib.stride_tricks import sliding_window_view

    calls = {"gcd": lambda: gp.gcd(gp.arange(3), 2), "fft.fft": lambda: gp.fft.fft(gp.arange(4.0)),
             "lib.stride_tricks.sliding_window_view": lambda: sliding_window_view(gp.arange(5.0), 3),
             "full": lambda: gp.full(2, [1.0, 2.0])}
    with gp.fallback_mode("warn"):
        for name, call in calls.items():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                call()
            texts = [str(w.message) for w in caught if w.category is gp.GpupyFallbackWarning]
            assert texts, name
            for text in texts:
                assert text.startswith(f"gpupy runs {name} in NumPy on the CPU: ") and text.endswith("."), text
                assert text.split(": ", 1)[1].split()[-1].rstrip(".") not in _DANGLING, text


def test_python_m_gpupy_help_and_json():
    import json

    help_text = run_python(["-m", "gpupy", "--help"])
    assert help_text.returncode == 0 and "--json" in help_text.stdout and "driver:" not in help_text.stdout
    as_json = run_python(["-m", "gpupy", "--json"])
    assert as_json.returncode == 0, as_json.stderr
    config = json.loads(as_json.stdout)
    assert config["driver"] in ("opengl", "software") and config["block_size"] > 0 and config["device"]
    plain = run_python(["-m", "gpupy"])
    assert plain.stdout.startswith("gpupy ") and f"driver: {config['driver']}" in plain.stdout
