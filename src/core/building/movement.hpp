// Nodes that move data without arithmetic: joins along an axis (CONCAT)
// and the repeat/tile-like reads (REMAP), so nothing is expanded on the
// host.
#pragma once

#include <vector>

#include "core/graph/array.hpp"

namespace gpupy {

// numpy.concatenate along `axis` into dtype t (the arrays' dimensions
// checked with NumPy's messages).
GpuArray concatenate(const std::vector<GpuArray>& arrays, int axis, DType t);
// The shape numpy.concatenate gives, or its ValueError.
Dims concatenated_shape(const std::vector<GpuArray>& arrays, int axis);
// An array of `shape` whose element m reads a's element ((m[d] / div[d]) %
// mod[d]) per dimension (mod 0: none); ValueError if it would read outside a.
GpuArray remap(const GpuArray& a, const Dims& shape, const Dims& div, const Dims& mod);

// Views (same dtype t after casting; same shape except dim 0) joined along
// dim 0 as one CONCAT node; empty parts are dropped.
NodeView concat0(std::vector<NodeView> parts, DType t);
// Swaps dims 0 and `axis` of a view (its own inverse).
ViewGeometry swap0(ViewGeometry g, int axis);

}  // namespace gpupy
