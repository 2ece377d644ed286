// The device block cache (thesis 4.2-4.3).
//
// Every view is cut into fixed-size blocks of `block_size` elements; a block
// is named by six attributes: the node, the view's offset, ndim, shape and
// strides, and the block number. One block is one driver block (a texture).
// A hash table over those attributes says what is on the device; an LRU
// list says what to evict first. Allocation failure means: evict the least
// recently used block and retry. A *dirty* block holds values that exist
// nowhere else (evaluated on the device, never read back): eviction reads it
// back to the host and sets its evaluated bits before freeing it.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/runtime/driver_loader.hpp"
#include "core/graph/geometry.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

struct CachedBlock {
    std::string key;
    Node* node;          // not owned: entries go when their node dies
    ViewGeometry geom;   // the view this block is a piece of
    int64_t index;       // block number within the view
    int64_t first;       // = index * block_size: first view position held
    int64_t nelems;
    DType dtype;
    int64_t nbytes;
    gpupy_block* handle;
    bool dirty;
    int pins = 0;
    std::list<CachedBlock*>::iterator lru_pos;
};

class BlockCache {
public:
    BlockCache();
    ~BlockCache();

    void attach(Driver* driver) { driver_ = driver; }
    Driver* driver() const { return driver_; }

    int64_t block_size() const { return block_size_; }
    // Changing the block size renames every block, so the cache is emptied
    // (dirty blocks read back) first.
    void set_block_size(int64_t n);
    int64_t budget() const { return budget_; }
    void set_budget(int64_t bytes);
    int64_t used_bytes() const { return used_; }
    size_t count() const { return map_.size(); }

    // The cached block, or nullptr; a hit makes the block most recent.
    CachedBlock* find(const Node* node, const ViewGeometry& geom, int64_t index);
    // Allocates device memory for a new block, evicting as needed.
    gpupy_block* allocate(DType dtype, int64_t nelems);
    // Registers an allocated and filled block.
    CachedBlock* insert(Node* node, const ViewGeometry& geom, int64_t index, gpupy_block* handle, DType dtype,
                        int64_t nelems, bool dirty);
    // Frees a handle that never made it into the cache.
    void release_unregistered(gpupy_block* handle) { driver_->free(handle); }

    void pin(CachedBlock* b) { ++b->pins; }
    void unpin(CachedBlock* b) { --b->pins; }
    // Evicts least recently used unpinned blocks until within budget.
    void trim();
    // Reads back every dirty block and frees everything (driver switch,
    // block size change).
    void clear();
    // The node's values changed (a destructive write): drop its blocks.
    void invalidate(Node* node);
    // The node died: drop its blocks without reading anything back.
    void forget(Node* node);
    // Every cached block of one node (for tests and introspection).
    std::vector<CachedBlock*> blocks_of(const Node* node) const;

    // Copies a dirty block to its node's host memory and sets the bits.
    void download(CachedBlock* b);

    static std::string make_key(const Node* node, const ViewGeometry& geom, int64_t index);

private:
    bool evict_one();
    void evict(CachedBlock* b, bool read_back);

    Driver* driver_ = nullptr;
    int64_t block_size_;
    int64_t budget_;
    int64_t used_ = 0;
    std::unordered_map<std::string, std::unique_ptr<CachedBlock>> map_;
    std::unordered_multimap<const Node*, CachedBlock*> by_node_;
    std::list<CachedBlock*> lru_;  // front = most recently used
};

// Writes `n` elements (C order of view positions [first, first + n)) from
// `src` into the node's host storage through the view, and sets their bits.
void scatter_to_host(Node* node, const ViewGeometry& geom, int64_t first, int64_t n, const char* src);
// Gathers view positions [first, first + n) of a node with host data into `dst`.
void gather_from_host(const Node* node, const ViewGeometry& geom, int64_t first, int64_t n, char* dst);

}  // namespace gpupy
