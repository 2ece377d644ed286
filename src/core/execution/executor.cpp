#include "core/execution/executor.hpp"

#include <algorithm>
#include <deque>
#include <memory>
#include <unordered_map>

#include "core/execution/fp_errors.hpp"
#include "core/graph/host_state.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/planning/lower.hpp"
#include "core/planning/ranges.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Domain positions the outputs [a, b) of a pass read.
void read_range(const Domain& d, const Pass& p, int64_t a, int64_t b, int64_t* da, int64_t* db) {
    if (p.root) d.range(a, b, da, db);
    else {
        *da = a;
        *db = b;
    }
}

// A staged item read as a leaf is read like Exact: its view's own blocks.
bool reads_view_blocks(const Item& it) { return it.cls == Item::Exact || it.cls == Item::Interior; }

// Where a pass writes, for the IR's dst_offset.
int64_t dst_offset(const PartPlan& part, const Pass& p, int64_t a) {
    return p.root ? a - part.domain.o0 + part.dst_base : a - p.out_begin;
}

// A pass's floating-point checks (fp_errors.hpp): its checked
// instructions' flags and, for a reduction's root pass, its checked
// folds' -- output 0 is the plan's REDUCE node, output k a sibling's.
struct PassChecks {
    std::vector<uint32_t> flags;
    uint32_t fold_flags[GPUPY_MAX_OUTPUTS] = {};
    Node* folds[GPUPY_MAX_OUTPUTS] = {};
};

// Asks the driver to check the pass's operations and folds for
// floating-point errors, into `c`.
void attach_checks(gpupy_ir& ir, const BlockPlan& plan, const PartPlan& part, const Pass& p, PassChecks& c) {
    if (!p.check_instrs.empty()) {
        c.flags.assign(p.check_instrs.size(), 0u);
        ir.ncheck = static_cast<int32_t>(p.check_instrs.size());
        ir.check = p.check_instrs.data();
        ir.check_flags = c.flags.data();
        stats().checked_ops += ir.ncheck;
    }
    if (ir.reduce_op == GPUPY_OP_NONE) return;
    for (int k = 0; k < ir.noutputs; ++k) {
        Node* r = k ? plan.siblings.at(static_cast<size_t>(k - 1)).get() : part.root.node.get();
        if (r->op() != CORE_OP_REDUCE || !fp_kinds_to_check(*r)) continue;
        c.folds[k] = r;
        ir.check_folds |= 1u << k;
        ++stats().checked_ops;
    }
    if (ir.check_folds) ir.fold_flags = c.fold_flags;
}

// Queues the errors the driver found for the pass's checked operations
// and folds.
void note_checks(const PartPlan& part, const Pass& p, const PassChecks& c) {
    for (size_t k = 0; k < c.flags.size(); ++k) {
        if (!c.flags[k]) continue;
        Node* x = part.items[p.check_items[k]].view.node.get();
        note_fp_errors(x, fp_kinds_of(x->op(), c.flags[k]));
    }
    for (int k = 0; k < GPUPY_MAX_OUTPUTS; ++k) {
        if (c.folds[k] && c.fold_flags[k]) note_fp_errors(c.folds[k], fp_kinds_of(fp_op(*c.folds[k]), c.fold_flags[k]));
    }
}

// Owns a driver block that is not (yet) in the cache; frees it unless
// handed over.
class LooseBlock {
public:
    LooseBlock(BlockCache& cache, gpupy_block* b) : cache_(cache), b_(b) {}
    ~LooseBlock() {
        if (b_) cache_.release_unregistered(b_);
    }
    LooseBlock(const LooseBlock&) = delete;
    LooseBlock& operator=(const LooseBlock&) = delete;
    gpupy_block* get() const { return b_; }
    gpupy_block* hand_over() {
        gpupy_block* b = b_;
        b_ = nullptr;
        return b;
    }

private:
    BlockCache& cache_;
    gpupy_block* b_;
};

