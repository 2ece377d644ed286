#include "core/planning/walk.hpp"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/graph/host_state.hpp"
#include "core/planning/capabilities.hpp"
#include "core/planning/ranges.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

class Walker {
public:
    Walker(const PlanContext& ctx, PartPlan& part) : ctx_(ctx), part_(part), dom_(part.domain), mark_(++last_mark_) {}

    // Continues the walk of an earlier Walker over the same part: its CSE
    // chains rebuilt from the items it made (backwards, so that each chain
    // is in item order).
    void index_items() {
        next_view_.assign(part_.items.size(), -1);
        for (int32_t i = static_cast<int32_t>(part_.items.size()) - 1; i >= 0; --i) {
            int32_t& first = first_view(part_.items[i].view.node.get());
            next_view_[i] = first;
            first = i;
        }
    }

    // Adds (or finds) the item of view v; classifies a new one. Takes the
    // view by value: a new item keeps it without copying its geometry.
    int32_t add_item(NodeView v) {
        int32_t& first = first_view(v.node.get());
        int32_t last = -1;
        for (int32_t j = first; j >= 0; j = next_view_[j]) {
            const ViewGeometry& g = part_.items[j].view.geom;
            if (g.offset == v.geom.offset && g.strides == v.geom.strides) return j;
            last = j;
        }
        const int32_t i = static_cast<int32_t>(part_.items.size());
        const bool second_view = last >= 0;
        if (second_view) next_view_[last] = i;
        else first = i;
        next_view_.push_back(-1);
        part_.items.emplace_back();
        part_.items[i].view = std::move(v);
        classify(i);
        Node* x = part_.items[i].view.node.get();
        if (second_view && part_.items[i].cls == Item::Interior && costly_to_recompute(x)) {
            std::vector<int32_t> same_node;
            for (int32_t j = first; j >= 0; j = next_view_[j]) same_node.push_back(j);
            store_shared_node(same_node);
            part_.items[i].cls = Item::Pending;
            part_.items[i].kid_views.clear();
        }
        return i;
    }

    uint64_t mark() const { return mark_; }

    // Creates the items of every operand of every Interior item below top.
    void expand(int32_t top) {
        std::vector<int32_t> stack{top};
        while (!stack.empty()) {
            const int32_t i = stack.back();
            stack.pop_back();
            if (part_.items[i].cls != Item::Interior || part_.items[i].kid_views.empty()) continue;
            std::vector<NodeView> views = std::move(part_.items[i].kid_views);
            part_.items[i].kid_views.clear();
            std::vector<int32_t> kids;
            kids.reserve(views.size());
            for (NodeView& v : views) {
                const size_t before = part_.items.size();
                const int32_t k = add_item(std::move(v));  // may grow part_.items
                kids.push_back(k);
                if (part_.items.size() > before) stack.push_back(k);
            }
            part_.items[i].kids = std::move(kids);
        }
    }

    // A reduction fuses its operand's expression into its first pass, so the
    // operand's values are never stored anywhere. When something else still
    // refers to the operand -- the user's array (`m = d.max(); d / m`), another
    // expression, a second reduction -- those values would be computed all over
    // again for it. Then the operand is evaluated into its storage first (a
    // prerequisite) and the reduction reads it from there. True if it asked.
    bool store_shared_operand(const NodeView& operand) {
        Node* x = operand.node.get();
        // Only what the planner would fuse; the REDUCE node holds one reference.
        if (x->kind() != NodeKind::Expression || x->op() == GPUPY_OP_INDEX || x->op() >= GPUPY_NUM_OPS ||
            x->complete() || x->refcount() < 2)
            return false;
        const Span span = view_span(operand.geom, dom_.d0, dom_.d1);
        const int64_t j0 = span.lo / ctx_.B, j1 = span.hi / ctx_.B;
        if (host_has(*x, j0 * ctx_.B, std::min((j1 + 1) * ctx_.B, x->size()) - 1)) return false;
        if (!ctx_.host() && ctx_.storage_on_device(x, j0, j1)) return false;
        ctx_.require_storage(NodeView{operand.node, identity_view(x->shape())}, span);
        return true;
    }

private:
    // The first item of node x in this walk (-1: none yet), as a reference
    // add_item updates.
    int32_t& first_view(Node* x) const {
        if (x->walk_mark != mark_) {
            x->walk_mark = mark_;
            x->walk_first_item = -1;
        }
        return x->walk_first_item;
    }

