// A driver for the core's tests, linked in (no dlopen, no GL): blocks are
// host memory, it computes float64 LOAD/INDEX/CONST/CAST/ADD/SUBTRACT/
// MULTIPLY/MAXIMUM elementwise and as reductions, its limits can be made
// tiny (operations per evaluation, device bytes), and it records what it
// was asked to do, so tests can check the planner's decisions directly.
#pragma once

#include <cstdint>
#include <vector>

#include "gpupy/driver.hpp"

namespace fake {

struct Record {
    int64_t check_ir_calls = 0;
    int64_t evaluations = 0;
    std::vector<int> instructions;  // ninstr of every evaluation
    int64_t allocated_bytes = 0;    // live device bytes
    int64_t peak_bytes = 0;
};

struct Limits {
    int64_t max_ops = 1 << 30;     // operations one evaluation may hold
    int64_t max_bytes = 1 << 30;   // device memory (GPUPY_ERROR_NOMEM above it)
};

Limits& limits();
Record& record();

// The api table, to hand to gpupy::Driver::from_api.
const gpupy_driver_api* api();

}  // namespace fake
