// What the host can allocate, and NumPy's refusal of arrays that cannot be.
//
// gpupy's creation functions are lazy: zeros(10**13) would otherwise be
// accepted and fail at its first use with a bare std::bad_alloc. NumPy
// refuses at the call, naming the size, the shape and the dtype; so does
// gpupy, for arrays larger than the machine's memory and swap together.
#pragma once

#include <cstdint>
#include <string>

#include "core/graph/geometry.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

// Physical memory plus swap in bytes (an upper bound of what one
// allocation can get); 0 if the system does not say.
uint64_t host_memory_bytes();

// NumPy's size text: "72.8 TiB", "512 bytes".
std::string allocation_size_text(uint64_t bytes);

// Throws ValueError ("array is too big ...") when the byte count overflows,
// HostMemoryError ("Unable to allocate ...") when it exceeds
// host_memory_bytes(); `dtype_name` is NumPy's name of the dtype.
void check_host_allocation(const Dims& shape, int64_t itemsize, const std::string& dtype_name);

}  // namespace gpupy
