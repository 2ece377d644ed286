// Element types in the core: the shared dtype table (dtype_meta.hpp) and
// NumPy's cast rules for scalars (numpy_casts.hpp).
#pragma once

#include <cstdint>

#include "gpupy/dtype_meta.hpp"
#include "gpupy/numpy_casts.hpp"

namespace gpupy {

using DType = int32_t;  // enum gpupy_dtype

}  // namespace gpupy
