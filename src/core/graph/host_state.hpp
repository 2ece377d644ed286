// What of a node is on the host: the questions planning and evaluation ask
// of the evaluated bits (thesis 4.4).
#pragma once

#include <cstdint>

#include "core/graph/node.hpp"

namespace gpupy {

// True if view positions [f0, f1) of the node are all on the host.
bool view_evaluated(const Node& node, const ViewGeometry& view, int64_t f0, int64_t f1);
// True if the node's own elements [lo, hi] (inclusive) are on the host.
bool host_has(const Node& node, int64_t lo, int64_t hi);

}  // namespace gpupy
