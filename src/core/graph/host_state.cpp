#include "core/graph/host_state.hpp"

namespace gpupy {

bool view_evaluated(const Node& x, const ViewGeometry& g, int64_t f0, int64_t f1) {
    if (x.complete()) return true;
    if (!x.host()) return false;
    if (is_c_contiguous(g.shape, g.strides)) return x.bits().all_in_range(g.offset + f0, g.offset + f1);
    bool all = true;
    for_each_run(g, f0, f1, [&](int64_t, int64_t idx, int64_t run, int64_t stride) {
        if (!all) return;
        if (stride == 1) {
            all = x.bits().all_in_range(idx, idx + run);  // whole words at a time
            return;
        }
        for (int64_t k = 0; k < run && all; ++k) all = x.bits().test(idx + k * stride);
    });
    return all;
}

bool host_has(const Node& x, int64_t lo, int64_t hi) {
    if (x.complete()) return true;
    if (!x.host()) return false;
    return x.bits().all_in_range(lo, hi + 1);
}

}  // namespace gpupy
