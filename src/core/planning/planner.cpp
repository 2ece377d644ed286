#include "core/planning/planner.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "core/memory/block_cache.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Splitting an output block into more evaluations than this to keep every
// leaf inside one device block costs more than gathering the leaf on the
// host instead.
constexpr size_t kMaxPieces = 64;


// One distinct (node, view) met while walking the expression: the unit of
// common-subexpression elimination.
struct Item {
    enum Class {
        Const,     // a scalar
        Index,     // an index expression computed in the shader
        Exact,     // this very view's blocks are cached on the device
        Storage,   // read from the node's storage blocks (host or device)
        Remapped,  // a REMAP node: its operand's storage read through div/mod
        Interior,  // an operation to fuse into this evaluation
        Pending,   // needs a prerequisite first; a leaf for resource purposes
    };
    NodeView view;
    Class cls = Interior;
    NodeView source;  // Remapped: the operand whose storage is read
    // Interior: operand views composed by classify(); their items are
    // created by the (iterative) walk, never by recursion.
    std::vector<NodeView> kid_views;
    std::vector<int32_t> kids;
    gpupy_resources bound{};
    bool visited = false;
};

struct Leaf {
    int32_t item;
    int32_t instr;
};

struct Piece {
    int64_t a, b;  // output positions [a, b)
};

class Planner {
public:
    // Plans output positions [out_begin, out_end) of `root` (a reduction's
    // output positions when root is a whole REDUCE node).
    Planner(const NodeView& root, int64_t out_begin, int64_t out_end, std::vector<Task>* prereqs, EvalMode mode);
    ~Planner();

    // Walks and partitions; false if prerequisites were found.
    bool partition();
    // Evaluates into dst, output position out_begin going to dst_base.
    bool execute(gpupy_block* dst, int64_t dst_base);
    std::vector<gpupy_ir_instr> final_ir();

private:
    int32_t add_item(const NodeView& v);
    void classify(int32_t i);
    void create_kids(int32_t i);
    void compute_bound(int32_t i);
    bool check_subtree(int32_t i, gpupy_resources* exact);
    void collapse(int32_t i);
    void collapse_to_storage(Node* x, const Span& span);
    bool store_shared_operand(const NodeView& operand);
    void require(Task t) { pre_->push_back(std::move(t)); }

    // IR emission for the subtree at `top`; leaves' blocks left unbound.
    std::vector<gpupy_ir_instr> emit(int32_t top, std::vector<Leaf>* leaves);
    gpupy_ir make_ir(const std::vector<gpupy_ir_instr>& instrs, int64_t a, int64_t b) const;
    Span leaf_span(const Item& it, int64_t da, int64_t db) const;

    // Domain positions an output range reads.
    void domain_range(int64_t a, int64_t b, int64_t* da, int64_t* db) const;
    int64_t blocks_needed(const Leaf& l, int64_t da, int64_t db) const;
    bool split(const std::vector<Leaf>& leaves, std::vector<Piece>* pieces, std::vector<int32_t>* to_pack);
    bool pack(int32_t item);
    void bind(gpupy_ir_instr* in, const Item& it, int64_t da, int64_t db);
    CachedBlock* storage_block(Node* x, int64_t j);
    bool host_available(const Node* x, int64_t lo, int64_t hi) const;
    // True if a map with these strides reads base + flat domain position.
    bool contiguous_map(const Dims& strides) const {
        for (size_t d = 0; d < dshape_.size(); ++d) {
            if (dshape_[d] != 1 && strides[d] != dstride_[d]) return false;
        }
        return true;
    }
    void pin(CachedBlock* b) {
        cache_.pin(b);
        pinned_.push_back(b);
    }

    Runtime& rt_;
    const bool host_;  // EvalMode::Host: leaves and result in host memory
    Driver& drv_;
    BlockCache& cache_;
    const int64_t B_;
    NodeView root_;
    std::vector<Task>* pre_;
    int64_t dst_base_ = 0;

    bool reduction_ = false;
    ReduceParams rp_;
    Dims dshape_;   // domain: the index space leaves are read over
    Dims dstride_;  // its C-order strides
    int64_t inner_ = 1;  // reduction: product of the reduced dims
    int64_t o0_ = 0, o1_ = 0;  // output positions of this block
    int64_t d0_ = 0, d1_ = 0;  // domain positions they read

