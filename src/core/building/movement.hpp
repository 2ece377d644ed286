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
// An array of `shape` whose element m reads a's element at the coordinates
// RemapParams gives (node.hpp; empty shift and edge: none); ValueError if it
// would read outside a. A remap of a whole REMAP result is one remap of its
// operand where the two compose.
GpuArray remap(const GpuArray& a, const Dims& shape, RemapParams p);
// The elements of a's node's storage (its C-ordered elements, whatever a's
// view) at the positions `index` holds: an INT64 array, checked by the
// caller (every value inside the storage); the result has index's shape.
// One GATHER node, fused with the index's expression and its consumers.
GpuArray gather(const GpuArray& a, const GpuArray& index);
// numpy.roll with one shift per dimension (any sign), as one remap.
GpuArray roll(const GpuArray& a, const Dims& shifts);
// numpy.pad's edge, wrap, reflect and symmetric modes (edge: GPUPY_EDGE_CLAMP,
// _WRAP, _REFLECT, _SYMMETRIC) with widths per dimension, as one remap.
GpuArray pad(const GpuArray& a, const Dims& before, const Dims& after, int32_t edge);

// Views (same dtype t after casting; same shape except dim 0) joined along
// dim 0 as one CONCAT node; empty parts are dropped.
NodeView concat0(std::vector<NodeView> parts, DType t);
// Swaps dims 0 and `axis` of a view (its own inverse).
ViewGeometry swap0(ViewGeometry g, int axis);

}  // namespace gpupy
