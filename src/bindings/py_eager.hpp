// The eager path of ufuncs and np.where (py_eager.cpp): operands all in
// host memory and a result up to the eager threshold (GPUPY_EAGER_ELEMENTS,
// set_eager_threshold) are computed by NumPy at once.
#pragma once

#include <optional>
#include <vector>

#include "bindings/py_dtype_resolution.hpp"
#include "bindings/py_operands.hpp"
#include "core/graph/memory_order.hpp"

namespace gpupy {

// One number: a Python or NumPy scalar, or a 0-d ndarray.
bool is_host_number(py::handle h);
// A ufunc of numbers only, by NumPy's own scalar arithmetic; `out_arr` is
// the gpupy array that `out` is, if it is one.
py::object numbers_in_numpy(OpCode op, const std::vector<py::handle>& args, py::handle out, const GpuArray* out_arr);
// The operands' host values for NumPy (new references into `argv`), or
// false if one is not all in host memory (argv is then released).
bool host_operands(const std::vector<Operand>& ops, std::vector<PyObject*>* argv);
// The result of `op` over these operands, computed by NumPy now when it is
// small and its operands are in host memory; nothing otherwise.
std::optional<GpuArray> small_on_host(OpCode op, const Loop& loop, const std::vector<Operand>& ops,
                                      const Dims& shape, const MemoryOrder& order);
// `op` written by NumPy straight into `out`'s host memory when it is small
// and may be overwritten there now; false otherwise.
bool small_in_place(OpCode op, const Loop& loop, const std::vector<Operand>& ops, const Dims& shape,
                    const GpuArray& out);

}  // namespace gpupy