    // Fusion recomputes a node once per distinct view that reads it (two
    // shifted slices of one stencil intermediate, the row, the column and
    // the whole of Floyd-Warshall's previous matrix): cheap for a few ops,
    // but a chain of such nodes multiplies the work at every level (2^n,
    // 3^n). A node met through a second view with at least this many
    // fusable ops below it is stored once and read by every view instead.
    static constexpr int kStoreSharedOps = 8;

    // Whether the fusable expression below x has kStoreSharedOps ops or more
    // (counted with repeats, as fusing would compute them; the walk stops there).
    static bool costly_to_recompute(Node* x) {
        int ops = 0;
        std::vector<Node*> stack{x};
        while (!stack.empty() && ops < kStoreSharedOps) {
            Node* n = stack.back();
            stack.pop_back();
            if (n->kind() != NodeKind::Expression || n->complete() || n->op() >= GPUPY_NUM_OPS) continue;
            ++ops;
            for (const NodeView& c : n->children()) stack.push_back(c.node.get());
        }
        return ops >= kStoreSharedOps;
    }

    // Requires the storage every view of the node reads (items `views`),
    // so that the retried plan reads it from there.
    void store_shared_node(const std::vector<int32_t>& views) {
        ++stats().shared_stores;
        for (int32_t j : views) {
            const NodeView& w = part_.items[j].view;
            ctx_.require_storage(NodeView{w.node, identity_view(w.node->shape())}, view_span(w.geom, dom_.d0, dom_.d1));
        }
    }

    void classify(int32_t i) {
        // (classify never adds items, so this reference stays valid.)
        Item& it = part_.items[i];
        const NodeView& v = it.view;
        Node* x = v.node.get();
        const int64_t B = ctx_.B;
        auto set = [&](Item::Class c) { it.cls = c; };
        auto storage_of = [](const NodeView& w) { return NodeView{w.node, identity_view(w.node->shape())}; };

        if (x->kind() == NodeKind::Constant) return set(Item::Const);
        if (x->complete()) return set(Item::Storage);
        if (x->op() == GPUPY_OP_INDEX) {
            if (ctx_.driver.supports(GPUPY_OP_INDEX, x->dtype())) return set(Item::Index);
            ctx_.require(Task{Task::HostEval, v, 0});
            return set(Item::Pending);
        }
        if (ctx_.host() && x->host() && view_evaluated(*x, v.geom, dom_.d0, dom_.d1)) return set(Item::Storage);
        // The exact blocks of this view, already evaluated?
        if (!ctx_.host() && x->cached_blocks > 0) {
            bool all = true;
            for (int64_t k = dom_.d0 / B; k <= (dom_.d1 - 1) / B && all; ++k) all = ctx_.cache.contains(x, v.geom, k);
            if (all) return set(Item::Exact);
        }
        // Its storage, on the host or on the device?
        const Span span = view_span(v.geom, dom_.d0, dom_.d1);
        const int64_t j0 = span.lo / B, j1 = span.hi / B;
        if (host_has(*x, j0 * B, std::min((j1 + 1) * B, x->size()) - 1)) return set(Item::Storage);
        if (x->cached_blocks > 0 && ctx_.storage_on_device(x, j0, j1)) {
            if (!ctx_.host()) return set(Item::Storage);
            // On the device already: read it back rather than recompute.
            for (int64_t k = dom_.d0 / B; k <= (dom_.d1 - 1) / B; ++k) ctx_.require(Task{Task::HostBlock, v, k});
            return set(Item::Pending);
        }
        if (needs_host_evaluation(*x, ctx_.driver)) {
            ctx_.require(Task{Task::HostEval, v, 0});
            return set(Item::Pending);
        }
        if (x->op() == CORE_OP_REDUCE || x->op() == CORE_OP_CONCAT) {
            // Reductions and joins are never fused into their consumers:
            // evaluate them into their own storage and read that.
            ctx_.require_storage(storage_of(v), span);
            return set(Item::Pending);
        }
        if (x->op() == CORE_OP_REMAP) return classify_remap(i, span);
        if (x->op() == GPUPY_OP_GATHER) return classify_gather(i, span);
        std::vector<NodeView> kids;
        kids.reserve(x->children().size());
        for (const NodeView& c : x->children()) {
            NodeView k{c.node, {}};
            if (!compose_views(x->shape(), v.geom, c.geom, &k.geom)) {
                ctx_.require_storage(storage_of(v), span);
                return set(Item::Pending);
            }
            kids.push_back(std::move(k));
        }
        it.cls = Item::Interior;
        it.kid_views = std::move(kids);
    }

