// The array a user holds (thesis 4.1): a view -- offset, shape and strides
// in elements -- of an Owner, whose current value is a node. All views of
// one array share the Owner, so a write through one is seen by all.
#pragma once

#include <memory>

#include "core/graph/node.hpp"
#include "core/graph/node_factory.hpp"

namespace gpupy {

struct GpuArray {
    std::shared_ptr<Owner> owner;
    ViewGeometry geom;
    // False for views NumPy makes read-only (broadcast_to results).
    bool writeable = true;

    Node* node() const { return owner->node.get(); }
    NodeView node_view() const { return NodeView{owner->node, geom}; }
    DType dtype() const { return owner->node->dtype(); }
    int64_t size() const { return geom.size(); }
    int ndim() const { return static_cast<int>(geom.shape.size()); }
    // True if this view is all of its owner, in order.
    bool is_whole() const { return is_identity_view(geom, owner->node->shape()); }

    // A new array owning `node`, viewed whole. (A node whose bytes an
    // ndarray lends or holds is owned as a snapshot: that memory is one
    // array's storage, NodeFactory::for_new_owner.)
    static GpuArray of(NodeRef node) {
        node = NodeFactory::for_new_owner(std::move(node));
        ViewGeometry g = identity_view(node->shape());
        return GpuArray{std::make_shared<Owner>(Owner{std::move(node)}), std::move(g), true};
    }
    // A new array owning the node behind `v`, viewed as `v`.
    static GpuArray of_view(const NodeView& v) {
        GpuArray a = of(v.node);
        a.geom = v.geom;
        return a;
    }
    // A view of the same owner.
    GpuArray view(ViewGeometry g) const { return GpuArray{owner, std::move(g), writeable}; }
};

}  // namespace gpupy
