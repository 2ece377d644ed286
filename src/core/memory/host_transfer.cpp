#include "core/memory/host_transfer.hpp"

#include <cstring>

namespace gpupy {

namespace {

// n elements of `item` bytes from `src` (stride src_step elements) to `dst`
// (stride dst_step elements): one block when both are contiguous, else
// typed copies (a memcpy call per element cost more than the element).
template <class T>
void copy_strided(char* dst, int64_t dst_step, const char* src, int64_t src_step, int64_t n) {
    T* d = reinterpret_cast<T*>(dst);
    const T* s = reinterpret_cast<const T*>(src);
    for (int64_t i = 0; i < n; ++i) std::memcpy(d + i * dst_step, s + i * src_step, sizeof(T));
}

void copy_run(char* dst, int64_t dst_step, const char* src, int64_t src_step, int64_t n, int item) {
    if (dst_step == 1 && src_step == 1) {
        std::memcpy(dst, src, static_cast<size_t>(n * item));
        return;
    }
    switch (item) {
    case 1: copy_strided<uint8_t>(dst, dst_step, src, src_step, n); return;
    case 2: copy_strided<uint16_t>(dst, dst_step, src, src_step, n); return;
    case 4: copy_strided<uint32_t>(dst, dst_step, src, src_step, n); return;
    case 8: copy_strided<uint64_t>(dst, dst_step, src, src_step, n); return;
    }
    for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + i * dst_step * item, src + i * src_step * item, static_cast<size_t>(item));
}

}  // namespace

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
    for_each_run(geom, first, first + n, [&](int64_t i, int64_t idx, int64_t run, int64_t stride) {
        copy_run(base + idx * item, stride, src + i * item, 1, run, item);
        if (!expression) return;
        if (stride == 1) {
            bits.set_range(idx, idx + run);
        } else {
            for (int64_t k = 0; k < run; ++k) bits.set(idx + k * stride);
        }
    });
}

void gather_from_host(const Node* node, const ViewGeometry& geom, int64_t first, int64_t n, char* dst) {
    const char* base = node->host_data();
    const int item = dtype_itemsize(node->dtype());
    if (is_c_contiguous(geom.shape, geom.strides)) {
        std::memcpy(dst, base + (geom.offset + first) * item, static_cast<size_t>(n * item));
        return;
    }
    for_each_run(geom, first, first + n, [&](int64_t i, int64_t idx, int64_t run, int64_t stride) {
        copy_run(dst + i * item, 1, base + idx * item, stride, run, item);
    });
}

}  // namespace gpupy
