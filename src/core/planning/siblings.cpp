#include "core/planning/siblings.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/graph/host_state.hpp"
#include "core/graph/recent_nodes.hpp"
#include "core/planning/lower.hpp"
#include "core/planning/ranges.hpp"
#include "core/planning/walk.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Looking further costs more than sharing saves: a subgraph is followed for
// at most this many nodes.
constexpr size_t kMaxSubgraph = 4096;

using NodeSet = std::unordered_set<const Node*>;

// Whether computing anything that reads n computes n: an expression not yet
// evaluated where the plan runs. Values complete on the host, or in device
// mode whole on the device (a result kept there, the operand chain behind
// it still alive for recomputation), are read, not computed: a walk that
// went on through such a node's operands followed thousands of nodes of a
// finished chain for every later evaluation that read it.
bool pending(const PlanContext& ctx, const Node* n) {
    if (n->kind() != NodeKind::Expression || n->complete()) return false;
    return ctx.host() || n->cached_blocks == 0 || !ctx.storage_on_device(n, 0, (n->size() - 1) / ctx.B);
}

// The nodes reached from x, x included, through the nodes `through` says
// to go on from; with `with_edge` the nodes where it stopped too.
template <class Through>
NodeSet reached(const Node* x, bool with_edge, Through&& through) {
    NodeSet out;
    std::vector<const Node*> stack{x};
    while (!stack.empty() && out.size() < kMaxSubgraph) {
        const Node* n = stack.back();
        stack.pop_back();
        const bool go_on = through(n);
        if ((!go_on && !with_edge) || !out.insert(n).second || !go_on) continue;
        ++stats().sibling_search_nodes;
        for (const NodeView& c : n->children()) stack.push_back(c.node.get());
    }
    return out;
}

// The pending nodes computing x computes, x included (as fusion would).
NodeSet pending_below(const PlanContext& ctx, const Node* x) {
    return reached(x, false, [&](const Node* n) { return pending(ctx, n); });
}

// What x's values are made from: every node below it down to the arrays
// and host results at the edge. A result stored on the device counts with
// what it was computed from, so that reductions of it and of its operands
// still meet (the minimum of x * 2 + 1, stored, and the sum of x).
NodeSet reads(const Node* x) {
    return reached(x, true, [](const Node* n) { return n->kind() == NodeKind::Expression && !n->complete(); });
}

// Whether two pending subgraphs compute an operation in common (an INDEX is
// no work worth sharing).
bool share_work(const NodeSet& a, const NodeSet& b) {
    for (const Node* n : a) {
        if (n->op() != GPUPY_OP_INDEX && b.count(n)) return true;
    }
    return false;
}

// Whether c's block [o0, o1) still needs computing where this plan runs.
bool still_needed(const PlanContext& ctx, const Node* c, int64_t block, int64_t o0, int64_t o1) {
    if (c->complete() || host_has(*c, o0, o1 - 1)) return false;
    return ctx.host() || !ctx.cache.contains(c, identity_view(c->shape()), block);
}

// Whether computing a node computes one of the targets (one lies in its
// pending subgraph), memoised over one search: each node is followed once
// however many candidates reach it. In a chain of stencil steps every later
// step contains the step being evaluated; walking each candidate's whole
// subgraph to find that out was most of planning a 10-step Life. Nodes
// born before every target cannot reach one: the search stops there (a
// chain kept behind a stored result, older than what reads it, is not
// followed). Past its budget of nodes it answers `past_budget`, the answer
// that makes no sibling (never a wrong one).
class Reaches {
public:
    Reaches(const PlanContext& ctx, NodeSet targets, bool past_budget)
        : ctx_(ctx), targets_(std::move(targets)), past_budget_(past_budget) {
        for (const Node* t : targets_) oldest_target_ = std::min(oldest_target_, t->born());
    }

    bool operator()(const Node* c) {
        int known = state(c);
        if (known >= 0) return known;
        // Depth-first, iteratively (chains are deep): a node is decided when
        // a child reaches a target (yes) or every child is decided no.
        std::vector<std::pair<const Node*, size_t>> stack{{c, 0}};
        while (!stack.empty()) {
            if (++visits_ > kBudget) return past_budget_;
            ++stats().sibling_search_nodes;
            const Node* n = stack.back().first;
            const auto& children = n->children();
            size_t& i = stack.back().second;
            int child = 0;
            while (i < children.size() && (child = state(children[i].node.get())) == 0) ++i;
            if (i < children.size() && child < 0) {  // undecided: decide it first
                stack.emplace_back(children[i].node.get(), 0);
                continue;
            }
            memo_[n] = i < children.size();  // stopped at a child reaching a target
            stack.pop_back();
        }
        return memo_[c];
    }

private:
    static constexpr size_t kBudget = kMaxSubgraph;
    // 1: a target or reaches one; 0: does not (not pending, or decided);
    // -1: not yet known.
    int state(const Node* n) const {
        if (targets_.count(n)) return 1;
        if (n->born() < oldest_target_ || !pending(ctx_, n)) return 0;
        const auto it = memo_.find(n);
        return it == memo_.end() ? -1 : it->second;
    }

