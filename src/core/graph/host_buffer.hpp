// Host memory of one node's elements (C order), shared with the ndarrays
// handed to Python, which keep it alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

namespace gpupy {

// Copies n bytes from `src` to `dst` (not overlapping), a large copy split
// across a few threads: one thread's copy reaches a fraction of the memory
// bandwidth (4 MB: ~380 us on one core here, ~190 us on two, with ~40 us
// to start a thread).
void copy_bytes(char* dst, const char* src, size_t n);

// A 64-bit hash of n bytes (vectorised: near memory speed for large
// buffers). Tells whether bytes another library could write changed since
// it was taken (export_watch.hpp); two different contents collide with a
// chance of about 2^-64.
uint64_t content_hash(const char* p, size_t n);

// Host storage of one node's elements, C order. Shared with the ndarrays
// handed to Python, which keep it alive.
class HostBuffer {
public:
    explicit HostBuffer(size_t nbytes);
    // Memory someone else allocated (an ndarray's: `gpupy.asarray(a)` views
    // a's memory as NumPy's asarray does), used in place: `release` runs
    // when the buffer dies and gives it back; it never enters the pool of
    // reused buffers. Bytes that are read-only there are never written
    // through gpupy (the array is read-only). `others_may_write` says
    // whether anything besides gpupy may write them now (the lender is
    // still held elsewhere); while it does, the bytes count as exported.
    HostBuffer(char* data, size_t nbytes, bool read_only, std::function<void()> release,
               std::function<bool()> others_may_write = {});
    bool read_only() const { return read_only_; }
    // Memory another owner lent (the constructor above).
    bool lent() const { return static_cast<bool>(release_); }
    ~HostBuffer();
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    char* data() const { return data_; }
    size_t nbytes() const { return nbytes_; }

    // Writable exports alive: buffers and ndarrays another library holds
    // and may write through at any time (docs/ecosystem.md, "Writing
    // through exports"), or lent memory its lender's holders may write.
    // While there are any, these bytes are the array's value: an
    // expression built on them reads a snapshot (NodeFactory), so no
    // device copy of them is made, and a write goes into them (assign).
    bool exported() const { return exports_ > 0 || (others_may_write_ && others_may_write_()); }
    void add_export() { ++exports_; }
    // True when this was the last live export.
    bool drop_export() { return --exports_ == 0; }

    // Device copies kept through exports (export_watch.hpp): the bytes'
    // hash when the first export began, checked once the last one ended.
    bool watched() const { return watched_; }
    uint64_t watched_hash() const { return watched_hash_; }
    void watch(uint64_t hash) {
        watched_ = true;
        watched_hash_ = hash;
    }
    void unwatch() { watched_ = false; }

private:
    int exports_ = 0;
    bool watched_ = false;
    uint64_t watched_hash_ = 0;
    char* data_;
    size_t nbytes_;
    size_t capacity_ = 0;  // what was allocated (a reused buffer may be larger)
    bool read_only_ = false;
    std::function<void()> release_;  // set for memory someone else allocated
    std::function<bool()> others_may_write_;
};

}  // namespace gpupy
