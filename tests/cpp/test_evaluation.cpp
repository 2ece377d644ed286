// Evaluation end to end against the fake driver: tiny blocks and a tiny
// cache, a device that runs out of memory, reductions.
#include "check.hpp"
#include "core/building/reductions.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"
#include "support.hpp"

using namespace gpupy;

TEST(tiny_blocks_and_a_tiny_cache_lose_nothing) {
    support::Scope scope;
    fake::limits().max_ops = 1;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(3);
    cache.set_budget(3 * 3 * 8);  // three blocks
    const int n = 40;
    GpuArray a = support::array(support::ramp(n)), b = support::array(support::ramp(n, 7, -0.5));
    GpuArray t = support::binary(GPUPY_OP_MULTIPLY, a, b);
    GpuArray u = support::binary(GPUPY_OP_ADD, t, a);
    GpuArray r = support::binary(GPUPY_OP_SUBTRACT, support::binary(GPUPY_OP_MULTIPLY, u, t), b);
    const int64_t evictions = stats().evictions;
    const std::vector<double> got = support::values(r), gt = support::values(t), gu = support::values(u);
    for (int i = 0; i < n; ++i) {
        const double x = i, y = 7 - 0.5 * i;
        CHECK_EQ(gt[i], x * y);
        CHECK_EQ(gu[i], x * y + x);
        CHECK_EQ(got[i], (x * y + x) * (x * y) - y);
    }
    CHECK(stats().evictions > evictions);
    CHECK(cache.used_bytes() <= cache.budget());
    for (const CachedBlock* blk : cache.eviction_order()) CHECK_EQ(blk->pins, 0);
}

TEST(a_device_out_of_memory_raises_and_leaves_everything_usable) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    fake::limits().max_bytes = 2 * 4 * 8;  // two blocks: a + b needs three at once
    GpuArray a = support::array(support::ramp(4)), b = support::array(support::ramp(4, 1));
    GpuArray s = support::binary(GPUPY_OP_ADD, a, b);
    CHECK_THROWS(support::values(s), DeviceMemoryError);
    for (const CachedBlock* blk : cache.eviction_order()) CHECK_EQ(blk->pins, 0);
    CHECK(fake::record().allocated_bytes <= fake::limits().max_bytes);
    // The next operation works once the device has room.
    fake::limits().max_bytes = 1 << 20;
    const std::vector<double> got = support::values(s);
    for (int i = 0; i < 4; ++i) CHECK_EQ(got[i], 2.0 * i + 1);
}

TEST(a_reduction_over_many_tiny_blocks) {
    support::Scope scope;
    scope.rt.cache().set_block_size(5);
    const int rows = 7, cols = 13;
    std::vector<double> h(rows * cols);
    for (int i = 0; i < rows * cols; ++i) h[i] = (i % 11) - 4.0;
    GpuArray a = support::array(h, {rows, cols});
    GpuArray sum0 = reduce(a, GPUPY_OP_ADD, {0}, GPUPY_FLOAT64, 3);
    GpuArray max1 = reduce(a, GPUPY_OP_MAXIMUM, {1}, GPUPY_FLOAT64, 4);
    const std::vector<double> s = support::values(sum0), m = support::values(max1);
    for (int c = 0; c < cols; ++c) {
        double want = 0;
        for (int r = 0; r < rows; ++r) want += h[r * cols + c];
        CHECK_EQ(s[c], want);
    }
    for (int r = 0; r < rows; ++r) {
        double want = -1e300;
        for (int c = 0; c < cols; ++c) want = std::max(want, h[r * cols + c]);
        CHECK_EQ(m[r], want);
    }
}
