// Planning phase 4: ranges. A pass's output range is cut into pieces such
// that every leaf reads few device blocks (a block straddling one storage
// boundary becomes two pieces, not a subdivision that grows with the block
// size); a strided leaf that would still read more than a LOAD can bind
// (GPUPY_MAX_LEAF_BLOCKS) is packed instead: its view is gathered on the
// host and uploaded as the view's own blocks.
#pragma once

#include <vector>

#include "core/planning/context.hpp"

namespace gpupy {

// Smallest and largest element of its source a leaf reads at domain
// positions [da, db) (a bounding box for remapped reads).
Span leaf_span(const PartPlan& part, const Item& it, int64_t da, int64_t db);

// Cuts `pass` into pieces; false if some leaves must be packed first (their
// items are appended to *to_pack).
bool split(const PlanContext& ctx, const PartPlan& part, Pass& pass, std::vector<int32_t>* to_pack);

}  // namespace gpupy
