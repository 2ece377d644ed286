// Which cached block goes when the device needs room (thesis 4.3: least
// recently used). A policy sees blocks enter, get used and leave, and
// names the next victim among those the cache may evict (unpinned ones);
// the cache does everything else (readback of dirty blocks, freeing).
#pragma once

#include <functional>
#include <memory>
#include <string>

namespace gpupy {

struct CachedBlock;

class EvictionPolicy {
public:
    virtual ~EvictionPolicy() = default;
    virtual const char* name() const = 0;
    virtual void inserted(CachedBlock* b) = 0;
    virtual void used(CachedBlock* b) = 0;
    virtual void removed(CachedBlock* b) = 0;
    // The block to evict next among those `evictable` accepts, or nullptr.
    virtual CachedBlock* victim(const std::function<bool(const CachedBlock*)>& evictable) const = 0;
    // Every block in the order victim() would choose them (for tests and
    // introspection).
    virtual void for_each_in_eviction_order(const std::function<void(const CachedBlock*)>& fn) const = 0;
};

// Least recently used first (the default, thesis 4.3).
std::unique_ptr<EvictionPolicy> make_lru_policy();
// A policy by name ("lru"); nullptr if unknown.
std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& name);

}  // namespace gpupy