    std::vector<Item> items_;
    // CSE: the items of each node (usually one view per node).
    std::unordered_map<uint64_t, std::vector<int32_t>> memo_;
    int32_t top_ = -1;
    std::vector<CachedBlock*> pinned_;
    std::unordered_map<const Node*, gpupy_block*> wrapped_nodes_;  // host mode
    std::vector<gpupy_block*> wrapped_;
    gpupy_block* wrapped(Node* x);
    // Host mode: block `k` of this domain-shaped view must be on the host.
    void require_host(const NodeView& v) {
        for (int64_t k = d0_ / B_; k <= (d1_ - 1) / B_; ++k) require(Task{Task::HostBlock, v, k});
    }
};

gpupy_ir_instr blank_instr(OpCode op, DType dtype) {
    gpupy_ir_instr in;
    std::memset(&in, 0, sizeof in);
    in.op = op;
    in.dtype = dtype;
    in.arg[0] = in.arg[1] = in.arg[2] = -1;
    for (int d = 0; d < GPUPY_MAX_DIMS; ++d) in.map.div[d] = 1;
    return in;
}

Planner::Planner(const NodeView& root, int64_t out_begin, int64_t out_end, std::vector<Task>* prereqs, EvalMode mode)
    : rt_(Runtime::get()),
      host_(mode == EvalMode::Host),
      drv_(host_ ? *rt_.host_engine() : rt_.driver()),
      cache_(rt_.cache()),
      B_(cache_.block_size()),
      root_(root),
      pre_(prereqs) {
    Node* x = root.node.get();
    o0_ = out_begin;
    o1_ = out_end;
    if (x->op() == CORE_OP_REDUCE && !x->complete() && is_identity_view(root.geom, x->shape())) {
        reduction_ = true;
        rp_ = x->reduce_params();
        const NodeView& operand = x->children().at(0);
        dshape_ = operand.geom.shape;
        for (size_t d = dshape_.size() - rp_.ndim; d < dshape_.size(); ++d) inner_ *= dshape_[d];
        domain_range(o0_, o1_, &d0_, &d1_);
        dstride_ = c_strides(dshape_);
        if (store_shared_operand(operand)) return;  // retried once it is stored
        top_ = add_item(operand);
    } else {
        dshape_ = root.geom.shape;
        d0_ = o0_;
        d1_ = o1_;
        dstride_ = c_strides(dshape_);
        top_ = add_item(root);
    }
}

Planner::~Planner() {
    for (CachedBlock* b : pinned_) cache_.unpin(b);
    for (gpupy_block* b : wrapped_) drv_.free(b);
}

void Planner::domain_range(int64_t a, int64_t b, int64_t* da, int64_t* db) const {
    if (!reduction_) {
        *da = a;
        *db = b;
        return;
    }
    if (rp_.mode == GPUPY_REDUCE_CHUNKS) {
        const int64_t nchunks = root_.node->shape().back();
        const int64_t of = a / nchunks, cf = a % nchunks;
        const int64_t ol = (b - 1) / nchunks, cl = (b - 1) % nchunks;
        *da = of * inner_ + cf * rp_.chunk;
        *db = ol * inner_ + std::min(inner_, (cl + 1) * rp_.chunk);
    } else {
        const int64_t o = a / inner_, r = a % inner_;
        *da = o * inner_ + (r / rp_.chunk) * rp_.chunk;
        *db = b;
    }
}

bool Planner::host_available(const Node* x, int64_t lo, int64_t hi) const {
    if (x->complete()) return true;
    if (!x->host()) return false;
    return x->bits().all_in_range(lo, hi + 1);
}

int32_t Planner::add_item(const NodeView& v) {
    std::vector<int32_t>& same_node = memo_[v.node->id()];
    for (int32_t j : same_node) {
        const ViewGeometry& g = items_[j].view.geom;
        if (g.offset == v.geom.offset && g.strides == v.geom.strides) return j;
    }
    const int32_t i = static_cast<int32_t>(items_.size());
    same_node.push_back(i);
    items_.emplace_back();
    items_[i].view = v;
    classify(i);
    return i;
}

void Planner::collapse_to_storage(Node* x, const Span& span) {
    const ViewGeometry id = identity_view(x->shape());
    for (int64_t j = span.lo / B_; j <= span.hi / B_; ++j) {
        if (host_) require(Task{Task::HostBlock, NodeView{NodeRef(x), id}, j});
        else if (!cache_.find(x, id, j)) require(Task{Task::EvalBlock, NodeView{NodeRef(x), id}, j});
    }
}