    const PlanContext& ctx_;
    const NodeSet targets_;
    const bool past_budget_;
    uint64_t oldest_target_ = UINT64_MAX;
    std::unordered_map<const Node*, bool> memo_;
    size_t visits_ = 0;
};

// Whether n has an item in the part's walk: the root computes it or reads
// it, so it is no sibling.
bool in_walk(const PartPlan& part, const Node* n) { return n->walk_mark == part.walk_mark; }

// Recent expressions to evaluate with the root: outermost first. The cheap
// tests come first: the root's subgraph is followed only when a recent
// node passes them (most evaluations have none, and the subgraph may be a
// chain of thousands of nodes).
std::vector<Node*> candidates(const PlanContext& ctx, const BlockPlan& plan) {
    const Node* x = plan.root.node.get();
    const PartPlan& part = plan.parts.front();
    Reaches contains_root(ctx, NodeSet{x}, true);  // one containing the root is not a sibling
    std::vector<Node*> possible;
    const std::vector<Node*>& recent = recent_nodes();
    for (auto it = recent.rbegin(); it != recent.rend(); ++it) {
        Node* c = *it;
        if (c != x && c->shape() == x->shape() && c->op() < GPUPY_NUM_OPS && c->op() != GPUPY_OP_INDEX &&
            !in_walk(part, c) && still_needed(ctx, c, plan.block, plan.o0, plan.o1) && !contains_root(c))
            possible.push_back(c);
    }
    if (possible.empty()) return {};
    const NodeSet below_root = pending_below(ctx, x);
    // Computing c computes an operation the root's computation does too (an
    // INDEX is no work worth sharing).
    NodeSet shared_work;
    for (const Node* n : below_root) {
        if (n->op() != GPUPY_OP_INDEX) shared_work.insert(n);
    }
    Reaches shares_work(ctx, std::move(shared_work), false);
    std::vector<Node*> found;
    std::vector<NodeSet> below_found;
    for (Node* c : possible) {
        if (below_root.count(c)) continue;
        if (!(c->together && c->together == x->together) && !shares_work(c)) continue;
        found.push_back(c);
        below_found.push_back(pending_below(ctx, c));
    }
    std::vector<Node*> outermost;
    for (size_t i = 0; i < found.size(); ++i) {
        bool inside = false;
        for (size_t j = 0; j < found.size() && !inside; ++j) inside = j != i && below_found[j].count(found[i]);
        if (!inside) outermost.push_back(found[i]);
    }
    return outermost;
}

// Recent reductions to compute with the root, a reduction: over a domain of
// the same shape in the same chunks, reading something the root reads --
// a reduction is one pass over memory, and two of them over the same data
// one pass (a sum and a maximum of one array; a sum of x and of x * x).
std::vector<Node*> reduction_candidates(const PlanContext& ctx, const BlockPlan& plan) {
    const Node* x = plan.root.node.get();
    const NodeView& xo = x->children().at(0);
    const ReduceParams& xp = x->reduce_params();
    std::optional<NodeSet> read_by_root;  // followed once a candidate needs it
    std::vector<Node*> found;
    const std::vector<Node*>& recent = recent_nodes();
    for (auto it = recent.rbegin(); it != recent.rend(); ++it) {
        Node* c = *it;
        if (c == x || c->op() != CORE_OP_REDUCE || c->shape() != x->shape() ||
            !still_needed(ctx, c, plan.block, plan.o0, plan.o1))
            continue;
        const ReduceParams& cp = c->reduce_params();
        const NodeView& co = c->children().at(0);
        if (cp.mode != GPUPY_REDUCE_CHUNKS || cp.ndim != xp.ndim || cp.chunk != xp.chunk ||
            co.geom.shape != xo.geom.shape || co.node->dtype() != c->dtype())
            continue;
        bool shared = c->together && c->together == x->together;
        if (!shared) {
            if (!read_by_root) read_by_root = reads(xo.node.get());
            for (const Node* n : reads(co.node.get())) {
                shared = n->kind() != NodeKind::Constant && n->op() != GPUPY_OP_INDEX && read_by_root->count(n);
                if (shared) break;
            }
        }
        if (!shared) continue;
        found.push_back(c);
    }
    return found;
}