    void classify_remap(int32_t i, const Span& span) {
        Item& it = part_.items[i];
        Node* x = it.view.node.get();
        std::optional<RemapParams> params = box_params(it.view.geom, *x);
        if (!params) {
            ctx_.require_storage(NodeView{it.view.node, identity_view(x->shape())}, span);
            it.cls = Item::Pending;
            return;
        }
        // Read the operand's storage through the remap.
        const NodeView& src = x->children().at(0);
        it.source = src;
        it.cls = Item::Remapped;
        it.remap = static_cast<int32_t>(part_.remaps.size());
        part_.remaps.push_back(std::move(*params));
        if (!operand_in_place(src, leaf_span(part_, it, dom_.d0, dom_.d1))) it.cls = Item::Pending;
    }

    // Whether elements s of the storage of operand src (a whole-node view)
    // are where this plan reads them -- host memory, or in device mode the
    // device -- else asks for them first (a prerequisite). For the reads
    // that bypass the operand's own item: remaps and gathers.
    bool operand_in_place(const NodeView& src, const Span& s) {
        Node* sx = src.node.get();
        const int64_t k0 = s.lo / ctx_.B, k1 = s.hi / ctx_.B;
        if (sx->kind() == NodeKind::Constant || host_has(*sx, k0 * ctx_.B, std::min((k1 + 1) * ctx_.B, sx->size()) - 1))
            return true;
        if (!ctx_.host() && ctx_.storage_on_device(sx, k0, k1)) return true;
        if (needs_host_evaluation(*sx, ctx_.driver)) ctx_.require(Task{Task::HostEval, src, 0});
        else ctx_.require_storage(NodeView{src.node, identity_view(sx->shape())}, s);
        return false;
    }

    // A GATHER fuses its index expression (an operand composed with the
    // item's view, as any operation's) and reads its source's whole storage,
    // which must be in place first and, on a device, within the blocks one
    // evaluation can bind (else the host engine gathers).
    void classify_gather(int32_t i, const Span& span) {
        Item& it = part_.items[i];
        Node* x = it.view.node.get();
        const NodeView& index = x->children().at(0);
        const NodeView& src = x->children().at(1);
        Node* sx = src.node.get();
        const int64_t last = std::max<int64_t>(sx->size(), 1) - 1;
        if (!ctx_.host() && last / ctx_.B >= GPUPY_MAX_LEAF_BLOCKS) {
            ctx_.require(Task{Task::HostEval, it.view, 0});
            it.cls = Item::Pending;
            return;
        }
        NodeView k{index.node, {}};
        if (!compose_views(x->shape(), it.view.geom, index.geom, &k.geom)) {
            ctx_.require_storage(NodeView{it.view.node, identity_view(x->shape())}, span);
            it.cls = Item::Pending;
            return;
        }
        if (!operand_in_place(src, Span{0, last})) {
            it.cls = Item::Pending;
            return;
        }
        it.cls = Item::Interior;
        it.source = src;
        it.kid_views.clear();
        it.kid_views.push_back(std::move(k));
    }

