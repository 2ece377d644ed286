#include "core/memory/block_key.hpp"

namespace gpupy {

namespace {

// 64-bit mixing (splitmix64's finaliser): every input bit affects every
// output bit, so keys differing in one stride do not collide in buckets.
uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

}  // namespace

uint64_t BlockKey::hash_of(uint64_t node_id, const ViewGeometry& g, int64_t index) {
    uint64_t h = mix(node_id, static_cast<uint64_t>(index));
    h = mix(h, static_cast<uint64_t>(g.offset));
    h = mix(h, g.shape.size());
    for (size_t d = 0; d < g.shape.size(); ++d) {
        h = mix(h, static_cast<uint64_t>(g.shape[d]));
        h = mix(h, static_cast<uint64_t>(g.strides[d]));
    }
    return h;
}

}  // namespace gpupy
