// The device block cache (thesis 4.2-4.3).
//
// Every view is cut into fixed-size blocks of `block_size` elements; a block
// is named by a BlockKey (node, view offset, shape, strides, block number)
// and is one driver block (a texture). A hash table over the keys says what
// is on the device; an EvictionPolicy (LRU by default) says what goes first
// when the budget or the device runs out. A *dirty* block holds values that
// exist nowhere else (evaluated on the device, never read back): eviction
// reads it back into its node's host buffer and sets the evaluated bits
// before freeing it, so nothing is ever lost.
//
// Planning only asks (contains, peek): that changes nothing, not even the
// policy's order. Execution uses blocks (lookup, insert), pins what an
// evaluation needs for its duration (PinSet), and may go over the budget
// while it holds pins: an IR needs its operands and its destination at once.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/graph/node.hpp"
#include "core/memory/block_key.hpp"
#include "core/memory/eviction_policy.hpp"
#include "core/runtime/driver_loader.hpp"

namespace gpupy {

struct CachedBlock {
    BlockKey key;
    Node* node;          // not owned: entries go when their node dies (null once orphaned)
    int64_t first;       // = key.index * block_size: first view position held
    int64_t nelems;
    DType dtype;
    int64_t nbytes;
    gpupy_block* handle;
    bool dirty;
    int pins = 0;
    // For list-based eviction policies (intrusive links; the policy's own).
    struct {
        CachedBlock* prev = nullptr;
        CachedBlock* next = nullptr;
    } hook;

    const ViewGeometry& geom() const { return key.geom; }
};

class BlockCache {
public:
    BlockCache(int64_t block_size, int64_t budget_bytes, std::unique_ptr<EvictionPolicy> policy = make_lru_policy());
    ~BlockCache();
    BlockCache(const BlockCache&) = delete;
    BlockCache& operator=(const BlockCache&) = delete;

    void attach(Driver* driver) { driver_ = driver; }
    Driver* driver() const { return driver_; }

    int64_t block_size() const { return block_size_; }
    // Changing the block size renames every block, so the cache is emptied
    // (dirty blocks read back) first.
    void set_block_size(int64_t n);
    int64_t budget() const { return budget_; }
    void set_budget(int64_t bytes);
    int64_t used_bytes() const { return used_; }
    size_t count() const { return by_hash_.size(); }
    const EvictionPolicy& policy() const { return *policy_; }
    void set_policy(std::unique_ptr<EvictionPolicy> policy);

    // --- questions (change nothing) ----------------------------------------
    bool contains(const Node* node, const ViewGeometry& geom, int64_t index) const {
        return peek(node, geom, index) != nullptr;
    }
    const CachedBlock* peek(const Node* node, const ViewGeometry& geom, int64_t index) const;

    // --- use --------------------------------------------------------------
    // The cached block, or nullptr; a hit counts as a use for the policy.
    CachedBlock* lookup(const Node* node, const ViewGeometry& geom, int64_t index);
    // Allocates device memory for a new block, evicting as needed; throws
    // DeviceMemoryError if nothing is left to evict.
    gpupy_block* allocate(DType dtype, int64_t nelems);
    // Registers an allocated and filled block (InternalError if that block
    // is cached already).
    CachedBlock* insert(Node* node, const ViewGeometry& geom, int64_t index, gpupy_block* handle, DType dtype,
                        int64_t nelems, bool dirty);
    // Frees a handle that never made it into the cache.
    void release_unregistered(gpupy_block* handle);

    void pin(CachedBlock* b) { ++b->pins; }
    // The last unpin of a block whose node died meanwhile frees it.
    void unpin(CachedBlock* b);
    // Evicts unpinned blocks, in the policy's order, until within budget.
    void trim();
    // Reads back every dirty block and frees everything (driver switch,
    // block size change).
    void clear();
    // The node's values changed (a destructive write): drop its blocks.
    void invalidate(Node* node);
    // The node took a new id (NodeFactory::renew_identity) with its values
    // unchanged: its blocks are named by the new one.
    void rekey(Node* node);
    // `to` (a copy of `from`: same dtype and shape) takes `from`'s blocks
    // that no evaluation holds; returns how many.
    int64_t move_blocks(Node* from, Node* to);
    // Nodes with cached blocks whose host memory is `host`.
    std::vector<Node*> nodes_over(const HostBuffer* host) const;
    // The node died: drop its blocks without reading anything back. (A
    // block an evaluation still holds is detached now and freed at its last
    // unpin: this runs from the node's destructor, which must not throw.)
    void forget(Node* node);
    // Every cached block of one node (for tests and introspection).
    std::vector<CachedBlock*> blocks_of(const Node* node) const;
    // Every block in the order the policy would evict them.
    std::vector<const CachedBlock*> eviction_order() const;

    // Copies a dirty block to its node's host memory and sets the bits.
    void download(CachedBlock* b);

private:
    bool evict_one();
    void evict(CachedBlock* b, bool read_back);
    // Removes b from every index; returns its ownership.
    std::unique_ptr<CachedBlock> detach(CachedBlock* b);
    // Enters b (its node and key set) in every index: detach's inverse.
    CachedBlock* attach(std::unique_ptr<CachedBlock> b);
    CachedBlock* find(const Node* node, const ViewGeometry& geom, int64_t index) const;

    Driver* driver_ = nullptr;
    int64_t block_size_;
    int64_t budget_;
    int64_t used_ = 0;
    std::unique_ptr<EvictionPolicy> policy_;
    // Owned entries by key hash (collisions compare the whole key).
    std::unordered_multimap<uint64_t, std::unique_ptr<CachedBlock>> by_hash_;
    std::unordered_multimap<const Node*, CachedBlock*> by_node_;
    // Pinned blocks of nodes that died, freed at their last unpin.
    std::vector<std::unique_ptr<CachedBlock>> orphans_;
};

// Pins blocks for the length of one evaluation and unpins them all when it
// ends, on every path out (exceptions included).
class PinSet {
public:
    explicit PinSet(BlockCache& cache) : cache_(cache) {}
    ~PinSet() { release(); }
    PinSet(const PinSet&) = delete;
    PinSet& operator=(const PinSet&) = delete;
    CachedBlock* pin(CachedBlock* b) {
        cache_.pin(b);
        pinned_.push_back(b);
        return b;
    }
    void release() {
        for (CachedBlock* b : pinned_) cache_.unpin(b);
        pinned_.clear();
    }

private:
    BlockCache& cache_;
    std::vector<CachedBlock*> pinned_;
};

}  // namespace gpupy
