// Evaluation (thesis 4.4-4.8): making the elements of a view available on
// the host, block by block, evaluating on the device what is not there yet.
//
// Work is done by an explicit task stack, never by recursion over the
// expression: a task that finds it needs something first (a subexpression
// collapsed by partitioning, a node NumPy must evaluate, a block read back)
// pushes those prerequisites and is retried after them. So a 100,000-level
// expression uses heap, not C++ stack.
#pragma once

#include <cstdint>
#include <vector>

#include "core/execution/task.hpp"
#include "core/graph/node.hpp"
#include "core/planning/plan.hpp"

namespace gpupy {

// Makes view positions [f0, f1) of `view` available in its node's host
// buffer (evaluating only the blocks that hold them).
void ensure_host(const NodeView& view, int64_t f0, int64_t f1);
inline void ensure_host(const NodeView& view) { ensure_host(view, 0, view.geom.size()); }
// Makes sure block `block` of `view` is evaluated on the device.
void ensure_device_block(const NodeView& view, int64_t block);
// Runs tasks until all are done.
void run_tasks(std::vector<Task> tasks);

// Evaluates block `block` of `root` (planned, then executed) and returns
// true, or returns false having appended what must happen first.
bool plan_and_evaluate(const NodeView& root, int64_t block, std::vector<Task>* prereqs,
                       EvalMode mode = EvalMode::Device);

// The IR of the root pass for block `block` of `root`, as it would be
// evaluated now; empty if it cannot yet be planned. Plans only: nothing is
// uploaded or cached. For tests and introspection.
std::vector<gpupy_ir_instr> plan_ir(const NodeView& root, int64_t block);

}  // namespace gpupy
