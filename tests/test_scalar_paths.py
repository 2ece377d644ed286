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


@pytest.mark.parametrize("dtype", [np.int8, np.bool_, np.uint64])
@pytest.mark.parametrize("value", [2**63, 2**63 - 1, -3])
def test_numbers_into_an_ndarray_out_are_numpys(gpu, dtype, value):
    # NumPy's ufunc writes numbers into its own array: 2**63 alone is a
    # uint64, which int8 takes (same kind) and bool refuses (UFuncTypeError).
    want, got = np.zeros(3, dtype), np.zeros(3, dtype)
    try:
        np.negative(value, out=want)
    except TypeError as e:
        with pytest.raises(type(e)):
            gp.negative(value, out=got)
        return
    assert gp.negative(value, out=got) is got
    np.testing.assert_array_equal(got, want)


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


# --- element keys and values: the conversions `a[i]` and `a[i] = v` do
# without NumPy (Python and NumPy integers, exact-dtype scalars) must give
# NumPy's value, or NumPy's exception class, for every kind of key and value.

KEYS = [3, -1, np.int64(2), np.uint8(1), np.array(4), np.uint64(2**63 + 5), 2**70, -2**70]


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_integer_keys_read_and_write_as_numpy(gpu, key):
    want = np.arange(6.0)
    got = gp.asarray(want.copy())
    for op in (lambda a: a[key], lambda a: a.__setitem__(key, 9.0)):
        try:
            expected = op(want)
        except Exception as e:
            with pytest.raises(type(e)):
                op(got)
            continue
        assert repr(op(got)) == repr(expected)
    np.testing.assert_array_equal(got, want)


VALUES = [1.5, -0.0, float("nan"), 7, -2**53, 2**53 + 1, 2**63, -1, 300, True, np.float64(2.5), np.float32(0.1),
          np.int64(-4), np.uint64(2**64 - 1), np.int8(-3), np.bool_(True), np.array(6), np.uint8(200),
          np.int16(-300), np.uint16(65535), np.int32(-2**31), np.uint32(2**32 - 1), np.float64(-0.0)]


@pytest.mark.parametrize("value", VALUES, ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int8", "uint64", "bool", "uint8", "int16",
                                   "uint16", "int32", "uint32"])
def test_element_writes_convert_as_numpy(gpu, dtype, value):
    want = np.zeros(4, dtype)
    got = gp.zeros(4, dtype)
    got[0]  # evaluated: the write goes to host memory in place
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore")
        try:
            want[1] = value
        except Exception as e:
            with pytest.raises(type(e)):
                got[1] = value
            return
        got[1] = value
    assert repr(got[1]) == repr(want[1])
    np.testing.assert_array_equal(got, want)


VIEWS = {
    "whole": lambda x: x,
    "transposed": lambda x: x.transpose(2, 0, 1),
    "reversed": lambda x: x[::-1, :, ::-2],
    "offset and stepped": lambda x: x[1:, 1::2, 2:],
}


@pytest.mark.parametrize("view", VIEWS, ids=str)
def test_element_keys_of_python_ints_on_views(gpu, view):
    # `a[i, j, k]` with one Python int per dimension takes the element's
    # offset straight from the key: every element of every layout is read
    # and written where NumPy reads and writes it.
    want = np.arange(4 * 5 * 6, dtype=np.float64).reshape(4, 5, 6)
    got = gp.asarray(want.copy())
    w, g = VIEWS[view](want), VIEWS[view](got)
    for idx in np.ndindex(*w.shape):
        neg = tuple(i - n for i, n in zip(idx, w.shape))
        assert repr(g[idx]) == repr(w[idx]) and repr(g[neg]) == repr(w[neg])
        value = float(sum(idx)) + 0.5
        w[idx] = value
        g[neg] = value
    np.testing.assert_array_equal(got, want)
    for bad in [(w.shape[0], 0, 0), (0, -w.shape[1] - 1, 0), (0, 0, 10**6), (0, 0, 2**70)]:
        for op in (lambda a: a[bad], lambda a: a.__setitem__(bad, 1.0)):
            with pytest.raises(IndexError) as e_np:
                op(w)
            with pytest.raises(IndexError) as e_gp:
                op(g)
            assert str(e_gp.value) == str(e_np.value)
    np.testing.assert_array_equal(got, want)  # nothing written by a failed key


