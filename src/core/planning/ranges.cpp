#include "core/planning/ranges.hpp"

#include <algorithm>
#include <utility>

#include "core/planning/lower.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Splitting an output block into more evaluations than this to keep every
// leaf inside one device block costs more than gathering the leaf on the
// host instead.
constexpr size_t kMaxPieces = 64;

// A leaf's domain positions for a pass's outputs [a, b).
void pass_range(const Domain& d, const Pass& pass, int64_t a, int64_t b, int64_t* da, int64_t* db) {
    if (pass.root) {
        d.range(a, b, da, db);
    } else {
        *da = a;
        *db = b;
    }
}

int64_t blocks_needed(const PlanContext& ctx, const PartPlan& part, const Pass& pass, const Leaf& l, int64_t da,
                      int64_t db) {
    if (ctx.host()) return 1;  // host mode reads each node's whole buffer in place
    const Item& it = part.items[l.item];
    if (is_gather(pass.instrs[l.instr])) return source_blocks(it, ctx.B);
    if (it.cls == Item::Exact || it.cls == Item::Interior) return (db - 1) / ctx.B - da / ctx.B + 1;
    const Span s = leaf_span(part, it, da, db);
    return s.hi / ctx.B - s.lo / ctx.B + 1;
}

// The least and greatest coordinate dimension d of a remap reads for
// domain coordinates lo..hi (gpupy_map_coordinate is monotone between wraps
// and, mirrored, rises to mod - 1 and falls back).
std::pair<int64_t, int64_t> coordinate_range(int64_t lo, int64_t hi, const RemapParams& rp, int d) {
    const int64_t mod = rp.mod[d];
    const int32_t edge = rp.edge[d];
    const int64_t clo = lo / rp.div[d] + rp.shift[d], chi = hi / rp.div[d] + rp.shift[d];
    auto at = [&](int64_t c) { return gpupy_map_coordinate(c, 1, 0, mod, edge); };
    if (edge == GPUPY_EDGE_CLAMP || (edge == GPUPY_EDGE_WRAP && mod == 0)) return {at(clo), at(chi)};
    const int64_t period = edge == GPUPY_EDGE_WRAP ? mod : edge == GPUPY_EDGE_REFLECT ? 2 * mod - 2 : 2 * mod;
    if (period <= 0) return {0, 0};
    const int64_t tlo = clo % period, thi = chi % period;
    if (chi - clo + 1 >= period || tlo > thi) return {0, mod - 1};  // a whole period, or across its end
    if (edge == GPUPY_EDGE_WRAP || thi < mod) return {at(tlo), at(thi)};  // rising
    if (tlo >= mod - 1) return {at(thi), at(tlo)};                        // falling
    return {std::min(at(tlo), at(thi)), mod - 1};                          // over the turn
}

// Whether the driver can run the pass over outputs [a, b) in one
// evaluation, each leaf binding the blocks it reads there (the partition
// checked one block per leaf: a leaf that spans several takes more of the
// device's texture units, or whatever the driver counts).
bool fits_with_blocks(const PlanContext& ctx, const PartPlan& part, const Pass& pass, int64_t a, int64_t b) {
    const Domain& dom = part.domain;
    int64_t da, db;
    pass_range(dom, pass, a, b, &da, &db);
    std::vector<gpupy_ir_instr> instrs = pass.instrs;
    shape_unbound_leaves(part, pass.leaves, ctx.B, instrs);
    for (const Leaf& l : pass.leaves) {
        // More than an IR binds: not one evaluation, whatever the driver
        // (asked about fewer, it said yes, and the range was cut to pack a
        // leaf that packing does not shrink: a plan that never ended).
        const int64_t need = blocks_needed(ctx, part, pass, l, da, db);
        if (need > GPUPY_MAX_LEAF_BLOCKS) return false;
        instrs[l.instr].nblocks = static_cast<int32_t>(need);
    }
    const bool reduce = pass.root && dom.reduction;
    const gpupy_ir ir = make_ir(dom, pass.fold, instrs, a, b, reduce, 0, &pass.outputs_at, &pass.also_reduce);
    ++stats().check_ir_calls;
    gpupy_resources r{};
    return ctx.driver.check_ir(ir, &r);
}

}  // namespace

