#include "core/building/writes.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/building/elementwise.hpp"
#include "core/building/export_watch.hpp"
#include "core/graph/host_state.hpp"
#include "core/graph/node_factory.hpp"
#include "core/execution/evaluator.hpp"
#include "core/memory/block_cache.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// The value's host elements copied straight into the target's (one pass,
// no temporary) when that is safe: the value is another node (so it does
// not overlap the target) and the target may be overwritten in place
// (nothing else refers to it, writable_in_place); one side must be
// contiguous for the copy to be one gather or one scatter. False (nothing
// done) otherwise.
bool write_directly(const GpuArray& target, const NodeView& src, int64_t n) {
    if (src.node.get() == target.node()) return false;
    ensure_host(NodeView{target.owner->node, identity_view(target.node()->shape())});
    Node* node = writable_in_place(target);
    if (!node) return false;
    const int64_t item = dtype_itemsize(node->dtype());
    if (is_c_contiguous(target.geom.shape, target.geom.strides)) {
        forget_old_values(node);
        gather_from_host(src.node.get(), src.geom, 0, n, node->host_data() + target.geom.offset * item);
        ++stats().direct_writes;
        return true;
    }
    if (src.node->host() && is_c_contiguous(src.geom.shape, src.geom.strides)) {
        forget_old_values(node);
        scatter_to_host(node, target.geom, 0, n, src.node->host_data() + src.geom.offset * item);
        ++stats().direct_writes;
        return true;
    }
    return false;
}

}  // namespace

void assign(const GpuArray& target, NodeView value) {
    if (!target.writeable) throw ValueError("assignment destination is read-only");
    const DType t = target.dtype();
    // NumPy drops leading length-1 dimensions of the value, then broadcasts.
    Dims vs = value.geom.shape;
    Dims vstr = value.geom.strides;
    while (vs.size() > target.geom.shape.size() && vs.front() == 1) {
        vs.erase(vs.begin());
        vstr.erase(vstr.begin());
    }
    bool ok = vs.size() <= target.geom.shape.size();
    for (size_t i = 0; ok && i < vs.size(); ++i) {
        const int64_t want = target.geom.shape[target.geom.shape.size() - vs.size() + i];
        ok = vs[i] == want || vs[i] == 1;
    }
    if (!ok) {
        throw ValueError("could not broadcast input array from shape " + shape_str(value.geom.shape) + " into shape " +
                         shape_str(target.geom.shape));
    }
    // A value read through memory another library holds may be the
    // target's own memory under another owner (copyto(a[::-1], np.asarray(a))):
    // it is read as it is now, through a snapshot, as NumPy's overlapping
    // copy reads its source first.
    value.geom.shape = vs;
    value.geom.strides = vstr;
    NodeView src = NodeFactory::unexported(std::move(value));
    src = broadcast_view(cast_view(std::move(src), t), target.geom.shape);
    const bool exported = target.node()->host() && target.node()->host()->exported();
    if (target.is_whole() && !exported) {
        // Replacing every element: the owner simply takes a new value; any
        // expression built from the old one keeps it (copy-on-write, lazily).
        // A whole node of the same dtype and shape is that value itself:
        // the owner shares it (no copy node to evaluate; values on the host
        // stay there, so the next op on them can run at once). A partial
        // write to either sharer copies first (refcount > 1, below).
        if (src.node->dtype() == t && is_identity_view(src.geom, src.node->shape()) &&
            src.node->shape() == target.geom.shape) {
            target.owner->node = NodeFactory::for_new_owner(src.node);
            return;
        }
        const int64_t n = target.size();
        if (src.node->dtype() == t && n <= Runtime::get().eager_elements() && src.node->host() &&
            view_evaluated(*src.node, src.geom, 0, n)) {
            // A small view whose values are on the host (`col[:] = a[:, :, k]`
            // in a loop): copied now. A lazy copy would make every later op
            // on the target lazy too, and a loop that feeds the target back
            // into its next value would build an ever deeper chain.
            NodeRef copy = NodeFactory::array_uninitialized(t, target.geom.shape);
            gather_from_host(src.node.get(), src.geom, 0, n, copy->host_data());
            target.owner->node = std::move(copy);
            return;
        }
        target.owner->node = NodeFactory::expression(GPUPY_OP_CAST, t, target.geom.shape, {src});
        return;
    }
    // A partial write is done on the host, now; so is any write into bytes
    // another library holds (a whole write too: they are the array's value).
    const int64_t n = target.size();
    if (n == 0) return;
    ensure_host(src);
    if (write_directly(target, src, n)) return;
    std::vector<char> values(static_cast<size_t>(n * dtype_itemsize(t)));
    gather_from_host(src.node.get(), src.geom, 0, n, values.data());
    src = NodeView{};  // drop our reference before counting the node's users
    scatter_to_host(host_write_target(target), target.geom, 0, n, values.data());
}

