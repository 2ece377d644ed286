"""Numbers stay NumPy's: arithmetic on Python and NumPy scalars and 0-d
ndarrays runs eagerly in NumPy, makes no lazy node and gives NumPy's type,
so a Python loop over elements costs what it costs in NumPy."""

import numpy as np
import pytest

import gpupy as gp


def nodes():
    return gp.stats()["nodes_created"]  # cumulative: tests take differences

NUMBERS = [np.float64(0.25), np.float32(-1.5), np.int8(-3), np.uint64(2**64 - 1), np.bool_(True), 7, -2.5,
           np.array(4, np.int16), 2**63]


@pytest.mark.parametrize("x", NUMBERS, ids=repr)
@pytest.mark.parametrize("name", ["tanh", "negative", "absolute", "sqrt", "invert"])
def test_unary_ufuncs_of_numbers_are_numpys(gpu, silent_fallback, name, x):
    gp.reset_stats()
    before = nodes()
    try:
        want = getattr(np, name)(x)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(gp, name)(x)
        return
    got = getattr(gp, name)(x)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)
    s = gp.stats()
    assert s["nodes_created"] == before and s["evaluations"] == 0 and s["fallbacks"] == 0, s


@pytest.mark.parametrize("x", NUMBERS, ids=repr)
@pytest.mark.parametrize("y", [np.float32(2.0), 3, np.int64(-1), 0.5], ids=repr)
@pytest.mark.parametrize("name", ["add", "multiply", "floor_divide", "less", "maximum"])
def test_binary_ufuncs_of_numbers_are_numpys(gpu, silent_fallback, name, x, y):
    with np.errstate(all="ignore"):
        try:
            want = getattr(np, name)(x, y)
        except Exception as e:
            with pytest.raises(type(e)):
                getattr(gp, name)(x, y)
            return
        before = nodes()
        got = getattr(gp, name)(x, y)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)
    assert nodes() == before


def test_out_argument_with_numbers(gpu):
    out = gp.zeros(3, np.int8)
    assert gp.add(1, np.int8(2), out=out) is out
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 3, np.int8))
    with pytest.raises(TypeError):  # float64 into int8 is not a same-kind cast
        gp.add(1.5, 2, out=out)


def test_a_loop_over_elements_builds_no_graph(gpu):
    h = np.random.default_rng(0).random((50, 50))
    a = gp.asarray(h)
    np.asarray(a)  # a's values on the host: reading elements evaluates nothing more
    gp.reset_stats()
    before = nodes()
    trace = 0.0
    for i in range(50):
        trace += gp.tanh(a[i, i])
    assert nodes() == before and gp.stats()["evaluations"] == 0
    assert type(trace) is np.float64
    assert trace == sum(np.tanh(h[i, i]) for i in range(50))
