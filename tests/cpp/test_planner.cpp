// The planner's phases (core/planning/): no side effects, partitioning
// against tiny limits, linear work on deep expressions, wide domains.
#include "check.hpp"
#include "core/building/reductions.hpp"
#include "core/planning/fold.hpp"
#include "core/planning/planner.hpp"
#include "core/runtime/stats.hpp"
#include "support.hpp"

using namespace gpupy;

namespace {

std::optional<BlockPlan> plan(const GpuArray& root, int64_t block, std::vector<Task>* prereqs) {
    Runtime& rt = support::runtime();
    const PlanContext ctx{rt.driver(), rt.cache(), rt.cache().block_size(), EvalMode::Device, prereqs};
    return plan_block(ctx, root.node_view(), block);
}

struct CacheSnapshot {
    std::vector<const CachedBlock*> order;
    std::vector<int> pins;
    int64_t used;
    explicit CacheSnapshot(const BlockCache& c) : order(c.eviction_order()), used(c.used_bytes()) {
        for (const CachedBlock* b : order) pins.push_back(b->pins);
    }
    bool operator==(const CacheSnapshot& o) const { return order == o.order && pins == o.pins && used == o.used; }
};

}  // namespace

TEST(planning_changes_nothing_in_the_cache) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(16)), b = support::array(support::ramp(16, 1));
    GpuArray s = support::binary(GPUPY_OP_ADD, a, b);
    ensure_device_block(s.node_view(), 1);  // blocks of a, b and s on the device
    ensure_device_block(a.node_view(), 3);
    const CacheSnapshot before(cache);
    const Stats stats_before = stats();
    const int64_t evaluations = fake::record().evaluations;
    GpuArray r = support::binary(GPUPY_OP_MULTIPLY, s, a);
    for (int64_t k = 0; k < 4; ++k) {
        std::vector<Task> prereqs;
        CHECK(plan(r, k, &prereqs).has_value());
        CHECK(prereqs.empty());
    }
    CHECK(CacheSnapshot(cache) == before);
    CHECK_EQ(stats().blocks_uploaded, stats_before.blocks_uploaded);
    CHECK_EQ(fake::record().evaluations, evaluations);
}

TEST(operands_that_do_not_fit_become_earlier_passes) {
    support::Scope scope;
    fake::limits().max_ops = 1;
    scope.rt.cache().set_block_size(8);
    GpuArray a = support::array(support::ramp(8)), b = support::array(support::ramp(8, 3));
    // ((a + b) * (a - b)) + a: three operations, one per evaluation
    GpuArray r = support::binary(GPUPY_OP_ADD,
                                 support::binary(GPUPY_OP_MULTIPLY, support::binary(GPUPY_OP_ADD, a, b),
                                                 support::binary(GPUPY_OP_SUBTRACT, a, b)),
                                 a);
    std::vector<Task> prereqs;
    std::optional<BlockPlan> p = plan(r, 0, &prereqs);
    CHECK(p.has_value());
    CHECK_EQ(p->parts.size(), size_t{1});
    const std::vector<Pass>& passes = p->parts[0].passes;
    CHECK_EQ(passes.size(), size_t{4});  // a+b, a-b, their product, the root
    CHECK(passes.back().root);
    for (size_t i = 0; i + 1 < passes.size(); ++i) CHECK(!passes[i].root);
    const std::vector<double> got = support::values(r);
    for (int i = 0; i < 8; ++i) {
        const double x = i, y = i + 3;
        CHECK_EQ(got[i], (x + y) * (x - y) + x);
    }
    CHECK_EQ(fake::record().evaluations, int64_t{4});
    for (int n : fake::record().instructions) CHECK(n <= 3);  // one op and its two leaves
}

TEST(a_deep_chain_is_planned_in_linear_work) {
    // The 0-d chain of a Python loop (`t += f(a[i])`): a 3,000-deep
    // expression with at most 100 operations per evaluation.
    support::Scope scope;
    fake::limits().max_ops = 100;
    const int n = 3000;
    GpuArray one = support::array({1.0}, {});
    GpuArray x = support::array({0.0}, {});
    for (int i = 0; i < n; ++i) x = support::binary(GPUPY_OP_ADD, x, one);
    const int64_t checks = stats().check_ir_calls;
    const std::vector<double> got = support::values(x);
    CHECK_EQ(got[0], static_cast<double>(n));
    const int64_t evaluations = fake::record().evaluations;
    CHECK(evaluations >= n / 100);
    // Each staged pass costs at most two exact checks, never a re-walk of
    // what is below it; quadratic work would show as ~n^2/200 checks.
    CHECK(stats().check_ir_calls - checks <= 2 * evaluations + 2);
    CHECK_EQ(fake::record().check_ir_calls, stats().check_ir_calls - checks);
}

// A wide map's dimensions read plainly with these strides.
std::vector<MapDim> plain_dims(const Dims& strides) {
    std::vector<MapDim> dims(strides.size());
    for (size_t d = 0; d < strides.size(); ++d) dims[d].stride = strides[d];
    return dims;
}

