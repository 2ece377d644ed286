#include "core/planning/capabilities.hpp"

namespace gpupy {

bool needs_host_evaluation(const Node& x, const Driver& d) {
    if (x.kind() != NodeKind::Expression) return false;
    if (!d.stores(x.dtype())) return true;
    switch (x.op()) {
    case GPUPY_OP_INDEX: return !d.supports(GPUPY_OP_INDEX, x.dtype());
    case CORE_OP_REDUCE: return !d.supports(x.reduce_params().fold, x.dtype());
    case GPUPY_OP_WHERE: return !d.supports(GPUPY_OP_WHERE, x.children().at(1).node->dtype());
    case GPUPY_OP_GATHER: return !d.supports(GPUPY_OP_GATHER, x.dtype());  // keyed by what it reads
    case CORE_OP_CONCAT:
    case CORE_OP_REMAP:
        return false;  // data movement only: the device stores the dtype
    default: return !d.supports(x.op(), x.children().at(0).node->dtype());
    }
}

}  // namespace gpupy