// A reduction fuses its operand's expression into its first pass, so the
// operand's values are never stored anywhere. When something else still
// refers to the operand -- the user's array (`m = d.max(); d / m`), another
// expression, a second reduction -- those values would be computed all over
// again for it. Then the operand is evaluated into its storage first (a
// prerequisite) and the reduction reads it from there. True if it asked.
bool Planner::store_shared_operand(const NodeView& operand) {
    Node* x = operand.node.get();
    // Only what the planner would fuse; the REDUCE node holds one reference.
    if (x->kind() != NodeKind::Expression || x->op() == GPUPY_OP_INDEX || x->op() >= GPUPY_NUM_OPS ||
        x->complete() || x->refcount() < 2)
        return false;
    const Span span = view_span(operand.geom, d0_, d1_);
    const int64_t j0 = span.lo / B_, j1 = span.hi / B_;
    if (host_available(x, j0 * B_, std::min((j1 + 1) * B_, x->size()) - 1)) return false;
    if (!host_) {
        const ViewGeometry id = identity_view(x->shape());
        bool all = true;
        for (int64_t j = j0; j <= j1 && all; ++j) all = cache_.find(x, id, j) != nullptr;
        if (all) return false;
    }
    collapse_to_storage(x, span);
    return true;
}

void Planner::classify(int32_t i) {
    // (classify never adds items, so this reference stays valid.)
    const NodeView& v = items_[i].view;
    Node* x = v.node.get();
    auto set = [&](Item::Class c) { items_[i].cls = c; };

    if (x->kind() == NodeKind::Constant) return set(Item::Const);
    if (x->complete()) return set(Item::Storage);
    if (x->op() == GPUPY_OP_INDEX) {
        if (drv_.supports(GPUPY_OP_INDEX, x->dtype())) return set(Item::Index);
        require(Task{Task::HostEval, v, 0});
        return set(Item::Pending);
    }
    if (host_ && x->host() && view_evaluated(*x, v.geom, d0_, d1_)) return set(Item::Storage);
    // The exact blocks of this view, already evaluated?
    if (!host_ && x->cached_blocks > 0) {
        bool all = true;
        std::vector<CachedBlock*> hits;
        for (int64_t k = d0_ / B_; k <= (d1_ - 1) / B_ && all; ++k) {
            CachedBlock* b = cache_.find(x, v.geom, k);
            if (b) hits.push_back(b);
            else all = false;
        }
        if (all) {
            for (CachedBlock* b : hits) pin(b);
            return set(Item::Exact);
        }
    }
    // Its storage, on the host or on the device?
    const Span span = view_span(v.geom, d0_, d1_);
    const int64_t j0 = span.lo / B_, j1 = span.hi / B_;
    if (host_available(x, j0 * B_, std::min((j1 + 1) * B_, x->size()) - 1)) return set(Item::Storage);
    if (x->cached_blocks > 0) {
        const ViewGeometry id = identity_view(x->shape());
        bool all = true;
        for (int64_t j = j0; j <= j1 && all; ++j) all = cache_.find(x, id, j) != nullptr;
        if (all && !host_) return set(Item::Storage);
        if (all && i != top_) {
            // On the device already: read it back rather than recompute.
            require_host(v);
            return set(Item::Pending);
        }
    }
    if (needs_host_evaluation(*x, drv_)) {
        require(Task{Task::HostEval, v, 0});
        return set(Item::Pending);
    }
    if (x->op() == CORE_OP_REDUCE || x->op() == CORE_OP_CONCAT) {
        // Reductions and joins are never fused into their consumers:
        // evaluate them into their own storage and read that.
        collapse_to_storage(x, span);
        return set(Item::Pending);
    }
    if (x->op() == CORE_OP_REMAP) {
        const bool whole = v.geom.offset == 0 && v.geom.shape == x->shape() && contiguous_map(v.geom.strides);
        if (!whole) {
            collapse_to_storage(x, span);
            return set(Item::Pending);
        }
        // Read the operand's storage through the remap.
        const NodeView& src = x->children().at(0);
        items_[i].source = src;
        items_[i].cls = Item::Remapped;
        Node* sx = src.node.get();
        const Span s = leaf_span(items_[i], d0_, d1_);
        const int64_t k0 = s.lo / B_, k1 = s.hi / B_;
        if (sx->kind() == NodeKind::Constant || host_available(sx, k0 * B_, std::min((k1 + 1) * B_, sx->size()) - 1)) return;
        const ViewGeometry sid = identity_view(sx->shape());
        bool all = !host_;
        for (int64_t j = k0; j <= k1 && all; ++j) all = cache_.find(sx, sid, j) != nullptr;
        if (all) return;
        if (needs_host_evaluation(*sx, drv_)) require(Task{Task::HostEval, src, 0});
        else collapse_to_storage(sx, s);
        return set(Item::Pending);
    }
    std::vector<NodeView> kids;
    kids.reserve(x->children().size());
    for (const NodeView& c : x->children()) {
        NodeView k{c.node, {}};
        if (!compose_views(x->shape(), v.geom, c.geom, &k.geom)) {
            collapse_to_storage(x, span);
            return set(Item::Pending);
        }
        kids.push_back(std::move(k));
    }
    set(Item::Interior);
    items_[i].kid_views = std::move(kids);
}

