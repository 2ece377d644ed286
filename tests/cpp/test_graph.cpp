// Nodes, hash-consing (thesis 4.6) and the release of deep graphs.
#include <cmath>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "check.hpp"
#include "core/building/elementwise.hpp"
#include "core/graph/node_factory.hpp"
#include "core/graph/node_table.hpp"
#include "support.hpp"

using namespace gpupy;

TEST(equal_expressions_are_one_node) {
    support::Scope scope;
    GpuArray a = support::array({1, 2, 3}), b = support::array({4, 5, 6});
    const int64_t before = NodeFactory::shared_hits();
    GpuArray s1 = support::binary(GPUPY_OP_ADD, a, b);
    GpuArray s2 = support::binary(GPUPY_OP_ADD, b, a);  // commutative: operands sorted
    CHECK_EQ(s1.node(), s2.node());
    CHECK_EQ(NodeFactory::shared_hits(), before + 1);
    GpuArray d1 = support::binary(GPUPY_OP_SUBTRACT, a, b), d2 = support::binary(GPUPY_OP_SUBTRACT, b, a);
    CHECK(d1.node() != d2.node());
}

TEST(constants_are_shared_by_their_bits) {
    NodeRef z1 = NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, 0.0));
    NodeRef z2 = NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, 0.0));
    NodeRef m = NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, -0.0));
    NodeRef n1 = NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, std::nan("")));
    NodeRef n2 = NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, std::nan("")));
    CHECK_EQ(z1.get(), z2.get());
    CHECK(z1.get() != m.get());  // -0.0 is another value
    CHECK_EQ(n1.get(), n2.get());
}

TEST(unhashed_node_is_not_found_again) {
    support::Scope scope;
    GpuArray a = support::array({1, 2}), b = support::array({3, 4});
    GpuArray s = support::binary(GPUPY_OP_MULTIPLY, a, b);
    s.node()->unhash();  // as a destructive write does
    GpuArray t = support::binary(GPUPY_OP_MULTIPLY, a, b);
    CHECK(s.node() != t.node());
}

TEST(node_table_finds_what_it_holds_through_collisions_and_erasures) {
    // Hashes forced onto a few home slots, some the table's last (whatever
    // its size), so that probe sequences are long, wrap around its end and
    // are cut by erasures: after every step the table answers as a map
    // kept beside it does.
    std::vector<NodeRef> nodes;
    std::vector<uint64_t> hashes;
    for (int i = 0; i < 3000; ++i) {
        nodes.push_back(NodeFactory::constant(GPUPY_FLOAT64, scalar_from_double(GPUPY_FLOAT64, 0.5 + i)));
        hashes.push_back(i % 3 == 0 ? ~uint64_t{0} - static_cast<uint64_t>(i % 4) : static_cast<uint64_t>(i % 5));
    }
    NodeTable table;
    std::unordered_map<size_t, bool> held;
    std::mt19937 rng(7);
    auto agrees = [&] {
        for (size_t i = 0; i < nodes.size(); ++i) {
            Node* found = table.find(nodes[i]->hash_key(), hashes[i]);
            if (found != (held.count(i) ? nodes[i].get() : nullptr)) return false;
        }
        return table.size() == held.size();
    };
    for (int step = 0; step < 6000; ++step) {
        const size_t i = rng() % nodes.size();
        if (rng() % 3 != 0) {
            const bool added = table.insert(nodes[i].get(), hashes[i]);
            CHECK_EQ(added, held.count(i) == 0);
            held[i] = true;
        } else {
            table.erase(nodes[i].get(), hashes[i]);  // held or not
            held.erase(i);
        }
        if (step % 500 == 0) CHECK(agrees());
    }
    CHECK(agrees());
    for (size_t i = 0; i < nodes.size(); ++i) table.erase(nodes[i].get(), hashes[i]);
    held.clear();
    CHECK_EQ(table.size(), size_t{0});
    CHECK(agrees());
}

TEST(a_deep_chain_is_released_without_recursion) {
    // 200,000 levels: recursive destructors would overflow the stack.
    const int64_t live_before = NodeFactory::live_hashed();
    {
        GpuArray x = support::array({1});
        GpuArray one = support::array({1});
        for (int i = 0; i < 200000; ++i) x = support::binary(GPUPY_OP_ADD, x, one);
        CHECK(NodeFactory::live_hashed() >= live_before + 200000);
    }
    CHECK_EQ(NodeFactory::live_hashed(), live_before);
}

TEST(casts_follow_numpys_unsafe_rules) {
    CHECK_EQ(scalar_from_double(GPUPY_INT8, 300.7).i, 44);            // through int32, wraps
    CHECK_EQ(scalar_from_double(GPUPY_INT32, std::nan("")).i, INT32_MIN);  // x86's "integer indefinite"
    CHECK_EQ(scalar_from_double(GPUPY_UINT64, 1e30).u, 0ULL);
    CHECK_EQ(scalar_from_int(GPUPY_UINT8, -1).i, 255);
    CHECK_EQ(scalar_from_double(GPUPY_BOOL, -0.0).i, 0);
}
