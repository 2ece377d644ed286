#include "core/planning/lower.hpp"

#include <cstring>

#include "core/execution/fp_errors.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

void set_blank(gpupy_ir_instr& in, OpCode op, DType dtype) {
    std::memset(&in, 0, sizeof in);
    in.op = op;
    in.dtype = dtype;
    in.arg[0] = in.arg[1] = in.arg[2] = -1;
    for (int d = 0; d < GPUPY_MAX_DIMS; ++d) in.map.div[d] = 1;
}

}  // namespace

ItemInstr item_instr(const Item& it, bool as_leaf) {
    const Node* x = it.view.node.get();
    switch (it.cls) {
    case Item::Const: return {GPUPY_OP_CONST, x->dtype(), false};
    case Item::Index: return {GPUPY_OP_INDEX, x->dtype(), false};
    case Item::Interior:
        if (!as_leaf) return {x->op(), x->dtype(), false};
        [[fallthrough]];
    default: return {GPUPY_OP_LOAD, x->dtype(), true};
    }
}

void describe_item(const Item& it, bool as_leaf, gpupy_ir_instr& in) {
    const ItemInstr k = item_instr(it, as_leaf);
    set_blank(in, k.op, k.dtype);
    if (k.load) in.nblocks = 1;
    // A gather binds all its source's blocks: bounded by the most it may
    // (the exact check counts the real number).
    if (k.op == GPUPY_OP_GATHER) in.nblocks = GPUPY_MAX_LEAF_BLOCKS;
}

gpupy_ir_instr describe_item(const Item& it, bool as_leaf) {
    gpupy_ir_instr in;
    describe_item(it, as_leaf, in);
    return in;
}

std::vector<gpupy_ir_instr> lower(const PartPlan& part, int32_t top, EvalMode mode, std::vector<Leaf>* leaves,
                                  DomainFold* fold, bool top_as_leaf, size_t expected, const std::vector<int32_t>* also,
                                  std::vector<int32_t>* outputs_at, Pass* checks) {
    const Domain& dom = part.domain;
    const int nd = static_cast<int>(dom.shape.size());
    const bool wide = nd > GPUPY_MAX_DIMS;
    if (wide && dom.reduction) throw InternalError("a reduction domain with more dimensions than the IR holds");
    std::vector<WideMap> maps;
    // Writes instruction `at`'s index map: into the instruction, or, for a
    // domain to fold, into a wide map folded at the end.
    auto set_map = [&](gpupy_ir_instr& in, int32_t at, int64_t base, const Dims& strides, const RemapParams* rp) {
        auto dim = [&](int d) {
            return rp ? MapDim{strides[d], rp->div[d], rp->mod[d], rp->shift[d], rp->edge[d]} : MapDim{strides[d]};
        };
        if (wide) {
            WideMap w{at, base, {}};
            for (int d = 0; d < nd; ++d) w.dims.push_back(dim(d));
            maps.push_back(std::move(w));
            return;
        }
        in.map.base = base;  // (no allocation here: a plan lowers its leaves many times)
        for (int d = 0; d < nd; ++d) dim(d).write(in.map, d);
    };
    auto is_leaf = [&](int32_t i) {
        const Item& it = part.items[i];
        return it.cls != Item::Interior || (it.staged && (i != top || top_as_leaf));
    };
    std::vector<gpupy_ir_instr> out;
    out.reserve(expected);
    if (checks) {
        checks->check_instrs.clear();
        checks->check_items.clear();
    }
    // Instruction of each item already emitted (-1: not yet). Indexed by
    // item: a plan lowers its subtrees many times (each resource check and
    // each pass), and a hash map here was one of the planner's largest costs.
    std::vector<int32_t> emitted(part.items.size(), -1);
    std::vector<std::pair<int32_t, size_t>> stack;
    std::vector<int32_t> roots;
    for (size_t k = 0; also && k < also->size(); ++k) {
        if ((*also)[k] != top) roots.push_back((*also)[k]);
    }
    roots.push_back(top);
    for (const int32_t root : roots) {
        stack.emplace_back(root, 0);
        while (!stack.empty()) {
            auto& [i, pos] = stack.back();
            const Item& it = part.items[i];
            if (!is_leaf(i) && pos < it.kids.size()) {
                const int32_t c = it.kids[pos++];
                if (emitted[c] < 0) stack.emplace_back(c, 0);
                continue;
            }
            const int32_t cur = i;
            stack.pop_back();
            if (emitted[cur] >= 0) continue;
            const Item& item = part.items[cur];
            const Node* x = item.view.node.get();
            const bool leaf = is_leaf(cur);
            // (Written in place, not copied: lower.hpp's describe_item.)
            const int32_t at = static_cast<int32_t>(out.size());
            gpupy_ir_instr& in = out.emplace_back();
            describe_item(item, leaf, in);
            const Item::Class staged_as = mode == EvalMode::Host ? Item::Storage : Item::Exact;
            const Item::Class cls = leaf && item.cls == Item::Interior ? staged_as : item.cls;
            switch (cls) {
            case Item::Const:
                in.value = x->value();
                break;
            case Item::Index: {
                set_map(in, at, item.view.geom.offset, item.view.geom.strides, nullptr);
                const int axis = x->index_params().axis;
                in.div = c_strides(x->shape())[axis];
                in.mod = axis == 0 ? 0 : x->shape()[axis];
                if (dom.contiguous_map(item.view.geom.strides)) in.flags |= GPUPY_INSTR_CONTIGUOUS;
                break;
            }
            case Item::Exact:
                // The view's own blocks, laid out in domain order.
                set_map(in, at, 0, dom.strides, nullptr);
                in.flags |= GPUPY_INSTR_CONTIGUOUS;
                leaves->push_back({cur, at});
                break;
            case Item::Remapped: {
                const RemapParams& rp = part.remaps.at(item.remap);
                set_map(in, at, item.source.geom.offset, item.source.geom.strides, &rp);
                in.dtype = item.source.node->dtype();
                in.flags |= GPUPY_INSTR_REMAPPED;
                leaves->push_back({cur, at});
                break;
            }
            case Item::Storage:
            case Item::Pending:
                set_map(in, at, item.view.geom.offset, item.view.geom.strides, nullptr);
                if (dom.contiguous_map(item.view.geom.strides)) in.flags |= GPUPY_INSTR_CONTIGUOUS;
                leaves->push_back({cur, at});
                break;
            case Item::Interior:
                for (size_t a = 0; a < item.kids.size(); ++a) in.arg[a] = emitted[item.kids[a]];
                if (is_gather(in)) leaves->push_back({cur, at});  // binds its source
                if (checks && fp_kinds_to_check(*x)) {
                    checks->check_instrs.push_back(at);
                    checks->check_items.push_back(cur);
                }
                break;
            }
            emitted[cur] = at;
        }
    }
    if (outputs_at) {
        outputs_at->assign(1, emitted[top]);
        for (size_t k = 0; also && k < also->size(); ++k) outputs_at->push_back(emitted[(*also)[k]]);
    }
    *fold = wide ? fold_domain(dom.shape, maps, out) : DomainFold{};
    return out;
}

