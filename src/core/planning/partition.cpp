#include "core/planning/partition.hpp"

#include <algorithm>
#include <unordered_map>

#include "core/planning/lower.hpp"
#include "core/planning/staging_memo.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

class Partitioner {
public:
    Partitioner(const PlanContext& ctx, PartPlan& part) : ctx_(ctx), part_(part), drv_(ctx.driver) {}

    void run() {
        // Every item's operands are bounded before it.
        parents_.assign(part_.items.size(), 0);
        for (const Item& it : part_.items) {
            if (it.cls != Item::Interior) continue;
            for (size_t k = 0; k < it.kids.size(); ++k) {
                const int32_t c = it.kids[k];
                if (std::find(it.kids.begin(), it.kids.begin() + k, c) == it.kids.begin() + k) ++parents_[c];
            }
        }
        for_each_item_postorder(part_.items, part_.top, [this](int32_t i) { bound(i); });
        if (staged_shared_) recheck_passes();
    }

    // Whether the partition already made (staging_memo.hpp) fits: every
    // pass it makes, checked exactly.
    bool passes_fit() {
        for (int32_t i = 0; i < static_cast<int32_t>(part_.items.size()); ++i) {
            const Item& it = part_.items[i];
            if (it.cls != Item::Interior || !(it.staged || i == part_.top)) continue;
            gpupy_resources exact{};
            if (!fits_exactly(i, &exact)) return false;
        }
        return true;
    }

private:
    // Staging an operand read by several items can make a pass checked
    // before it read more: the operand becomes one more leaf where its own
    // leaves were shared with the rest of that pass (a running minimum over
    // candidates: each step reads the last). So once such an operand is
    // staged, every pass is checked again, with more of its operands staged
    // where it no longer fits, until all fit (staging only grows, so this
    // ends). An operand read by one item only is staged by that item, whose
    // pass is checked right then.
    void recheck_passes() {
        for (bool changed = true; changed;) {
            changed = false;
            for (int32_t i = 0; i < static_cast<int32_t>(part_.items.size()); ++i) {
                const Item& it = part_.items[i];
                if (it.cls != Item::Interior || !(it.staged || i == part_.top)) continue;
                gpupy_resources exact{};
                if (fits_exactly(i, &exact)) continue;
                stage_until_it_fits(i);
                changed = true;
            }
        }
    }

    void bound(int32_t i) {
        Item& it = part_.items[i];
        gpupy_resources b = item_resources(it, false);
        const bool reduced = part_.domain.reduction && i == part_.top;
        if (reduced) drv_.resource_add(&b, fold_resources());  // the root pass also folds
        if (it.cls != Item::Interior) {
            it.bound = b;
            return;
        }
        for (int32_t c : it.kids) drv_.resource_add(&b, part_.items[c].bound);
        if (drv_.resource_check(b)) {
            it.bound = b;
            return;
        }
        gpupy_resources exact{};
        if (fits_exactly(i, &exact)) {
            it.bound = exact;
            return;
        }
        stage_until_it_fits(i);
    }

