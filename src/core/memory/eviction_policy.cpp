#include "core/memory/eviction_policy.hpp"

#include "core/memory/block_cache.hpp"

namespace gpupy {

namespace {

// An intrusive doubly-linked list through CachedBlock::hook: most recently
// used at the head, victims taken from the tail. O(1) per event.
class LruPolicy final : public EvictionPolicy {
public:
    const char* name() const override { return "lru"; }
    void inserted(CachedBlock* b) override { push_front(b); }
    void used(CachedBlock* b) override {
        if (head_ == b) return;
        unlink(b);
        push_front(b);
    }
    void removed(CachedBlock* b) override { unlink(b); }
    CachedBlock* victim(const std::function<bool(const CachedBlock*)>& evictable) const override {
        for (CachedBlock* b = tail_; b; b = b->hook.prev) {
            if (evictable(b)) return b;
        }
        return nullptr;
    }
    void for_each_in_eviction_order(const std::function<void(const CachedBlock*)>& fn) const override {
        for (const CachedBlock* b = tail_; b; b = b->hook.prev) fn(b);
    }

private:
    void push_front(CachedBlock* b) {
        b->hook.prev = nullptr;
        b->hook.next = head_;
        if (head_) head_->hook.prev = b;
        head_ = b;
        if (!tail_) tail_ = b;
    }
    void unlink(CachedBlock* b) {
        if (b->hook.prev) b->hook.prev->hook.next = b->hook.next;
        else head_ = b->hook.next;
        if (b->hook.next) b->hook.next->hook.prev = b->hook.prev;
        else tail_ = b->hook.prev;
        b->hook.prev = b->hook.next = nullptr;
    }

    CachedBlock* head_ = nullptr;  // most recently used
    CachedBlock* tail_ = nullptr;  // least recently used
};

}  // namespace

std::unique_ptr<EvictionPolicy> make_lru_policy() { return std::make_unique<LruPolicy>(); }

std::unique_ptr<EvictionPolicy> make_eviction_policy(const std::string& name) {
    if (name == "lru") return make_lru_policy();
    return nullptr;
}

}  // namespace gpupy