namespace {

// The node `target` writes or exports in host memory, evaluated there; a
// copy of it (the owner's new node) where something else still needs the
// old values, else nullptr.
Node* copied_for_write(const GpuArray& target) {
    Owner& owner = *target.owner;
    ensure_host(NodeView{owner.node, identity_view(owner.node->shape())});
    Node* node = owner.node.get();
    const std::shared_ptr<HostBuffer>& host = node->host();
    if (node->refcount() > 1 && node->kind() != NodeKind::Constant && host && host->exported() &&
        !host->read_only() && static_cast<size_t>(node->nbytes()) == host->nbytes()) {
        // The bytes another library holds are the array's value, so the
        // write goes into them: what still needs the old values keeps them
        // in a copy instead (the node, whose device copy may predate writes
        // through the export, is dropped from the device), and the owner
        // takes the bytes in a new node.
        Runtime::get().cache().invalidate(node);
        owner.node = NodeFactory::take_host(node);
        ++stats().write_copies;
        return owner.node.get();
    }
    if (node->refcount() > 1 || node->kind() == NodeKind::Constant || (host && host->read_only())) {
        // Something else (an unevaluated expression, another array sharing
        // this value) still needs the old values: copy on write. So does a
        // constant the owner took whole (`x[()] = 0`): its value is what it
        // is (programs read it as a literal, the factory shares it), so a
        // write into its memory would be seen by nothing that reads it. And
        // bytes gpupy was lent read-only (a received pickle) stay unwritten.
        auto buf = std::make_shared<HostBuffer>(static_cast<size_t>(node->nbytes()));
        copy_bytes(buf->data(), node->host_data(), static_cast<size_t>(node->nbytes()));
        owner.node = NodeFactory::array(node->dtype(), node->shape(), std::move(buf));
        ++stats().write_copies;
        return owner.node.get();
    }
    return nullptr;
}

}  // namespace

Node* host_write_target(const GpuArray& target) {
    if (Node* copy = copied_for_write(target)) return copy;
    // No dependents: a destructive update.
    Node* node = target.node();
    forget_old_values(node);
    return node;
}

Node* export_target(const GpuArray& target) {
    if (Node* copy = copied_for_write(target)) {
        begin_export(copy);
        return copy;
    }
    // No dependents: the values stay, and so may their device copy
    // (export_watch.hpp).
    Node* node = target.node();
    node->drop_children();
    begin_export(node);
    return node;
}

Node* writable_in_place(const GpuArray& target) {
    if (!target.writeable) return nullptr;
    Node* node = target.node();
    if (node->kind() == NodeKind::Constant || !node->host() || node->host()->read_only() || !node->complete() ||
        node->refcount() > 1)
        return nullptr;
    return node;
}

bool fill_in_place(const GpuArray& target, gpupy_scalar element) {
    const int64_t n = target.size();
    if (n == 0) return true;  // nothing to write, nothing to forget
    Node* node = writable_in_place(target);
    if (!node) return false;
    const size_t item = static_cast<size_t>(dtype_itemsize(node->dtype()));
    forget_old_values(node);
    // The element, then doubled until the run is filled: one store and
    // log2(n) copies. A strided view takes the run through a scatter.
    const bool in_place = is_c_contiguous(target.geom.shape, target.geom.strides);
    std::vector<char> run(in_place ? 0 : static_cast<size_t>(n) * item);
    char* dst = in_place ? node->host_data() + target.geom.offset * static_cast<int64_t>(item) : run.data();
    scalar_store(node->dtype(), element, dst);
    const size_t bytes = static_cast<size_t>(n) * item;
    for (size_t filled = item; filled < bytes;) {
        const size_t chunk = std::min(filled, bytes - filled);
        std::memcpy(dst + filled, dst, chunk);
        filled += chunk;
    }
    if (!in_place) scatter_to_host(node, target.geom, 0, n, run.data());
    ++stats().direct_writes;
    return true;
}

void forget_old_values(Node* node) {
    Runtime::get().cache().invalidate(node);  // keyed by the old id
    if (node->host()) node->host()->unwatch();  // no device copy left to check
    node->drop_children();
    NodeFactory::renew_identity(node);
}

}  // namespace gpupy
