#include "core/memory/block_cache.hpp"

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/runtime/errors.hpp"
#include "core/graph/node_hooks.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

int64_t env_int(const char* name, int64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    long long x = std::strtoll(v, &end, 10);
    if (*end != '\0' || x <= 0) throw ValueError(std::string(name) + " must be a positive integer, got '" + v + "'");
    return x;
}

// 2^22 elements (a 2048 x 2048 texture, 16 MiB of float32): large enough
// that a 2048^2 image is one block (one shader dispatch), small enough that
// a few dozen blocks fit a modest GPU.
constexpr int64_t kDefaultBlockSize = int64_t{1} << 22;
constexpr int64_t kDefaultBudget = int64_t{1} << 30;  // 1 GiB of device memory

}  // namespace

BlockCache::BlockCache()
    : block_size_(env_int("GPUPY_BLOCK_SIZE", kDefaultBlockSize)),
      budget_(env_int("GPUPY_CACHE_BYTES", kDefaultBudget)) {}

BlockCache::~BlockCache() = default;  // the runtime clears it while the driver lives

std::string BlockCache::make_key(const Node* node, const ViewGeometry& geom, int64_t index) {
    std::string k;
    const uint64_t id = node->id();
    k.append(reinterpret_cast<const char*>(&id), sizeof id);
    k.append(reinterpret_cast<const char*>(&geom.offset), sizeof geom.offset);
    const uint32_t nd = static_cast<uint32_t>(geom.shape.size());
    k.append(reinterpret_cast<const char*>(&nd), sizeof nd);
    k.append(reinterpret_cast<const char*>(geom.shape.data()), nd * sizeof(int64_t));
    k.append(reinterpret_cast<const char*>(geom.strides.data()), nd * sizeof(int64_t));
    k.append(reinterpret_cast<const char*>(&index), sizeof index);
    return k;
}

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

CachedBlock* BlockCache::find(const Node* node, const ViewGeometry& geom, int64_t index) {
    if (node->cached_blocks == 0) return nullptr;
    auto it = map_.find(make_key(node, geom, index));
    if (it == map_.end()) return nullptr;
    CachedBlock* b = it->second.get();
    lru_.splice(lru_.begin(), lru_, b->lru_pos);
    return b;
}

gpupy_block* BlockCache::allocate(DType dtype, int64_t nelems) {
    const int64_t bytes = nelems * dtype_itemsize(dtype);
    // Keep within the budget first; pinned blocks may push us over it for
    // the length of one evaluation (an IR needs its operands and its
    // destination at once, whatever the budget).
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

CachedBlock* BlockCache::insert(Node* node, const ViewGeometry& geom, int64_t index, gpupy_block* handle,
                                DType dtype, int64_t nelems, bool dirty) {
    auto b = std::make_unique<CachedBlock>();
    b->key = make_key(node, geom, index);
    b->node = node;
    b->geom = geom;
    b->index = index;
    b->first = index * block_size_;
    b->nelems = nelems;
    b->dtype = dtype;
    b->nbytes = nelems * dtype_itemsize(dtype);
    b->handle = handle;
    b->dirty = dirty;
    lru_.push_front(b.get());
    b->lru_pos = lru_.begin();
    used_ += b->nbytes;
    ++node->cached_blocks;
    by_node_.emplace(node, b.get());
    CachedBlock* raw = b.get();
    auto [it, fresh] = map_.emplace(raw->key, std::move(b));
    if (!fresh) throw InternalError("block cached twice");
    return raw;
}

bool BlockCache::evict_one() {
    for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
        if ((*it)->pins == 0) {
            evict(*it, true);
            return true;
        }
    }
    return false;
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
    scatter_to_host(b->node, b->geom, b->first, b->nelems, tmp.data());
    b->dirty = false;
}

void BlockCache::evict(CachedBlock* b, bool read_back) {
    if (read_back) {
        ++stats().evictions;
        if (b->dirty) {
            ++stats().eviction_readbacks;
            download(b);
        }
    }
    driver_->free(b->handle);
    used_ -= b->nbytes;
    --b->node->cached_blocks;
    auto range = by_node_.equal_range(b->node);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second == b) {
            by_node_.erase(it);
            break;
        }
    }
    lru_.erase(b->lru_pos);
    map_.erase(b->key);  // destroys *b
}

void BlockCache::clear() {
    while (!lru_.empty()) evict(lru_.back(), true);
}

void BlockCache::invalidate(Node* node) {
    while (node->cached_blocks > 0) {
        auto it = by_node_.find(node);
        if (it == by_node_.end()) break;
        evict(it->second, false);
    }
}

void BlockCache::forget(Node* node) { invalidate(node); }

std::vector<CachedBlock*> BlockCache::blocks_of(const Node* node) const {
    std::vector<CachedBlock*> out;
    auto range = by_node_.equal_range(node);
    for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
    return out;
}

void scatter_to_host(Node* node, const ViewGeometry& geom, int64_t first, int64_t n, const char* src) {
    char* base = node->ensure_host_buffer();
    const int item = dtype_itemsize(node->dtype());
    EvaluatedBits& bits = node->bits();
    const bool expression = node->kind() == NodeKind::Expression;
    if (is_c_contiguous(geom.shape, geom.strides)) {
        // Fast path: the block is one contiguous run of the owner.
        int64_t idx0 = geom.offset + first;
        std::memcpy(base + idx0 * item, src, static_cast<size_t>(n * item));
        if (expression) bits.set_range(idx0, idx0 + n);
        return;
    }
    for_each_element(geom, first, first + n, [&](int64_t i, int64_t idx) {
        std::memcpy(base + idx * item, src + i * item, static_cast<size_t>(item));
        if (expression) bits.set(idx);
    });
}

void gather_from_host(const Node* node, const ViewGeometry& geom, int64_t first, int64_t n, char* dst) {
    const char* base = node->host_data();
    const int item = dtype_itemsize(node->dtype());
    if (is_c_contiguous(geom.shape, geom.strides)) {
        std::memcpy(dst, base + (geom.offset + first) * item, static_cast<size_t>(n * item));
        return;
    }
    for_each_element(geom, first, first + n, [&](int64_t i, int64_t idx) {
        std::memcpy(dst + i * item, base + idx * item, static_cast<size_t>(item));
    });
}

}  // namespace gpupy
