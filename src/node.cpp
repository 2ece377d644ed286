#include "node.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "errors.hpp"
#include "node_hooks.hpp"

namespace gpupy {

namespace {

// Nodes whose last reference went while another node was being freed.
// Freeing pushes here instead of recursing (see NodeRef).
thread_local std::vector<Node*>* g_pending_free = nullptr;

// Leaked on purpose: nodes can outlive static destruction at interpreter
// exit, and their destructors still look things up here.
std::unordered_map<std::string, Node*>& hash_table() {
    static auto* table = new std::unordered_map<std::string, Node*>();
    return *table;
}

uint64_t g_next_id = 1;
int64_t g_created = 0;
int64_t g_shared_hits = 0;

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

void append_bytes(std::string& key, const void* p, size_t n) { key.append(static_cast<const char*>(p), n); }
template <class T>
void append(std::string& key, T v) {
    append_bytes(key, &v, sizeof v);
}
void append_dims(std::string& key, const Dims& d) {
    append<uint32_t>(key, static_cast<uint32_t>(d.size()));
    append_bytes(key, d.data(), d.size() * sizeof(int64_t));
}

std::string view_key(const NodeView& v) {
    std::string k;
    append<uint64_t>(k, v.node->id());
    append<int64_t>(k, v.geom.offset);
    append_dims(k, v.geom.shape);
    append_dims(k, v.geom.strides);
    return k;
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

// --- HostBuffer --------------------------------------------------------------

HostBuffer::HostBuffer(size_t nbytes) : nbytes_(nbytes) {
    // 64-byte alignment suits SIMD loops and every dtype; never zero bytes
    // so data() is always a valid pointer for NumPy.
    size_t alloc = (std::max<size_t>(nbytes, 1) + 63) / 64 * 64;
    data_ = static_cast<char*>(std::aligned_alloc(64, alloc));
    if (!data_) throw std::bad_alloc();
}
HostBuffer::~HostBuffer() { std::free(data_); }

// --- EvaluatedBits -----------------------------------------------------------

void EvaluatedBits::resize(int64_t n) {
    words_.assign(static_cast<size_t>((n + 63) / 64), 0);
    count_ = 0;
}

void EvaluatedBits::set_range(int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
        if ((i & 63) == 0 && i + 64 <= i1) {
            uint64_t& w = words_[i >> 6];
            count_ += 64 - __builtin_popcountll(w);
            w = ~uint64_t{0};
            i += 63;
        } else {
            set(i);
        }
    }
}

bool EvaluatedBits::all_in_range(int64_t i0, int64_t i1) const {
    for (int64_t i = i0; i < i1; ++i) {
        if ((i & 63) == 0 && i + 64 <= i1) {
            if (words_[i >> 6] != ~uint64_t{0}) return false;
            i += 63;
        } else if (!test(i)) {
            return false;
        }
    }
    return true;
}

// --- Node ----------------------------------------------------------------------

Node::~Node() {
    unhash();
    if (cached_blocks > 0) node_hooks().on_destroy(this);
}

char* Node::ensure_host_buffer() {
    if (!host_) host_ = std::make_shared<HostBuffer>(static_cast<size_t>(nbytes()));
    return host_->data();
}

void Node::drop_children() { children_.clear(); }

void Node::unhash() {
    if (!hashed_) return;
    auto& table = hash_table();
    auto it = table.find(hash_key_);
    if (it != table.end() && it->second == this) table.erase(it);
    hashed_ = false;
}

// --- NodeFactory ---------------------------------------------------------------

NodeRef NodeFactory::array(DType dtype, const Dims& shape, std::shared_ptr<HostBuffer> host) {
    Node* n = new Node();
    n->id_ = g_next_id++;
    n->kind_ = NodeKind::Array;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    n->host_ = std::move(host);
    ++g_created;
    return NodeRef(n);
}

NodeRef NodeFactory::array_uninitialized(DType dtype, const Dims& shape) {
    auto buf = std::make_shared<HostBuffer>(static_cast<size_t>(shape_size(shape) * dtype_itemsize(dtype)));
    return array(dtype, shape, std::move(buf));
}

NodeRef NodeFactory::constant(DType dtype, gpupy_scalar value) {
    Node* n = new Node();
    n->kind_ = NodeKind::Constant;
    n->dtype_ = dtype;
    n->size_ = 1;
    n->value_ = value;
    append<int32_t>(n->hash_key_, -1);  // no opcode: marks a constant
    append<int32_t>(n->hash_key_, dtype);
    // Compare by the stored bits of the dtype, so -0.0 != 0.0 and NaNs
    // with equal payloads share.
    char bits[8] = {0};
    scalar_store(dtype, value, bits);
    append_bytes(n->hash_key_, bits, 8);
    return intern(n);
}

NodeRef NodeFactory::expression(OpCode op, DType dtype, const Dims& shape, std::vector<NodeView> children) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = op;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    std::vector<std::string> keys;
    keys.reserve(children.size());
    for (const NodeView& c : children) keys.push_back(view_key(c));
    if (op_is_commutative(op) && children.size() == 2 && keys[1] < keys[0]) {
        std::swap(children[0], children[1]);
        std::swap(keys[0], keys[1]);
    }
    n->children_ = std::move(children);
    append<int32_t>(n->hash_key_, op);
    append<int32_t>(n->hash_key_, dtype);
    append_dims(n->hash_key_, shape);
    for (const std::string& k : keys) n->hash_key_ += k;
    return intern(n);
}

NodeRef NodeFactory::index(DType dtype, const Dims& shape, int axis) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = GPUPY_OP_INDEX;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    n->index_.axis = axis;
    append<int32_t>(n->hash_key_, GPUPY_OP_INDEX);
    append<int32_t>(n->hash_key_, dtype);
    append_dims(n->hash_key_, shape);
    append<int32_t>(n->hash_key_, axis);
    return intern(n);
}

