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

private:
    char* data_;
    size_t nbytes_;
    size_t capacity_ = 0;  // what was allocated (a reused buffer may be larger)
};

}  // namespace gpupy