    // Stages item i's operands, costliest first, until its pass fits (for
    // the root of a reduction, finally the operand of the fold itself).
    void stage_until_it_fits(int32_t i) {
        const Item& it = part_.items[i];
        const bool reduced = part_.domain.reduction && i == part_.top;
        gpupy_resources exact{};
        std::vector<int32_t> order;
        for (int32_t c : it.kids) {
            const Item& k = part_.items[c];
            if (k.cls == Item::Interior && !k.staged && std::find(order.begin(), order.end(), c) == order.end())
                order.push_back(c);
        }
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) {
            for (int s = 0; s < GPUPY_RESOURCE_SLOTS; ++s) {
                if (part_.items[a].bound.slot[s] != part_.items[c].bound.slot[s])
                    return part_.items[a].bound.slot[s] > part_.items[c].bound.slot[s];
            }
            return false;
        });
        for (int32_t c : order) {
            stage(c);
            if (fits_exactly(i, &exact)) {
                // (A staged item keeps its bound as a leaf: what it costs
                // the passes that read it.)
                if (!it.staged) part_.items[i].bound = exact;
                return;
            }
        }
        if (reduced) {
            // The operand's own op and the fold do not fit together: the
            // operand is evaluated first, and the reduction reads it.
            stage(i);
            if (fits_exactly(i, &exact)) {
                part_.items[i].bound = exact;
                return;
            }
        }
        throw DriverError("the " + drv_.name() + " driver cannot evaluate '" + op_display_name(it.view.node->op()) +
                          "' even with every operand evaluated separately (its limits are too small)");
    }

    void stage(int32_t c) {
        Item& it = part_.items[c];
        if (parents_[c] > 1) staged_shared_ = true;
        ++stats().collapses;
        it.staged = true;
        it.bound = item_resources(it, true);
    }

    // The driver's bound for one item alone. It depends only on the
    // instruction describe_item makes (op, dtype, whether a load), so it is
    // asked once per kind: a plan bounds thousands of items of a few kinds.
    gpupy_resources item_resources(const Item& it, bool as_leaf) {
        const ItemInstr k = item_instr(it, as_leaf);
        const uint64_t key = (static_cast<uint64_t>(k.op) << 32) | (static_cast<uint64_t>(k.dtype) << 1) |
                             static_cast<uint64_t>(k.load);
        auto found = known_.find(key);
        if (found != known_.end()) return found->second;
        return known_.emplace(key, drv_.resource_get(describe_item(it, as_leaf))).first->second;
    }

    gpupy_resources fold_resources() {
        gpupy_ir_instr fold_op = describe_item(part_.items[part_.top], false);
        fold_op.op = part_.domain.reduce.fold;
        return drv_.resource_get(fold_op);
    }

    bool fits_exactly(int32_t i, gpupy_resources* exact) {
        ++stats().check_ir_calls;
        std::vector<Leaf> leaves;
        DomainFold fold;
        const bool top_as_leaf = i == part_.top && part_.items[i].staged;
        // Each check lowers a little more than the last one did.
        std::vector<gpupy_ir_instr> instrs = lower(part_, i, ctx_.mode, &leaves, &fold, top_as_leaf, last_lowered_ + 64);
        last_lowered_ = instrs.size();
        shape_unbound_leaves(part_, leaves, ctx_.B, instrs);
        const Domain& d = part_.domain;
        // An operand inside a reduction is staged as an elementwise
        // evaluation over the domain, so it is checked as one.
        const bool reduce = d.reduction && i == part_.top;
        // (A folded domain is checked on its first leading index: every
        // piece evaluates the same IR.)
        const int64_t d1 = fold.active ? std::min(d.d1, (d.d0 / fold.tail + 1) * fold.tail) : d.d1;
        gpupy_ir ir = reduce ? make_ir(d, fold, instrs, d.o0, d.o1, true, 0) : make_ir(d, fold, instrs, d.d0, d1, false, 0);
        *exact = drv_.resource_zero();
        return drv_.check_ir(ir, exact);
    }

    const PlanContext& ctx_;
    PartPlan& part_;
    Driver& drv_;
    std::unordered_map<uint64_t, gpupy_resources> known_;
    size_t last_lowered_ = 0;  // instructions of the last exact check
    std::vector<int32_t> parents_;  // per item: the items that read it
    bool staged_shared_ = false;    // an item read by several was staged
};

}  // namespace

void partition(const PlanContext& ctx, PartPlan& part) {
    const StagingKey key = staging_key(ctx, part);
    if (restage(key, part)) {
        if (Partitioner(ctx, part).passes_fit()) {
            for (const Item& it : part.items) stats().collapses += it.staged;
            ++stats().stagings_reused;
            return;
        }
        for (Item& it : part.items) it.staged = false;
    }
    const int64_t checks = stats().check_ir_calls;
    Partitioner(ctx, part).run();
    // (Only partitions that needed exact checks cost more than a reuse's.)
    if (stats().check_ir_calls > checks) remember_staging(key, part);
}

}  // namespace gpupy
