"""The fuzzer's oracle itself: what it accepts as NumPy's answer for float
sums in another order (programs._sum_bound, programs._compare) and for
integers that are a float array's memory, and what NumPy writes from another
library's 0-d array."""

import numpy as np
import pytest

from programs import Mismatch, Slot, _compare, _sum_bound, as_numpy_sees_a_foreign_value

F32 = np.float32


def check(ref, got, x, name="sum", axis=None):
    _compare(Slot(np.asarray(ref), np.asarray(got), name, exact=False, bound=_sum_bound(name, x, axis, False)), "")


def test_an_overflow_that_depends_on_the_order_is_not_compared():
    # -inf + 3e38 + 3e38: -inf summed left to right, NaN when the two 3e38
    # meet first (NumPy's pairwise order); both are right.
    x = np.array([0.0] * 21 + [-np.inf, 3e38, 3e38], dtype=F32)
    check(F32(np.nan), F32(-np.inf), x)
    check(F32(-np.inf), F32(np.nan), x)
    assert np.isnan(_sum_bound("cumsum", x, None, False)[-1])
    assert not np.isnan(_sum_bound("cumsum", x, None, False)[-2])  # 3e38 alone is in range


def test_infinite_inputs_decide_in_any_order():
    x = np.array([1.0, -np.inf, 2.0], dtype=F32)
    with pytest.raises(Mismatch):
        check(F32(-np.inf), F32(np.nan), x)
    y = np.array([np.inf, -np.inf], dtype=F32)
    with pytest.raises(Mismatch):
        check(F32(np.nan), F32(np.inf), y)


def test_finite_sums_are_held_to_the_bound():
    x = np.linspace(-1, 1, 100, dtype=F32)
    ref = np.sum(x)
    check(ref, ref, x)
    with pytest.raises(Mismatch):
        check(ref, ref + F32(0.5), x)  # the bound here: 4 * 100 * eps * sum(|x|) ~ 2.4e-3


def test_integers_over_float_memory_compare_as_those_floats():
    # 0/0 is -NaN on x86 (0xffc00000) and +NaN on a GPU: both are NaN. Any
    # other difference of bits is still one.
    ref = np.array([0xFFC00000 - (1 << 32), 0], dtype=np.int32)  # -NaN, +0.0
    got = np.array([0x7FC00000, 0], dtype=np.int32)
    slot = Slot(ref, got, "x.view(int32)")
    with pytest.raises(Mismatch):
        _compare(slot, "")
    slot.float_bits = np.dtype(np.float32)
    _compare(slot, "")
    slot.got = np.array([0x7FC00000, np.int32(-(1 << 31))], dtype=np.int32)  # +0.0 against -0.0
    with pytest.raises(Mismatch):
        _compare(slot, "")


@pytest.mark.parametrize("key", [(), 1, (Ellipsis,), slice(None)])
def test_one_element_set_from_another_librarys_0d_array_is_its_python_scalar(key):
    # NumPy casts its own 0-d uint8 255 into int8 (-1), but converts a gpupy
    # 0-d array with int(): 255, out of int8's range, raises OverflowError.
    import gpupy as gp

    target = np.zeros(() if key == () else 3, np.int8)
    value = np.array(255, np.uint8)
    seen = as_numpy_sees_a_foreign_value(target, key, value)
    element = not isinstance(target[key], np.ndarray)
    assert isinstance(seen, int) == element
    for v in (seen, gp.asarray(value)):
        t = target.copy()
        if element:
            with pytest.raises(OverflowError):
                t[key] = v
        else:
            t[key] = v
            assert (t[key] == -1).all()
