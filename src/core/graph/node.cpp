#include "core/graph/node.hpp"

#include <unordered_set>
#include <vector>

#include "core/graph/node_factory.hpp"
#include "core/graph/node_hooks.hpp"
#include "core/graph/recent_nodes.hpp"

namespace gpupy {

namespace {

// Nodes whose last reference went while another node was being freed.
// Freeing pushes here instead of recursing (see NodeRef).
thread_local std::vector<Node*>* g_pending_free = nullptr;

void free_node(Node* n) {
    if (g_pending_free) {
        g_pending_free->push_back(n);
        return;
    }
    std::vector<Node*> pending{n};
    g_pending_free = &pending;
    while (!pending.empty()) {
        Node* x = pending.back();
        pending.pop_back();
        delete x;  // releases its children, which may push onto `pending`
    }
    g_pending_free = nullptr;
}

}  // namespace

// --- NodeRef ---------------------------------------------------------------

NodeRef::NodeRef(Node* n) : p_(n) {
    if (p_) ++p_->refs_;
}
NodeRef::NodeRef(const NodeRef& o) : p_(o.p_) {
    if (p_) ++p_->refs_;
}
NodeRef::~NodeRef() {
    if (p_ && --p_->refs_ == 0) free_node(p_);
}

// --- Node ----------------------------------------------------------------------

Node::~Node() {
    for (const NodeView& c : children_) --c.node->parents_;  // (those it dropped stay counted)
    unhash();
    if (in_recent) forget_recent(this);
    if (cached_blocks > 0) node_hooks().on_destroy(this);
}

char* Node::ensure_host_buffer() {
    if (!host_) {
        host_ = std::make_shared<HostBuffer>(static_cast<size_t>(nbytes()));
        // Evaluated bits exist from the first evaluated element on: an
        // expression never evaluated on the host costs no bitmap.
        if (kind_ == NodeKind::Expression) bits_.resize(size_);
    }
    return host_->data();
}

void Node::set_children(std::vector<NodeView> children) {
    children_ = std::move(children);
    for (const NodeView& c : children_) ++c.node->parents_;
}

void Node::drop_children() {
    // (The operands stay counted as this node's: it keeps its key, which
    // names them, and may still be found by it.)
    children_.clear();
}

const ReduceParams& Node::no_reduce() {
    static const ReduceParams none{};
    return none;
}

const RemapParams& Node::no_remap() {
    static const RemapParams none{};
    return none;
}

uint64_t Node::next_birth() {
    static uint64_t last = 0;  // the core runs on one thread at a time
    return ++last;
}

void Node::unhash() { NodeFactory::unhash(this); }

NodeView constant_view(NodeRef constant, const Dims& shape) {
    NodeView v;
    v.node = std::move(constant);
    v.geom.offset = 0;
    v.geom.shape = shape;
    v.geom.strides.assign(shape.size(), 0);
    return v;
}

NodeHooks& node_hooks() {
    static auto* hooks = new NodeHooks();  // leaked: see hash_table()
    return *hooks;
}

int64_t retained_host_bytes(const Node* node) {
    int64_t bytes = 0;
    std::unordered_set<const Node*> seen{node};
    std::vector<const Node*> stack{node};
    while (!stack.empty()) {
        const Node* n = stack.back();
        stack.pop_back();
        if (n->host()) bytes += n->nbytes();  // (a partly evaluated one's buffer too)
        if (n->complete()) continue;          // an evaluated node has let its operands go
        for (const NodeView& child : n->children()) {
            if (seen.insert(child.node.get()).second) stack.push_back(child.node.get());
        }
    }
    return bytes;
}

}  // namespace gpupy
