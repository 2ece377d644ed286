// Planning phase 2: partitioning (thesis 4.7, fig. 4.7, the improved
// algorithm). Walking bottom-up, each item's resources are bounded by the
// driver's resource_get summed with resource_add; only when resource_check
// fails is the exact IR built and check_ir called; if even that does not
// fit, operands are collapsed, costliest first, until it does. A collapsed
// operand is *staged*: an earlier pass of the same plan evaluates it into
// its own blocks, and its consumers read those.
#pragma once

#include "core/planning/context.hpp"

namespace gpupy {

// Computes bounds below part.top, staging operands as needed. Throws
// DriverError if an op does not fit even with every operand staged. A part
// of a structure partitioned before stages what that one staged, once each
// of its passes is checked to fit (staging_memo.hpp).
void partition(const PlanContext& ctx, PartPlan& part);

}  // namespace gpupy
