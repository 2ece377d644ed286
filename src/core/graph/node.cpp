#include "core/graph/node.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "core/runtime/errors.hpp"
#include "core/graph/node_hooks.hpp"

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

// Canonical order of commutative operands: constants last, then the older
// node first (then by view). So `a + c` has one IR structure whatever the
// constant (hash-consed, it may be older or newer than `a`), and a loop like
// d = minimum(new, d) yields the same operand order at every level: one
// compiled program serves every repetition.
bool operand_after(const NodeView& a, const NodeView& b) {
    const bool ca = a.node->kind() == NodeKind::Constant, cb = b.node->kind() == NodeKind::Constant;
    if (ca != cb) return ca;
    if (a.node->id() != b.node->id()) return a.node->id() > b.node->id();
    if (a.geom.offset != b.geom.offset) return a.geom.offset > b.geom.offset;
    return a.geom.strides > b.geom.strides;
}

void append_view_key(std::string& k, const NodeView& v) {
    append<uint64_t>(k, v.node->id());
    append<int64_t>(k, v.geom.offset);
    append_dims(k, v.geom.shape);
    append_dims(k, v.geom.strides);
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

namespace {

// Freed host buffers kept for reuse. Evaluating the same kind of expression
// again (a loop, a benchmark) allocates buffers of the same sizes; memory
// fresh from the OS costs a page fault per 4 KiB on first write, measured
// at ~2 us each here: 200 us for a 400 KB result that takes 30 us to
// compute. Bounded, and only buffers of at least kPoolMinBytes (smaller
// ones malloc serves from its own free lists).
class BufferPool {
public:
    char* take(size_t nbytes, size_t* capacity) {
        if (nbytes >= kPoolMinBytes) {
            // The smallest cached buffer that fits without wasting half.
            auto it = free_.lower_bound(nbytes);
            if (it != free_.end() && it->first <= 2 * nbytes) {
                *capacity = it->first;
                char* p = it->second;
                cached_ -= it->first;
                free_.erase(it);
                return p;
            }
        }
        *capacity = std::max<size_t>(nbytes, 1);
        return static_cast<char*>(std::malloc(*capacity));
    }
    void give(char* p, size_t capacity) {
        if (capacity >= kPoolMinBytes && capacity <= kPoolMaxBytes) {
            while (cached_ + capacity > kPoolMaxBytes && !free_.empty()) {
                auto oldest = free_.begin();  // smallest first: cheapest to refault
                cached_ -= oldest->first;
                std::free(oldest->second);
                free_.erase(oldest);
            }
            free_.emplace(capacity, p);
            cached_ += capacity;
            return;
        }
        std::free(p);
    }

private:
    static constexpr size_t kPoolMinBytes = size_t{64} << 10;
    static constexpr size_t kPoolMaxBytes = size_t{256} << 20;
    std::multimap<size_t, char*> free_;
    size_t cached_ = 0;
};

BufferPool& buffer_pool() {
    static auto* pool = new BufferPool();  // leaked: buffers outlive statics
    return *pool;
}

}  // namespace

HostBuffer::HostBuffer(size_t nbytes) : nbytes_(nbytes) {
    // malloc's 16-byte alignment suits every dtype (NumPy uses the same);
    // never zero bytes, so data() is always a valid pointer for NumPy.
    data_ = buffer_pool().take(nbytes, &capacity_);
    if (!data_) throw std::bad_alloc();
}
HostBuffer::~HostBuffer() { buffer_pool().give(data_, capacity_); }

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
    if (i0 < i1 && words_.empty()) return false;
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
    if (!host_) {
        host_ = std::make_shared<HostBuffer>(static_cast<size_t>(nbytes()));
        // Evaluated bits exist from the first evaluated element on: an
        // expression never evaluated on the host costs no bitmap.
        if (kind_ == NodeKind::Expression) bits_.resize(size_);
    }
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

namespace {

// A node with this key already in the table, or null.
Node* lookup(const std::string& key) {
    auto& table = hash_table();
    auto it = table.find(key);
    return it == table.end() ? nullptr : it->second;
}

std::string key_header(int32_t op, DType dtype, const Dims& shape) {
    std::string k;
    k.reserve(64 + 48 * shape.size());
    append<int32_t>(k, op);
    append<int32_t>(k, dtype);
    append_dims(k, shape);
    return k;
}

}  // namespace

NodeRef NodeFactory::constant(DType dtype, gpupy_scalar value) {
    std::string key;
    append<int32_t>(key, -1);  // no opcode: marks a constant
    append<int32_t>(key, dtype);
    // Compare by the stored bits of the dtype, so -0.0 != 0.0 and NaNs
    // with equal payloads share.
    char bits[8] = {0};
    scalar_store(dtype, value, bits);
    append_bytes(key, bits, 8);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new Node();
    n->kind_ = NodeKind::Constant;
    n->dtype_ = dtype;
    n->size_ = 1;
    n->value_ = value;
    n->hash_key_ = std::move(key);
    return intern(n);
}

NodeRef NodeFactory::expression(OpCode op, DType dtype, const Dims& shape, std::vector<NodeView> children) {
    if (op_is_commutative(op) && children.size() == 2 && operand_after(children[0], children[1]))
        std::swap(children[0], children[1]);
    std::string key = key_header(op, dtype, shape);
    for (const NodeView& c : children) append_view_key(key, c);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new_expression(op, dtype, shape, std::move(key));
    n->children_ = std::move(children);
    return intern(n);
}

NodeRef NodeFactory::index(DType dtype, const Dims& shape, int axis) {
    std::string key = key_header(GPUPY_OP_INDEX, dtype, shape);
    append<int32_t>(key, axis);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new_expression(GPUPY_OP_INDEX, dtype, shape, std::move(key));
    n->index_.axis = axis;
    return intern(n);
}

NodeRef NodeFactory::reduce(DType dtype, const Dims& shape, NodeView operand, const ReduceParams& p) {
    std::string key = key_header(CORE_OP_REDUCE, dtype, shape);
    append<int32_t>(key, p.fold);
    append<int32_t>(key, p.mode);
    append<int32_t>(key, p.ndim);
    append<int64_t>(key, p.chunk);
    append<uint64_t>(key, p.identity.u);
    append_view_key(key, operand);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new_expression(CORE_OP_REDUCE, dtype, shape, std::move(key));
    n->reduce_ = p;
    n->children_.push_back(std::move(operand));
    return intern(n);
}

NodeRef NodeFactory::concat(DType dtype, const Dims& shape, std::vector<NodeView> parts) {
    std::string key = key_header(CORE_OP_CONCAT, dtype, shape);
    for (const NodeView& p : parts) append_view_key(key, p);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new_expression(CORE_OP_CONCAT, dtype, shape, std::move(key));
    n->children_ = std::move(parts);
    return intern(n);
}

NodeRef NodeFactory::remap(DType dtype, const Dims& shape, NodeView operand, const RemapParams& p) {
    std::string key = key_header(CORE_OP_REMAP, dtype, shape);
    append_dims(key, p.div);
    append_dims(key, p.mod);
    append_view_key(key, operand);
    if (Node* hit = lookup(key)) return shared(hit);
    Node* n = new_expression(CORE_OP_REMAP, dtype, shape, std::move(key));
    n->remap_ = p;
    n->children_.push_back(std::move(operand));
    return intern(n);
}

// A fresh expression node, not yet interned: the fields every kind shares.
Node* NodeFactory::new_expression(OpCode op, DType dtype, const Dims& shape, std::string key) {
    Node* n = new Node();
    n->kind_ = NodeKind::Expression;
    n->op_ = op;
    n->dtype_ = dtype;
    n->shape_ = shape;
    n->size_ = shape_size(shape);
    n->hash_key_ = std::move(key);
    return n;
}

NodeRef NodeFactory::shared(Node* hit) {
    ++g_shared_hits;
    return NodeRef(hit);
}

NodeRef NodeFactory::intern(Node* fresh) {
    fresh->id_ = g_next_id++;
    if (fresh->kind_ == NodeKind::Constant) {
        fresh->host_ = std::make_shared<HostBuffer>(static_cast<size_t>(dtype_itemsize(fresh->dtype_)));
        scalar_store(fresh->dtype_, fresh->value_, fresh->host_->data());
    }
    fresh->hashed_ = true;
    hash_table().emplace(fresh->hash_key_, fresh);
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
