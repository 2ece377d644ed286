// What every planning phase reads: the driver that will run the plan, the
// block cache as it is now (asked, never changed), the block size and where
// to put prerequisites.
#pragma once

#include <cstdint>
#include <vector>

#include "core/execution/task.hpp"
#include "core/memory/block_cache.hpp"
#include "core/planning/plan.hpp"
#include "core/runtime/driver_loader.hpp"

namespace gpupy {

struct PlanContext {
    Driver& driver;            // the device, or the host engine in host mode
    const BlockCache& cache;   // what is on the device
    int64_t B;                 // block size
    EvalMode mode;
    std::vector<Task>* prereqs;

    bool host() const { return mode == EvalMode::Host; }
    void require(Task t) const { prereqs->push_back(std::move(t)); }
    // True if every storage block of `x` from j0 to j1 is on the device.
    bool storage_on_device(const Node* x, int64_t j0, int64_t j1) const {
        const ViewGeometry id = identity_view(x->shape());
        for (int64_t j = j0; j <= j1; ++j) {
            if (!cache.contains(x, id, j)) return false;
        }
        return true;
    }
    // Storage blocks of x covering element span `s` evaluated first: into
    // host memory (host mode) or the device cache.
    void require_storage(const NodeView& x_identity, const Span& s) const;
};

}  // namespace gpupy
