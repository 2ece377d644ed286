// Creating nodes, with hash-consing (thesis 4.6): an expression or constant
// equal to a live one is that node, so common subexpressions built twice
// from Python are one node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/node.hpp"

namespace gpupy {

// Creates nodes; expressions and constants are hash-consed (thesis 4.6):
// constants by dtype and value, expressions by opcode, dtype, parameters
// and operand views, with the operands of commutative ops sorted first.
class NodeFactory {
public:
    static NodeRef array(DType dtype, const Dims& shape, std::shared_ptr<HostBuffer> host);
    static NodeRef array_uninitialized(DType dtype, const Dims& shape);
    static NodeRef constant(DType dtype, gpupy_scalar value);
    static NodeRef expression(OpCode op, DType dtype, const Dims& shape, std::vector<NodeView> children);
    // INDEX node: element value = its index along `axis`, as dtype.
    static NodeRef index(DType dtype, const Dims& shape, int axis);
    static NodeRef reduce(DType dtype, const Dims& shape, NodeView operand, const ReduceParams& params);
    // Parts (same dtype, same shape but axis 0) joined along axis 0.
    static NodeRef concat(DType dtype, const Dims& shape, std::vector<NodeView> parts);
    static NodeRef remap(DType dtype, const Dims& shape, NodeView operand, const RemapParams& params);

    // Nodes created / found again by hash-consing / lookups of its table,
    // for stats().
    static int64_t created();
    static int64_t shared_hits();
    static int64_t lookups();
    // `node`, or where another library holds its host bytes writable (a live
    // export, HostBuffer::exported) a snapshot of them: what an expression
    // takes, so that later writes through the export reach only the
    // exporting array, as NumPy's, computed at once, would.
    static NodeRef unexported(NodeRef node);
    // For a write into bytes another library holds (they are the array's
    // value) while something still reads x's old values: a new ARRAY node
    // takes x's host buffer, and x keeps a private copy of its bytes.
    // x must be complete, its node the buffer's whole.
    static NodeRef take_host(Node* x);
    // `v`, or where its node's bytes are exported, a view of a snapshot of
    // the elements it reads (what an operand of a new node reads).
    static NodeView unexported(NodeView v);
    // `node` as the value of a new owner: a snapshot where its bytes are
    // memory lent by an ndarray or exported to one -- that memory is one
    // array's storage, and a second owner sharing it would share memory
    // with it -- else the node itself (a shared value, copied on write).
    static NodeRef for_new_owner(NodeRef node);
    // Operands copied because another library held their bytes writable
    // (never reset, as created() and shared_hits()).
    static int64_t export_snapshots();
    // Snapshots taken again: the exported bytes were unchanged since the
    // last one (one snapshot serves every node a loop body builds on an
    // exported array).
    static int64_t snapshots_reused();
    // The buffer's exports ended: its last snapshot is no longer kept for
    // reuse.
    static void forget_snapshot_of(const HostBuffer* host);
    static int64_t live_hashed();

    // Removes a node from the hash-consing table (it changed, or is dying).
    static void unhash(Node* node);
    // A node whose values change in place becomes a new value: it leaves the
    // table and takes a new id, so no expression hash-consed over its old
    // values (a complete one keeps its key after dropping its children) is
    // found for expressions built on it from now on.
    static void renew_identity(Node* n);

private:
    static Node* new_expression(OpCode op, DType dtype, const Dims& shape, std::string key);
    static NodeRef intern(Node* fresh);
    static NodeRef shared(Node* hit);
};

}  // namespace gpupy
