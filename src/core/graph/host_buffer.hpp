// Host memory of one node's elements (C order), shared with the ndarrays
// handed to Python, which keep it alive.
#pragma once

#include <cstddef>

namespace gpupy {

// Host storage of one node's elements, C order. Shared with the ndarrays
// handed to Python, which keep it alive.
class HostBuffer {
public:
    explicit HostBuffer(size_t nbytes);
    ~HostBuffer();
    HostBuffer(const HostBuffer&) = delete;
    HostBuffer& operator=(const HostBuffer&) = delete;
    char* data() const { return data_; }
    size_t nbytes() const { return nbytes_; }

    // Writable exports alive: buffers and ndarrays another library holds
    // and may write through at any time (docs/ecosystem.md, "Writing
    // through exports"). While there are any, these bytes are the array's
    // value: an expression built on them reads a snapshot (NodeFactory), so
    // no device copy of them is made, and a write goes into them (assign).
    bool exported() const { return exports_ > 0; }
    void add_export() { ++exports_; }
    void drop_export() { --exports_; }

private:
    int exports_ = 0;
    char* data_;
    size_t nbytes_;
    size_t capacity_ = 0;  // what was allocated (a reused buffer may be larger)
};

}  // namespace gpupy
