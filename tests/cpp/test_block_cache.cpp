// The block cache (thesis 4.2-4.3): eviction order, pins, readback.
#include <string>
#include <vector>

#include "check.hpp"
#include "core/building/elementwise.hpp"
#include "core/execution/executor.hpp"
#include "core/graph/host_buffer.hpp"
#include "core/graph/host_state.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"
#include "support.hpp"

using namespace gpupy;

namespace {

// Uploads block k of a's identity view (a has its values on the host).
CachedBlock* upload(BlockCache& cache, const GpuArray& a, int64_t k) {
    return upload_block(*cache.driver(), cache, a.node(), identity_view(a.node()->shape()), k);
}

std::vector<std::string> order(const BlockCache& cache, const std::vector<std::pair<const Node*, std::string>>& names) {
    std::vector<std::string> out;
    for (const CachedBlock* b : cache.eviction_order()) {
        std::string name = "?";
        for (const auto& [node, n] : names) {
            if (b->node == node) name = n + std::to_string(b->key.index);
        }
        out.push_back(name);
    }
    return out;
}

}  // namespace

TEST(lru_evicts_the_least_recently_used_first) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(8)), b = support::array(support::ramp(4, 100));
    upload(cache, a, 0);
    upload(cache, a, 1);
    upload(cache, b, 0);
    const std::vector<std::pair<const Node*, std::string>> names{{a.node(), "a"}, {b.node(), "b"}};
    CHECK_EQ(order(cache, names), (std::vector<std::string>{"a0", "a1", "b0"}));
    // Planning's questions do not count as use ...
    CHECK(cache.contains(a.node(), identity_view({8}), 0));
    CHECK(cache.peek(a.node(), identity_view({8}), 0) != nullptr);
    CHECK_EQ(order(cache, names), (std::vector<std::string>{"a0", "a1", "b0"}));
    // ... a lookup does.
    CHECK(cache.lookup(a.node(), identity_view({8}), 0) != nullptr);
    CHECK_EQ(order(cache, names), (std::vector<std::string>{"a1", "b0", "a0"}));
    // Trimming to two blocks' bytes evicts the oldest first.
    cache.set_budget(2 * 4 * 8);
    CHECK_EQ(order(cache, names), (std::vector<std::string>{"b0", "a0"}));
}

TEST(pinned_blocks_are_never_evicted) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(12));
    CachedBlock* oldest = upload(cache, a, 0);
    upload(cache, a, 1);
    {
        PinSet pins(cache);
        pins.pin(oldest);
        cache.set_budget(2 * 4 * 8);
        upload(cache, a, 2);  // over budget: the victim skips the pinned block
        CHECK(cache.contains(a.node(), identity_view({12}), 0));
        CHECK(!cache.contains(a.node(), identity_view({12}), 1));
        CHECK_EQ(oldest->pins, 1);
    }
    CHECK_EQ(oldest->pins, 0);  // the PinSet let go
    cache.set_budget(4 * 8);
    CHECK(!cache.contains(a.node(), identity_view({12}), 0));
}

TEST(evicting_a_dirty_block_reads_it_back) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(8)), b = support::array(support::ramp(8, 10));
    GpuArray s = support::binary(GPUPY_OP_ADD, a, b);  // evaluated on the device only
    ensure_device_block(s.node_view(), 1);
    CHECK(!host_has(*s.node(), 4, 7));
    const int64_t readbacks = stats().eviction_readbacks;
    cache.set_budget(8);  // room for nothing: everything unpinned goes
    CHECK_EQ(cache.count(), size_t{0});
    CHECK(stats().eviction_readbacks > readbacks);
    CHECK(host_has(*s.node(), 4, 7));  // the values were not lost
    const double* h = reinterpret_cast<const double*>(s.node()->host_data());
    CHECK_EQ(h[4], 4.0 + 14.0);
    CHECK_EQ(h[7], 7.0 + 17.0);
}

TEST(a_node_dying_with_a_pinned_block_frees_it_at_the_last_unpin) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    const int64_t baseline = fake::record().allocated_bytes;
    PinSet pins(cache);
    {
        GpuArray a = support::array(support::ramp(4));
        pins.pin(upload(cache, a, 0));
        CHECK_EQ(fake::record().allocated_bytes, baseline + 32);
    }  // the node dies here; its block is still pinned
    CHECK_EQ(cache.count(), size_t{0});
    CHECK_EQ(fake::record().allocated_bytes, baseline + 32);
    pins.release();
    CHECK_EQ(fake::record().allocated_bytes, baseline);
}