    // The remap that reads view g of REMAP node x's result straight from
    // x's operand, where g is a box of it over the domain (each domain
    // dimension steps through the same dimension of x): x's parameters with
    // the box's corner added to the shifts. Empty otherwise.
    std::optional<RemapParams> box_params(const ViewGeometry& g, const Node& x) const {
        const Dims& shape = x.shape();
        const size_t nd = shape.size();
        if (dom_.shape.size() != nd) return std::nullopt;
        const Dims cs = c_strides(shape);
        for (size_t d = 0; d < nd; ++d) {
            if (dom_.shape[d] > 1 && g.strides[d] != cs[d]) return std::nullopt;
        }
        RemapParams p = x.remap_params();
        if (g.offset == 0) return p;
        Dims corner(nd);
        unravel(g.offset, shape, corner.data());
        for (size_t d = 0; d < nd; ++d) {
            if (corner[d] == 0) continue;
            if (corner[d] % p.div[d] != 0 || corner[d] + dom_.shape[d] > shape[d]) return std::nullopt;
            const int64_t shift = p.shift[d] + corner[d] / p.div[d];
            const int64_t mod = p.mod[d];
            switch (p.edge[d]) {  // periodic edges keep the shift below a period
            case GPUPY_EDGE_WRAP: p.shift[d] = mod ? shift % mod : shift; break;
            case GPUPY_EDGE_REFLECT: p.shift[d] = shift % (2 * mod - 2); break;
            case GPUPY_EDGE_SYMMETRIC: p.shift[d] = shift % (2 * mod); break;
            default: p.shift[d] = shift;
            }
        }
        return p;
    }

    const PlanContext& ctx_;
    PartPlan& part_;
    const Domain& dom_;
    // CSE: the items of each node (usually one view per node), as a chain:
    // the node's first item (kept in the node under this walk's mark), then
    // each item's next view of the same node (-1 ends it).
    std::vector<int32_t> next_view_;
    const uint64_t mark_;
    static inline uint64_t last_mark_ = 0;
};

}  // namespace

int32_t walk_more(const PlanContext& ctx, PartPlan& part, const NodeView& extra) {
    const size_t items = part.items.size(), remaps = part.remaps.size(), prereqs = ctx.prereqs->size();
    Walker w(ctx, part);
    w.index_items();
    const int32_t top = w.add_item(extra);
    if (top < static_cast<int32_t>(items)) return top;  // already an item of the plan
    w.expand(top);
    bool fused = ctx.prereqs->size() == prereqs && part.items[top].cls == Item::Interior;
    for (size_t i = items; fused && i < part.items.size(); ++i) {
        // Everything it reads is fused or in place: no Pending leaves.
        fused = part.items[i].cls != Item::Pending;
    }
    if (fused) return top;
    part.items.resize(items);
    part.remaps.resize(remaps);
    ctx.prereqs->erase(ctx.prereqs->begin() + static_cast<std::ptrdiff_t>(prereqs), ctx.prereqs->end());
    return -1;
}

void walk(const PlanContext& ctx, PartPlan& part, int64_t o0, int64_t o1) {
    Domain& d = part.domain;
    Node* x = part.root.node.get();
    d.o0 = o0;
    d.o1 = o1;
    Walker w(ctx, part);
    part.walk_mark = w.mark();
    if (x->op() == CORE_OP_REDUCE && !x->complete() && is_identity_view(part.root.geom, x->shape())) {
        d.reduction = true;
        d.reduce = x->reduce_params();
        const NodeView& operand = x->children().at(0);
        d.shape = operand.geom.shape;
        for (size_t k = d.shape.size() - d.reduce.ndim; k < d.shape.size(); ++k) d.inner *= d.shape[k];
        d.nchunks = x->shape().back();
        d.strides = c_strides(d.shape);
        d.range(o0, o1, &d.d0, &d.d1);
        if (needs_host_evaluation(*x, ctx.driver)) {
            ctx.require(Task{Task::HostEval, part.root, 0});
            part.top = -1;
            return;
        }
        if (w.store_shared_operand(operand)) {
            part.top = -1;  // retried once it is stored
            return;
        }
        part.top = w.add_item(operand);
    } else {
        d.shape = part.root.geom.shape;
        d.strides = c_strides(d.shape);
        d.d0 = o0;
        d.d1 = o1;
        part.top = w.add_item(part.root);
    }
    w.expand(part.top);
    stats().planned_items += static_cast<int64_t>(part.items.size());
}

}  // namespace gpupy
