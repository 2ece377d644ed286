#include "core/planning/planner.hpp"

#include <algorithm>

#include "core/graph/host_state.hpp"
#include "core/planning/lower.hpp"
#include "core/planning/partition.hpp"
#include "core/planning/ranges.hpp"
#include "core/planning/siblings.hpp"
#include "core/planning/walk.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

bool whole_node(const NodeView& v, OpCode op) {
    const Node* x = v.node.get();
    return x->op() == op && !x->complete() && is_identity_view(v.geom, x->shape());
}

// Passes in the order they must run: every staged item after the staged
// items its own expression reads, the root last. Blocks of a staged item's
// view already on the device need no pass.
void schedule(const PlanContext& ctx, PartPlan& part) {
    std::vector<Item>& items = part.items;
    const Domain& d = part.domain;
    for_each_item_postorder(items, part.top, [&](int32_t i) {
        if (!items[i].staged) return;
        const Item& it = items[i];
        const int64_t size = d.size();
        for (int64_t k = d.d0 / ctx.B; k <= (d.d1 - 1) / ctx.B; ++k) {
            if (!ctx.host() && ctx.cache.contains(it.view.node.get(), it.view.geom, k)) continue;
            Pass p;
            p.top = i;
            p.block = k;
            p.out_begin = k * ctx.B;
            p.out_end = std::min(size, (k + 1) * ctx.B);
            if (ctx.host()) {
                // Host mode fills the node's host buffer at exactly the
                // positions this plan reads.
                p.out_begin = std::max(p.out_begin, d.d0);
                p.out_end = std::min(p.out_end, d.d1);
            }
            part.passes.push_back(std::move(p));
        }
    });
    Pass root;
    root.top = part.top;
    root.root = true;
    root.top_as_leaf = items[part.top].staged;
    root.out_begin = d.o0;
    root.out_end = d.o1;
    part.passes.push_back(std::move(root));
}

// Domain positions a pass reads.
void read_range(const Domain& d, const Pass& p, int64_t* da, int64_t* db) {
    if (p.root) d.range(p.out_begin, p.out_end, da, db);
    else {
        *da = p.out_begin;
        *db = p.out_end;
    }
}

// Lowers every pass and cuts it into pieces, packing leaves that need it.
// False if a leaf to pack has values that are not on the host yet (its
// storage is read back first: a prerequisite).
bool lower_and_split(const PlanContext& ctx, PartPlan& part) {
    for (;;) {
        std::vector<int32_t> to_pack;
        for (Pass& p : part.passes) {
            p.leaves.clear();
            p.instrs = lower(part, p.top, ctx.mode, &p.leaves, &p.fold, p.top_as_leaf, 0, &p.also, &p.outputs_at, &p);
            split(ctx, part, p, &to_pack);
        }
        if (to_pack.empty()) return true;
        if (std::all_of(to_pack.begin(), to_pack.end(), [&](int32_t i) { return part.items[i].packed; }))
            throw InternalError("a pass still needs more blocks of a leaf than it binds after packing it");
        bool ready = true;
        for (int32_t i : to_pack) {
            Item& it = part.items[i];
            if (it.packed) continue;
            Node* x = it.view.node.get();
            for (const Pass& p : part.passes) {
                const bool reads = std::any_of(p.leaves.begin(), p.leaves.end(), [&](const Leaf& l) { return l.item == i; });
                if (!reads) continue;
                int64_t da, db;
                read_range(part.domain, p, &da, &db);
                // A packed leaf is uploaded as whole blocks of its view: the
                // values of every position of those blocks must be on the
                // host, not only the ones this pass reads (a reduction's
                // block of outputs may end inside a block of its domain).
                da = da / ctx.B * ctx.B;
                db = std::min(part.domain.size(), ((db - 1) / ctx.B + 1) * ctx.B);
                const Span span = view_span(it.view.geom, da, db);
                if (host_has(*x, span.lo, span.hi)) continue;
                // The values exist only on the device: read the storage back first.
                const ViewGeometry id = identity_view(x->shape());
                for (int64_t j = span.lo / ctx.B; j <= span.hi / ctx.B; ++j)
                    ctx.require(Task{Task::HostBlock, NodeView{it.view.node, id}, j});
                ready = false;
            }
            it.cls = Item::Exact;
            it.packed = true;
        }
        if (!ready) return false;
    }
}

bool plan_part(const PlanContext& ctx, PartPlan& part, int64_t o0, int64_t o1) {
    const size_t before = ctx.prereqs->size();
    walk(ctx, part, o0, o1);
    if (part.top < 0 || ctx.prereqs->size() > before) return false;
    partition(ctx, part);
    schedule(ctx, part);
    return lower_and_split(ctx, part);
}

}  // namespace

int64_t output_size(const NodeView& root) {
    return whole_node(root, CORE_OP_REDUCE) ? root.node->size() : root.geom.size();
}

std::optional<BlockPlan> plan_block(const PlanContext& ctx, const NodeView& root, int64_t block) {
    BlockPlan plan;
    plan.mode = ctx.mode;
    plan.root = root;
    plan.block = block;
    plan.o0 = block * ctx.B;
    plan.o1 = std::min(plan.o0 + ctx.B, output_size(root));
    bool ok = true;
    if (whole_node(root, CORE_OP_CONCAT)) {
        if (stage_joined_siblings(ctx, *root.node)) return std::nullopt;
        // Each operand covers a contiguous range of the join's flat
        // positions: one part per operand the block overlaps.
        int64_t start = 0;
        for (const NodeView& operand : root.node->children()) {
            const int64_t n = operand.geom.size();
            const int64_t a = std::max(plan.o0, start), b = std::min(plan.o1, start + n);
            if (a < b) {
                PartPlan part;
                part.root = operand;
                part.dst_base = a - plan.o0;
                ok = plan_part(ctx, part, a - start, b - start) && ok;
                plan.parts.push_back(std::move(part));
            }
            start += n;
        }
    } else {
        PartPlan part;
        part.root = root;
        ok = plan_part(ctx, part, plan.o0, plan.o1);
        plan.parts.push_back(std::move(part));
    }
    if (!ok) return std::nullopt;
    add_siblings(ctx, plan);
    return plan;
}

}  // namespace gpupy
