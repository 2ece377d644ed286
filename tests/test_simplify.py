"""Constant folding (src/core/building/simplify.cpp): an op whose operands
all have one value everywhere is computed once, as NumPy would, and the
array is a constant; exact, no reassociation, nothing folded from a constant
array that was written to."""
import warnings

import numpy as np
import pytest

import gpupy as gp

N = 3000  # more than one element, a lazy array (the fixture turns eager work off)


def ops_of(a):
    return [i["op"] for i in gp._core._ir(a, 0)]


# A folded array is the constant cast to its dtype, or, when hash-consing
# finds that array evaluated already, a load of its values: no operation.
FOLDED = (["const", "astype"], ["load"])


SPECIALS = {
    "float32": [2.5, -0.0, np.nan, np.inf, -3.0, 1e-45],
    "float64": [2.5, -0.0, np.nan, -np.inf, 7.0, 5e-324],
    "int8": [127, -128, 3, 0],
    "uint16": [65535, 0, 9],
    "int64": [2**63 - 1, -(2**63), 5, 0],
    "bool": [True, False],
}
BINARY = ["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum", "minimum", "fmax",
          "less", "equal", "not_equal", "logical_and"]
UNARY = ["negative", "absolute", "sqrt", "floor", "rint", "sign", "logical_not", "square", "reciprocal"]


def gpupy_runs(gpu, name, dtype):
    """Whether this driver computes the ufunc for the dtype itself (else
    gpupy hands it to NumPy, which the fixture's raise mode refuses)."""
    try:
        getattr(gp, name)(*[gp.full(4, 1, dtype)] * getattr(np, name).nin).__array__()
        return True
    except (gp.FallbackError, TypeError):  # TypeError: NumPy has no loop either
        return False


def numpy_or_error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            try:
                return fn(), None
            except TypeError as e:  # the ufunc has no loop for the dtype
                return None, type(e)




@pytest.mark.parametrize("dtype", sorted(SPECIALS))
def test_ops_on_constant_arrays_fold_to_numpys_value(gpu, dtype):
    values = SPECIALS[dtype]
    checked = 0
    for name in BINARY:
        if not gpupy_runs(gpu, name, dtype):
            continue
        for x in values:
            for y in values[:3]:
                want, err = numpy_or_error(lambda: getattr(np, name)(np.full(N, x, dtype), np.full(N, y, dtype)))
                if err:
                    continue
                with np.errstate(all="ignore"):
                    got = getattr(gp, name)(gp.full(N, x, dtype), gp.full(N, y, dtype))
                assert ops_of(got) in FOLDED, (name, x, y, ops_of(got))
                gpu.assert_same(got, want, inputs=(x, y), flushed=gpu.numpys_result_flushed(
                    getattr(np, name), np.full(N, x, dtype), np.full(N, y, dtype)))
                # The fold finds NumPy's floating-point errors, as it is built.
                gpu.assert_warns_as_numpy(
                    gpu.warnings_of(lambda: getattr(gp, name)(gp.full(N, x, dtype), gp.full(N, y, dtype))),
                    getattr(np, name), np.full(N, x, dtype), np.full(N, y, dtype))
                checked += 1
    for name in UNARY:
        if not gpupy_runs(gpu, name, dtype):
            continue
        for x in values:
            want, err = numpy_or_error(lambda: getattr(np, name)(np.full(N, x, dtype)))
            if err:
                continue
            with np.errstate(all="ignore"):
                got = getattr(gp, name)(gp.full(N, x, dtype))
            assert ops_of(got) in FOLDED, (name, x, ops_of(got))
            gpu.assert_same(got, want, inputs=(x,),
                            flushed=gpu.numpys_result_flushed(getattr(np, name), np.full(N, x, dtype)))
            gpu.assert_warns_as_numpy(gpu.warnings_of(lambda: getattr(gp, name)(gp.full(N, x, dtype))),
                                      getattr(np, name), np.full(N, x, dtype))
            checked += 1
    assert checked > 20


def test_a_chain_with_python_scalars_reaches_the_shader_as_one_constant(gpu):
    a = gp.full(N, 2, np.float32) * 3 + 1
    assert ops_of(a) == ["const", "astype"]
    gpu.assert_same(a, np.full(N, 2, np.float32) * 3 + 1)
    # Where a real array takes part, the constants stay as they were built:
    # (x + 1) + 2 is not x + 3 in floating point.
    h = np.linspace(-1, 1, N).astype(np.float32)
    b = (gp.asarray(h) + 1) + 2
    assert ops_of(b).count("add") == 2
    gpu.assert_same(b, (h + np.float32(1)) + np.float32(2))


def test_math_library_functions_are_not_folded(gpu):
    a = gp.exp(gp.full(N, 0.5, np.float32))
    assert "exp" in ops_of(a)


def test_a_written_constant_array_is_not_folded(gpu):
    z = gp.zeros(N, np.float32)
    z[5] = 4
    w = z + 1
    assert "add" in ops_of(w)
    want = np.zeros(N, np.float32)
    want[5] = 4
    gpu.assert_same(w, want + np.float32(1))


def test_an_evaluated_constant_array_still_folds(gpu):
    # Reading a constant array evaluates it; it is still the constant (the
    # evaluator keeps its operand), so what is built on it later folds --
    # also when hash-consing hands the evaluated node to a new full().
    z = gp.full(N, 7, np.int64)
    # (Read, not exported: an export could be written through, so it makes
    # the bytes the array's value, test_exports.py.)
    assert np.array_equal(z.__array__(), np.full(N, 7, np.int64))
    for again in (z, gp.full(N, 7, np.int64)):
        w = again - 2
        assert ops_of(w) in FOLDED
        gpu.assert_same(w, np.full(N, 5, np.int64))
    z[0] = 1  # written in place: no longer one value
    assert "subtract" in ops_of(z - 2)


def test_folding_happens_once_per_node(gpu):
    gp.reset_stats()
    with np.errstate(divide="ignore"):
        a = gp.full(N, 3, np.int32) // 0
        b = gp.full(N, 3, np.int32) // 0
    with np.errstate(all="ignore"):
        want = np.full(N, 3, np.int32) // 0
    gpu.assert_same(a, want)
    gpu.assert_same(b, want)
    # Each fold is one evaluation of one element; reading the arrays is none
    # (a constant array is filled, not computed).
    assert gp.stats()["evaluations"] + gp.stats()["host_engine_evaluations"] <= 4