NodeRef NodeFactory::reduce(DType dtype, const Dims& shape, NodeView operand, const ReduceParams& p) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = CORE_OP_REDUCE;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    n->reduce_ = p;
    append<int32_t>(n->hash_key_, CORE_OP_REDUCE);
    append<int32_t>(n->hash_key_, dtype);
    append_dims(n->hash_key_, shape);
    append<int32_t>(n->hash_key_, p.fold);
    append<int32_t>(n->hash_key_, p.mode);
    append<int32_t>(n->hash_key_, p.ndim);
    append<int64_t>(n->hash_key_, p.chunk);
    append<uint64_t>(n->hash_key_, p.identity.u);
    n->hash_key_ += view_key(operand);
    n->children_.push_back(std::move(operand));
    return intern(n);
}

NodeRef NodeFactory::concat(DType dtype, const Dims& shape, std::vector<NodeView> parts) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = CORE_OP_CONCAT;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    append<int32_t>(n->hash_key_, CORE_OP_CONCAT);
    append<int32_t>(n->hash_key_, dtype);
    append_dims(n->hash_key_, shape);
    for (const NodeView& p : parts) n->hash_key_ += view_key(p);
    n->children_ = std::move(parts);
    return intern(n);
}

NodeRef NodeFactory::remap(DType dtype, const Dims& shape, NodeView operand, const RemapParams& p) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = CORE_OP_REMAP;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    n->remap_ = p;
    append<int32_t>(n->hash_key_, CORE_OP_REMAP);
    append<int32_t>(n->hash_key_, dtype);
    append_dims(n->hash_key_, shape);
    append_dims(n->hash_key_, p.div);
    append_dims(n->hash_key_, p.mod);
    n->hash_key_ += view_key(operand);
    n->children_.push_back(std::move(operand));
    return intern(n);
}

NodeRef NodeFactory::intern(Node* fresh) {
    auto& table = hash_table();
    auto it = table.find(fresh->hash_key_);
    if (it != table.end()) {
        ++g_shared_hits;
        delete fresh;  // not hashed yet, holds only references to operands
        return NodeRef(it->second);
    }
    fresh->id_ = g_next_id++;
    if (fresh->kind_ == NodeKind::Expression) fresh->bits_.resize(fresh->size_);
    if (fresh->kind_ == NodeKind::Constant) {
        fresh->host_ = std::make_shared<HostBuffer>(static_cast<size_t>(dtype_itemsize(fresh->dtype_)));
        scalar_store(fresh->dtype_, fresh->value_, fresh->host_->data());
    }
    fresh->hashed_ = true;
    table.emplace(fresh->hash_key_, fresh);
    ++g_created;
    return NodeRef(fresh);
}

int64_t NodeFactory::created() { return g_created; }
int64_t NodeFactory::shared_hits() { return g_shared_hits; }
int64_t NodeFactory::live_hashed() { return static_cast<int64_t>(hash_table().size()); }

NodeView constant_view(NodeRef constant, const Dims& shape) {
    NodeView v;
    v.node = std::move(constant);
    v.geom.offset = 0;
    v.geom.shape = shape;
    v.geom.strides.assign(shape.size(), 0);
    return v;
}

}  // namespace gpupy

namespace gpupy {

NodeHooks& node_hooks() {
    static auto* hooks = new NodeHooks();  // leaked: see hash_table()
    return *hooks;
}

}  // namespace gpupy
