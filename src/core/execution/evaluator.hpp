// Evaluation (thesis 4.4-4.8): making the elements of a view available on
// the host, block by block, evaluating on the device what is not there yet.
//
// Work is done by an explicit task stack, never by recursion over the
// expression: a task that finds it needs something first (a subexpression
// collapsed by partitioning, a node NumPy must evaluate, a block read back)
// pushes those prerequisites and is retried after them. So a 100,000-level
// expression uses heap, not C++ stack.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/node.hpp"

namespace gpupy {

struct Task {
    enum Kind {
        HostBlock,  // block `block` of `view` present on the host (bits set)
        EvalBlock,  // block `block` of `view` evaluated into the device cache
        HostEval,   // node `view.node` evaluated entirely by NumPy
    };
    Kind kind;
    NodeView view;
    int64_t block = 0;
};

// Makes view positions [f0, f1) of `view` available in its node's host
// buffer (evaluating only the blocks that hold them).
void ensure_host(const NodeView& view, int64_t f0, int64_t f1);
inline void ensure_host(const NodeView& view) { ensure_host(view, 0, view.geom.size()); }
// Makes sure block `block` of `view` is evaluated on the device.
void ensure_device_block(const NodeView& view, int64_t block);
// Runs tasks until all are done.
void run_tasks(std::vector<Task> tasks);

class Driver;

// True if the driver cannot evaluate this node itself (op or dtype
// unsupported, too many dimensions), so NumPy must. Without a driver: the
// active one.
bool needs_host_evaluation(const Node& node);
bool needs_host_evaluation(const Node& node, Driver& driver);

// True if view positions [f0, f1) of the node are all on the host.
bool view_evaluated(const Node& node, const ViewGeometry& view, int64_t f0, int64_t f1);

}  // namespace gpupy
