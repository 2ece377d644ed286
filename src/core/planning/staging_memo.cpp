#include "core/planning/staging_memo.hpp"

#include <cmath>
#include <unordered_map>
#include <vector>

namespace gpupy {

namespace {

// Parts with fewer items are partitioned by resource bounds alone, without
// exact checks, in less time than a remembered staging's check takes.
constexpr size_t kMinItems = 64;
// Remembered structures; all are forgotten when this many are kept (a
// program has few shapes of long expression, and forgetting costs one
// partitioning each).
constexpr size_t kMaxKept = 256;

// Two hashes of the same fields with different mixing, so that a false
// match needs both to collide.
struct Hasher {
    uint64_t a = 0x9e3779b97f4a7c15ull, b = 0xc2b2ae3d27d4eb4full;
    // (Two independent chains of one multiply each: cheap per field.)
    void add(uint64_t v) {
        a = (a ^ v) * 0x100000001b3ull;
        b = ((b + v) ^ (b >> 31)) * 0xff51afd7ed558ccdull;
    }
    void add_dims(const Dims& d) {
        add(d.size());
        for (int64_t v : d) add(static_cast<uint64_t>(v));
    }
    void add_view(const ViewGeometry& g) {
        add(static_cast<uint64_t>(g.offset));
        add_dims(g.shape);
        add_dims(g.strides);
    }
};

// What generated code may know of a constant's value (value_facts in the
// GLSL writer): whether it is NaN, whether finite.
uint64_t constant_class(const Node& x) {
    if (!dtype_is_float(x.dtype())) return 0;
    const double v = x.value().f;
    return std::isnan(v) ? 1 : std::isfinite(v) ? 2 : 3;
}

std::unordered_map<uint64_t, std::pair<StagingKey, std::vector<int32_t>>>& kept() {
    static auto* m = new std::unordered_map<uint64_t, std::pair<StagingKey, std::vector<int32_t>>>();
    return *m;  // (leaked, as the node table: used until the interpreter ends)
}

bool same(const StagingKey& x, const StagingKey& y) {
    return x.hash == y.hash && x.check == y.check && x.items == y.items;
}

}  // namespace

StagingKey staging_key(const PlanContext& ctx, const PartPlan& part) {
    if (part.items.size() < kMinItems) return {};
    Hasher h;
    h.add(reinterpret_cast<uintptr_t>(&ctx.driver));
    h.add(ctx.driver.configuration());
    h.add(static_cast<uint64_t>(ctx.mode));
    h.add(static_cast<uint64_t>(ctx.B));
    const Domain& d = part.domain;
    h.add_dims(d.shape);
    h.add(d.reduction);
    if (d.reduction) {
        h.add(static_cast<uint64_t>(d.reduce.fold));
        h.add(static_cast<uint64_t>(d.reduce.mode));
        h.add(static_cast<uint64_t>(d.reduce.ndim));
        h.add(static_cast<uint64_t>(d.reduce.chunk));
        h.add(d.reduce.identity.u);
    }
    for (int64_t v : {d.o0, d.o1, d.d0, d.d1}) h.add(static_cast<uint64_t>(v));
    h.add(static_cast<uint64_t>(part.top));
    for (const Item& it : part.items) {
        const Node& x = *it.view.node;
        h.add(static_cast<uint64_t>(it.cls) | static_cast<uint64_t>(x.kind()) << 8 |
              static_cast<uint64_t>(x.op()) << 16 | static_cast<uint64_t>(x.dtype()) << 40 |
              static_cast<uint64_t>(it.kids.size()) << 48);
        for (int32_t k : it.kids) h.add(static_cast<uint64_t>(k));
        // Leaves only: an operation's own view reaches the IR through the
        // views of the leaves below it, composed by the walk.
        switch (it.cls) {
        case Item::Interior: break;
        case Item::Const: h.add(constant_class(x)); break;
        case Item::Index:
            h.add(static_cast<uint64_t>(x.index_params().axis));
            h.add_dims(x.shape());
            h.add_view(it.view.geom);
            break;
        case Item::Remapped: {
            h.add(static_cast<uint64_t>(it.source.node->dtype()));
            h.add_view(it.source.geom);
            const RemapParams& p = part.remaps.at(it.remap);
            h.add_dims(p.div);
            h.add_dims(p.mod);
            h.add_dims(p.shift);
            for (int32_t e : p.edge) h.add(static_cast<uint64_t>(e));
            break;
        }
        default: h.add_view(it.view.geom);
        }
        // A gather also reads its source's whole storage.
        if (it.cls == Item::Interior && it.source.node) {
            h.add(static_cast<uint64_t>(it.source.node->size()));
            h.add_view(it.source.geom);
        }
    }
    return StagingKey{h.a, h.b, part.items.size()};
}

bool restage(const StagingKey& key, PartPlan& part) {
    if (key.empty()) return false;
    const auto found = kept().find(key.hash);
    if (found == kept().end() || !same(found->second.first, key)) return false;
    const std::vector<int32_t>& staged = found->second.second;
    for (int32_t i : staged) {
        if (i < 0 || static_cast<size_t>(i) >= part.items.size() || part.items[i].cls != Item::Interior) return false;
    }
    for (int32_t i : staged) part.items[i].staged = true;
    return true;
}

void remember_staging(const StagingKey& key, const PartPlan& part) {
    if (key.empty()) return;
    std::vector<int32_t> staged;
    for (int32_t i = 0; i < static_cast<int32_t>(part.items.size()); ++i) {
        if (part.items[i].staged) staged.push_back(i);
    }
    if (kept().size() >= kMaxKept) kept().clear();
    kept()[key.hash] = {key, std::move(staged)};
}

}  // namespace gpupy