class DeviceExecutor {
public:
    DeviceExecutor(BlockPlan& plan, Driver& drv, BlockCache& cache)
        : plan_(plan), drv_(drv), cache_(cache), B_(cache.block_size()) {}

    void run() {
        Node* x = plan_.root.node.get();
        const int64_t n = plan_.o1 - plan_.o0;
        std::unique_ptr<LooseBlock> root_dst;
        // The root's block, then the siblings' (planning/siblings.hpp).
        std::vector<std::unique_ptr<LooseBlock>> also_dst;
        for (PartPlan& part : plan_.parts) {
            for (Pass& p : part.passes) {
                if (!p.root) {
                    run_staged(part, p);
                    continue;
                }
                if (!root_dst) {
                    root_dst = std::make_unique<LooseBlock>(cache_, cache_.allocate(x->dtype(), n));
                    for (const NodeRef& s : plan_.siblings)
                        also_dst.push_back(std::make_unique<LooseBlock>(cache_, cache_.allocate(s->dtype(), n)));
                }
                std::vector<gpupy_block*> dst{root_dst->get()};
                for (const auto& b : also_dst) dst.push_back(b->get());
                PinSet pins(cache_);
                run_pieces(part, p, dst, pins);
            }
        }
        if (!root_dst) throw InternalError("a plan without a root pass");
        cache_.insert(x, plan_.root.geom, plan_.block, root_dst->get(), x->dtype(), n, true);
        root_dst->hand_over();
        for (size_t k = 0; k < also_dst.size(); ++k) {
            Node* s = plan_.siblings[k].get();
            cache_.insert(s, identity_view(s->shape()), plan_.block, also_dst[k]->get(), s->dtype(), n, true);
            also_dst[k]->hand_over();
            ++stats().sibling_outputs;
        }
        cache_.trim();
    }

private:
    void run_staged(PartPlan& part, Pass& p) {
        const Item& it = part.items[p.top];
        Node* x = it.view.node.get();
        // Two parts of a join can stage the same operand block (np.concatenate
        // ([x, x]) with x collapsed): the first part's pass made it already.
        if (cache_.contains(x, it.view.geom, p.block)) return;
        const int64_t n = p.out_end - p.out_begin;
        LooseBlock dst(cache_, cache_.allocate(x->dtype(), n));
        {
            PinSet pins(cache_);
            run_pieces(part, p, {dst.get()}, pins);
        }
        cache_.insert(x, it.view.geom, p.block, dst.get(), x->dtype(), n, true);
        dst.hand_over();
    }

    // dst: one block per output of the pass (the root pass's further
    // outputs after its own).
    void run_pieces(const PartPlan& part, const Pass& p, const std::vector<gpupy_block*>& dst, PinSet& pins) {
        const Domain& dom = part.domain;
        for (const Piece& piece : p.pieces) {
            int64_t da, db;
            read_range(dom, p, piece.a, piece.b, &da, &db);
            std::vector<gpupy_ir_instr> bound = p.instrs;
            for (const Leaf& l : p.leaves) bind(&bound[l.instr], part, part.items[l.item], da, db, pins);
            gpupy_ir ir = make_ir(dom, p.fold, bound, piece.a, piece.b, p.root && dom.reduction,
                                  dst_offset(part, p, piece.a), &p.outputs_at, &p.also_reduce);
            PassChecks checks;
            attach_checks(ir, plan_, part, p, checks);
            drv_.eval_ir(ir, dst.data());
            ++stats().evaluations;
            note_checks(part, p, checks);
        }
    }

