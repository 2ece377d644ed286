#include "core/memory/block_cache.hpp"

#include <algorithm>
#include <string>

#include "core/memory/host_transfer.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

BlockCache::BlockCache(int64_t block_size, int64_t budget_bytes, std::unique_ptr<EvictionPolicy> policy)
    : block_size_(block_size), budget_(budget_bytes), policy_(std::move(policy)) {
    if (block_size_ <= 0) throw ValueError("block size must be positive");
    if (budget_ <= 0) throw ValueError("cache budget must be positive");
}

BlockCache::~BlockCache() = default;  // the runtime clears it while the driver lives

void BlockCache::set_block_size(int64_t n) {
    if (n <= 0) throw ValueError("block size must be positive");
    clear();
    block_size_ = n;
}

void BlockCache::set_budget(int64_t bytes) {
    if (bytes <= 0) throw ValueError("cache budget must be positive");
    budget_ = bytes;
    trim();
}

void BlockCache::set_policy(std::unique_ptr<EvictionPolicy> policy) {
    // The new policy learns the blocks in the old one's order: the next
    // victim first, so it is the oldest to the new policy too.
    std::vector<const CachedBlock*> order = eviction_order();
    for (const CachedBlock* b : order) policy_->removed(const_cast<CachedBlock*>(b));
    policy_ = std::move(policy);
    for (const CachedBlock* b : order) policy_->inserted(const_cast<CachedBlock*>(b));
}

CachedBlock* BlockCache::find(const Node* node, const ViewGeometry& geom, int64_t index) const {
    if (node->cached_blocks == 0) return nullptr;
    auto range = by_hash_.equal_range(BlockKey::hash_of(node->id(), geom, index));
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second->key.is(node->id(), geom, index)) return it->second.get();
    }
    return nullptr;
}

const CachedBlock* BlockCache::peek(const Node* node, const ViewGeometry& geom, int64_t index) const {
    return find(node, geom, index);
}

CachedBlock* BlockCache::lookup(const Node* node, const ViewGeometry& geom, int64_t index) {
    CachedBlock* b = find(node, geom, index);
    if (b) policy_->used(b);
    return b;
}

gpupy_block* BlockCache::allocate(DType dtype, int64_t nelems) {
    const int64_t bytes = nelems * dtype_itemsize(dtype);
    // Keep within the budget first; pinned blocks may push us over it for
    // the length of one evaluation.
    while (used_ + bytes > budget_ && evict_one()) {
    }
    for (;;) {
        if (gpupy_block* h = driver_->alloc(dtype, nelems)) return h;
        if (!evict_one()) {
            throw DeviceMemoryError("device out of memory allocating " + std::to_string(bytes) +
                                    " bytes with nothing left to evict");
        }
    }
}

void BlockCache::release_unregistered(gpupy_block* handle) { driver_->free(handle); }

CachedBlock* BlockCache::insert(Node* node, const ViewGeometry& geom, int64_t index, gpupy_block* handle, DType dtype,
                                int64_t nelems, bool dirty) {
    if (find(node, geom, index)) throw InternalError("block cached twice");
    auto b = std::make_unique<CachedBlock>();
    b->key = BlockKey{node->id(), geom, index};
    b->node = node;
    b->first = index * block_size_;
    b->nelems = nelems;
    b->dtype = dtype;
    b->nbytes = nelems * dtype_itemsize(dtype);
    b->handle = handle;
    b->dirty = dirty;
    used_ += b->nbytes;
    return attach(std::move(b));
}

CachedBlock* BlockCache::attach(std::unique_ptr<CachedBlock> b) {
    CachedBlock* raw = b.get();
    by_node_.emplace(raw->node, raw);
    ++raw->node->cached_blocks;
    policy_->inserted(raw);
    by_hash_.emplace(raw->key.hash(), std::move(b));
    return raw;
}

bool BlockCache::evict_one() {
    CachedBlock* b = policy_->victim([](const CachedBlock* c) { return c->pins == 0; });
    if (!b) return false;
    evict(b, true);
    return true;
}

void BlockCache::trim() {
    while (used_ > budget_ && evict_one()) {
    }
}

