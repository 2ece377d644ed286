// Planning phase 1: the walk (thesis 4.5, fig. 4.4-4.5).
//
// From the part's root, each operand's view of the same block is derived
// with BuildView (compose_views); each distinct (node, view) becomes one
// item, classified by what is known now: a constant, an index expression,
// this view's blocks on the device, the node's storage on the host or the
// device, a REMAP read, an operation to fuse, or pending (work outside this
// plan: a reduction or join evaluated into storage first, a node the
// driver cannot run, a view no strided map can express). The walk is
// iterative, so a 100,000-deep expression needs no C++ stack.
#pragma once

#include "core/planning/context.hpp"

namespace gpupy {

// Sets up part.domain for block [o0, o1) of part.root (a reduction's
// domain when the root is a whole REDUCE node), then walks. part.top is -1
// when the walk asked for prerequisites before it could start.
void walk(const PlanContext& ctx, PartPlan& part, int64_t o0, int64_t o1);

// Walks `extra` (a view over the same domain) into the part's items, after
// walk(): its item (one the part has already, or a new one), or -1 -- the
// part unchanged, nothing required -- when it cannot be fused as it is now
// (something it reads must be evaluated first).
int32_t walk_more(const PlanContext& ctx, PartPlan& part, const NodeView& extra);

}  // namespace gpupy