    void bind(gpupy_ir_instr* in, const PartPlan& part, const Item& it, int64_t da, int64_t db, PinSet& pins) {
        Node* x;
        ViewGeometry geom;
        int64_t k0, k1;
        if (is_gather(*in)) {
            // The whole source: any element may be read.
            x = it.source.node.get();
            geom = identity_view(x->shape());
            k0 = 0;
            k1 = source_blocks(it, B_) - 1;
            in->value.i = x->size();
        } else if (reads_view_blocks(it)) {
            x = it.view.node.get();
            geom = it.view.geom;
            k0 = da / B_;
            k1 = (db - 1) / B_;
        } else {
            x = (it.cls == Item::Remapped ? it.source : it.view).node.get();
            geom = identity_view(x->shape());
            const Span s = leaf_span(part, it, da, db);
            k0 = s.lo / B_;
            k1 = s.hi / B_;
        }
        if (k1 - k0 + 1 > GPUPY_MAX_LEAF_BLOCKS) throw InternalError("a leaf spans more blocks than one evaluation can bind");
        in->nblocks = static_cast<int32_t>(k1 - k0 + 1);
        in->block_first = k0 * B_;
        in->block_elems = B_;
        for (int64_t k = k0; k <= k1; ++k) in->blocks[k - k0] = acquire(x, geom, k, pins)->handle;
    }

    // The cached block, or one uploaded from the host.
    CachedBlock* acquire(Node* x, const ViewGeometry& geom, int64_t k, PinSet& pins) {
        if (CachedBlock* b = cache_.lookup(x, geom, k)) return pins.pin(b);
        return pins.pin(upload_block(drv_, cache_, x, geom, k));
    }

    BlockPlan& plan_;
    Driver& drv_;
    BlockCache& cache_;
    const int64_t B_;
};

// The host engine: every node's host buffer used in place, results written
// into the nodes' host buffers.
class HostExecutor {
public:
    HostExecutor(BlockPlan& plan, Driver& engine) : plan_(plan), engine_(engine) {}
    ~HostExecutor() {
        for (auto& kv : wrapped_) engine_.free(kv.second);
    }

    void run() {
        Node* x = plan_.root.node.get();
        const bool whole_reduce = x->op() == CORE_OP_REDUCE && is_identity_view(plan_.root.geom, x->shape());
        Output out(*this, x, plan_.root.geom, plan_.o0, plan_.o1, whole_reduce);
        std::vector<std::unique_ptr<Output>> also;  // the siblings' (planning/siblings.hpp)
        std::vector<gpupy_block*> dst{out.block};
        for (const NodeRef& s : plan_.siblings) {
            also.push_back(std::make_unique<Output>(*this, s.get(), identity_geoms_.emplace_back(identity_view(s->shape())),
                                                    plan_.o0, plan_.o1, false));
            dst.push_back(also.back()->block);
        }
        for (PartPlan& part : plan_.parts) {
            for (Pass& p : part.passes) {
                if (p.root) {
                    run_pieces(part, p, dst);
                    continue;
                }
                const Item& it = part.items[p.top];
                Output staged(*this, it.view.node.get(), it.view.geom, p.out_begin, p.out_end, false);
                run_pieces(part, p, {staged.block});
                staged.finish();
            }
        }
        out.finish();
        for (auto& o : also) {
            o->finish(false);
            ++stats().sibling_outputs;
        }
    }

private:
    // Where one pass's outputs go: straight into the node's host buffer when
    // the view's positions are contiguous there, else through a scratch
    // buffer scattered afterwards.
    struct Output {
        Output(HostExecutor& ex, Node* node, const ViewGeometry& geom, int64_t a, int64_t b, bool whole_reduce)
            : ex(ex), node(node), geom(geom), a(a), b(b) {
            const int item = dtype_itemsize(node->dtype());
            char* base = node->ensure_host_buffer();
            direct = whole_reduce || is_c_contiguous(geom.shape, geom.strides);
            first = whole_reduce ? a : geom.offset + a;
            if (!direct) scratch.resize(static_cast<size_t>((b - a) * item));
            char* target = direct ? base + first * item : scratch.data();
            block = ex.engine_.wrap(node->dtype(), b - a, target);
        }
        ~Output() { ex.engine_.free(block); }
        // `evaluation`: the outputs of an evaluation of their own (not a
        // further output of the root's).
        void finish(bool evaluation = true) {
            if (direct) {
                if (node->kind() == NodeKind::Expression) node->bits().set_range(first, first + (b - a));
            } else {
                scatter_to_host(node, geom, a, b - a, scratch.data());
            }
            if (evaluation) ++stats().host_engine_evaluations;
        }
        HostExecutor& ex;
        Node* node;
        const ViewGeometry& geom;
        int64_t a, b, first = 0;
        bool direct = false;
        std::vector<char> scratch;
        gpupy_block* block = nullptr;
    };

