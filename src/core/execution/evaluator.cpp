#include "core/execution/evaluator.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <unordered_set>

#include "core/building/export_watch.hpp"
#include "core/execution/executor.hpp"
#include "core/execution/fp_errors.hpp"
#include "core/graph/host_state.hpp"
#include "core/planning/capabilities.hpp"
#include "core/planning/planner.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Counts steps that did real work; a task retried with nothing done since
// its last attempt would loop forever, which is a bug, not a user error.
int64_t g_work_epoch = 0;

// Nodes that may have become complete during a run; their operands are
// released once no plan can still be looking at them.
std::vector<NodeRef>& completed_candidates() {
    static auto* v = new std::vector<NodeRef>();
    return *v;
}

int64_t view_block_count(const NodeView& v, int64_t B) { return (v.geom.size() + B - 1) / B; }

// Ops the host engine evaluated during the current outermost run_tasks.
std::vector<const char*>& host_evaluations_to_report() {
    static std::vector<const char*> names;
    return names;
}
int g_run_depth = 0;

void note_progress(Node* x) {
    ++g_work_epoch;
    if (x->kind() == NodeKind::Expression && x->complete()) completed_candidates().push_back(NodeRef(x));
}

// The work of evaluating `root` as the cost model prices it (Work): how
// many operations it would compute, counted up to `cap` -- distinct
// expression nodes below it that are not on the host already, and how many
// of them are math-library functions (the model prices the two classes
// apart) -- and where
// its inputs live: values on the host only (complete nodes with no block
// on the device) the device would upload, values on the device only
// (expressions whose blocks the device holds, not yet read back) the host
// engine would read back. Inputs are counted whole (what a block reads of
// them is not known before planning).
// The count is what the measured time of the evaluation is compared with
// (placement_feedback.hpp): a host-engine evaluation of a 7,000-operation
// expression computes all of them. The cap bounds the walk (it runs for
// every block wanted on the host).
constexpr int64_t kOpsCounted = 1 << 16;
Work work_below(const Node& root, int64_t cap) {
    // Each node with how many times it is computed per output of the root
    // (below a reduction, once per element folded).
    std::vector<std::pair<const Node*, double>> stack{{&root, 1.0}};
    std::unordered_set<const Node*> seen{&root};
    Work w;
    while (!stack.empty() && w.ops < cap) {
        const auto [n, times] = stack.back();
        stack.pop_back();
        if (n->kind() == NodeKind::Constant) continue;
        if (n->kind() == NodeKind::Array || n->complete()) {
            if (n->cached_blocks == 0) w.upload_bytes += n->nbytes();
            continue;
        }
        if (n != &root && n->cached_blocks > 0) {
            w.download_bytes += n->nbytes();
            continue;
        }
        double below = times;
        if (n->op() == CORE_OP_REDUCE && !n->children().empty() && n->size() > 0) {
            // A reduction below the root is never fused into it: it is
            // evaluated into its own storage, once, whatever reads it -- a
            // cumulative sum's chunk totals, read through a broadcast by
            // every output, cost their own size, not a chunk per output
            // (counted so, a scan of 2,000,000 elements was priced at 90 s).
            if (n != &root && root.size() > 0) below = static_cast<double>(n->size()) / static_cast<double>(root.size());
            below *= static_cast<double>(shape_size(n->children()[0].geom.shape)) / static_cast<double>(n->size());
        }
        ++w.ops;
        w.computed += below;
        if (op_is_math(n->op())) {
            ++w.math;
            w.computed_math += below;
        }
        for (const NodeView& c : n->children()) {
            if (seen.insert(c.node.get()).second) stack.push_back({c.node.get(), below});
        }
    }
    return w;
}

