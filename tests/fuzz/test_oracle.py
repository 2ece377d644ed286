"""The fuzzer's oracle itself: what it accepts as NumPy's answer for float
sums in another order (programs._sum_bound, programs._compare) and for
integers that are a float array's memory."""

import numpy as np
import pytest

from programs import Mismatch, Slot, _compare, _sum_bound

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
