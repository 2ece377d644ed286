// Views of arrays with NumPy's rules and error messages: basic indexing,
// reshape, transpose, broadcast_to. None of them evaluates anything; all
// but a reshape NumPy would copy make a new (offset, shape, strides) over
// the same owner.
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/array.hpp"

namespace gpupy {

// One item of a basic index (the bindings parse Python's keys into these).
struct IndexItem {
    enum Kind { Integer, Slice, Ellipsis, NewAxis };
    Kind kind;
    int64_t value = 0;  // Integer
    // Slice: as Python's slice.indices would give before adjustment
    // (PySlice_Unpack): start/stop clamped to int64, step != 0.
    int64_t start = 0, stop = 0, step = 1;
};

// The view `items` select from `a` (thesis 4.1), or IndexError with NumPy's
// message. *scalar: every dimension was indexed by an integer.
ViewGeometry index_view(const GpuArray& a, const std::vector<IndexItem>& items, bool* scalar);

// The position along dimension `axis` (of length n) of the integer index
// `idx` (negative counts from the end), or NumPy's IndexError.
int64_t checked_index(int64_t idx, int64_t n, int axis);

// NumPy's axis normalisation: AxisError if out of range.
int normalize_axis(int64_t axis, int ndim);

// a.reshape(shape) with one -1 allowed: a view where NumPy gives one, else
// a lazy copy viewed in the new shape.
GpuArray reshape(const GpuArray& a, Dims shape);
// a.transpose(axes); empty axes reverse them.
GpuArray transpose(const GpuArray& a, const std::vector<int>& axes);
// A read-only view of a broadcast to `shape`.
GpuArray broadcast_to(const GpuArray& a, const Dims& shape);

}  // namespace gpupy
