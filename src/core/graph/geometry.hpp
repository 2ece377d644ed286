// Shapes, strides and views: the arithmetic of thesis 4.1 and 4.5.
//
// All strides in the core count elements of the *owner's* C-ordered
// storage (NumPy counts bytes; the bindings convert). A view is
// (offset, shape, strides) over an owner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/graph/dims.hpp"

namespace gpupy {

int64_t shape_size(const Dims& shape);
// C-order (row-major) element strides of a contiguous array of `shape`.
Dims c_strides(const Dims& shape);
// True if (shape, strides) walks memory in C order without gaps (dims of
// size 1 are ignored, as NumPy ignores them).
bool is_c_contiguous(const Dims& shape, const Dims& strides);
// The same in Fortran order (the first dimension varies fastest).
bool is_f_contiguous(const Dims& shape, const Dims& strides);
// "(2,3)" / "(4,)" / "()", as NumPy prints shapes in error messages.
std::string shape_str(const Dims& shape);
// "(2, 3)" / "(5,)" as Python prints a shape tuple (NumPy's allocation errors).
std::string shape_tuple_str(const Dims& shape);

// The broadcast shape of several shapes, or ValueError with NumPy's text:
// "operands could not be broadcast together with shapes (2,3) (4,) ".
Dims broadcast_shapes(const std::vector<Dims>& shapes);
// Strides that read (shape, strides) as if broadcast to `target`
// (right-aligned; stride 0 along new or stretched dimensions).
Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& target);

// Multi-index of C-order flat position `flat` in `shape`.
void unravel(int64_t flat, const Dims& shape, int64_t* index);

// A view of an owner: element (n_0, ..., n_k) is owner element
// offset + sum n_d * strides[d].
struct ViewGeometry {
    int64_t offset = 0;
    Dims shape;
    Dims strides;

    int64_t size() const { return shape_size(shape); }
    bool operator==(const ViewGeometry& o) const {
        return offset == o.offset && shape == o.shape && strides == o.strides;
    }
};

// The identity view of an owner of `shape`.
ViewGeometry identity_view(const Dims& shape);
bool is_identity_view(const ViewGeometry& v, const Dims& owner_shape);

// BuildView (thesis fig. 4.4), generalised. `outer` is a view of an
// expression whose own shape is `owner_shape`; `child` is one operand of
// that expression, a view with shape `owner_shape` of the operand's owner.
// On success, *out is the view of the operand's owner that `outer` reads
// (shape = outer.shape) and the function returns true. It returns false
// when no strided view can express it (e.g. a reshape merging dimensions
// that the operand does not store contiguously); the caller then
// evaluates the expression into storage first.
bool compose_views(const Dims& owner_shape, const ViewGeometry& outer, const ViewGeometry& child,
                   ViewGeometry* out);

// Smallest and largest owner element index that `view` touches at its C-order
// flat positions [f0, f1), f0 < f1.
struct Span {
    int64_t lo;
    int64_t hi;  // inclusive
};
Span view_span(const ViewGeometry& view, int64_t f0, int64_t f1);

// Strides for viewing (shape, strides) as `new_shape` without copying, as
// NumPy's reshape does; false when a copy is needed.
bool reshape_strides(const Dims& shape, const Dims& strides, const Dims& new_shape, Dims* new_strides);

// Visits the view's C-order flat positions [f0, f1) in order, a run along
// the innermost dimension at a time: fn(position_in_range, first
// owner_element_index, run_length, owner stride along the run). Callers
// copy a run with stride 1 as one block.
template <class Fn>
void for_each_run(const ViewGeometry& view, int64_t f0, int64_t f1, Fn&& fn) {
    if (f0 >= f1) return;
    const int nd = static_cast<int>(view.shape.size());
    if (nd == 0) {
        fn(int64_t{0}, view.offset, int64_t{1}, int64_t{1});
        return;
    }
    int64_t small[8];
    std::vector<int64_t> large;
    int64_t* idx = small;
    if (nd > 8) {
        large.resize(static_cast<size_t>(nd));
        idx = large.data();
    }
    unravel(f0, view.shape, idx);
    int64_t pos = view.offset;
    for (int d = 0; d < nd; ++d) pos += idx[d] * view.strides[d];
    const int64_t inner_len = view.shape[nd - 1];
    const int64_t inner_stride = view.strides[nd - 1];
    int64_t done = 0;
    const int64_t total = f1 - f0;
    while (done < total) {
        int64_t run = inner_len - idx[nd - 1];
        if (run > total - done) run = total - done;
        fn(done, pos, run, inner_stride);
        done += run;
        if (done >= total) break;
        // Carry into the outer dimensions.
        pos += (run - 1) * inner_stride;
        idx[nd - 1] += run - 1;
        for (int d = nd - 1; d >= 0; --d) {
            if (++idx[d] < view.shape[d]) {
                pos += view.strides[d];
                break;
            }
            pos -= (view.shape[d] - 1) * view.strides[d];
            idx[d] = 0;
        }
    }
}

}  // namespace gpupy
