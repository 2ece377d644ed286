// Whether a driver can evaluate a node itself: the question behind every
// placement of work off the device.
#pragma once

#include "core/graph/node.hpp"
#include "core/runtime/driver_loader.hpp"

namespace gpupy {

// True if `driver` cannot evaluate this node (op or dtype unsupported), so
// it must be evaluated elsewhere. (Any number of dimensions is fine: wide
// domains fold, fold.hpp.)
bool needs_host_evaluation(const Node& node, const Driver& driver);

}  // namespace gpupy
