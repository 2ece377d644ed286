// A unit of work of the evaluator (thesis 4.4-4.8). Planning returns tasks
// as prerequisites ("evaluate this first"); the evaluator runs them from an
// explicit stack, so a deep expression uses heap, not C++ stack.
#pragma once

#include <cstdint>

#include "core/graph/node.hpp"

namespace gpupy {

struct Task {
    enum Kind {
        HostBlock,  // block `block` of `view` present on the host (bits set)
        EvalBlock,  // block `block` of `view` evaluated into the device cache
        HostEval,   // node `view.node` evaluated entirely off the device
    };
    Kind kind;
    NodeView view;
    int64_t block = 0;
};

}  // namespace gpupy
