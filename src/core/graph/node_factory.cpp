#include "core/graph/node_factory.hpp"

#include "core/graph/recent_nodes.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "core/graph/node_hooks.hpp"
#include "core/graph/node_table.hpp"

namespace gpupy {

namespace {

// Leaked on purpose: nodes can outlive static destruction at interpreter
// exit, and their destructors still look things up here. A slot refers to
// its node, whose hash_key_ is set before the node is interned and never
// changed after: an entry lives no longer than its node, whose destructor
// removes it, and needs no copy of the key.
NodeTable& hash_table() {
    static auto* table = new NodeTable();
    return *table;
}

uint64_t g_next_id = 1;
int64_t g_created = 0;
int64_t g_shared_hits = 0;
int64_t g_lookups = 0;
int64_t g_export_snapshots = 0;

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

// The operands of one node, each read through a snapshot where its bytes
// are exported; operands that read one exported node through several
// views (img[1:, :] - img[:-1, :]) share one snapshot of the whole node.
void snapshot_operands(std::vector<NodeView>& operands) {
    for (size_t i = 0; i < operands.size(); ++i) {
        const Node* x = operands[i].node.get();
        if (!x->host() || !x->host()->exported()) continue;
        bool again = false;
        for (size_t j = i + 1; j < operands.size() && !again; ++j) again = operands[j].node.get() == x;
        if (!again) {
            operands[i] = NodeFactory::unexported(std::move(operands[i]));
            continue;
        }
        NodeRef copy = NodeFactory::unexported(operands[i].node);
        for (size_t j = i; j < operands.size(); ++j) {
            if (operands[j].node.get() == x) operands[j].node = copy;
        }
    }
}

}  // namespace

namespace {

// The last whole snapshot of each exported buffer, kept while the buffer
// is exported.
struct LastSnapshot {
    std::weak_ptr<HostBuffer> host;
    NodeRef copy;
};
std::vector<LastSnapshot>& last_snapshots() {
    static auto* v = new std::vector<LastSnapshot>();  // leaked, as the hash table
    return *v;
}
int64_t g_snapshots_reused = 0;

// Drops the kept snapshots of buffers that died or for which `drop` holds.
template <typename Drop>
void drop_snapshots(Drop drop) {
    auto& kept = last_snapshots();
    kept.erase(std::remove_if(kept.begin(), kept.end(),
                              [&](const LastSnapshot& s) {
                                  const std::shared_ptr<HostBuffer> h = s.host.lock();
                                  return !h || drop(*h);
                              }),
               kept.end());
}

NodeRef copy_of(const Node* x) {
    NodeRef copy = NodeFactory::array_uninitialized(x->dtype(), x->shape());
    copy_bytes(copy->host_data(), x->host_data(), static_cast<size_t>(x->nbytes()));
    ++g_export_snapshots;
    return copy;
}

NodeRef snapshot(Node* x) {
    const std::shared_ptr<HostBuffer>& host = x->host();
    if (!host->exported() || x->host_data() != host->data() || static_cast<size_t>(x->nbytes()) != host->nbytes())
        return copy_of(x);
    // While the exported bytes stay as they were, one snapshot serves every
    // node built on them.
    drop_snapshots([](const HostBuffer& h) { return !h.exported(); });
    auto& kept = last_snapshots();
    // (Compared byte for byte: as fast as the copy it saves, and exact.)
    auto same = std::find_if(kept.begin(), kept.end(), [&](const LastSnapshot& s) { return s.host.lock() == host; });
    if (same != kept.end() && std::memcmp(same->copy->host_data(), host->data(), host->nbytes()) == 0) {
        ++g_snapshots_reused;
        return same->copy;
    }
    NodeRef copy = copy_of(x);
    // The bytes are those the export began with: the device copy kept
    // through the export holds them, and the snapshot takes it.
    if (host->watched() && content_hash(host->data(), host->nbytes()) == host->watched_hash())
        node_hooks().on_snapshot(x, copy.get());
    if (same != kept.end()) *same = LastSnapshot{host, copy};
    else kept.push_back(LastSnapshot{host, copy});
    return copy;
}

}  // namespace

NodeRef NodeFactory::unexported(NodeRef node) {
    Node* x = node.get();  // (an exported node is complete in host memory: the export made it so)
    if (!x->host() || !x->host()->exported()) return node;
    return snapshot(x);
}

NodeView NodeFactory::unexported(NodeView v) {
    const Node* x = v.node.get();
    if (!x->host() || !x->host()->exported()) return v;
    // The whole node where the view reads as many elements as it holds or
    // more -- itself, a transpose, a broadcast (`a[:, None, :]` of a
    // product: a copy of what it reads would be n times the node) -- one
    // snapshot, reused while the bytes are unchanged, under the same view.
    if (v.geom.size() >= x->size()) return NodeView{unexported(std::move(v.node)), std::move(v.geom)};
    // Else only the elements the view reads: a slice of lent memory spans
    // less than the node.
    NodeRef copy = array_uninitialized(x->dtype(), v.geom.shape);
    const int64_t item = dtype_itemsize(x->dtype());
    char* dst = copy->host_data();
    const char* src = x->host_data();
    for_each_run(v.geom, 0, v.geom.size(), [&](int64_t at, int64_t pos, int64_t run, int64_t stride) {
        if (stride == 1) {
            std::memcpy(dst + at * item, src + pos * item, static_cast<size_t>(run * item));
            return;
        }
        for (int64_t i = 0; i < run; ++i)
            std::memcpy(dst + (at + i) * item, src + (pos + i * stride) * item, static_cast<size_t>(item));
    });
    ++g_export_snapshots;
    return NodeView{std::move(copy), identity_view(v.geom.shape)};
}

NodeRef NodeFactory::for_new_owner(NodeRef node) {
    Node* x = node.get();  // (lent memory is an ARRAY node's: complete)
    if (!x->host() || !(x->host()->lent() || x->host()->exported())) return node;
    return snapshot(x);
}

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

NodeRef NodeFactory::take_host(Node* x) {
    auto copy = std::make_shared<HostBuffer>(static_cast<size_t>(x->nbytes()));
    copy_bytes(copy->data(), x->host_data(), static_cast<size_t>(x->nbytes()));
    NodeRef taker = array(x->dtype(), x->shape(), std::move(x->host_));
    x->host_ = std::move(copy);
    return taker;
}

NodeRef NodeFactory::array_uninitialized(DType dtype, const Dims& shape) {
    auto buf = std::make_shared<HostBuffer>(static_cast<size_t>(shape_size(shape) * dtype_itemsize(dtype)));
    return array(dtype, shape, std::move(buf));
}

namespace {

// A node with this key already in the table, or null.
Node* lookup(const std::string& key) {
    ++g_lookups;
    return hash_table().find(key, NodeTable::hash_of(key));
}

// Whether an expression over these operands may exist: not while one of
// them is operand of nothing (a fresh constant, the result of the previous
// op in a chain). Then the table is not asked -- a lookup that misses is a
// random read of memory, a good part of building a node.
bool may_exist(const NodeView& operand) { return operand.node->parents() > 0; }
bool may_exist(const std::vector<NodeView>& operands) {
    return std::all_of(operands.begin(), operands.end(), [](const NodeView& v) { return may_exist(v); });
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
    snapshot_operands(children);
    if (op_is_commutative(op) && children.size() == 2 && operand_after(children[0], children[1]))
        std::swap(children[0], children[1]);
    std::string key = key_header(op, dtype, shape);
    for (const NodeView& c : children) append_view_key(key, c);
    if (Node* hit = may_exist(children) ? lookup(key) : nullptr) return shared(hit);
    Node* n = new_expression(op, dtype, shape, std::move(key));
    n->set_children(std::move(children));
    NodeRef made = intern(n);
    if (n->size_ >= recent_min_elements()) note_recent(n);
    return made;
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
    operand = NodeFactory::unexported(std::move(operand));
    const bool sizable = operand.geom.size() >= recent_min_elements();  // (its work is its operand's size)
    std::string key = key_header(CORE_OP_REDUCE, dtype, shape);
    append<int32_t>(key, p.fold);
    append<int32_t>(key, p.mode);
    append<int32_t>(key, p.ndim);
    append<int64_t>(key, p.chunk);
    append<uint64_t>(key, p.identity.u);
    append_view_key(key, operand);
    if (Node* hit = may_exist(operand) ? lookup(key) : nullptr) return shared(hit);
    Node* n = new_expression(CORE_OP_REDUCE, dtype, shape, std::move(key));
    n->reduce_ = std::make_unique<const ReduceParams>(p);
    n->set_children({std::move(operand)});
    NodeRef made = intern(n);
    if (sizable) note_recent(n);
    return made;
}

NodeRef NodeFactory::concat(DType dtype, const Dims& shape, std::vector<NodeView> parts) {
    snapshot_operands(parts);
    std::string key = key_header(CORE_OP_CONCAT, dtype, shape);
    for (const NodeView& p : parts) append_view_key(key, p);
    if (Node* hit = may_exist(parts) ? lookup(key) : nullptr) return shared(hit);
    Node* n = new_expression(CORE_OP_CONCAT, dtype, shape, std::move(key));
    n->set_children(std::move(parts));
    return intern(n);
}

NodeRef NodeFactory::remap(DType dtype, const Dims& shape, NodeView operand, const RemapParams& p) {
    operand = NodeFactory::unexported(std::move(operand));
    std::string key = key_header(CORE_OP_REMAP, dtype, shape);
    append_dims(key, p.div);
    append_dims(key, p.mod);
    append_dims(key, p.shift);
    append_dims(key, Dims(p.edge.begin(), p.edge.end()));
    append_view_key(key, operand);
    if (Node* hit = may_exist(operand) ? lookup(key) : nullptr) return shared(hit);
    Node* n = new_expression(CORE_OP_REMAP, dtype, shape, std::move(key));
    n->remap_ = std::make_unique<const RemapParams>(p);
    n->set_children({std::move(operand)});
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
    fresh->hash_ = NodeTable::hash_of(fresh->hash_key_);
    fresh->hashed_ = true;
    hash_table().insert(fresh, fresh->hash_);
    ++g_created;
    return NodeRef(fresh);
}

void NodeFactory::renew_identity(Node* n) {
    unhash(n);
    n->id_ = g_next_id++;
}

int64_t NodeFactory::created() { return g_created; }
int64_t NodeFactory::shared_hits() { return g_shared_hits; }
int64_t NodeFactory::lookups() { return g_lookups; }
int64_t NodeFactory::export_snapshots() { return g_export_snapshots; }
int64_t NodeFactory::snapshots_reused() { return g_snapshots_reused; }

void NodeFactory::forget_snapshot_of(const HostBuffer* host) {
    drop_snapshots([&](const HostBuffer& h) { return &h == host; });
}
int64_t NodeFactory::live_hashed() { return static_cast<int64_t>(hash_table().size()); }

void NodeFactory::unhash(Node* n) {
    if (!n->hashed_) return;
    hash_table().erase(n, n->hash_);
    n->hashed_ = false;
}

}  // namespace gpupy
