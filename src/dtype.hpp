// Element types: names, sizes and classification, from dtypes.def.
#pragma once

#include <cstdint>
#include <string>

#include "driver.hpp"

namespace gpupy {

using DType = int32_t;  // enum gpupy_dtype

int dtype_itemsize(DType t);
const char* dtype_name(DType t);  // NumPy's name: "float32", "bool", ...
bool dtype_is_float(DType t);
bool dtype_is_signed_int(DType t);
bool dtype_is_unsigned_int(DType t);
inline bool dtype_is_integer(DType t) { return dtype_is_signed_int(t) || dtype_is_unsigned_int(t); }
bool dtype_valid(DType t);

// A scalar converted to `t` the way NumPy's astype(casting="unsafe") would,
// from a double / int64 / uint64 source.
gpupy_scalar scalar_from_double(DType t, double v);
gpupy_scalar scalar_from_int(DType t, int64_t v);
gpupy_scalar scalar_from_uint(DType t, uint64_t v);
// Reads one element of dtype `t` from memory into a scalar.
gpupy_scalar scalar_load(DType t, const void* p);
// Writes a scalar of dtype `t` to memory.
void scalar_store(DType t, gpupy_scalar s, void* p);

}  // namespace gpupy
