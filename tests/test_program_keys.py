"""The OpenGL driver's program cache is keyed by the IR's structure, a key
written beside the code writer rather than derived from it. The suite runs
with GPUPY_GL_CHECK_PROGRAM_KEYS (conftest.py): every program found in the
cache is generated again and its source compared, so a decision of the
writer that the key leaves out fails the evaluation that would have reused
a wrong program. Here a key is made to miss one on purpose (the test hook
debug_glsl_append_unkeyed) and the check must catch it."""
import os

import numpy as np
import pytest

import gpupy as gp


def test_the_suite_checks_program_keys():
    assert os.environ.get("GPUPY_GL_CHECK_PROGRAM_KEYS") == "1"


def test_a_key_that_misses_a_decision_of_the_writer_is_caught(opengl):
    a = gp.asarray(np.arange(1000, dtype=np.float32))
    first = np.asarray(a * 3 + 1)  # compiled and cached
    opengl.option("debug_glsl_append_unkeyed", "// a decision the key does not record")
    with pytest.raises(Exception, match="two programs share one key"):
        np.asarray(a * 5 + 2)  # the same structure: the cached program's key
    opengl.option("debug_glsl_append_unkeyed", "default")
    np.testing.assert_array_equal(np.asarray(a * 7 + 3), np.arange(1000, dtype=np.float32) * 7 + 3)
    np.testing.assert_array_equal(first, np.arange(1000, dtype=np.float32) * 3 + 1)