void shape_unbound_leaves(const PartPlan& part, const std::vector<Leaf>& leaves, int64_t B,
                          std::vector<gpupy_ir_instr>& instrs) {
    for (const Leaf& l : leaves) {
        gpupy_ir_instr& in = instrs[l.instr];
        in.nblocks = is_gather(in) ? static_cast<int32_t>(source_blocks(part.items[l.item], B)) : 1;
        in.block_elems = B;
    }
}

gpupy_ir make_ir(const Domain& dom, const DomainFold& fold, std::vector<gpupy_ir_instr>& instrs, int64_t a,
                 int64_t b, bool reduce, int64_t dst_offset, const std::vector<int32_t>* outputs,
                 const std::vector<ReduceParams>* also_reduce) {
    gpupy_ir ir;
    std::memset(&ir, 0, sizeof ir);
    ir.ninstr = static_cast<int32_t>(instrs.size());
    ir.instr = instrs.data();
    const Dims& shape = fold.active ? fold.ir_shape : dom.shape;
    ir.ndim = static_cast<int32_t>(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) ir.shape[d] = shape[d];
    // A folded domain's piece starts within one index of its leading
    // dimensions; their offset goes into the maps' bases.
    ir.start = fold.active ? fold_piece(fold, instrs, a) : a;
    ir.count = b - a;
    ir.dst_offset = dst_offset;
    ir.reduce_op = GPUPY_OP_NONE;
    ir.noutputs = 1;
    ir.output[0] = ir.ninstr - 1;
    if (outputs && !outputs->empty()) {
        ir.noutputs = static_cast<int32_t>(outputs->size());
        for (size_t k = 0; k < outputs->size(); ++k) ir.output[k] = (*outputs)[k];
    }
    if (reduce) {
        ir.reduce_op = dom.reduce.fold;
        ir.reduce_mode = dom.reduce.mode;
        ir.reduce_ndim = dom.reduce.ndim;
        ir.reduce_chunk = dom.reduce.chunk;
        ir.reduce_identity = dom.reduce.identity;
        for (size_t k = 0; also_reduce && k < also_reduce->size(); ++k) {
            ir.output_reduce_op[k + 1] = (*also_reduce)[k].fold;
            ir.output_identity[k + 1] = (*also_reduce)[k].identity;
        }
    }
    return ir;
}

}  // namespace gpupy
