"""The Array API standard's entry points and DLPack
export. The public array-api-tests suite is run against gpupy from outside
the tree (benchmarks/README.md says how); this file checks the pieces gpupy
adds to NumPy's namespace."""

import numpy as np
import pytest

import gpupy as gp


def test_namespace_and_version(gpu):
    g = gp.arange(3.0)
    assert g.__array_namespace__() is gp
    assert g.__array_namespace__(api_version="2023.12") is gp
    with pytest.raises(ValueError, match="not supported"):
        g.__array_namespace__(api_version="1999.01")
    assert gp.__array_api_version__ == "2023.12"


def test_namespace_info(gpu):
    info = gp.__array_namespace_info__()
    assert info.devices() == [info.default_device()] == ["gpu"]
    assert info.capabilities()["boolean indexing"] and info.capabilities()["data-dependent shapes"]
    assert info.default_dtypes()["real floating"] == np.float64
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32", "uint64"]
    assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                  "float32", "float64"}
    assert list(info.dtypes(kind=("bool", "real floating"))) == ["bool", "float32", "float64"]
    with pytest.raises(ValueError):
        info.dtypes(kind="quaternion")


@pytest.mark.parametrize("make", [lambda d: gp.zeros(3, device=d), lambda d: gp.ones((2, 2), device=d),
                                  lambda d: gp.empty(2, device=d), lambda d: gp.full(2, 1.5, device=d),
                                  lambda d: gp.arange(4, device=d), lambda d: gp.linspace(0, 1, 5, device=d),
                                  lambda d: gp.asarray([1.0, 2.0], device=d), lambda d: gp.eye(2, device=d),
                                  lambda d: gp.zeros_like(gp.ones(2), device=d),
                                  lambda d: gp.full_like(gp.ones(2), 3, device=d)])
def test_device_on_creation(gpu, silent_fallback, make):
    g = gp.arange(2.0)
    for device in (None, g.device, "gpu", "cpu"):
        assert make(device).device == "gpu"
    with pytest.raises(ValueError, match="Device not understood"):
        make("tpu")


def test_to_device(gpu):
    g = gp.arange(3.0)
    assert g.to_device(g.device) is g and g.to_device("cpu") is g
    with pytest.raises(ValueError, match="Device not understood"):
        g.to_device("tpu")
    with pytest.raises(ValueError, match="stream"):
        g.to_device("gpu", stream=1)


@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64", "float32", "float64", "bool"])
def test_dlpack_export(gpu, dtype):
    n = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    g = gp.asarray(n) * 1 if dtype != "bool" else gp.asarray(n)
    assert g.__dlpack_device__() == (1, 0)
    got = np.from_dlpack(g)
    np.testing.assert_array_equal(got, n)
    # The array's own bytes, as the buffer protocol's export (test_exports.py),
    # writable where this NumPy's import of its own arrays is (NumPy 2.0
    # makes every import read-only).
    assert got.__array_interface__["data"][0] == np.asarray(g).__array_interface__["data"][0]
    assert got.flags.writeable == np.from_dlpack(n.copy()).flags.writeable
    if got.flags.writeable:
        got[0, 0] = 1
        assert g[0, 0] == 1
    assert type(g.__dlpack__()).__name__ == "PyCapsule"  # a consumer before DLPack 1.0
    s = g.sum()  # read-only (a scalar result): such a consumer gets a copy of its own
    assert np.from_dlpack(s) == s and type(s.__dlpack__()).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        g.__dlpack__(stream=5)


def test_sort_and_argsort_descending(gpu):
    n = np.array([[3.0, 1.0, 3.0, 2.0, np.nan], [0.0, -1.0, 0.0, 5.0, 5.0]])
    g = gp.asarray(n)
    for axis in (-1, 0, None):
        want_order = np.flip(np.argsort(np.flip(n if axis is not None else n.ravel(), axis if axis is not None else 0),
                                         axis=axis if axis is not None else 0, stable=True),
                             axis if axis is not None else 0)
        length = (n.shape[axis] if axis is not None else n.size)
        np.testing.assert_array_equal(np.asarray(gp.argsort(g, axis=axis, descending=True)), length - 1 - want_order)
        np.testing.assert_array_equal(np.asarray(gp.sort(g, axis=axis, descending=True)),
                                      np.flip(np.sort(n, axis=axis), axis if axis is not None else 0))
    # stable: equal elements keep their order, largest first
    np.testing.assert_array_equal(np.asarray(gp.argsort(gp.asarray([1, 3, 3, 2]), descending=True)), [1, 2, 3, 0])


def test_standard_signatures(gpu):
    np.testing.assert_array_equal(np.asarray(gp.arange(0, 10, step=3)), np.arange(0, 10, step=3))
    np.testing.assert_array_equal(np.asarray(gp.clip(gp.asarray([1.0, np.nan]))), [1.0, np.nan])
    c = np.asarray([1j])  # a dtype gpupy cannot hold comes back as NumPy's array: copy=True still copies
    assert gp.asarray(c, copy=True) is not c