void Planner::create_kids(int32_t i) {
    std::vector<NodeView> views = std::move(items_[i].kid_views);
    items_[i].kid_views.clear();
    std::vector<int32_t> kids;
    kids.reserve(views.size());
    for (const NodeView& v : views) kids.push_back(add_item(v));  // may grow items_
    items_[i].kids = std::move(kids);
}

gpupy_ir_instr describe_node(const Item& it) {
    const Node* x = it.view.node.get();
    switch (it.cls) {
    case Item::Const: return blank_instr(GPUPY_OP_CONST, x->dtype());
    case Item::Index: return blank_instr(GPUPY_OP_INDEX, x->dtype());
    case Item::Interior: return blank_instr(x->op(), x->dtype());
    default: {
        gpupy_ir_instr in = blank_instr(GPUPY_OP_LOAD, x->dtype());
        in.nblocks = 1;
        return in;
    }
    }
}

void Planner::compute_bound(int32_t i) {
    Item& it = items_[i];
    gpupy_resources b = drv_.resource_get(describe_node(it));
    if (it.cls != Item::Interior) {
        it.bound = b;
        return;
    }
    for (int32_t c : it.kids) drv_.resource_add(&b, items_[c].bound);
    if (!drv_.resource_check(b)) {
        gpupy_resources exact{};
        if (check_subtree(i, &exact)) {
            b = exact;
        } else {
            // Collapse operands, costliest first, until the rest fits.
            std::vector<int32_t> order;
            for (int32_t c : items_[i].kids) {
                if (items_[c].cls == Item::Interior &&
                    std::find(order.begin(), order.end(), c) == order.end())
                    order.push_back(c);
            }
            std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) {
                for (int s = 0; s < GPUPY_RESOURCE_SLOTS; ++s) {
                    if (items_[a].bound.slot[s] != items_[c].bound.slot[s])
                        return items_[a].bound.slot[s] > items_[c].bound.slot[s];
                }
                return false;
            });
            bool fits = false;
            for (int32_t c : order) {
                collapse(c);
                if (check_subtree(i, &exact)) {
                    fits = true;
                    break;
                }
            }
            if (!fits) {
                throw DriverError("the " + drv_.name() + " driver cannot evaluate '" +
                                  op_display_name(it.view.node->op()) +
                                  "' even with every operand evaluated separately (its limits are too small)");
            }
            b = exact;
        }
    }
    items_[i].bound = b;
}

void Planner::collapse(int32_t c) {
    Item& it = items_[c];
    ++stats().collapses;
    for (int64_t k = d0_ / B_; k <= (d1_ - 1) / B_; ++k) {
        if (host_) require(Task{Task::HostBlock, it.view, k});
        else if (!cache_.find(it.view.node.get(), it.view.geom, k)) require(Task{Task::EvalBlock, it.view, k});
    }
    it.cls = Item::Pending;
    it.kids.clear();
    it.bound = drv_.resource_get(describe_node(it));
}

bool Planner::check_subtree(int32_t i, gpupy_resources* exact) {
    ++stats().check_ir_calls;
    std::vector<Leaf> leaves;
    std::vector<gpupy_ir_instr> instrs = emit(i, &leaves);
    for (const Leaf& l : leaves) {
        // Blocks are bound only at execution; checking needs the shape.
        instrs[l.instr].nblocks = 1;
        instrs[l.instr].block_elems = B_;
    }
    gpupy_ir ir = make_ir(instrs, o0_, o1_);
    if (reduction_ && i != top_) {
        // An operand inside a reduction is collapsed as an elementwise
        // evaluation over the domain, so check it as one.
        ir.reduce_op = GPUPY_OP_NONE;
        ir.start = d0_;
        ir.count = d1_ - d0_;
        ir.dst_offset = 0;
    }
    *exact = drv_.resource_zero();
    return drv_.check_ir(ir, exact);
}

bool Planner::partition() {
    if (reduction_ && needs_host_evaluation(*root_.node, drv_)) {
        require(Task{Task::HostEval, root_, 0});
        return false;
    }
    if (top_ < 0) return false;  // the constructor asked for prerequisites
    // Iterative post-order walk computing resource bounds.
    std::vector<std::pair<int32_t, size_t>> stack;
    stack.emplace_back(top_, 0);
    items_[top_].visited = true;
    while (!stack.empty()) {
        const int32_t i = stack.back().first;
        if (items_[i].cls == Item::Interior && !items_[i].kid_views.empty()) create_kids(i);
        size_t& pos = stack.back().second;
        if (items_[i].cls == Item::Interior && pos < items_[i].kids.size()) {
            const int32_t c = items_[i].kids[pos++];
            if (!items_[c].visited) {
                items_[c].visited = true;
                stack.emplace_back(c, 0);
            }
            continue;
        }
        stack.pop_back();
        compute_bound(i);
    }
    return pre_->empty();
}

