#include "core/memory/host_transfer.hpp"

#include <cstring>

namespace gpupy {

void scatter_to_host(Node* node, const ViewGeometry& geom, int64_t first, int64_t n, const char* src) {
    char* base = node->ensure_host_buffer();
    const int item = dtype_itemsize(node->dtype());
    EvaluatedBits& bits = node->bits();
    const bool expression = node->kind() == NodeKind::Expression;
    if (is_c_contiguous(geom.shape, geom.strides)) {
        // Fast path: the block is one contiguous run of the owner.
        int64_t idx0 = geom.offset + first;
        std::memcpy(base + idx0 * item, src, static_cast<size_t>(n * item));
        if (expression) bits.set_range(idx0, idx0 + n);
        return;
    }
    for_each_element(geom, first, first + n, [&](int64_t i, int64_t idx) {
        std::memcpy(base + idx * item, src + i * item, static_cast<size_t>(item));
        if (expression) bits.set(idx);
    });
}

void gather_from_host(const Node* node, const ViewGeometry& geom, int64_t first, int64_t n, char* dst) {
    const char* base = node->host_data();
    const int item = dtype_itemsize(node->dtype());
    if (is_c_contiguous(geom.shape, geom.strides)) {
        std::memcpy(dst, base + (geom.offset + first) * item, static_cast<size_t>(n * item));
        return;
    }
    for_each_element(geom, first, first + n, [&](int64_t i, int64_t idx) {
        std::memcpy(dst + i * item, base + idx * item, static_cast<size_t>(item));
    });
}

}  // namespace gpupy