    void run_pieces(const PartPlan& part, const Pass& p, const std::vector<gpupy_block*>& dst) {
        const Domain& dom = part.domain;
        for (const Piece& piece : p.pieces) {
            std::vector<gpupy_ir_instr> bound = p.instrs;
            for (const Leaf& l : p.leaves) {
                const Item& it = part.items[l.item];
                gpupy_ir_instr* in = &bound[l.instr];
                Node* x = (it.cls == Item::Remapped || is_gather(*in) ? it.source : it.view).node.get();
                if (is_gather(*in)) in->value.i = x->size();
                // The node's whole host buffer as one block: element index = offset.
                in->nblocks = 1;
                in->block_first = 0;
                in->block_elems = std::max<int64_t>(x->size(), 1);
                in->blocks[0] = wrapped(x);
            }
            const int64_t off = p.root ? piece.a - dom.o0 + part.dst_base : piece.a - p.out_begin;
            gpupy_ir ir = make_ir(dom, p.fold, bound, piece.a, piece.b, p.root && dom.reduction, off, &p.outputs_at,
                                  &p.also_reduce);
            PassChecks checks;
            attach_checks(ir, plan_, part, p, checks);
            engine_.eval_ir(ir, dst.data());
            note_checks(part, p, checks);
        }
    }

    gpupy_block* wrapped(Node* x) {
        auto it = wrapped_.find(x);
        if (it != wrapped_.end()) return it->second;
        gpupy_block* b = engine_.wrap(x->dtype(), x->size(), x->ensure_host_buffer());
        wrapped_.emplace(x, b);
        return b;
    }

    BlockPlan& plan_;
    Driver& engine_;
    std::unordered_map<const Node*, gpupy_block*> wrapped_;
    std::deque<ViewGeometry> identity_geoms_;  // the siblings' views (an Output keeps a reference)
};

}  // namespace

CachedBlock* upload_block(Driver& driver, BlockCache& cache, Node* x, const ViewGeometry& geom, int64_t k) {
    const int64_t B = cache.block_size();
    const int64_t first = k * B;
    const int64_t n = std::min(B, geom.size() - first);
    const int item = dtype_itemsize(x->dtype());
    const bool storage = is_identity_view(geom, x->shape());
    const bool on_host = storage ? host_has(*x, first, first + n - 1) : view_evaluated(*x, geom, first, first + n);
    if (!on_host) throw InternalError("values of an operand are neither on the device nor on the host");
    std::vector<char> gathered;
    const char* src = x->host_data() + first * item;
    if (!storage) {
        // A strided view of the node, gathered into the view's own block.
        gathered.resize(static_cast<size_t>(n * item));
        gather_from_host(x, geom, first, n, gathered.data());
        src = gathered.data();
        ++stats().blocks_packed;
    }
    LooseBlock h(cache, cache.allocate(x->dtype(), n));
    driver.write(h.get(), 0, n, src);
    ++stats().blocks_uploaded;
    stats().bytes_uploaded += n * item;
    CachedBlock* b = cache.insert(x, geom, k, h.get(), x->dtype(), n, false);
    h.hand_over();
    return b;
}

void execute(BlockPlan& plan, Driver& driver, BlockCache& cache) {
    if (plan.mode == EvalMode::Host) HostExecutor(plan, driver).run();
    else DeviceExecutor(plan, driver, cache).run();
}

}  // namespace gpupy
