// The expression graph (thesis 4.1, 4.4, 4.6).
//
// A Node is an immutable value: an ARRAY (host data), a CONSTANT (a scalar)
// or an EXPRESSION (an opcode over operand views, evaluated lazily, with one
// evaluated bit per element). Because nodes never change, equal expressions
// can be shared (hash-consing) and unevaluated expressions keep the values
// they were built from even when the user writes to an array later.
//
// An Owner is the mutable identity the user sees: every Python view of one
// array points at the same Owner, and the Owner points at the Node holding
// the array's current value. A write makes the Owner point at a new Node
// (copy-on-write) unless nothing else refers to the old one, in which case
// the write is destructive (thesis 2.6).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpupy/driver.hpp"
#include "core/graph/dtype.hpp"
#include "core/graph/geometry.hpp"
#include "core/graph/op_table.hpp"
#include "core/graph/evaluated_bits.hpp"
#include "core/graph/host_buffer.hpp"

namespace gpupy {

class Node;

// Intrusive reference to a Node. Releasing the last reference frees the
// node iteratively, so a chain of 100,000 nodes does not recurse 100,000
// destructor frames deep.
class NodeRef {
public:
    NodeRef() = default;
    explicit NodeRef(Node* n);
    NodeRef(const NodeRef& o);
    NodeRef(NodeRef&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
    NodeRef& operator=(NodeRef o) noexcept {
        std::swap(p_, o.p_);
        return *this;
    }
    ~NodeRef();
    Node* get() const { return p_; }
    Node* operator->() const { return p_; }
    Node& operator*() const { return *p_; }
    explicit operator bool() const { return p_ != nullptr; }
    bool operator==(const NodeRef& o) const { return p_ == o.p_; }

private:
    Node* p_ = nullptr;
};

// A view of a node: which of its elements, in which arrangement.
struct NodeView {
    NodeRef node;
    ViewGeometry geom;
};

enum class NodeKind : uint8_t { Array, Constant, Expression };

// Parameters of the special expression opcodes.
struct IndexParams {
    int32_t axis = 0;  // INDEX: value = the element's index along this axis
};
// REMAP: element m reads the operand element whose coordinate d is
// gpupy_map_coordinate(m[d], div[d], shift[d], mod[d], edge[d]) (driver.hpp:
// m[d] / div[d] + shift[d], then wrapped, clamped or mirrored into the
// operand's extent); the operand has its own shape.
struct RemapParams {
    Dims div;
    Dims mod;
    Dims shift;
    std::vector<int32_t> edge;  // enum gpupy_edge

    // Reads the operand unchanged (div 1, no shift, no modulo) in nd dims.
    static RemapParams identity(size_t nd) {
        return RemapParams{Dims(nd, 1), Dims(nd, 0), Dims(nd, 0), std::vector<int32_t>(nd, GPUPY_EDGE_WRAP)};
    }
};
struct ReduceParams {
    OpCode fold = GPUPY_OP_NONE;  // binary op folding values (ADD, MAXIMUM, ...)
    int32_t mode = GPUPY_REDUCE_CHUNKS;
    int32_t ndim = 0;             // trailing operand dims that are reduced
    int64_t chunk = 0;
    gpupy_scalar identity{};
};

class Node {
    // What a planner's walk reads of every node it passes comes first, in
    // the node's first few cache lines (176 bytes): a walk over a chain of
    // thousands of nodes was waiting on memory for most of its time.
public:
    // The planner's walk (planning/walk.cpp): this node's first item in the
    // walk numbered `walk_mark` (each walk takes a new number, so nothing is
    // reset between walks; the core runs on one thread at a time). Looked up
    // once per operand of every planned item, where a hash map keyed by the
    // node's id was a fifth of the walk's time.
    uint64_t walk_mark = 0;
    int32_t walk_first_item = -1;
    // Evaluation bookkeeping owned by the block cache.
    int32_t cached_blocks = 0;

private:
    int32_t refs_ = 0;
    NodeKind kind_ = NodeKind::Array;
    DType dtype_ = GPUPY_FLOAT32;
    OpCode op_ = GPUPY_OP_NONE;
    int64_t size_ = 0;
    std::vector<NodeView> children_;
    std::shared_ptr<HostBuffer> host_;
    EvaluatedBits bits_;
    Dims shape_;

public:
    ~Node();
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    uint64_t id() const { return id_; }
    // What hash-consing knows this node by (node_factory.cpp): its op, dtype,
    // shape and operands, or a constant's value.
    std::string_view hash_key() const { return hash_key_; }
    // Creation order, never renewed (an id is, when the values change): a
    // node's operands all exist before it, so nothing born before x can
    // reach x through its operands.
    uint64_t born() const { return born_; }
    NodeKind kind() const { return kind_; }
    DType dtype() const { return dtype_; }
    const Dims& shape() const { return shape_; }
    int64_t size() const { return size_; }
    int64_t nbytes() const { return size_ * dtype_itemsize(dtype_); }
    int refcount() const { return refs_; }

