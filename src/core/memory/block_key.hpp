// The name of a cached block (thesis 4.2): the node, the view's offset,
// shape and strides, and the block number within the view. Block k of a
// view holds its C-order positions [k * block_size, (k + 1) * block_size).
#pragma once

#include <cstdint>

#include "core/graph/geometry.hpp"

namespace gpupy {

struct BlockKey {
    uint64_t node_id = 0;
    ViewGeometry geom;
    int64_t index = 0;

    // Hash of the six attributes, computed without building a key, so a
    // lookup allocates nothing.
    static uint64_t hash_of(uint64_t node_id, const ViewGeometry& g, int64_t index);
    uint64_t hash() const { return hash_of(node_id, geom, index); }
    bool is(uint64_t id, const ViewGeometry& g, int64_t k) const { return node_id == id && index == k && geom == g; }
};

}  // namespace gpupy