std::vector<gpupy_ir_instr> Planner::emit(int32_t top, std::vector<Leaf>* leaves) {
    std::vector<gpupy_ir_instr> out;
    std::unordered_map<int32_t, int32_t> emitted;
    std::vector<std::pair<int32_t, size_t>> stack;
    stack.emplace_back(top, 0);
    while (!stack.empty()) {
        auto& [i, pos] = stack.back();
        const Item& it = items_[i];
        if (it.cls == Item::Interior && pos < it.kids.size()) {
            const int32_t c = it.kids[pos++];
            if (!emitted.count(c)) stack.emplace_back(c, 0);
            continue;
        }
        const int32_t cur = i;
        stack.pop_back();
        if (emitted.count(cur)) continue;
        const Item& item = items_[cur];
        const Node* x = item.view.node.get();
        gpupy_ir_instr in = describe_node(item);
        const int nd = static_cast<int>(dshape_.size());
        switch (item.cls) {
        case Item::Const:
            in.value = x->value();
            break;
        case Item::Index: {
            in.map.base = item.view.geom.offset;
            for (int d = 0; d < nd; ++d) in.map.stride[d] = item.view.geom.strides[d];
            const int axis = x->index_params().axis;
            in.div = c_strides(x->shape())[axis];
            in.mod = axis == 0 ? 0 : x->shape()[axis];
            if (contiguous_map(item.view.geom.strides)) in.flags |= GPUPY_INSTR_CONTIGUOUS;
            break;
        }
        case Item::Exact:
            in.map.base = 0;
            for (int d = 0; d < nd; ++d) in.map.stride[d] = dstride_[d];
            in.flags |= GPUPY_INSTR_CONTIGUOUS;
            leaves->push_back({cur, static_cast<int32_t>(out.size())});
            break;
        case Item::Remapped: {
            const RemapParams& rp = x->remap_params();
            in.map.base = item.source.geom.offset;
            for (int d = 0; d < nd; ++d) {
                in.map.stride[d] = item.source.geom.strides[d];
                in.map.div[d] = rp.div[d];
                in.map.mod[d] = rp.mod[d];
            }
            in.dtype = item.source.node->dtype();
            in.flags |= GPUPY_INSTR_REMAPPED;
            leaves->push_back({cur, static_cast<int32_t>(out.size())});
            break;
        }
        case Item::Storage:
        case Item::Pending:
            in.map.base = item.view.geom.offset;
            for (int d = 0; d < nd; ++d) in.map.stride[d] = item.view.geom.strides[d];
            if (contiguous_map(item.view.geom.strides)) in.flags |= GPUPY_INSTR_CONTIGUOUS;
            leaves->push_back({cur, static_cast<int32_t>(out.size())});
            break;
        case Item::Interior:
            for (size_t a = 0; a < item.kids.size(); ++a) in.arg[a] = emitted.at(item.kids[a]);
            break;
        }
        emitted.emplace(cur, static_cast<int32_t>(out.size()));
        out.push_back(in);
    }
    return out;
}

gpupy_ir Planner::make_ir(const std::vector<gpupy_ir_instr>& instrs, int64_t a, int64_t b) const {
    gpupy_ir ir;
    std::memset(&ir, 0, sizeof ir);
    ir.ninstr = static_cast<int32_t>(instrs.size());
    ir.instr = instrs.data();
    ir.ndim = static_cast<int32_t>(dshape_.size());
    for (size_t d = 0; d < dshape_.size(); ++d) ir.shape[d] = dshape_[d];
    ir.start = a;
    ir.count = b - a;
    ir.dst_offset = a - o0_ + dst_base_;
    ir.reduce_op = GPUPY_OP_NONE;
    if (reduction_) {
        ir.reduce_op = rp_.fold;
        ir.reduce_mode = rp_.mode;
        ir.reduce_ndim = rp_.ndim;
        ir.reduce_chunk = rp_.chunk;
        ir.reduce_identity = rp_.identity;
    }
    return ir;
}

