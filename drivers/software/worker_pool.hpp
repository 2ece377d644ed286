// Threads that stay alive between evaluations. Starting a thread per
// evaluation cost more than the work it shared out at a few hundred
// thousand outputs: creating it (~50-100 us here: a new stack whose pages
// fault in, kernel bookkeeping) against ~100 us of computation.
#pragma once

#include <cstdint>
#include <functional>

namespace gpupy_sw {

// Runs task(0), ..., task(parts - 1): task(0) on the calling thread, the
// others on the pool's workers, and returns when all have finished. One
// caller at a time is served in parallel; a call while another runs (two
// Python threads evaluating at once) does its parts itself. After fork()
// the child starts a pool of its own (the parent's threads are not there).
void run_parallel(int64_t parts, const std::function<void(int64_t)>& task);

}  // namespace gpupy_sw