TEST(a_new_policy_learns_the_old_order) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(12));
    for (int k = 0; k < 3; ++k) upload(cache, a, k);
    cache.lookup(a.node(), identity_view({12}), 0);
    std::vector<int64_t> before;
    for (const CachedBlock* b : cache.eviction_order()) before.push_back(b->key.index);
    cache.set_policy(make_lru_policy());
    std::vector<int64_t> after;
    for (const CachedBlock* b : cache.eviction_order()) after.push_back(b->key.index);
    CHECK_EQ(before, after);
    CHECK_EQ(after, (std::vector<int64_t>{1, 2, 0}));
    CHECK(make_eviction_policy("no such policy") == nullptr);
}

TEST(block_keys_tell_views_apart) {
    const ViewGeometry g{0, {4, 4}, {4, 1}}, t{0, {4, 4}, {1, 4}};
    CHECK(BlockKey::hash_of(7, g, 0) != BlockKey::hash_of(7, t, 0));
    CHECK(BlockKey::hash_of(7, g, 0) != BlockKey::hash_of(7, g, 1));
    CHECK(BlockKey::hash_of(7, g, 0) != BlockKey::hash_of(8, g, 0));
    const BlockKey k{7, g, 0};
    CHECK(k.is(7, g, 0));
    CHECK(!k.is(7, t, 0));
}

TEST(inserting_a_block_twice_is_an_internal_error) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(4));
    upload(cache, a, 0);
    gpupy_block* h = cache.allocate(GPUPY_FLOAT64, 4);
    CHECK_THROWS(cache.insert(a.node(), identity_view({4}), 0, h, GPUPY_FLOAT64, 4, false), InternalError);
    cache.release_unregistered(h);
}

TEST(blocks_follow_a_node_that_takes_a_new_identity) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(8));
    upload(cache, a, 0);
    upload(cache, a, 1);
    const uint64_t old_id = a.node()->id();
    NodeFactory::renew_identity(a.node());
    CHECK(a.node()->id() != old_id);
    cache.rekey(a.node());
    CHECK(cache.lookup(a.node(), identity_view({8}), 0) != nullptr);
    CHECK(cache.lookup(a.node(), identity_view({8}), 1) != nullptr);
    CHECK_EQ(cache.count(), size_t{2});
}

TEST(a_copy_takes_the_blocks_no_evaluation_holds) {
    support::Scope scope;
    BlockCache& cache = scope.rt.cache();
    cache.set_block_size(4);
    GpuArray a = support::array(support::ramp(8)), copy = support::array(support::ramp(8));
    upload(cache, a, 0);
    CachedBlock* held = upload(cache, a, 1);
    cache.pin(held);
    CHECK_EQ(cache.move_blocks(a.node(), copy.node()), int64_t{1});
    CHECK(cache.lookup(copy.node(), identity_view({8}), 0) != nullptr);
    CHECK(cache.lookup(a.node(), identity_view({8}), 0) == nullptr);
    CHECK(cache.lookup(a.node(), identity_view({8}), 1) == held);  // pinned: stays
    CHECK_EQ(a.node()->cached_blocks, 1);
    CHECK_EQ(copy.node()->cached_blocks, 1);
    cache.unpin(held);
    CHECK_EQ(cache.nodes_over(copy.node()->host().get()), std::vector<Node*>{copy.node()});
}

TEST(the_content_hash_sees_every_byte_and_the_length) {
    std::vector<char> bytes(1000);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 31);
    const uint64_t h = content_hash(bytes.data(), bytes.size());
    CHECK_EQ(content_hash(bytes.data(), bytes.size()), h);
    for (size_t i : {size_t{0}, size_t{31}, size_t{32}, size_t{500}, size_t{991}, size_t{999}}) {
        bytes[i] ^= 1;
        CHECK(content_hash(bytes.data(), bytes.size()) != h);
        bytes[i] ^= 1;
    }
    std::vector<char> zeros(64, 0);
    CHECK(content_hash(zeros.data(), 63) != content_hash(zeros.data(), 64));
}