Span Planner::leaf_span(const Item& it, int64_t da, int64_t db) const {
    if (it.cls != Item::Remapped) return view_span(it.view.geom, da, db);
    // A bounding box: the range of each domain coordinate over [da, db),
    // pushed through (n / div) % mod and the operand's strides.
    const RemapParams& rp = it.view.node->remap_params();
    const ViewGeometry& g = it.source.geom;
    const int nd = static_cast<int>(dshape_.size());
    std::vector<int64_t> first(nd), last(nd);
    unravel(da, dshape_, first.data());
    unravel(db - 1, dshape_, last.data());
    Span r{g.offset, g.offset};
    bool full = false;  // once coordinates differ, all inner dims sweep fully
    for (int d = 0; d < nd; ++d) {
        int64_t lo = first[d], hi = last[d];
        if (full) {
            lo = 0;
            hi = dshape_[d] - 1;
        } else if (first[d] != last[d]) {
            full = true;
        }
        int64_t qlo = lo / rp.div[d], qhi = hi / rp.div[d];
        if (rp.mod[d]) {
            if (qhi - qlo + 1 >= rp.mod[d] || qlo % rp.mod[d] > qhi % rp.mod[d]) {
                qlo = 0;
                qhi = rp.mod[d] - 1;
            } else {
                qlo %= rp.mod[d];
                qhi %= rp.mod[d];
            }
        }
        const int64_t a = qlo * g.strides[d], b = qhi * g.strides[d];
        r.lo += std::min(a, b);
        r.hi += std::max(a, b);
    }
    return r;
}

int64_t Planner::blocks_needed(const Leaf& l, int64_t da, int64_t db) const {
    if (host_) return 1;  // host mode reads each node's whole buffer in place
    const Item& it = items_[l.item];
    if (it.cls == Item::Exact) return (db - 1) / B_ - da / B_ + 1;
    const Span s = leaf_span(it, da, db);
    return s.hi / B_ - s.lo / B_ + 1;
}

bool Planner::split(const std::vector<Leaf>& leaves, std::vector<Piece>* pieces, std::vector<int32_t>* to_pack) {
    // Pieces are the longest prefixes in which every leaf reads one storage
    // block (found by binary search on the cut: a leaf's block count only
    // grows with the range), so a block straddling one storage boundary
    // becomes two pieces, not a subdivision that grows with the block size.
    pieces->clear();
    auto worst_in = [&](int64_t a, int64_t b) {
        int64_t da, db;
        domain_range(a, b, &da, &db);
        int64_t worst = 0;
        for (const Leaf& l : leaves) worst = std::max(worst, blocks_needed(l, da, db));
        return worst;
    };
    int64_t a = o0_;
    while (a < o1_) {
        int64_t cut = o1_;
        if (worst_in(a, o1_) > 1) {
            int64_t lo = a + 1, hi = o1_;  // [a, lo) is tried first: one output always fits best
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo + 1) / 2;
                if (worst_in(a, mid) <= 1) lo = mid;
                else hi = mid - 1;
            }
            cut = lo;
        }
        if (pieces->size() + 1 >= kMaxPieces && cut < o1_) cut = o1_;  // too many: bind several blocks
        const int64_t worst = worst_in(a, cut);
        if (worst > GPUPY_MAX_LEAF_BLOCKS) {
            int64_t da, db;
            domain_range(a, cut, &da, &db);
            for (const Leaf& l : leaves) {
                if (blocks_needed(l, da, db) > GPUPY_MAX_LEAF_BLOCKS) {
                    if (items_[l.item].cls == Item::Remapped)
                        throw InternalError("a remapped read spans more blocks than one evaluation can bind");
                    to_pack->push_back(l.item);
                }
            }
            return false;
        }
        pieces->push_back({a, cut});
        a = cut;
    }
    return true;
}

bool Planner::pack(int32_t i) {
    // Gather this leaf's view of the domain on the host and upload it as
    // the view's own blocks: for strided reads that would touch too many
    // storage blocks (e.g. a large transpose).
    Item& it = items_[i];
    Node* x = it.view.node.get();
    const Span span = view_span(it.view.geom, d0_, d1_);
    if (!host_available(x, span.lo, span.hi)) {
        // The values exist only on the device: read the storage back first.
        const ViewGeometry id = identity_view(x->shape());
        for (int64_t j = span.lo / B_; j <= span.hi / B_; ++j)
            require(Task{Task::HostBlock, NodeView{it.view.node, id}, j});
        return false;
    }
    const int64_t total = shape_size(dshape_);
    const int item_size = dtype_itemsize(x->dtype());
    for (int64_t k = d0_ / B_; k <= (d1_ - 1) / B_; ++k) {
        if (CachedBlock* hit = cache_.find(x, it.view.geom, k)) {
            pin(hit);
            continue;
        }
        const int64_t first = k * B_;
        const int64_t n = std::min(B_, total - first);
        std::vector<char> tmp(static_cast<size_t>(n * item_size));
        gather_from_host(x, it.view.geom, first, n, tmp.data());
        gpupy_block* h = cache_.allocate(x->dtype(), n);
        try {
            drv_.write(h, 0, n, tmp.data());
        } catch (...) {
            cache_.release_unregistered(h);
            throw;
        }
        ++stats().blocks_packed;
        ++stats().blocks_uploaded;
        stats().bytes_uploaded += n * item_size;
        pin(cache_.insert(x, it.view.geom, k, h, x->dtype(), n, false));
    }
    it.cls = Item::Exact;
    return true;
}

