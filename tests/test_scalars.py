"""Scalar results: where NumPy gives a scalar -- a
reduction over every axis, a ufunc of 0-d operands, a product of vectors --
gpupy gives a 0-d array that behaves as NumPy's scalar (round, hash, dict
keys, format, repr; immutable; in-place operators rebind) and stays lazy
until a value is asked for. docs/ecosystem.md, "Scalars"."""

import numpy as np
import pytest

import gpupy as gp

BIG = 1 << 15


def _data():
    return np.linspace(-3, 5, BIG).astype(np.float32)


def _ints():
    return (np.arange(BIG) % 97 - 40).astype(np.int32)


@pytest.mark.parametrize("reduce", [lambda x: x.sum(), lambda x: x.max(), lambda x: x.min(),
                                    lambda x: x[:8].prod(), lambda x: gp.sum(x) if isinstance(x, gp.ndarray) else
                                    np.sum(x), lambda x: x.mean(), lambda x: x.std(), lambda x: (x * x).sum(),
                                    lambda x: x[:4] @ x[:4], lambda x: x.reshape(2, -1).sum(axis=None),
                                    lambda x: x.argmax(), lambda x: (x > 3).any(), lambda x: x.astype(np.float32).max()],
                         ids=["sum", "max", "min", "prod", "gp.sum", "mean", "std", "sum_sq", "vdot", "axis_none",
                              "argmax", "any", "float_max"])
def test_results_where_numpy_gives_scalars_are_scalars(gpu, reduce):
    n = _ints()
    g = gp.asarray(n)
    s, want = reduce(g), reduce(n)
    assert isinstance(want, np.generic)
    if isinstance(s, np.generic):  # a small result NumPy computed at once: NumPy's own scalar
        assert type(s) is type(want)
    else:
        assert s._is_scalar and s.ndim == 0 and not s.flags.writeable
    assert s.dtype == want.dtype
    np.testing.assert_allclose(float(s), float(want), rtol=1e-12)
    if want.dtype.kind == "f":
        assert repr(s).startswith(repr(want).partition("(")[0] + "(")  # np.float64(...)
    else:  # exact values: the same hash, the same dict key
        assert repr(s) == repr(want)
        assert hash(s) == hash(want)
        assert {s: "k"}[want] == "k"


def test_scalars_stay_lazy_until_a_value_is_asked_for(gpu):
    g = gp.asarray(_data())
    gp.reset_stats()
    s = g.sum()
    t = s * 2 + 1
    assert gp.stats()["evaluations"] == 0
    assert t._is_scalar  # a ufunc of 0-d operands, as NumPy's scalar arithmetic
    float(t)
    assert gp.stats()["evaluations"] >= 1


def test_common_scalar_idioms(gpu):
    n = _ints().astype(np.float64) / 4  # sums exact in any order
    g = gp.asarray(n)
    total, want = g.sum(), n.sum()
    assert round(total) == round(want) and isinstance(round(total), int)
    assert round(total, 2) == round(want, 2)
    assert f"{total:.3f}" == f"{want:.3f}"
    assert f"{total}" == f"{want}"
    assert float(total) == float(want) and int(g.max()) == int(n.max())
    assert sorted({g.max(), g.max(), g.min()}) == sorted({n.max(), n.min()})
    assert range(gp.arange(5).sum())[-1] == 9
    assert [1, 2, 3][gp.arange(3).max()] == 3


def test_scalars_are_immutable_as_numpy_scalars(gpu):
    g = gp.asarray(_data())
    s = g.sum()
    with pytest.raises(TypeError, match="does not support item assignment"):
        s[()] = 1
    before = s
    s += 1  # rebinds, as for a NumPy scalar
    assert s is not before and float(s) == float(before) + 1
    s **= 2
    assert s._is_scalar


def test_arrays_stay_arrays(gpu):
    g = gp.asarray(_data())
    assert not g.sum(axis=0, keepdims=True)._is_scalar
    assert not g.reshape(2, -1).sum(axis=1)._is_scalar
    z = gp.zeros(())  # an explicit 0-d array is an array, writable and unhashable, as NumPy's
    z[()] = 3
    z += 1
    assert float(z) == 4 and not z._is_scalar
    with pytest.raises(TypeError, match="unhashable"):
        hash(z)
    with pytest.raises(TypeError, match="unhashable"):
        hash(g)
    out = gp.zeros(())
    assert gp.add(gp.ones(()), 1, out=out) is out and not out._is_scalar


def test_scalars_are_numbers_as_numpys_are(gpu):
    """isinstance(x, numbers.Real) -- how Dask's reductions and other
    libraries tell a scalar from an array -- is what it is for the NumPy
    scalar NumPy gives there; arrays are never numbers, and type(x) stays
    GpuArray (its __class__ is a subclass only scalars show)."""
    import numbers

    data, ints = gp.asarray(_data()), gp.asarray(_ints())
    for got, want in [(data.sum(), _data().sum()), (ints.sum(), _ints().sum()), ((ints > 0).all(), (_ints() > 0).all()),
                      (ints.argmax(), _ints().argmax()), ((data * data).max(), (_data() * _data()).max())]:
        assert type(got) is gp.GpuArray and isinstance(got, gp.GpuArray)
        for abc in (numbers.Number, numbers.Complex, numbers.Real, numbers.Integral):
            assert isinstance(got, abc) == isinstance(want, abc), (want, abc)
        assert issubclass(got.__class__, gp.GpuArray)
    for array in (data, gp.zeros(()), ints.sum(axis=0, keepdims=True), data[:1]):
        assert not isinstance(array, numbers.Number) and array.__class__ is gp.GpuArray
    assert not isinstance(data, np.ndarray) and not isinstance(data.sum(), np.ndarray)
    with pytest.raises(AttributeError):
        data.sum().__class__ = gp.GpuArray