// A device evaluation the cost model placed, timed from the decision to
// its result's arrival on the host (the readback in step_host_block) --
// every pass it took (a deep expression is cut into several) and the
// uploads of its inputs: keyed by the node and block it evaluates.
struct PendingDeviceTiming {
    Work work;
    std::chrono::steady_clock::time_point start;
};
std::map<std::pair<const Node*, int64_t>, PendingDeviceTiming>& pending_device_timings() {
    static auto* m = new std::map<std::pair<const Node*, int64_t>, PendingDeviceTiming>();
    return *m;
}

double ns_since(std::chrono::steady_clock::time_point t0) {
    return static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
}

bool step_host_block(const Task& t, std::vector<Task>* pre) {
    Runtime& rt = Runtime::get();
    BlockCache& cache = rt.cache();
    Node* x = t.view.node.get();
    if (x->complete()) return true;
    const int64_t B = cache.block_size();
    const int64_t f0 = t.block * B;
    const int64_t f1 = std::min(f0 + B, t.view.geom.size());
    if (view_evaluated(*x, t.view.geom, f0, f1)) return true;
    const ViewGeometry id = identity_view(x->shape());
    const Span span = view_span(t.view.geom, f0, f1);
    // Values already on the device are read back, not recomputed.
    if (CachedBlock* b = cache.lookup(x, t.view.geom, t.block)) {
        cache.download(b);
        auto pending = pending_device_timings().find({x, t.block});
        if (pending != pending_device_timings().end()) {
            rt.note_evaluation(Place::Device, pending->second.work, ns_since(pending->second.start));
            pending_device_timings().erase(pending);
        }
        note_progress(x);
        return true;
    }
    std::vector<CachedBlock*> storage;
    for (int64_t j = span.lo / B; j <= span.hi / B; ++j) {
        CachedBlock* b = cache.lookup(x, id, j);
        if (!b) break;
        storage.push_back(b);
    }
    if (static_cast<int64_t>(storage.size()) == span.hi / B - span.lo / B + 1) {
        for (CachedBlock* b : storage) {
            if (b->dirty) cache.download(b);
        }
        note_progress(x);
        if (view_evaluated(*x, t.view.geom, f0, f1)) return true;
    }
    // Work the device would do slower (small, or little arithmetic per
    // element on a CPU renderer): on the host engine, in place, no transfers.
    Work work = work_below(*x, kOpsCounted);
    work.elements = f1 - f0;
    work.result_bytes = work.elements * dtype_itemsize(x->dtype());
    bool by_model = false;
    if (rt.use_host_engine(work, &by_model) && !needs_host_evaluation(*x, *rt.host_engine())) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!plan_and_evaluate(t.view, t.block, pre, EvalMode::Host)) return false;
        if (by_model) rt.note_evaluation(Place::Host, work, ns_since(t0));
        note_progress(x);
        return true;
    }
    if (needs_host_evaluation(*x, rt.driver())) {
        pre->push_back(Task{Task::HostEval, t.view, 0});
        return false;
    }
    // Timed when it is evaluated and read back (what the model priced).
    if (by_model) pending_device_timings()[{x, t.block}] = PendingDeviceTiming{work, std::chrono::steady_clock::now()};
    pre->push_back(Task{Task::EvalBlock, t.view, t.block});
    return false;
}

bool step_eval_block(const Task& t, std::vector<Task>* pre) {
    Runtime& rt = Runtime::get();
    BlockCache& cache = rt.cache();
    Node* x = t.view.node.get();
    if (cache.contains(x, t.view.geom, t.block)) return true;
    // Values on the host already (computed there, or read back when the
    // cache evicted them): uploading is all the device needs.
    const int64_t B = cache.block_size();
    const int64_t f0 = t.block * B, f1 = std::min(f0 + B, t.view.geom.size());
    if (f0 < f1 && view_evaluated(*x, t.view.geom, f0, f1)) {
        upload_block(rt.driver(), cache, x, t.view.geom, t.block);
        ++g_work_epoch;
        return true;
    }
    if (!plan_and_evaluate(t.view, t.block, pre)) return false;
    ++g_work_epoch;
    return true;
}