CachedBlock* Planner::storage_block(Node* x, int64_t j) {
    const ViewGeometry id = identity_view(x->shape());
    if (CachedBlock* hit = cache_.find(x, id, j)) {
        pin(hit);
        return hit;
    }
    const int64_t n = std::min(B_, x->size() - j * B_);
    const int item_size = dtype_itemsize(x->dtype());
    gpupy_block* h = cache_.allocate(x->dtype(), n);
    try {
        drv_.write(h, 0, n, x->host_data() + j * B_ * item_size);
    } catch (...) {
        cache_.release_unregistered(h);
        throw;
    }
    ++stats().blocks_uploaded;
    stats().bytes_uploaded += n * item_size;
    CachedBlock* b = cache_.insert(x, id, j, h, x->dtype(), n, false);
    pin(b);
    return b;
}

gpupy_block* Planner::wrapped(Node* x) {
    auto it = wrapped_nodes_.find(x);
    if (it != wrapped_nodes_.end()) return it->second;
    gpupy_block* b = drv_.wrap(x->dtype(), x->size(), x->ensure_host_buffer());
    wrapped_.push_back(b);
    wrapped_nodes_.emplace(x, b);
    return b;
}

void Planner::bind(gpupy_ir_instr* in, const Item& it, int64_t da, int64_t db) {
    Node* x = it.cls == Item::Remapped ? it.source.node.get() : it.view.node.get();
    if (host_) {
        // The node's whole host buffer as one block: element index = offset.
        in->nblocks = 1;
        in->block_first = 0;
        in->block_elems = std::max<int64_t>(x->size(), 1);
        in->blocks[0] = wrapped(x);
        return;
    }
    int64_t k0, k1;
    if (it.cls == Item::Exact) {
        k0 = da / B_;
        k1 = (db - 1) / B_;
    } else {
        const Span s = leaf_span(it, da, db);
        k0 = s.lo / B_;
        k1 = s.hi / B_;
    }
    in->nblocks = static_cast<int32_t>(k1 - k0 + 1);
    in->block_first = k0 * B_;
    in->block_elems = B_;
    for (int64_t k = k0; k <= k1; ++k) {
        CachedBlock* b = it.cls == Item::Exact ? cache_.find(x, it.view.geom, k) : storage_block(x, k);
        if (!b) throw InternalError("planned block vanished from the cache");
        if (it.cls == Item::Exact) pin(b);
        in->blocks[k - k0] = b->handle;
    }
}

bool Planner::execute(gpupy_block* dst, int64_t dst_base) {
    std::vector<Leaf> leaves;
    std::vector<gpupy_ir_instr> instrs = emit(top_, &leaves);
    for (const Leaf& l : leaves) {
        if (items_[l.item].cls == Item::Pending) throw InternalError("planner executed with a pending operand");
    }
    std::vector<Piece> pieces;
    for (;;) {
        std::vector<int32_t> to_pack;
        if (split(leaves, &pieces, &to_pack)) break;
        for (int32_t i : to_pack) {
            if (!pack(i)) return false;
        }
        leaves.clear();
        instrs = emit(top_, &leaves);
    }
    dst_base_ = dst_base;
    {
        for (const Piece& p : pieces) {
            int64_t da, db;
            domain_range(p.a, p.b, &da, &db);
            std::vector<gpupy_ir_instr> bound = instrs;
            for (const Leaf& l : leaves) bind(&bound[l.instr], items_[l.item], da, db);
            gpupy_ir ir = make_ir(bound, p.a, p.b);
            drv_.eval_ir(ir, dst);
            if (!host_) ++stats().evaluations;  // device dispatches; the host engine counts its own
        }
    }
    return true;
}

std::vector<gpupy_ir_instr> Planner::final_ir() {
    std::vector<Leaf> leaves;
    return emit(top_, &leaves);
}

}  // namespace