TEST(wide_domains_fold_to_the_irs_dimensions) {
    // A (2, 1, 3, 4, 2, 2, 2, 2, 2, 2, 2) domain read by a C-order map and by
    // a map reversing the first axis.
    const Dims shape{2, 1, 3, 4, 2, 2, 2, 2, 2, 2, 2};
    const Dims c = c_strides(shape);
    Dims rev = c;
    rev[0] = -c[0];
    std::vector<gpupy_ir_instr> instrs(2);
    for (auto& in : instrs) in = gpupy_ir_instr{};
    const std::vector<WideMap> maps{{0, 0, plain_dims(c)}, {1, c[0], plain_dims(rev)}};
    const DomainFold f = fold_domain(shape, maps, instrs);
    CHECK(f.active);
    // The size-1 dim goes and the C-order runs merge, except across the
    // reversed first axis: (2) + (3 * 4 * 2 ** 7)
    CHECK_EQ(f.ir_shape, (Dims{2, 3 * 4 * 128}));
    CHECK(f.lead_shape.empty());
    CHECK_EQ(instrs[0].map.stride[0], c[0]);
    CHECK_EQ(instrs[0].map.stride[1], int64_t{1});
    CHECK_EQ(instrs[1].map.stride[0], -c[0]);
    CHECK(instrs[0].flags & GPUPY_INSTR_CONTIGUOUS);
    CHECK(!(instrs[1].flags & GPUPY_INSTR_CONTIGUOUS));
}

TEST(too_many_dimensions_take_leading_ones_out_of_the_domain) {
    // Ten dims of size 2 read by a map that merges nothing (every other
    // stride reversed): two leading dims leave the IR's domain.
    Dims shape(10, 2);
    Dims strides = c_strides(shape);
    for (size_t d = 0; d < strides.size(); d += 2) strides[d] = -strides[d];
    const int64_t base = 1023 / 2 + 300;  // any base; the offsets add to it
    std::vector<gpupy_ir_instr> instrs(1);
    instrs[0] = gpupy_ir_instr{};
    const DomainFold f = fold_domain(shape, {{0, base, plain_dims(strides)}}, instrs);
    CHECK_EQ(f.ir_shape.size(), size_t{GPUPY_MAX_DIMS});
    CHECK_EQ(f.lead_shape, (Dims{2, 2}));
    CHECK_EQ(f.tail, int64_t{256});
    // Output 3 * 256 + 5 lies at lead index (1, 1): base moves by both strides.
    std::vector<gpupy_ir_instr> piece = instrs;
    const int64_t start = fold_piece(f, piece, 3 * 256 + 5);
    CHECK_EQ(start, int64_t{5});
    CHECK_EQ(piece[0].map.base, base + strides[0] + strides[1]);
}

TEST(a_leading_dimension_that_is_rolled_moves_the_base_by_its_wrapped_coordinate) {
    // As above, with the first dim rolled by one (shift 1, mod 2): lead
    // index (1, 1) reads coordinate (1 + 1) % 2 = 0 of it. The remaining
    // dims stay plain, so the IR's map is not remapped.
    Dims shape(10, 2);
    Dims strides = c_strides(shape);
    for (size_t d = 0; d < strides.size(); d += 2) strides[d] = -strides[d];
    std::vector<MapDim> dims = plain_dims(strides);
    dims[0].mod = 2;
    dims[0].shift = 1;
    std::vector<gpupy_ir_instr> instrs(1);
    instrs[0] = gpupy_ir_instr{};
    const DomainFold f = fold_domain(shape, {{0, 700, dims}}, instrs);
    CHECK_EQ(f.lead_shape, (Dims{2, 2}));
    CHECK(!(instrs[0].flags & GPUPY_INSTR_REMAPPED));
    std::vector<gpupy_ir_instr> piece = instrs;
    fold_piece(f, piece, 3 * 256);
    CHECK_EQ(piece[0].map.base, int64_t{700} + strides[1]);
    piece = instrs;
    fold_piece(f, piece, 1 * 256);  // lead index (0, 1): coordinate 1 of the rolled dim
    CHECK_EQ(piece[0].map.base, int64_t{700} + strides[0] + strides[1]);
}

TEST(a_reduction_whose_operand_and_fold_do_not_fit_reads_its_staged_operand) {
    // sum(a * b) with one operation per evaluation: the product is one
    // pass, the fold of its values another (the fold counts as an op).
    support::Scope scope;
    fake::limits().max_ops = 1;
    scope.rt.cache().set_block_size(4);
    GpuArray a = support::array(support::ramp(10)), b = support::array(support::ramp(10, 1));
    GpuArray s = reduce(support::binary(GPUPY_OP_MULTIPLY, a, b), GPUPY_OP_ADD, {0}, GPUPY_FLOAT64, 3);
    double want = 0;
    for (int i = 0; i < 10; ++i) want += static_cast<double>(i) * (i + 1);
    CHECK_EQ(support::values(s)[0], want);
    CHECK(fake::record().evaluations >= 3);  // product passes, then folds
}
