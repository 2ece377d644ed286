// The settings a user may choose through the environment, read in one
// place (the core reads the environment nowhere else) with one kind of
// error for a bad value. Python's setters
// (gpupy.set_block_size, ...) change the live values afterwards.
#pragma once

#include <cstdint>
#include <string>

namespace gpupy {

struct Settings {
    int64_t block_size;     // GPUPY_BLOCK_SIZE: elements per block
    int64_t cache_bytes;    // GPUPY_CACHE_BYTES: device cache budget
    int64_t host_elements;  // GPUPY_HOST_ELEMENTS: -1 = the driver judges
    int64_t eager_elements; // GPUPY_EAGER_ELEMENTS: ops on host values up to this size run in NumPy at once
    // Whether GPUPY_EAGER_ELEMENTS set eager_elements (then a calibrated
    // cost model leaves it alone).
    bool eager_elements_chosen;

    // Defaults overridden by the environment; ValueError naming the
    // variable for a value that is not an integer in range.
    static Settings from_environment();
};

// 2^22 elements (a 2048 x 2048 texture, 16 MiB of float32): large enough
// that a 2048^2 image is one block (one shader dispatch), small enough that
// a few dozen blocks fit a modest GPU.
constexpr int64_t kDefaultBlockSize = int64_t{1} << 22;
constexpr int64_t kDefaultCacheBytes = int64_t{1} << 30;  // 1 GiB of device memory
// Up to this many output elements, an op whose operands are already in host
// memory runs in NumPy at once rather than as a lazy node (measured on this
// 2-core machine: a node plus its later evaluation cost 30-60 us where
// NumPy's op on 1,024 float64 costs 2-3 us; docs/performance.md).
constexpr int64_t kDefaultEagerElements = 1024;

// An integer environment variable: `fallback` when unset or empty,
// ValueError when not an integer >= `minimum` (gpupy/setting_values.hpp).
int64_t env_integer(const char* name, int64_t fallback, int64_t minimum);

// GPUPY_DRIVER_DIR: where driver libraries are looked for; "" when unset
// (beside the module).
std::string driver_dir_from_environment();

}  // namespace gpupy