bool step_host_eval(const Task& t, std::vector<Task>* pre) {
    Runtime& rt = Runtime::get();
    Node* x = t.view.node.get();
    if (x->complete()) return true;
    const int64_t B = rt.cache().block_size();
    for (const NodeView& c : x->children()) {
        if (c.node->complete()) continue;
        const int64_t nb = view_block_count(c, B);
        for (int64_t j = 0; j < nb; ++j) pre->push_back(Task{Task::HostBlock, c, j});
    }
    if (!pre->empty()) return false;
    // The one host evaluator: the host engine runs the node, its operands
    // read in place from host memory.
    Driver* engine = rt.host_engine();
    if (!engine || needs_host_evaluation(*x, *engine)) {
        throw DriverError(std::string("neither the ") + rt.driver().name() + " driver nor the host engine can evaluate '" +
                          op_display_name(x->op()) + "' for dtype " + dtype_name(x->dtype()));
    }
    if (rt.refuse_host_evaluation) throw HostEvaluationRefused(op_display_name(x->op()));
    // Reported when the outermost evaluation is done (run_tasks): the hook
    // is Python, and Python must not run while the core is mid-evaluation
    // (another thread could enter the core; docs/threads.md).
    host_evaluations_to_report().push_back(op_display_name(x->op()));
    const NodeView whole{t.view.node, identity_view(x->shape())};
    const int64_t blocks = (output_size(whole) + B - 1) / B;
    for (int64_t k = 0; k < blocks; ++k) {
        if (!plan_and_evaluate(whole, k, pre, EvalMode::Host))
            throw InternalError("a host evaluation with its operands on the host asked for more");
    }
    ++stats().host_evaluations;
    note_progress(x);
    return true;
}

bool step(const Task& t, std::vector<Task>* pre) {
    switch (t.kind) {
    case Task::HostBlock: return step_host_block(t, pre);
    case Task::EvalBlock: return step_eval_block(t, pre);
    case Task::HostEval: return step_host_eval(t, pre);
    }
    return true;
}

void release_completed_operands() {
    auto& v = completed_candidates();
    std::vector<NodeRef> list;
    list.swap(v);
    for (NodeRef& n : list) {
        // A cast of a constant keeps it: it costs nothing and lets the
        // array's value be folded later (simplify.cpp).
        const bool of_a_constant = n->children().size() == 1 && n->children()[0].node->kind() == NodeKind::Constant;
        if (n->complete() && !of_a_constant) n->drop_children();
    }
}

struct StackEntry {
    Task task;
    int64_t epoch_at_last_try = -1;
};

// Depth-first over the tasks and the prerequisites they ask for.
void run_stack(std::vector<StackEntry>& stack) {
    const std::function<void()>& check_interrupt = Runtime::get().check_interrupt;
    while (!stack.empty()) {
        // Between steps no pass is running and no block is pinned: stopping
        // here leaves every node as lazy as it was or with more blocks done.
        if (check_interrupt) check_interrupt();
        std::vector<Task> pre;
        const Task task = stack.back().task;
        if (step(task, &pre)) {
            stack.pop_back();
            continue;
        }
        if (pre.empty()) throw InternalError("evaluation step neither finished nor asked for anything");
        StackEntry& top = stack.back();
        if (top.epoch_at_last_try == g_work_epoch) throw InternalError("evaluation made no progress");
        top.epoch_at_last_try = g_work_epoch;
        // The last asked for runs first: a walk meets the prerequisites of
        // a chain (a Life step reads the step before, which reads the one
        // before) top down, and the deepest is the one that can run now. In
        // the other order every step of a 40-step chain was planned again
        // down to the bottom: planning grew as the square of the steps.
        for (Task& t : pre) stack.push_back({std::move(t), -1});
    }
}

}  // namespace

