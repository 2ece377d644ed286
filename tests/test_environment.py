"""The settings the Python side reads from the environment (gpupy/_environment.py):
a value it does not accept stops the import with an error naming the
variable, what it accepts and what it got, as the core's settings do; unset
or empty is the default."""

import os

import pytest

from gpupy import _environment
from fresh_python import run_python

# Every setting the package parses from the environment, a value it
# refuses, and the words that say what it accepts.
REFUSED = [
    ("GPUPY_FALLBACK", "loud", "must be one of 'silent', 'warn', 'raise', got 'loud'"),
    ("GPUPY_PLACEMENT", "sideways", "must be one of 'auto', 'host', 'device', got 'sideways'"),
    ("GPUPY_CALIBRATION", "sometimes", "must be one of 'auto', 'refresh', 'off', got 'sometimes'"),
    ("GPUPY_CALIBRATION_BUSY_RATIO", "busy", "must be a number >= 0, got 'busy'"),
    ("GPUPY_CALIBRATION_AGREEMENT", "-0.5", "must be a number >= 0, got '-0.5'"),
]


@pytest.mark.parametrize("name, value, words", REFUSED)
def test_a_bad_value_stops_the_import_and_says_what_is_accepted(name, value, words, tmp_path):
    proc = run_python(["-c", "import gpupy"], dict(os.environ, GPUPY_CACHE_DIR=str(tmp_path), **{name: value}),
                      timeout=300)
    assert proc.returncode != 0
    assert f"ValueError: {name} {words}" in proc.stderr, proc.stderr


def test_a_choice_takes_any_case_and_spaces(monkeypatch):
    monkeypatch.setenv("GPUPY_TEST_CHOICE", " Warn ")
    assert _environment.choice("GPUPY_TEST_CHOICE", ("silent", "warn")) == "warn"


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_or_empty_is_the_default(monkeypatch, value):
    if value is None:
        monkeypatch.delenv("GPUPY_TEST_SETTING", raising=False)
    else:
        monkeypatch.setenv("GPUPY_TEST_SETTING", value)
    assert _environment.choice("GPUPY_TEST_SETTING", ("auto", "off")) == "auto"
    if value != "  ":
        assert _environment.number("GPUPY_TEST_SETTING", 1.5) == 1.5
        assert not _environment.is_set("GPUPY_TEST_SETTING")
        assert _environment.text("GPUPY_TEST_SETTING") is None
        assert _environment.word("GPUPY_TEST_SETTING") is None


@pytest.mark.parametrize("value", ["nan", "-1", "1,5", "x"])
def test_a_number_refuses_what_is_not_one(monkeypatch, value):
    monkeypatch.setenv("GPUPY_TEST_NUMBER", value)
    with pytest.raises(ValueError, match=f"GPUPY_TEST_NUMBER must be a number >= 0, got '{value}'"):
        _environment.number("GPUPY_TEST_NUMBER", 1.0)


def test_a_number_is_read_as_given(monkeypatch):
    monkeypatch.setenv("GPUPY_TEST_NUMBER", "1000")
    assert _environment.number("GPUPY_TEST_NUMBER", 1.0) == 1000.0


def test_a_word_is_a_name_in_lower_case(monkeypatch):
    monkeypatch.setenv("GPUPY_TEST_WORD", " Software ")
    assert _environment.word("GPUPY_TEST_WORD") == "software"


def test_only_this_module_reads_the_environment():
    """The other modules of the package ask _environment, so each setting
    has one reading and one wording of its errors."""
    from pathlib import Path

    package = Path(_environment.__file__).resolve().parent
    readers = sorted(p.name for p in package.glob("*.py")
                     if p.name != "_environment.py" and ("os.environ" in p.read_text() or "getenv" in p.read_text()))
    assert readers == []
