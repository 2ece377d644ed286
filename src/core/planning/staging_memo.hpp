// Partitioning's decisions remembered by the structure of what was planned.
//
// A program that builds the same shape of expression again -- the next run
// of a script, a loop body, a time step -- is walked into the same items
// with other constants. Partitioning them again (bounding every item, then
// lowering and checking candidate passes exactly near the driver's limits:
// about half of planning for a long chain) reaches the same staging, since
// it reads only the items' structure: classes, ops, dtypes, views, operand
// links, remaps, the domain, the driver and its configuration, and of the
// constants only what generated code may depend on (whether NaN, whether
// finite). So the staging of a plan that needed exact checks is kept under
// a hash of that structure, and a plan of the same structure stages the
// same items -- after checking each of its passes exactly once (partition.
// cpp): a false match could only make a pass too big for the driver, never
// a wrong value, since any staging computes the same values, and a pass
// that does not fit sends the plan through partitioning as before.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/planning/context.hpp"

namespace gpupy {

// The structure of a walked part (two independent 64-bit hashes of it and
// its item count); empty (items == 0) for parts too small to be worth
// remembering: partitioning them costs less than the check a reuse makes.
struct StagingKey {
    uint64_t hash = 0, check = 0;
    size_t items = 0;
    bool empty() const { return items == 0; }
};

StagingKey staging_key(const PlanContext& ctx, const PartPlan& part);

// Stages the items remembered under `key` and returns true; false, with
// nothing staged, if none are remembered (or they do not fit this part).
bool restage(const StagingKey& key, PartPlan& part);

// Remembers which items of `part` are staged, under `key`.
void remember_staging(const StagingKey& key, const PartPlan& part);

}  // namespace gpupy
