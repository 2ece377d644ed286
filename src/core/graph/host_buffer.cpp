#include "core/graph/host_buffer.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <system_error>
#include <thread>

namespace gpupy {

uint64_t content_hash(const char* p, size_t n) {
    // Four lanes over 32-byte stripes (independent multiplies keep the
    // pipeline full), then the tail, then a final avalanche; the length is
    // mixed in so that trailing zero bytes change the hash.
    constexpr uint64_t kMul[4] = {0x9E3779B185EBCA87ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                  0x85EBCA77C2B2AE63ull};
    auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
    auto round = [&](uint64_t acc, uint64_t v, int lane) { return rotl(acc + v * kMul[lane], 31) * kMul[(lane + 1) & 3]; };
    uint64_t acc[4] = {kMul[0] ^ n, kMul[1], kMul[2] + n, kMul[3]};
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        uint64_t v[4];
        std::memcpy(v, p + i, 32);
        for (int k = 0; k < 4; ++k) acc[k] = round(acc[k], v[k], k);
    }
    uint64_t h = rotl(acc[0], 1) + rotl(acc[1], 7) + rotl(acc[2], 12) + rotl(acc[3], 18);
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        std::memcpy(&v, p + i, 8);
        h = rotl(h ^ (v * kMul[1]), 27) * kMul[0] + kMul[3];
    }
    for (; i < n; ++i) h = rotl(h ^ (static_cast<uint8_t>(p[i]) * kMul[2]), 11) * kMul[0];
    h ^= h >> 33;
    h *= kMul[1];
    h ^= h >> 29;
    h *= kMul[2];
    h ^= h >> 32;
    return h;
}

namespace {

// Freed host buffers kept for reuse. Evaluating the same kind of expression
// again (a loop, a benchmark) allocates buffers of the same sizes; memory
// fresh from the OS costs a page fault per 4 KiB on first write, measured
// at ~2 us each here: 200 us for a 400 KB result that takes 30 us to
// compute. Bounded, and only buffers of at least kPoolMinBytes (smaller
// ones malloc serves from its own free lists).
class BufferPool {
public:
    char* take(size_t nbytes, size_t* capacity) {
        if (nbytes >= kPoolMinBytes) {
            // The smallest cached buffer that fits without wasting half;
            // of several that size, the one given back last: its lines may
            // still be in the caches (a result written into cold memory
            // costs a miss per line, more than the op on it).
            auto it = free_.lower_bound(nbytes);
            if (it != free_.end() && it->first <= 2 * nbytes) {
                it = std::prev(free_.upper_bound(it->first));
                *capacity = it->first;
                char* p = it->second;
                cached_ -= it->first;
                free_.erase(it);
                return p;
            }
        }
        *capacity = std::max<size_t>(nbytes, 1);
        return static_cast<char*>(std::malloc(*capacity));
    }
    void give(char* p, size_t capacity) {
        if (capacity >= kPoolMinBytes && capacity <= kPoolMaxBytes) {
            while (cached_ + capacity > kPoolMaxBytes && !free_.empty()) {
                auto oldest = free_.begin();  // smallest first: cheapest to refault
                cached_ -= oldest->first;
                std::free(oldest->second);
                free_.erase(oldest);
            }
            free_.emplace(capacity, p);
            cached_ += capacity;
            return;
        }
        std::free(p);
    }

private:
    static constexpr size_t kPoolMinBytes = size_t{64} << 10;
    static constexpr size_t kPoolMaxBytes = size_t{256} << 20;
    std::multimap<size_t, char*> free_;
    size_t cached_ = 0;
};

BufferPool& buffer_pool() {
    static auto* pool = new BufferPool();  // leaked: buffers outlive statics
    return *pool;
}

// Below this a helper thread's start (~40 us here) costs more than it saves.
constexpr size_t kParallelCopyBytes = size_t{2} << 20;
// Copies are shared out in pieces this size, taken in turn by whichever
// thread is free: a helper that another busy thread (BLAS's spinning
// workers) keeps off its core delays the copy by one piece at most.
constexpr size_t kCopyPiece = size_t{256} << 10;
constexpr unsigned kMaxCopyHelpers = 3;

// One copy shared with helper threads, alive as long as any of them.
struct SharedCopy {
    char* dst;
    const char* src;
    size_t n;
    std::atomic<size_t> next{0};  // the first byte no thread has taken
    std::atomic<size_t> done{0};  // bytes copied
    void take_pieces() {
        for (size_t first = next.fetch_add(kCopyPiece); first < n; first = next.fetch_add(kCopyPiece)) {
            const size_t len = std::min(kCopyPiece, n - first);
            std::memcpy(dst + first, src + first, len);
            done.fetch_add(len, std::memory_order_release);
        }
    }
};

}  // namespace

void copy_bytes(char* dst, const char* src, size_t n) {
    if (n < kParallelCopyBytes) {
        std::memcpy(dst, src, n);
        return;
    }
    static const unsigned cores = std::max(1u, std::thread::hardware_concurrency());  // (a system call)
    const size_t helpers = std::min<size_t>(cores - 1, kMaxCopyHelpers);
    if (helpers == 0) {
        std::memcpy(dst, src, n);
        return;
    }
    auto copy = std::make_shared<SharedCopy>();
    copy->dst = dst;
    copy->src = src;
    copy->n = n;
    for (size_t k = 0; k < helpers; ++k) {
        try {
            // Detached: one that starts after the pieces are all taken
            // finds nothing to do, and the copy never waits for it.
            std::thread([copy] { copy->take_pieces(); }).detach();
        } catch (const std::system_error&) {
            break;  // no thread to be had: this one copies the rest
        }
    }
    copy->take_pieces();
    while (copy->done.load(std::memory_order_acquire) < n) std::this_thread::yield();  // pieces still in flight
}

HostBuffer::HostBuffer(size_t nbytes) : nbytes_(nbytes) {
    // malloc's 16-byte alignment suits every dtype (NumPy uses the same);
    // never zero bytes, so data() is always a valid pointer for NumPy.
    data_ = buffer_pool().take(nbytes, &capacity_);
    if (!data_) throw std::bad_alloc();
}
HostBuffer::HostBuffer(char* data, size_t nbytes, bool read_only, std::function<void()> release,
                       std::function<bool()> others_may_write)
    : data_(data),
      nbytes_(nbytes),
      read_only_(read_only),
      release_(std::move(release)),
      others_may_write_(std::move(others_may_write)) {}

HostBuffer::~HostBuffer() {
    if (release_) {
        release_();
    } else {
        buffer_pool().give(data_, capacity_);
    }
}

}  // namespace gpupy
