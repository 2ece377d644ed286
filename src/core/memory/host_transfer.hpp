// Copies between a node's host buffer and a contiguous run of a view's
// positions: the host side of every block upload and readback.
#pragma once

#include <cstdint>

#include "core/graph/node.hpp"

namespace gpupy {

// Writes `n` elements (C order of view positions [first, first + n)) from
// `src` into the node's host storage through the view, and sets their bits.
void scatter_to_host(Node* node, const ViewGeometry& geom, int64_t first, int64_t n, const char* src);
// Gathers view positions [first, first + n) of a node with host data into `dst`.
void gather_from_host(const Node* node, const ViewGeometry& geom, int64_t first, int64_t n, char* dst);

}  // namespace gpupy
