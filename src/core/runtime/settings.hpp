// The settings a user may choose through the environment, read in one
// place with one kind of error for a bad value. Python's setters
// (gpupy.set_block_size, ...) change the live values afterwards.
#pragma once

#include <cstdint>

namespace gpupy {

struct Settings {
    int64_t block_size;     // GPUPY_BLOCK_SIZE: elements per block
    int64_t cache_bytes;    // GPUPY_CACHE_BYTES: device cache budget
    int64_t host_elements;  // GPUPY_HOST_ELEMENTS: -1 = the driver judges

    // Defaults overridden by the environment; ValueError naming the
    // variable for a value that is not an integer in range.
    static Settings from_environment();
};

// 2^22 elements (a 2048 x 2048 texture, 16 MiB of float32): large enough
// that a 2048^2 image is one block (one shader dispatch), small enough that
// a few dozen blocks fit a modest GPU.
constexpr int64_t kDefaultBlockSize = int64_t{1} << 22;
constexpr int64_t kDefaultCacheBytes = int64_t{1} << 30;  // 1 GiB of device memory

// An integer environment variable: `fallback` when unset or empty,
// ValueError when not an integer >= `minimum`.
int64_t env_integer(const char* name, int64_t fallback, int64_t minimum);

}  // namespace gpupy
