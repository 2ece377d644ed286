// Planning phase 3: lowering (thesis fig. 4.5). The IR of one item's
// expression over the part's domain, each item emitted once (CSE), leaves
// with index maps relative to the domain and their device blocks left
// unbound (the executor binds them).
#pragma once

#include <vector>

#include "core/planning/plan.hpp"

namespace gpupy {

// How an item enters resource bounds and the IR: its op, or LOAD for
// anything read from memory (a staged item is read like Exact).
gpupy_ir_instr describe_item(const Item& it, bool as_leaf);
// The same, written into `in` (an instruction is 400 bytes: a plan lowers
// tens of thousands, and a copy of each was most of lowering's time).
void describe_item(const Item& it, bool as_leaf, gpupy_ir_instr& in);

// What describe_item's instruction is made of, without making it: the op,
// the dtype and whether it reads a block. A driver's resource bound for one
// item depends on these alone.
struct ItemInstr {
    OpCode op;
    DType dtype;
    bool load;
};
ItemInstr item_instr(const Item& it, bool as_leaf);

// The IR of the expression at item `top`: post-order, leaves appended to
// *leaves. Staged items other than `top` are leaves (an earlier pass
// evaluated them): read as their view's own blocks on the device, through
// their view from the node's host buffer in host mode.
// Domains of more than GPUPY_MAX_DIMS dimensions are folded (fold.hpp)
// into *fold.
// `top_as_leaf`: `top` itself was staged (a reduction whose operand's op
// and fold do not fit together): the IR reads it.
// `expected`: about how many instructions to expect (room is made for them
// at once; growing a vector of these large records copies them repeatedly).
// `also`: items lowered into the same list before `top` (more outputs of
// one evaluation, planning/siblings.hpp); *outputs_at gets the
// instructions of top, then of each of them.
// `checks`: the pass whose check_instrs/check_items are set to the
// operations computed here that are to be checked for floating-point
// errors (execution/fp_errors.hpp).
std::vector<gpupy_ir_instr> lower(const PartPlan& part, int32_t top, EvalMode mode, std::vector<Leaf>* leaves,
                                  DomainFold* fold, bool top_as_leaf = false, size_t expected = 0,
                                  const std::vector<int32_t>* also = nullptr, std::vector<int32_t>* outputs_at = nullptr,
                                  Pass* checks = nullptr);

// The leaves of `instrs` shaped as a resource check sees them before the
// executor binds blocks: one block of B elements each (a gather as many as
// its source has, all of which it binds).
void shape_unbound_leaves(const PartPlan& part, const std::vector<Leaf>& leaves, int64_t B,
                          std::vector<gpupy_ir_instr>& instrs);

// The gpupy_ir of `instrs` (their leaves' blocks bound, a folded domain's
// piece offsets applied) for outputs [a, b). `reduce`: a reduction over
// the domain (the root pass of a reduction part); else elementwise over the
// domain. dst_offset: where output a goes in the destination block(s).
// `outputs`: the instructions written (none: the last one); a reduction's
// further outputs fold as `also_reduce` says.
gpupy_ir make_ir(const Domain& domain, const DomainFold& fold, std::vector<gpupy_ir_instr>& instrs, int64_t a,
                 int64_t b, bool reduce, int64_t dst_offset, const std::vector<int32_t>* outputs = nullptr,
                 const std::vector<ReduceParams>* also_reduce = nullptr);

}  // namespace gpupy
