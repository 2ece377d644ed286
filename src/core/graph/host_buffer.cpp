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
    // Eight lanes over 64-byte stripes, each adding the product of the two
    // 32-bit halves of a word keyed by its lane and its stripe (so that
    // swapped stripes hash apart) and the word itself to its neighbour
    // lane; compilers vectorise it (~9 GB/s here, memory speed for large
    // buffers). Then the lanes, the tail and a final avalanche.
    constexpr uint64_t kKey[8] = {0xbe4ba423396cfeb8ull, 0x1cad21f72c81017cull, 0xdb979083e96dd4deull,
                                  0x1f67b3b7a4a44072ull, 0x78e5c0cc4ee679cbull, 0x2172ffcc7dd05a82ull,
                                  0x8e2443f7744608b8ull, 0x4c263a81e69035e0ull};
    constexpr uint64_t kMul1 = 0x9E3779B185EBCA87ull, kMul2 = 0xC2B2AE3D27D4EB4Full, kMul3 = 0x165667B19E3779F9ull;
    auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
    uint64_t acc[8] = {n, kMul1, kMul2, kMul3, 0x85EBCA77C2B2AE63ull, 0x27D4EB2F165667C5ull, 0x94D049BB133111EBull,
                       0xBF58476D1CE4E5B9ull};
    size_t i = 0;
    uint64_t stripe = 0;
    for (; i + 64 <= n; i += 64, stripe += 0x9E3779B97F4A7C15ull) {
        uint64_t v[8];
        std::memcpy(v, p + i, 64);
        for (int k = 0; k < 8; ++k) {
            const uint64_t x = v[k] ^ (kKey[k] + stripe);
            acc[k ^ 1] += v[k];
            acc[k] += (x & 0xffffffffu) * (x >> 32);
        }
    }
    uint64_t h = 0;
    for (uint64_t a : acc) h = rotl(h ^ (a * kMul1), 29) * kMul2;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        std::memcpy(&v, p + i, 8);
        h = rotl(h ^ (v * kMul2), 27) * kMul1 + kKey[0];
    }
    for (; i < n; ++i) h = rotl(h ^ (static_cast<uint8_t>(p[i]) * kMul3), 11) * kMul1;
    h ^= h >> 33;
    h *= kMul2;
    h ^= h >> 29;
    h *= kMul3;
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
