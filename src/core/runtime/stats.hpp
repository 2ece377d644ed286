// Counters behind gpupy.stats(): what the core did, so tests can check
// mechanisms (not timings) and users can see where time went.
#pragma once

#include <cstdint>

namespace gpupy {

struct Stats {
    int64_t evaluations = 0;        // driver eval_ir calls
    int64_t blocks_uploaded = 0;    // host -> device block writes
    int64_t blocks_downloaded = 0;  // device -> host block reads
    int64_t bytes_uploaded = 0;
    int64_t bytes_downloaded = 0;
    int64_t blocks_packed = 0;      // strided views gathered on the host before upload
    int64_t evictions = 0;          // blocks evicted from the device cache
    int64_t eviction_readbacks = 0; // evicted blocks read back first (values nowhere else)
    int64_t collapses = 0;          // subexpressions evaluated separately by partitioning
    int64_t exports_kept_device_copies = 0;  // exports that ended with the bytes unchanged: device copies kept
    int64_t device_copies_adopted = 0;  // device blocks a snapshot of exported bytes took from their node
    int64_t shared_stores = 0;      // plans that stored a node read through several views first
    int64_t sibling_outputs = 0;    // blocks of other expressions written by an evaluation as further outputs
    int64_t sibling_search_nodes = 0;  // nodes the search for siblings followed: its work
    int64_t check_ir_calls = 0;     // exact resource checks during partitioning
    int64_t stagings_reused = 0;    // partitions taken from a plan of the same structure (staging_memo.hpp)
    int64_t planned_items = 0;      // items (views of nodes) the planner's walks made: its work
    // Floating-point error checks (execution/fp_errors.hpp): ops checked,
    // summed over evaluations, and kinds of error found and reported.
    int64_t checked_ops = 0, fp_errors_reported = 0;
    int64_t planning_ns = 0;        // time spent planning blocks (walk, partition, lowering)
    int64_t host_evaluations = 0;   // nodes evaluated by NumPy (fallback)
    int64_t host_engine_evaluations = 0;  // small evaluations run in place on the host engine
    // Placement decisions between the host engine and the device for work
    // wanted in host memory, by reason (Runtime::use_host_engine).
    int64_t host_engine_by_threshold = 0, device_by_threshold = 0;  // GPUPY_HOST_ELEMENTS
    int64_t host_engine_by_setting = 0, device_by_setting = 0;      // GPUPY_PLACEMENT forced
    int64_t host_engine_by_cost = 0, device_by_cost = 0;            // the calibrated cost model
    // ... overruled by what both places took for work of that shape, or a
    // try of the place the model did not choose (placement_feedback.hpp).
    int64_t host_engine_by_measurement = 0, device_by_measurement = 0;
    int64_t host_engine_by_exploration = 0, device_by_exploration = 0;
    int64_t model_corrections = 0;  // times measurements rescaled a place's cost model parameters
    int64_t host_engine_by_driver = 0, device_by_driver = 0;        // the driver's judgement
    int64_t eager_numpy_ops = 0;  // ops on small host values computed by NumPy at once
    int64_t host_float16_folds = 0;  // float16 sums and products NumPy computed (its loop structure)
    int64_t direct_numpy_loops = 0;  // ... of them, by NumPy's inner loop called directly
    int64_t direct_writes = 0;    // partial writes copied straight from the value's host memory, or filled with one value
    int64_t write_copies = 0;     // partial writes that copied the whole node first (copy-on-write)
    // Small work on host values done at once without a NumPy call: a
    // boolean mask of the array's own shape, an integer index array alone,
    // all()/any() of integers, argmin/argmax of a whole array placed on
    // the host.
    int64_t direct_host_ops = 0;
    // Products placed on the host (BLAS) by the bindings' own path, without
    // the package's Python (`a @ b`, matmul/dot of two arrays in a loop).
    int64_t host_matmuls = 0, host_dots = 0;
    // x.argmin() / x.argmax() answered on the host values by the bindings'
    // own method (NumPy's function placed on the host).
    int64_t host_argmins = 0, host_argmaxes = 0;
    // Host products run with BLAS's worker threads held off (too small to
    // pay for them: CostModel::product_threads_pay).
    int64_t products_on_calling_thread = 0;
};

Stats& stats();

}  // namespace gpupy