void BlockCache::download(CachedBlock* b) {
    std::vector<char> tmp(static_cast<size_t>(b->nbytes));
    driver_->read(b->handle, 0, b->nelems, tmp.data());
    ++stats().blocks_downloaded;
    stats().bytes_downloaded += b->nbytes;
    scatter_to_host(b->node, b->key.geom, b->first, b->nelems, tmp.data());
    b->dirty = false;
}

std::unique_ptr<CachedBlock> BlockCache::detach(CachedBlock* b) {
    --b->node->cached_blocks;
    auto range = by_node_.equal_range(b->node);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second == b) {
            by_node_.erase(it);
            break;
        }
    }
    policy_->removed(b);
    auto hits = by_hash_.equal_range(b->key.hash());
    for (auto it = hits.first; it != hits.second; ++it) {
        if (it->second.get() == b) {
            std::unique_ptr<CachedBlock> owned = std::move(it->second);
            by_hash_.erase(it);
            return owned;
        }
    }
    throw InternalError("cached block missing from its index");
}

void BlockCache::evict(CachedBlock* b, bool read_back) {
    if (read_back) {
        ++stats().evictions;
        if (b->dirty) {
            ++stats().eviction_readbacks;
            download(b);
        }
    }
    std::unique_ptr<CachedBlock> owned = detach(b);
    driver_->free(owned->handle);
    used_ -= owned->nbytes;
}

void BlockCache::unpin(CachedBlock* b) {
    if (--b->pins > 0 || b->node) return;
    for (auto it = orphans_.begin(); it != orphans_.end(); ++it) {
        if (it->get() == b) {
            driver_->free(b->handle);
            used_ -= b->nbytes;
            orphans_.erase(it);
            return;
        }
    }
}

void BlockCache::forget(Node* node) {
    while (node->cached_blocks > 0) {
        auto it = by_node_.find(node);
        if (it == by_node_.end()) break;
        CachedBlock* b = it->second;
        if (b->pins == 0) {
            evict(b, false);
            continue;
        }
        orphans_.push_back(detach(b));
        b->node = nullptr;
    }
}

void BlockCache::clear() {
    for (;;) {
        std::vector<const CachedBlock*> order = eviction_order();
        if (order.empty()) return;
        const CachedBlock* b = order.front();
        if (b->pins > 0) throw InternalError("cache cleared while an evaluation holds blocks");
        evict(const_cast<CachedBlock*>(b), true);
    }
}

void BlockCache::invalidate(Node* node) {
    while (node->cached_blocks > 0) {
        auto it = by_node_.find(node);
        if (it == by_node_.end()) break;
        if (it->second->pins > 0) throw InternalError("blocks of a node dropped while an evaluation holds them");
        evict(it->second, false);
    }
}

void BlockCache::rekey(Node* node) {
    for (CachedBlock* b : blocks_of(node)) {
        auto hits = by_hash_.equal_range(b->key.hash());
        for (auto it = hits.first; it != hits.second; ++it) {
            if (it->second.get() != b) continue;
            std::unique_ptr<CachedBlock> owned = std::move(it->second);
            by_hash_.erase(it);
            owned->key.node_id = node->id();
            by_hash_.emplace(owned->key.hash(), std::move(owned));
            break;
        }
    }
}

int64_t BlockCache::move_blocks(Node* from, Node* to) {
    int64_t moved = 0;
    for (CachedBlock* b : blocks_of(from)) {
        if (b->pins > 0 || find(to, b->key.geom, b->key.index)) continue;
        std::unique_ptr<CachedBlock> owned = detach(b);
        owned->key.node_id = to->id();
        owned->node = to;
        attach(std::move(owned));
        ++moved;
    }
    return moved;
}

std::vector<Node*> BlockCache::nodes_over(const HostBuffer* host) const {
    std::vector<Node*> out;
    for (const auto& kv : by_node_) {
        Node* n = const_cast<Node*>(kv.first);
        if (n->host().get() == host && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
}

std::vector<CachedBlock*> BlockCache::blocks_of(const Node* node) const {
    std::vector<CachedBlock*> out;
    auto range = by_node_.equal_range(node);
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return out;
}

std::vector<const CachedBlock*> BlockCache::eviction_order() const {
    std::vector<const CachedBlock*> out;
    out.reserve(by_hash_.size());
    policy_->for_each_in_eviction_order([&](const CachedBlock* b) { out.push_back(b); });
    return out;
}

}  // namespace gpupy
