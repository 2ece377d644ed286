#include "core/graph/evaluated_bits.hpp"

#include <cstddef>

namespace gpupy {

void EvaluatedBits::resize(int64_t n) {
    words_.assign(static_cast<size_t>((n + 63) / 64), 0);
    count_ = 0;
}

void EvaluatedBits::set_range(int64_t i0, int64_t i1) {
    int64_t i = i0;
    for (; i < i1 && (i & 63); ++i) set(i);
    // Whole words: those of a fresh result are all clear, those evaluated
    // before all set; only a partly set word needs its bits counted (a
    // popcount is a library call on the x86-64 baseline: per word of a
    // large result it cost as much as the evaluation's bookkeeping).
    for (; i + 64 <= i1; i += 64) {
        uint64_t& w = words_[i >> 6];
        if (w == 0) count_ += 64;
        else if (w != ~uint64_t{0}) count_ += 64 - __builtin_popcountll(w);
        w = ~uint64_t{0};
    }
    for (; i < i1; ++i) set(i);
}

bool EvaluatedBits::all_in_range(int64_t i0, int64_t i1) const {
    if (i0 < i1 && words_.empty()) return false;
    for (int64_t i = i0; i < i1; ++i) {
        if ((i & 63) == 0 && i + 64 <= i1) {
            if (words_[i >> 6] != ~uint64_t{0}) return false;
            i += 63;
        } else if (!test(i)) {
            return false;
        }
    }
    return true;
}

}  // namespace gpupy