// The root pass's IR with its `also` as further outputs fits one evaluation.
bool fits(const PlanContext& ctx, const PartPlan& part, const Pass& root) {
    std::vector<Leaf> leaves;
    DomainFold fold;
    std::vector<int32_t> at;
    std::vector<gpupy_ir_instr> instrs = lower(part, root.top, ctx.mode, &leaves, &fold, false, 0, &root.also, &at);
    shape_unbound_leaves(part, leaves, ctx.B, instrs);
    ++stats().check_ir_calls;
    const Domain& d = part.domain;
    const gpupy_ir ir = d.reduction ? make_ir(d, fold, instrs, d.o0, d.o1, true, 0, &at, &root.also_reduce)
                                    : make_ir(d, fold, instrs, d.d0, d.d1, false, 0, &at);
    gpupy_resources r{};
    return ctx.driver.check_ir(ir, &r);
}

void relower(const PlanContext& ctx, PartPlan& part, Pass& root, std::vector<int32_t>* to_pack) {
    root.leaves.clear();
    root.instrs = lower(part, root.top, ctx.mode, &root.leaves, &root.fold, root.top_as_leaf, 0, &root.also,
                        &root.outputs_at, &root);
    split(ctx, part, root, to_pack);
}

}  // namespace

bool stage_joined_siblings(const PlanContext& ctx, const Node& join) {
    std::vector<const NodeView*> unstored;
    for (const NodeView& operand : join.children()) {
        Node* n = operand.node.get();
        if (n->kind() != NodeKind::Expression || n->complete() || n->op() >= GPUPY_NUM_OPS ||
            n->op() == GPUPY_OP_INDEX || n->size() == 0)
            continue;
        // Stored already, each block on the host or on the device (the
        // retried plan after staging, a small cache having evicted some):
        // nothing to ask.
        bool stored = true;
        for (int64_t j = 0; stored && j <= (n->size() - 1) / ctx.B; ++j) {
            stored = host_has(*n, j * ctx.B, std::min((j + 1) * ctx.B, n->size()) - 1) ||
                     (!ctx.host() && ctx.storage_on_device(n, j, j));
        }
        if (!stored) unstored.push_back(&operand);
    }
    if (unstored.size() < 2) return false;
    std::vector<NodeSet> below;
    for (const NodeView* v : unstored) below.push_back(pending_below(ctx, v->node.get()));
    bool shared = false;
    for (size_t i = 0; i < below.size() && !shared; ++i) {
        for (size_t j = i + 1; j < below.size() && !shared; ++j) shared = share_work(below[i], below[j]);
    }
    if (!shared) return false;
    for (const NodeView* v : unstored) {
        const Node* n = v->node.get();
        ctx.require_storage(NodeView{v->node, identity_view(n->shape())}, Span{0, n->size() - 1});
    }
    return true;
}

void add_siblings(const PlanContext& ctx, BlockPlan& plan) {
    const Node* x = plan.root.node.get();
    if (plan.parts.size() != 1 || recent_nodes().size() < 2 || x->kind() != NodeKind::Expression ||
        !is_identity_view(plan.root.geom, x->shape()))
        return;
    PartPlan& part = plan.parts.front();
    Pass& root = part.passes.back();
    const bool reduction = part.domain.reduction;
    if (part.domain.size() < recent_min_elements() || !root.root || root.top_as_leaf || root.fold.active) return;
    if (reduction ? (part.domain.reduce.mode != GPUPY_REDUCE_CHUNKS) : part.items[root.top].cls != Item::Interior)
        return;
    for (Node* c : reduction ? reduction_candidates(ctx, plan) : candidates(ctx, plan)) {
        if (root.also.size() + 1 >= GPUPY_MAX_OUTPUTS) break;
        const NodeView what = reduction ? c->children().at(0) : NodeView{NodeRef(c), identity_view(c->shape())};
        const int32_t top = walk_more(ctx, part, what);
        if (top < 0) continue;
        root.also.push_back(top);
        if (reduction) root.also_reduce.push_back(c->reduce_params());
        if (!fits(ctx, part, root)) {
            root.also.pop_back();  // (its items stay, read by nothing)
            if (reduction) root.also_reduce.pop_back();
            continue;
        }
        plan.siblings.emplace_back(c);
    }
    if (root.also.empty()) return;
    std::vector<int32_t> to_pack;
    relower(ctx, part, root, &to_pack);
    if (!to_pack.empty()) {
        // A sibling reads something only a host gather can bind: not worth it.
        root.also.clear();
        root.also_reduce.clear();
        plan.siblings.clear();
        to_pack.clear();
        relower(ctx, part, root, &to_pack);
    }
}

}  // namespace gpupy