namespace {

// One planned piece of a destination block: `plan` fills output positions
// starting at dst_base.
struct PlannedPart;
bool evaluate_on_host(const NodeView& root, int64_t o0, int64_t o1, std::vector<PlannedPart>& parts);
struct PlannedPart {
    std::unique_ptr<Planner> plan;
    int64_t dst_base;
};

// The parts of a block of a whole CONCAT node: each operand covers a
// contiguous range of the result's flat positions.
bool plan_concat(const NodeView& root, int64_t o0, int64_t o1, std::vector<Task>* prereqs,
                 std::vector<PlannedPart>* parts, EvalMode mode) {
    const Node* x = root.node.get();
    int64_t start = 0;
    bool ok = true;
    for (const NodeView& part : x->children()) {
        const int64_t n = part.geom.size();
        const int64_t a = std::max(o0, start), b = std::min(o1, start + n);
        if (a < b) {
            auto plan = std::make_unique<Planner>(part, a - start, b - start, prereqs, mode);
            ok = plan->partition() && ok;
            parts->push_back({std::move(plan), a - o0});
        }
        start += n;
    }
    return ok;
}

// Host mode: the result goes straight into the node's host buffer when the
// view's positions are contiguous there, else through a scratch buffer.
bool evaluate_on_host(const NodeView& root, int64_t o0, int64_t o1, std::vector<PlannedPart>& parts) {
    Runtime& rt = Runtime::get();
    Driver& engine = *rt.host_engine();
    Node* x = root.node.get();
    const int item = dtype_itemsize(x->dtype());
    const int64_t n = o1 - o0;
    char* base = x->ensure_host_buffer();
    const bool whole_node = x->op() == CORE_OP_REDUCE && is_identity_view(root.geom, x->shape());
    const bool direct = whole_node || is_c_contiguous(root.geom.shape, root.geom.strides);
    const int64_t first = whole_node ? o0 : root.geom.offset + o0;
    std::vector<char> scratch;
    char* out = direct ? base + first * item : (scratch.resize(static_cast<size_t>(n * item)), scratch.data());
    gpupy_block* dst = engine.wrap(x->dtype(), n, out);
    try {
        for (PlannedPart& p : parts) {
            if (!p.plan->execute(dst, p.dst_base)) {
                engine.free(dst);
                return false;
            }
        }
    } catch (...) {
        engine.free(dst);
        throw;
    }
    engine.free(dst);
    parts.clear();
    if (direct) {
        if (x->kind() == NodeKind::Expression) x->bits().set_range(first, first + n);
    } else {
        scatter_to_host(x, root.geom, o0, n, scratch.data());
    }
    ++stats().host_engine_evaluations;
    return true;
}

}  // namespace

bool plan_and_evaluate(const NodeView& root, int64_t block, std::vector<Task>* prereqs, EvalMode mode) {
    BlockCache& cache = Runtime::get().cache();
    Node* x = root.node.get();
    const int64_t B = cache.block_size();
    const int64_t total = (x->op() == CORE_OP_REDUCE && is_identity_view(root.geom, x->shape())) ? x->size() : root.geom.size();
    const int64_t o0 = block * B, o1 = std::min(o0 + B, total);
    std::vector<PlannedPart> parts;
    if (x->op() == CORE_OP_CONCAT && !x->complete() && is_identity_view(root.geom, x->shape())) {
        if (!plan_concat(root, o0, o1, prereqs, &parts, mode)) return false;
    } else {
        auto plan = std::make_unique<Planner>(root, o0, o1, prereqs, mode);
        if (!plan->partition()) return false;
        parts.push_back({std::move(plan), 0});
    }
    if (mode == EvalMode::Host) return evaluate_on_host(root, o0, o1, parts);
    gpupy_block* dst = cache.allocate(x->dtype(), o1 - o0);
    try {
        for (PlannedPart& p : parts) {
            if (!p.plan->execute(dst, p.dst_base)) {
                cache.release_unregistered(dst);
                return false;
            }
        }
    } catch (...) {
        cache.release_unregistered(dst);
        throw;
    }
    cache.insert(x, root.geom, block, dst, x->dtype(), o1 - o0, true);
    parts.clear();  // unpin before trimming
    cache.trim();
    return true;
}

std::vector<gpupy_ir_instr> plan_ir(const NodeView& root, int64_t block) {
    std::vector<Task> prereqs;
    const int64_t B = Runtime::get().cache().block_size();
    Node* x = root.node.get();
    const int64_t total = (x->op() == CORE_OP_REDUCE && is_identity_view(root.geom, x->shape())) ? x->size() : root.geom.size();
    Planner p(root, block * B, std::min(block * B + B, total), &prereqs, EvalMode::Device);
    if (!p.partition()) return {};
    return p.final_ir();
}

}  // namespace gpupy
