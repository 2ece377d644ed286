#include "core/planning/context.hpp"

namespace gpupy {

void PlanContext::require_storage(const NodeView& v, const Span& s) const {
    for (int64_t j = s.lo / B; j <= s.hi / B; ++j) {
        if (host()) require(Task{Task::HostBlock, v, j});
        else if (!cache.contains(v.node.get(), v.geom, j)) require(Task{Task::EvalBlock, v, j});
    }
}

}  // namespace gpupy
