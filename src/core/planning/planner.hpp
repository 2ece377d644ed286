// Planning and running the evaluation of one block (thesis 4.5-4.8).
//
// Given a view and a block number, the planner walks the expression below
// it depth first, deriving each operand's view of the same block with
// BuildView (compose_views), classifies what it finds (constants, index
// expressions, blocks already on the device, data on the host, or
// subexpressions to fuse), keeps an upper bound of the driver's resources
// and, where the bound is exceeded, builds the exact IR and collapses
// operands until it fits (the improved partitioning algorithm, fig. 4.7).
// Then it emits the IR with common subexpressions eliminated, binds device
// blocks to its leaves (uploading what is only on the host) and has the
// driver evaluate it into a new cached block.
#pragma once

#include <vector>

#include "core/execution/evaluator.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

// Where an evaluation runs: on the active driver's device (the result is a
// cached device block) or on the host engine (the result is written into
// the node's host buffer in place and its evaluated bits set).
enum class EvalMode { Device, Host };

// Evaluates block `block` of `root` and returns true, or returns false
// having appended what must happen first to `prereqs`.
bool plan_and_evaluate(const NodeView& root, int64_t block, std::vector<Task>* prereqs,
                       EvalMode mode = EvalMode::Device);

// The IR the planner would emit for block `block` of `root`, as evaluated
// now; empty if it cannot yet be built. For tests and introspection.
std::vector<gpupy_ir_instr> plan_ir(const NodeView& root, int64_t block);

}  // namespace gpupy