def test_element_writes_into_read_only_and_lazy_arrays(gpu):
    a = gp.arange(6.0).reshape(2, 3)
    b = a * 2  # lazy
    b[1, 2] = np.float64(-1.0)
    assert b[1, 2] == -1.0 and b[0, 1] == 2.0
    np.testing.assert_array_equal(a, np.arange(6.0).reshape(2, 3))  # a is not b's storage
    r = gp.broadcast_to(gp.arange(3.0), (2, 3))
    with pytest.raises(ValueError, match="read-only"):
        r[0, 1] = 5.0
    c = gp.zeros((2, 2))
    c[0, 1] = gp.asarray(np.float64(3.0)) + 1  # a 0-d gpupy value stays lazy
    np.testing.assert_array_equal(c, [[0.0, 4.0], [0.0, 0.0]])


def test_operators_of_the_c_slots_behave_as_numpys(gpu, silent_fallback):
    """The operators and indexing run as the type's C slots: reflected
    operands, in-place forms, comparisons, deletion and three-argument
    pow as NumPy."""
    x = np.arange(1.0, 5.0)
    g = gp.asarray(x)
    for f in (lambda a: 2 - a, lambda a: a - 2, lambda a: 2.0 ** a, lambda a: a ** 2, lambda a: -a, lambda a: abs(-a),
              lambda a: a <= 2, lambda a: 3 > a, lambda a: a == 2, lambda a: a != 2, lambda a: 7 % a, lambda a: a // 2):
        np.testing.assert_array_equal(np.asarray(f(g)), f(x))
    h = g.copy()
    h **= 2
    h -= 1
    np.testing.assert_array_equal(h, x ** 2 - 1)
    with pytest.raises(ValueError, match="cannot delete array elements"):
        del g[0]
    with pytest.raises(TypeError):
        pow(g, 2, 3)
    with pytest.raises(TypeError):
        g + object()

    class Other:
        # NumPy's protocol for deferring: binary operators give way.
        __array_ufunc__ = None

        def __radd__(self, other):
            return "Other.__radd__"

    assert g + Other() == "Other.__radd__"


def test_ufunc_objects_call_through_their_c_slot(gpu, silent_fallback):
    """gpupy's ufunc objects are called through the C base type's slot
    (the plain form straight to the core) or `_call` (every other form):
    both give NumPy's results, and the objects pickle by name."""
    import pickle

    x = np.array([1.0, 4.0, 9.0])
    g = gp.asarray(x)
    assert isinstance(gp.sqrt, gp._core.ufunc_base)
    np.testing.assert_array_equal(np.asarray(gp.sqrt(g)), np.sqrt(x))  # the slot
    assert gp.sqrt(np.float64(16.0)) == 4.0 and type(gp.sqrt(np.float64(16.0))) is np.float64
    out = gp.zeros(3)
    assert gp.add(g, 1.0, out=out) is out  # a keyword: `_call`
    np.testing.assert_array_equal(np.asarray(out), x + 1)
    np.testing.assert_array_equal(np.asarray(gp.add(g, [1, 2, 3])), x + [1, 2, 3])
    got = gp.add(g, np.array([1j, 0, 0]))  # complex: NumPy's, through `_call`
    np.testing.assert_array_equal(got, x + np.array([1j, 0, 0]))
    with pytest.raises(TypeError):
        gp.sqrt(g, g, g, g)  # too many arguments: NumPy's TypeError
    for f in (gp.add, gp.sqrt, gp.gcd, gp.degrees, gp.divmod):
        assert pickle.loads(pickle.dumps(f)) is f
