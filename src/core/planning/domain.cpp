#include <algorithm>

#include "core/planning/plan.hpp"

namespace gpupy {

void Domain::range(int64_t a, int64_t b, int64_t* da, int64_t* db) const {
    if (!reduction) {
        *da = a;
        *db = b;
        return;
    }
    if (reduce.mode == GPUPY_REDUCE_CHUNKS) {
        const int64_t of = a / nchunks, cf = a % nchunks;
        const int64_t ol = (b - 1) / nchunks, cl = (b - 1) % nchunks;
        *da = of * inner + cf * reduce.chunk;
        *db = ol * inner + std::min(inner, (cl + 1) * reduce.chunk);
    } else {
        const int64_t o = a / inner, r = a % inner;
        *da = o * inner + (r / reduce.chunk) * reduce.chunk;
        *db = b;
    }
}

bool Domain::contiguous_map(const Dims& map_strides) const {
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] != 1 && map_strides[d] != strides[d]) return false;
    }
    return true;
}

}  // namespace gpupy
