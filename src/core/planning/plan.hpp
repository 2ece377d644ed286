// What planning produces for one block (thesis 4.5-4.8), phase by phase:
//
//   walk       the expression below the requested view, as items (one per
//              distinct (node, view): the unit of common-subexpression
//              elimination), each classified: a constant, an index
//              expression, values already on the device or host, an
//              operation to fuse, or pending (needs work outside this plan)
//   partition  resource bounds bottom-up; where the driver's limits are
//              exceeded, operands are collapsed: each becomes a pass of its
//              own, run before the passes that read it
//   lowering   the IR of each pass, common subexpressions emitted once
//   ranges     each pass's output range cut into pieces such that every
//              leaf reads few device blocks; strided leaves that would read
//              too many are marked to be packed (gathered on the host)
//
// Planning changes nothing: it only asks the block cache and the nodes what
// is where. Executing the plan (core/execution/executor.hpp) binds blocks,
// uploads, evaluates and caches results.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/graph/node.hpp"
#include "core/planning/fold.hpp"

namespace gpupy {

// Where an evaluation runs: on the active driver's device (the result is a
// cached device block) or on the host engine (the result is written into
// the node's host buffer in place and its evaluated bits set).
enum class EvalMode { Device, Host };

// The index space a plan's leaves are read over, and the block it produces.
struct Domain {
    Dims shape;    // the domain (for a reduction: its operand's shape)
    Dims strides;  // C-order strides of `shape`
    bool reduction = false;
    ReduceParams reduce;  // when `reduction`
    int64_t inner = 1;    // reduction: product of the reduced dims
    int64_t nchunks = 1;  // reduction in CHUNKS mode: outputs per outer index
    int64_t o0 = 0, o1 = 0;  // output positions of this block
    int64_t d0 = 0, d1 = 0;  // domain positions they read

    int64_t size() const { return shape_size(shape); }
    // The domain positions outputs [a, b) read.
    void range(int64_t a, int64_t b, int64_t* da, int64_t* db) const;
    // True if a map with these strides reads base + flat domain position.
    bool contiguous_map(const Dims& map_strides) const;
};

// One distinct (node, view) met while walking: the unit of CSE.
struct Item {
    enum Class {
        Const,     // a scalar
        Index,     // an index expression computed in the shader
        Exact,     // this view's own blocks over the domain (cached, or
                   // produced by an earlier pass of this plan, or packed)
        Storage,   // read from the node's storage (host or device)
        Remapped,  // a REMAP node: its operand's storage read through div/mod
        Interior,  // an operation to fuse into this evaluation
        Pending,   // needs work outside this plan first; a leaf
    };
    NodeView view;
    Class cls = Interior;
    NodeView source;  // Remapped: the operand whose storage is read; an
                      // Interior GATHER: the storage it gathers from
    int32_t remap = -1;  // Remapped: its parameters, PartPlan::remaps[remap]
    // Interior: operand views composed by the walk; their items are created
    // by the (iterative) walk, never by recursion.
    std::vector<NodeView> kid_views;
    std::vector<int32_t> kids;
    gpupy_resources bound{};
    bool visited = false;
    bool staged = false;  // collapsed: an earlier pass evaluates it
    bool packed = false;  // Exact because the ranges phase packs it
};

// Instruction `in` (a leaf of a pass) reads a GATHER's source: the whole
// storage of the item's source, not the item's view.
inline bool is_gather(const gpupy_ir_instr& in) { return in.op == GPUPY_OP_GATHER; }

// The blocks of a gathering item's source, all of which it binds.
inline int64_t source_blocks(const Item& it, int64_t B) {
    return (std::max<int64_t>(it.source.node->size(), 1) - 1) / B + 1;
}

struct Leaf {
    int32_t item;
    int32_t instr;
};

struct Piece {
    int64_t a, b;  // output positions [a, b) of one driver evaluation
};

// One evaluation of one item's expression (the root, or a collapsed
// operand) over an output range, cut into pieces.
struct Pass {
    int32_t top = -1;
    bool root = false;  // the requested block (a reduction's chunks when the domain is one)
    bool top_as_leaf = false;  // root of a reduction whose operand an earlier pass evaluated
    int64_t block = 0;  // collapsed operand: the block of its view it fills
    int64_t out_begin = 0, out_end = 0;  // output positions (root: of the block; else domain positions)
    std::vector<gpupy_ir_instr> instrs;  // leaves' blocks unbound
    // The root pass's further outputs (planning/siblings.hpp): their items
    // (lowered before `top`), for a reduction their folds, and the
    // instructions of all its outputs (top's first).
    std::vector<int32_t> also;
    std::vector<ReduceParams> also_reduce;
    std::vector<int32_t> outputs_at;
    DomainFold fold;                     // active for domains of more than GPUPY_MAX_DIMS dims
    std::vector<Leaf> leaves;
    // Instructions whose values the driver checks for floating-point
    // errors (gpupy_ir.check), and the item of each.
    std::vector<int32_t> check_instrs, check_items;
    std::vector<Piece> pieces;
};

// The plan of one operand of a join, or of a whole block when there is no
// join: its own domain, items and passes (collapsed operands first, in the
// order they must run; the root pass last).
struct PartPlan {
    Domain domain;
    NodeView root;
    std::vector<Item> items;
    // The parameters of Remapped items: the node's own, or, for a box
    // inside its result (a stencil's slices of a padded array), the node's
    // with the box's corner added to the shifts.
    std::vector<RemapParams> remaps;
    int32_t top = -1;
    std::vector<Pass> passes;
    int64_t dst_base = 0;  // where its outputs start in the destination block
    // The number of the walk that made the items (Node::walk_mark): a node
    // carrying it has an item here.
    uint64_t walk_mark = 0;
};

// Everything needed to evaluate block `block` of `root`.
struct BlockPlan {
    EvalMode mode = EvalMode::Device;
    NodeView root;
    int64_t block = 0;
    int64_t o0 = 0, o1 = 0;  // output positions of the block
    std::vector<PartPlan> parts;
    // Expressions of the root's shape whose block `block` the root pass
    // writes too, parallel to its `also` (planning/siblings.hpp).
    std::vector<NodeRef> siblings;
};

// Visits every item reachable from `top` through interior items once, each
// after the items it reads (iterative post-order: deep chains cannot
// overflow the stack). Resets the items' `visited` flags.
template <class Visit>
void for_each_item_postorder(std::vector<Item>& items, int32_t top, Visit&& visit) {
    for (Item& it : items) it.visited = false;
    std::vector<std::pair<int32_t, size_t>> stack;
    stack.emplace_back(top, 0);
    items[top].visited = true;
    while (!stack.empty()) {
        const int32_t i = stack.back().first;
        size_t& pos = stack.back().second;
        if (items[i].cls == Item::Interior && pos < items[i].kids.size()) {
            const int32_t c = items[i].kids[pos++];
            if (!items[c].visited) {
                items[c].visited = true;
                stack.emplace_back(c, 0);
            }
            continue;
        }
        stack.pop_back();
        visit(i);
    }
}

}  // namespace gpupy
