// A Python operand of a ufunc, np.where or a write, classified once: a
// gpupy array, a weak Python scalar (NEP 50), a NumPy scalar made a
// constant only when an expression needs one, or something only NumPy (or
// another library) handles.
#pragma once

#include <optional>

#include "bindings/py_array.hpp"
#include "core/graph/node_factory.hpp"

namespace gpupy {

struct Operand {
    // Foreign: an array-like of another library with NumPy's override
    // protocol (a pandas Series, an xarray DataArray, a dask array), which
    // decides what a ufunc of it gives.
    enum Kind { Array, PyInt, PyFloat, Unsupported, Unknown, Foreign };
    Kind kind = Unknown;
    // A GpuArray argument is used in place (it outlives the call); one made
    // from a scalar or an ndarray is owned here.
    const GpuArray* borrowed = nullptr;
    mutable GpuArray owned;
    py::handle obj;
    // An ndarray operand, or the ndarray an array-like (a list, a tuple)
    // was converted to: NumPy reads it as it is (an eager op hands NumPy
    // this, not `obj`, so a sequence is not discovered twice), and it is
    // lent to a gpupy array (lend_ndarray) only when an expression needs
    // one -- as a NumPy scalar becomes a constant only then.
    py::object converted;
    mutable bool pending_array = false;
    DType converted_dtype = GPUPY_BOOL;
    // A NumPy scalar or a bool: its value, made a constant node only when
    // an expression needs one (an eager op reads the value directly: the
    // node would cost as much as the op).
    mutable bool pending_constant = false;
    DType constant_dtype = GPUPY_BOOL;
    gpupy_scalar constant_value{};

    const GpuArray& arr() const {
        if (pending_constant) {
            owned = GpuArray::of(NodeFactory::constant(constant_dtype, constant_value));
            pending_constant = false;
        }
        if (pending_array) {
            owned = lend_ndarray(converted, Lending::Shared);
            pending_array = false;
        }
        return borrowed ? *borrowed : owned;
    }
    DType dtype() const {
        return pending_constant ? constant_dtype : pending_array ? converted_dtype : arr().dtype();
    }
    // The operand's shape as an array ({} for a scalar).
    Dims shape() const;
    // The value of a scalar operand known now (a NumPy scalar, a bool, a
    // constant array), if this is one.
    std::optional<gpupy_scalar> known_value() const {
        if (pending_constant) return constant_value;
        if (kind == Array && arr().node()->kind() == NodeKind::Constant) return arr().node()->value();
        return std::nullopt;
    }
};

// What `obj` is as an operand. With `defer_foreign`, an array-like of
// another library that overrides ufuncs is Foreign (a ufunc hands it
// over); otherwise it is converted like any array-like (np.where, asarray
// and assignment read its values).
Operand classify(py::handle obj, bool defer_foreign = false);

// A weak Python scalar converted to the loop dtype; OverflowError as NumPy
// unless `wrap` (np.where of NumPy up to 2.4 converts Python ints with an
// unsafe cast: numpy_where_wraps_ints).
gpupy_scalar weak_value(const Operand& o, DType t, bool wrap = false);

}  // namespace gpupy
