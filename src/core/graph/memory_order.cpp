#include "core/graph/memory_order.hpp"

#include <algorithm>
#include <cstdlib>

namespace gpupy {

MemoryOrder keep_order(const Dims& shape, const std::vector<const ViewGeometry*>& operands) {
    const int nd = static_cast<int>(shape.size());
    if (nd < 2) return {};
    // The stride an operand contributes along axis d: none (0) where the
    // result or the operand has length 1 there (the iterator's rule).
    auto stride = [&](const ViewGeometry* v, int d) -> int64_t {
        if (shape[d] == 1 || v->shape[d] == 1) return 0;
        return std::llabs(v->strides[d]);
    };
    // NumPy sorts its axis data, fastest axis first: perm[i] is the axis at
    // iterator position i, starting from the last axis.
    std::vector<int> perm(nd);
    for (int i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
    bool moved = false;
    for (int i0 = 1; i0 < nd; ++i0) {
        const int ax0 = perm[i0];
        int at = i0;
        for (int i1 = i0 - 1; i1 >= 0; --i1) {
            const int ax1 = perm[i1];
            bool ambiguous = true, swap = false;
            for (const ViewGeometry* v : operands) {
                const int64_t s0 = stride(v, ax0), s1 = stride(v, ax1);
                if (s0 == 0 || s1 == 0) continue;
                if (s1 <= s0) swap = false;  // a conflict: C order wins
                else if (ambiguous) swap = true;
                ambiguous = false;
            }
            if (ambiguous) continue;
            if (!swap) break;
            at = i1;
        }
        if (at != i0) {
            for (int k = i0; k > at; --k) perm[k] = perm[k - 1];
            perm[at] = ax0;
            moved = true;
        }
    }
    if (!moved) return {};
    MemoryOrder order(nd);
    for (int i = 0; i < nd; ++i) order[i] = perm[nd - 1 - i];
    return order;
}

MemoryOrder order_of(const ViewGeometry& view) { return keep_order(view.shape, {&view}); }

MemoryOrder like_order(const ViewGeometry& view) {
    const int nd = static_cast<int>(view.shape.size());
    if (nd < 2 || is_c_contiguous(view.shape, view.strides)) return {};
    MemoryOrder order(static_cast<size_t>(nd));
    for (int d = 0; d < nd; ++d) order[static_cast<size_t>(d)] = is_f_contiguous(view.shape, view.strides) ? nd - 1 - d : d;
    if (!is_f_contiguous(view.shape, view.strides))
        std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
            return std::llabs(view.strides[static_cast<size_t>(a)]) > std::llabs(view.strides[static_cast<size_t>(b)]);
        });
    for (int d = 0; d < nd; ++d)
        if (order[static_cast<size_t>(d)] != d) return order;
    return {};
}

MemoryOrder joined_order(const std::vector<const ViewGeometry*>& arrays) {
    if (arrays.empty() || arrays[0]->shape.size() < 2) return {};
    const int nd = static_cast<int>(arrays[0]->shape.size());
    MemoryOrder order(static_cast<size_t>(nd));
    for (int i = 0; i < nd; ++i) order[static_cast<size_t>(i)] = i;
    bool moved = false;
    for (int i0 = 1; i0 < nd; ++i0) {
        const int ax0 = order[static_cast<size_t>(i0)];
        int at = i0;
        for (int i1 = i0 - 1; i1 >= 0; --i1) {
            const int ax1 = order[static_cast<size_t>(i1)];
            bool ambiguous = true, swap = false;
            for (const ViewGeometry* v : arrays) {
                if (v->shape[static_cast<size_t>(ax0)] == 1 || v->shape[static_cast<size_t>(ax1)] == 1) continue;
                if (std::llabs(v->strides[static_cast<size_t>(ax0)]) <= std::llabs(v->strides[static_cast<size_t>(ax1)]))
                    swap = false;  // a conflict: C order wins
                else if (ambiguous)
                    swap = true;
                ambiguous = false;
            }
            if (ambiguous) continue;
            if (!swap) break;
            at = i1;
        }
        if (at != i0) {
            for (int k = i0; k > at; --k) order[static_cast<size_t>(k)] = order[static_cast<size_t>(k - 1)];
            order[static_cast<size_t>(at)] = ax0;
            moved = true;
        }
    }
    return moved ? order : MemoryOrder{};
}

MemoryOrder with_axes_last(const MemoryOrder& order, int ndim, const std::vector<int>& axes) {
    std::vector<bool> moved(static_cast<size_t>(ndim), false);
    for (int ax : axes) moved[static_cast<size_t>(ax)] = true;
    MemoryOrder out;
    out.reserve(static_cast<size_t>(ndim));
    for (int k = 0; k < ndim; ++k) {
        const int d = order.empty() ? k : order[static_cast<size_t>(k)];
        if (!moved[static_cast<size_t>(d)]) out.push_back(d);
    }
    out.insert(out.end(), axes.begin(), axes.end());
    return out;
}

Dims permuted_shape(const Dims& shape, const MemoryOrder& order) {
    if (order.empty()) return shape;
    Dims s(order.size());
    for (size_t k = 0; k < order.size(); ++k) s[k] = shape[static_cast<size_t>(order[k])];
    return s;
}

ViewGeometry permuted(const ViewGeometry& v, const MemoryOrder& order) {
    if (order.empty()) return v;
    ViewGeometry g;
    g.offset = v.offset;
    g.shape = permuted_shape(v.shape, order);
    g.strides.resize(order.size());
    for (size_t k = 0; k < order.size(); ++k) g.strides[k] = v.strides[static_cast<size_t>(order[k])];
    return g;
}

NodeView permuted(NodeView v, const MemoryOrder& order) {
    if (!order.empty()) v.geom = permuted(v.geom, order);
    return v;
}

Dims order_strides(const Dims& shape, const MemoryOrder& order) {
    if (order.empty()) return c_strides(shape);
    const Dims stored = c_strides(permuted_shape(shape, order));
    Dims s(shape.size());
    for (size_t k = 0; k < order.size(); ++k) s[static_cast<size_t>(order[k])] = stored[k];
    return s;
}

GpuArray of_ordered(NodeRef node, const MemoryOrder& order) {
    if (order.empty()) return GpuArray::of(std::move(node));
    Dims shape(order.size());
    for (size_t k = 0; k < order.size(); ++k) shape[static_cast<size_t>(order[k])] = node->shape()[k];
    GpuArray a = GpuArray::of(std::move(node));
    a.geom = ViewGeometry{0, shape, order_strides(shape, order)};
    return a;
}

}  // namespace gpupy
