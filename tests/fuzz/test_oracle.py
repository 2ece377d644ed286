"""The fuzzer's oracle itself: what it accepts as NumPy's answer for float
sums in another order (programs._sum_bound, programs._compare)."""

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
