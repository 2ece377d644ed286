// Planning one block (thesis 4.5-4.8): the phases of plan.hpp in order.
// Planning has no side effects: nothing is uploaded, pinned, evicted or
// reordered in the block cache; the plan says what the executor will do.
#pragma once

#include <optional>
#include <vector>

#include "core/planning/context.hpp"

namespace gpupy {

// The plan for block `block` of `root`, or nullopt after appending to
// ctx.prereqs what must be evaluated first.
std::optional<BlockPlan> plan_block(const PlanContext& ctx, const NodeView& root, int64_t block);

// Output positions of `root` a block is cut from: a whole REDUCE node's
// own elements, else the view's.
int64_t output_size(const NodeView& root);

}  // namespace gpupy