bool plan_and_evaluate(const NodeView& root, int64_t block, std::vector<Task>* prereqs, EvalMode mode) {
    Runtime& rt = Runtime::get();
    Driver& driver = mode == EvalMode::Host ? *rt.host_engine() : rt.driver();
    const PlanContext ctx{driver, rt.cache(), rt.cache().block_size(), mode, prereqs};
    // Planning is host overhead paid on the calling thread; stats() reports
    // it apart from the execution so its share of a run can be seen.
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<BlockPlan> plan = plan_block(ctx, root, block);
    stats().planning_ns +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    if (!plan) return false;
    execute(*plan, driver, rt.cache());
    return true;
}

std::vector<gpupy_ir_instr> plan_ir(const NodeView& root, int64_t block) {
    Runtime& rt = Runtime::get();
    std::vector<Task> prereqs;
    const PlanContext ctx{rt.driver(), rt.cache(), rt.cache().block_size(), EvalMode::Device, &prereqs};
    std::optional<BlockPlan> plan = plan_block(ctx, root, block);
    if (!plan) return {};
    return plan->parts.front().passes.back().instrs;
}

void run_tasks(std::vector<Task> tasks) {
    // Device copies kept through exports that ended are checked before
    // anything can use them (no block is pinned yet).
    if (g_run_depth == 0) settle_ended_exports();
    {
        std::vector<StackEntry> stack;
        for (auto it = tasks.rbegin(); it != tasks.rend(); ++it) stack.push_back({std::move(*it), -1});
        struct Depth {
            Depth() { ++g_run_depth; }
            ~Depth() {
                release_completed_operands();
                // A failed evaluation reports nothing (its error says why).
                if (--g_run_depth == 0 && std::uncaught_exceptions() > 0) {
                    host_evaluations_to_report().clear();
                    take_fp_errors();
                }
            }
        } depth;
        run_stack(stack);
    }
    if (g_run_depth > 0) return;
    // A timing whose result never came back here (evicted and recomputed
    // elsewhere, an error) is dropped: nothing measured it whole.
    pending_device_timings().clear();
    // The outermost evaluation is complete and the core consistent: now the
    // host evaluations are reported (the hook may raise, or use gpupy).
    std::vector<const char*> names;
    names.swap(host_evaluations_to_report());
    Runtime& rt = Runtime::get();
    if (rt.on_host_evaluation) {
        for (const char* name : names) rt.on_host_evaluation(name);
    }
    const std::vector<std::pair<const char*, uint8_t>> errors = take_fp_errors();
    if (rt.on_fp_error) {
        for (const auto& [name, kind] : errors) rt.on_fp_error(name, kind);
    }
    const std::vector<Place> probes = rt.take_probes_wanted();
    if (!probes.empty() && rt.on_probe_wanted) rt.on_probe_wanted(probes);
    if (rt.take_model_corrected() && rt.on_model_corrected) rt.on_model_corrected();
}

void ensure_host(const NodeView& view, int64_t f0, int64_t f1) {
    Node* x = view.node.get();
    if (x->complete() || f0 >= f1) return;
    const int64_t B = Runtime::get().cache().block_size();
    if (x->kind() == NodeKind::Expression && x->size() <= B && !is_identity_view(view.geom, x->shape())) {
        // Part of an expression that fits one block: evaluate all of it,
        // once. A loop reading it row by row (imgOut[i, :] for each i) would
        // otherwise pay an evaluation per row; NumPy computes it whole too.
        run_tasks({Task{Task::HostBlock, NodeView{view.node, identity_view(x->shape())}, 0}});
        return;
    }
    std::vector<Task> tasks;
    for (int64_t k = f0 / B; k <= (f1 - 1) / B; ++k) tasks.push_back(Task{Task::HostBlock, view, k});
    run_tasks(std::move(tasks));
}

void ensure_device_block(const NodeView& view, int64_t block) {
    run_tasks({Task{Task::EvalBlock, view, block}});
}

}  // namespace gpupy
