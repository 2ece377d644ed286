#include "core/graph/host_buffer.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

namespace gpupy {

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

// Below this a thread's start costs more than it saves.
constexpr size_t kParallelCopyBytes = size_t{2} << 20;
// Each thread copies at least this much; more than a few threads add
// nothing once the memory bus is busy.
constexpr size_t kBytesPerCopyThread = size_t{1} << 20;
constexpr unsigned kMaxCopyThreads = 4;

}  // namespace

void copy_bytes(char* dst, const char* src, size_t n) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    const size_t parts = n < kParallelCopyBytes ? 1 : std::min<size_t>({cores, kMaxCopyThreads, n / kBytesPerCopyThread});
    if (parts <= 1) {
        std::memcpy(dst, src, n);
        return;
    }
    // Equal parts, rounded up to whole 64-byte lengths.
    const size_t step = (n / parts + 63) / 64 * 64;
    std::vector<std::thread> helpers;
    size_t unstarted = n;  // from here on no helper took a part
    for (size_t first = step; first < n; first += step) {
        const size_t len = std::min(step, n - first);
        try {
            helpers.emplace_back([=] { std::memcpy(dst + first, src + first, len); });
        } catch (const std::system_error&) {  // no thread to be had: the rest is copied here
            unstarted = first;
            break;
        }
    }
    std::memcpy(dst, src, step);
    if (unstarted < n) std::memcpy(dst + unstarted, src + unstarted, n - unstarted);
    for (auto& h : helpers) h.join();
}

HostBuffer::HostBuffer(size_t nbytes) : nbytes_(nbytes) {
    // malloc's 16-byte alignment suits every dtype (NumPy uses the same);
    // never zero bytes, so data() is always a valid pointer for NumPy.
    data_ = buffer_pool().take(nbytes, &capacity_);
    if (!data_) throw std::bad_alloc();
}
HostBuffer::HostBuffer(char* data, size_t nbytes, bool read_only, std::function<void()> release)
    : data_(data), nbytes_(nbytes), read_only_(read_only), release_(std::move(release)) {}

HostBuffer::~HostBuffer() {
    if (release_) {
        release_();
    } else {
        buffer_pool().give(data_, capacity_);
    }
}

}  // namespace gpupy
