// Partitioning remembered by structure (planning/staging_memo.hpp): a chain
// planned again with other constants stages what the first plan staged,
// checked pass by pass; a remembered staging that no longer fits is
// partitioned again.
#include "check.hpp"
#include "core/runtime/stats.hpp"
#include "support.hpp"

using namespace gpupy;

namespace {

constexpr int64_t kN = 16;

// acc = maximum(acc, a * a + c_k) for k = 0..steps-1, c_k = first + k: the
// resource bounds count the shared a * a once per step, so partitioning
// checks passes exactly near the driver's limit.
GpuArray chain(const GpuArray& a, double first, int steps) {
    const Dims shape{kN};
    const NodeView shared = support::binary(GPUPY_OP_MULTIPLY, a, a).node_view();
    NodeView acc = a.node_view();
    for (int k = 0; k < steps; ++k) {
        gpupy_scalar v;
        v.f = first + k;
        const NodeView c = constant_view(NodeFactory::constant(GPUPY_FLOAT64, v), shape);
        const NodeView term{NodeFactory::expression(GPUPY_OP_ADD, GPUPY_FLOAT64, shape, {shared, c}), identity_view(shape)};
        acc = NodeView{NodeFactory::expression(GPUPY_OP_MAXIMUM, GPUPY_FLOAT64, shape, {acc, term}), identity_view(shape)};
    }
    return GpuArray::of(acc.node);
}

void check_chain(const GpuArray& r, double first, int steps) {
    const std::vector<double> got = support::values(r);
    for (int64_t i = 0; i < kN; ++i) {
        const double x = static_cast<double>(i) - 5;
        CHECK_EQ(got[i], std::max(x, x * x + first + steps - 1));
    }
}

}  // namespace

TEST(a_chain_planned_again_stages_what_it_staged_before) {
    support::Scope scope;
    fake::limits().max_ops = 12;
    const int steps = 40;
    // (A new array each time: the plans' structure is the same, their nodes
    // are new, as in a program run again.)
    const int64_t reused = stats().stagings_reused, collapses = stats().collapses;
    const int64_t checks = fake::record().check_ir_calls;
    check_chain(chain(support::array(support::ramp(kN, -5)), 1.5, steps), 1.5, steps);
    const int64_t first_checks = fake::record().check_ir_calls - checks, staged = stats().collapses - collapses;
    const std::vector<int> first_evaluations = fake::record().instructions;
    CHECK_EQ(stats().stagings_reused, reused);
    CHECK(staged > 0);
    CHECK(first_checks > staged + 1);  // the bounds overcount: more checks than passes

    fake::record() = fake::Record{};
    check_chain(chain(support::array(support::ramp(kN, -5)), 100.5, steps), 100.5, steps);
    CHECK_EQ(stats().stagings_reused, reused + 1);
    CHECK_EQ(stats().collapses - collapses, 2 * staged);
    CHECK_EQ(fake::record().check_ir_calls, staged + 1);  // one exact check per pass
    CHECK(fake::record().instructions == first_evaluations);
}

TEST(a_remembered_staging_that_no_longer_fits_is_partitioned_again) {
    support::Scope scope;
    const int steps = 41;
    fake::limits().max_ops = 12;
    check_chain(chain(support::array(support::ramp(kN, -5)), 2.5, steps), 2.5, steps);
    // The driver now answers otherwise without an option set (as a false
    // match of structures would find it): the remembered passes are too big.
    fake::limits().max_ops = 5;
    const int64_t reused = stats().stagings_reused;
    fake::record() = fake::Record{};
    check_chain(chain(support::array(support::ramp(kN, -5)), 7.5, steps), 7.5, steps);  // (eval_ir refuses > 5 ops)
    CHECK_EQ(stats().stagings_reused, reused);
    CHECK(fake::record().evaluations > 0);
    // ... and its new partition is remembered in turn.
    check_chain(chain(support::array(support::ramp(kN, -5)), 9.5, steps), 9.5, steps);
    CHECK_EQ(stats().stagings_reused, reused + 1);
}
