// Several outputs per evaluation: expressions needed together, evaluated
// in one pass.
//
// An image's channels, built one after another from one intermediate
// (the shaded sphere's three `where`s over the same ray/sphere terms), are
// read one after another: evaluated separately, every channel computes the
// shared terms again. When the planner plans a block of such an
// expression, it looks among the recent sizable expressions still alive
// (graph/recent_nodes.hpp) for *siblings*: expressions of the same shape,
// not yet evaluated there, that are not part of the root's own expression
// (the root computes those inside anyway) and that share unevaluated work
// with it. Each becomes a further output of the root pass -- lowered into
// the same IR, so the shared work is computed once -- and its block is
// cached as if it had been asked for; reading it later costs no
// evaluation. Results of one call that share only their operands
// (divmod's quotient and remainder, modf's parts) are marked as needed
// together when they are made (Node::together) and meet the same way.
//
// A sibling is added only where it fuses as it is now (nothing it reads
// must be evaluated first) and the combined IR fits the driver in one
// evaluation; at most GPUPY_MAX_OUTPUTS - 1 of them, the outermost (one
// inside another is computed there anyway).
#pragma once

#include "core/planning/context.hpp"

namespace gpupy {

// Extends the root pass of a finished plan with siblings where there are
// some; otherwise leaves the plan as it is.
void add_siblings(const PlanContext& ctx, BlockPlan& plan);

// A join (concatenate, stack) plans a part per operand, and parts are not
// siblings: an image's channels stacked at the end each computed the
// terms they share again (demosaicing: 3x its work). Where two pending
// operands share work, asks for every pending operand's storage first
// (prerequisites: the first evaluated takes the others as siblings) and
// returns true; the join then copies stored values.
bool stage_joined_siblings(const PlanContext& ctx, const Node& join);

}  // namespace gpupy