Span leaf_span(const PartPlan& part, const Item& it, int64_t da, int64_t db) {
    const Domain& dom = part.domain;
    if (it.cls != Item::Remapped) return view_span(it.view.geom, da, db);
    // A bounding box: the range of each domain coordinate over [da, db),
    // pushed through (n / div) % mod and the operand's strides.
    const RemapParams& rp = part.remaps.at(it.remap);
    const ViewGeometry& g = it.source.geom;
    const int nd = static_cast<int>(dom.shape.size());
    std::vector<int64_t> first(nd), last(nd);
    unravel(da, dom.shape, first.data());
    unravel(db - 1, dom.shape, last.data());
    Span r{g.offset, g.offset};
    bool full = false;  // once coordinates differ, all inner dims sweep fully
    for (int d = 0; d < nd; ++d) {
        int64_t lo = first[d], hi = last[d];
        if (full) {
            lo = 0;
            hi = dom.shape[d] - 1;
        } else if (first[d] != last[d]) {
            full = true;
        }
        const auto [qlo, qhi] = coordinate_range(lo, hi, rp, d);
        const int64_t a = qlo * g.strides[d], b = qhi * g.strides[d];
        r.lo += std::min(a, b);
        r.hi += std::max(a, b);
    }
    return r;
}

bool split(const PlanContext& ctx, const PartPlan& part, Pass& pass, std::vector<int32_t>* to_pack) {
    // Pieces are the longest prefixes in which every leaf reads one storage
    // block (found by binary search on the cut: a leaf's block count only
    // grows with the range).
    const Domain& dom = part.domain;
    pass.pieces.clear();
    auto worst_in = [&](int64_t a, int64_t b) {
        int64_t da, db;
        pass_range(dom, pass, a, b, &da, &db);
        int64_t worst = 0;
        for (const Leaf& l : pass.leaves) worst = std::max(worst, blocks_needed(ctx, part, pass, l, da, db));
        return worst;
    };
    const int64_t o1 = pass.out_end;
    int64_t a = pass.out_begin;
    while (a < o1) {
        int64_t cut = o1;
        if (worst_in(a, o1) > 1) {
            int64_t lo = a + 1, hi = o1;  // [a, lo) is tried first: one output always fits best
            while (lo < hi) {
                const int64_t mid = lo + (hi - lo + 1) / 2;
                if (worst_in(a, mid) <= 1) lo = mid;
                else hi = mid - 1;
            }
            cut = lo;
        }
        // Too many: bind several blocks, where the driver can.
        if (pass.pieces.size() + 1 >= kMaxPieces && cut < o1 && fits_with_blocks(ctx, part, pass, a, o1)) cut = o1;
        if (pass.fold.active) {
            // A folded domain's piece lies within one index of its leading
            // dimensions (fold.hpp).
            const int64_t tail = pass.fold.tail;
            cut = std::min(cut, (a / tail + 1) * tail);
        }
        if (worst_in(a, cut) > GPUPY_MAX_LEAF_BLOCKS) {
            int64_t da, db;
            pass_range(dom, pass, a, cut, &da, &db);
            for (const Leaf& l : pass.leaves) {
                if (blocks_needed(ctx, part, pass, l, da, db) > GPUPY_MAX_LEAF_BLOCKS) {
                    if (part.items[l.item].cls == Item::Remapped)
                        throw InternalError("a remapped read spans more blocks than one evaluation can bind");
                    to_pack->push_back(l.item);
                }
            }
            return false;
        }
        pass.pieces.push_back({a, cut});
        a = cut;
    }
    return true;
}

}  // namespace gpupy