    // EXPRESSION
    OpCode op() const { return op_; }
    const std::vector<NodeView>& children() const { return children_; }
    // Nodes made with this one as an operand, less those that died still
    // holding it: never less than the nodes in the hash-consing table whose
    // key names it (a complete parent drops its operands but keeps its key,
    // and stays counted). Zero: no expression over this node can be found.
    int32_t parents() const { return parents_; }
    const IndexParams& index_params() const { return index_; }
    // (A node of another op reads the defaults.)
    const ReduceParams& reduce_params() const { return reduce_ ? *reduce_ : no_reduce(); }
    const RemapParams& remap_params() const { return remap_ ? *remap_ : no_remap(); }
    // CONSTANT
    gpupy_scalar value() const { return value_; }

    // Host data. ARRAY and CONSTANT nodes always have it; an EXPRESSION gets
    // its buffer when its first element is evaluated.
    const std::shared_ptr<HostBuffer>& host() const { return host_; }
    char* host_data() const { return host_ ? host_->data() : nullptr; }
    // Allocates the host buffer of an EXPRESSION on first need.
    char* ensure_host_buffer();
    // Every element is on the host.
    bool complete() const { return kind_ != NodeKind::Expression || bits_.count() == size_; }
    EvaluatedBits& bits() { return bits_; }
    const EvaluatedBits& bits() const { return bits_; }
    // Called once an expression became complete: its operands are no longer
    // needed, so release them (and everything only they kept alive).
    void drop_children();

    // Remove from the hash-consing table, e.g. before a destructive write.
    void unhash();

    // Listed among the recent sizable expressions (recent_nodes.hpp).
    bool in_recent = false;
    // Results of one call needed together (divmod's quotient and
    // remainder): equal non-zero numbers, evaluated in one pass where they
    // can be (planning/siblings.hpp).
    uint64_t together = 0;
    // Floating-point errors (execution/fp_errors.hpp): the kinds NumPy's
    // error state asked to warn about when this op was built (FpKind
    // bits), those already reported, and the function the warnings name,
    // a string that lives as long as the process (np.power(a, 2) built as a
    // square is still "power", divmod's remainder "divmod"; null: this
    // node's op).
    uint8_t fp_warn = 0;
    uint8_t fp_reported = 0;
    const char* fp_name = nullptr;
private:
    friend class NodeRef;
    friend class NodeFactory;
    Node() = default;
    static uint64_t next_birth();
    static const ReduceParams& no_reduce();
    static const RemapParams& no_remap();
    // Takes its operands (once, when made), counted as their parent.
    void set_children(std::vector<NodeView> children);

    uint64_t id_ = 0;
    uint64_t born_ = next_birth();
    int32_t parents_ = 0;
    IndexParams index_;
    // Held apart: few nodes are reductions or remaps, and every node's size
    // is what a planner's walk over thousands of them reads through.
    std::unique_ptr<const ReduceParams> reduce_;
    std::unique_ptr<const RemapParams> remap_;
    gpupy_scalar value_{};
    bool hashed_ = false;
    std::string hash_key_;
    uint64_t hash_ = 0;  // of hash_key_, kept for leaving the table
};

// The mutable identity behind user-visible arrays.
struct Owner {
    NodeRef node;
};

// A NodeView broadcasting a constant to `shape`.
NodeView constant_view(NodeRef constant, const Dims& shape);

// The host bytes a node keeps alive until it is evaluated: those of the
// evaluated nodes it reaches through unevaluated ones, each counted once
// (the node's own if it is evaluated). A small lazy result -- a chunk's
// partial sum -- can hold far more than itself.
int64_t retained_host_bytes(const Node* node);

}  // namespace gpupy
