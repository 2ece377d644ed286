// Evaluated bits (thesis 4.4): which elements of an expression are on the
// host.
#pragma once

#include <cstdint>
#include <vector>

namespace gpupy {

// One bit per element: which elements of an expression are on the host.
class EvaluatedBits {
public:
    void resize(int64_t n);
    // Unallocated (nothing evaluated yet) reads as all clear.
    bool test(int64_t i) const { return !words_.empty() && ((words_[i >> 6] >> (i & 63)) & 1); }
    void set(int64_t i) {
        uint64_t& w = words_[i >> 6];
        const uint64_t m = uint64_t{1} << (i & 63);
        if (!(w & m)) {
            w |= m;
            ++count_;
        }
    }
    void set_range(int64_t i0, int64_t i1);
    bool all_in_range(int64_t i0, int64_t i1) const;
    int64_t count() const { return count_; }

private:
    std::vector<uint64_t> words_;
    int64_t count_ = 0;
};

}  // namespace gpupy
