// NumPy's own ufunc inner loops, handed to drivers that compute on the host.
//
// A ufunc keeps its loops in three parallel arrays (PyUFuncObject's
// `types`, `functions`, `data`); NumPy's type resolution takes the first
// loop whose signature fits, and so does this. Only exact signatures are
// taken: every input of the op's operand dtype and the output of the op's
// result dtype, as the core casts operands before an op (ops.def). The
// loops are plain C and need no interpreter lock.
#include "bindings/numpy_api.hpp"

// Only the PyUFuncObject layout is used, none of the ufunc C API.
#define NO_IMPORT_UFUNC
#include <numpy/ufuncobject.h>
#include <pybind11/pybind11.h>

#include <vector>

#include "core/graph/op_table.hpp"
#include "bindings/py_array.hpp"
#include "core/runtime/runtime.hpp"

namespace py = pybind11;

namespace gpupy {

namespace {

static_assert(sizeof(npy_intp) == sizeof(int64_t), "NumPy's loop counts and steps must be 64-bit");

// The loop for `op` at `dtype`, or false if the ufunc has none that fits.
bool find_loop(PyUFuncObject* u, OpCode op, DType dtype, HostLoop* out) {
    const int arity = op_arity(op);
    if (u->nin != arity || u->nout != 1 || !u->functions || !u->types) return false;
    const int in = typenum_of(dtype);
    const int result = op_is_predicate(op) ? NPY_BOOL : in;
    for (int i = 0; i < u->ntypes; ++i) {
        const char* sig = u->types + static_cast<size_t>(i) * u->nargs;
        bool fits = sig[arity] == result;
        for (int k = 0; k < arity && fits; ++k) fits = sig[k] == in;
        if (!fits) continue;
        if (!u->functions[i]) return false;
        // PyUFuncGenericFunction has this C signature with npy_intp counts.
        *out = HostLoop{op, dtype, reinterpret_cast<gpupy_host_loop>(u->functions[i]), u->data ? u->data[i] : nullptr};
        return true;
    }
    return false;
}

// Every loop found, by (op, operand dtype), for the eager path.
std::vector<HostLoop>& loop_table() {
    static auto* table = new std::vector<HostLoop>(static_cast<size_t>(GPUPY_NUM_OPS) * GPUPY_NUM_DTYPES);
    return *table;
}

}  // namespace

const HostLoop* numpy_loop(OpCode op, DType dtype) {
    if (op < 0 || op >= GPUPY_NUM_OPS || dtype < 0 || dtype >= GPUPY_NUM_DTYPES) return nullptr;
    const HostLoop& l = loop_table()[static_cast<size_t>(op) * GPUPY_NUM_DTYPES + dtype];
    return l.loop ? &l : nullptr;
}

void register_numpy_loops() {
    py::module_ numpy = py::module_::import("numpy");
    py::object ufunc_type = numpy.attr("ufunc");
    std::vector<HostLoop> loops;
    for (const gpupy_op_row& row : gpupy_op_rows) {
        const OpCode op = row.code;
        if (row.arity < 1 || row.arity > 2 || op_is_internal(op)) continue;
        if (!py::hasattr(numpy, row.numpy_name)) continue;
        py::object u = numpy.attr(row.numpy_name);
        if (!py::isinstance(u, ufunc_type)) continue;
        for (DType t = 0; t < GPUPY_NUM_DTYPES; ++t) {
            HostLoop l;
            if (find_loop(reinterpret_cast<PyUFuncObject*>(u.ptr()), op, t, &l)) {
                loops.push_back(l);
                loop_table()[static_cast<size_t>(op) * GPUPY_NUM_DTYPES + t] = l;
            }
        }
    }
    Runtime::get().set_host_loops(std::move(loops));
}

}  // namespace gpupy
