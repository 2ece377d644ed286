// The memory order of new arrays, as NumPy lays them out.
//
// Whether a later reshape or ravel is a view or a copy depends on an
// array's strides, and so does which arrays share memory after a write.
// So a new array gpupy makes must be laid out as NumPy lays out the same
// result: an elementwise result follows its operands' order (NumPy's
// iterator's "K" order: `a.T + 1` is Fortran-ordered), a reduction's the
// order of its operand's kept axes, and so on.
//
// An order lists the axes from the slowest-varying to the fastest; the
// empty order is C order. A node is always stored in C order of its own
// shape, so an array in another order is a node of the permuted shape,
// viewed transposed (of_ordered): element (i_0, ..., i_k) of the array is
// node element (i_order[0], ..., i_order[k]).
#pragma once

#include <vector>

#include "core/graph/array.hpp"

namespace gpupy {

using MemoryOrder = std::vector<int>;

// NumPy's order for an array of `shape` computed elementwise from operands
// read through these views (each already broadcast to `shape`): the
// iterator's stable insertion sort of the axes by their strides, where
// dimensions of length 1 and broadcast dimensions carry no stride, and
// where operands disagree, C order wins (nditer_constr.c,
// npyiter_find_best_axis_ordering). Empty when that is C order.
MemoryOrder keep_order(const Dims& shape, const std::vector<const ViewGeometry*>& operands);

// The order of one view's own axes by the memory it reads (a copy with
// order="K", an ndarray's layout): keep_order of the view alone.
MemoryOrder order_of(const ViewGeometry& view);

// NumPy's layout of a new array made "like" a view with order="K" (astype,
// copy, array, empty_like: PyArray_NewLikeArray): C order where the view is
// C-contiguous, Fortran order where it is Fortran-contiguous, else its axes
// stably sorted by the size of their steps, largest first. Unlike the
// iterator's order (order_of), a broadcast axis counts as a step of 0, the
// fastest: a copy of broadcast_to(row, (n, m)) is Fortran-ordered. Empty
// when that is C order. (Given strides in bytes, the contiguity checks do
// not apply and the sort decides: the same order for every axis longer
// than 1.)
MemoryOrder like_order(const ViewGeometry& view);

// NumPy's order for an array joined from these (concatenate, stack): the
// same stable sort of the axes by stride, taken from the first axis rather
// than the last, where an array's axes of length 1 carry no stride
// (PyArray_CreateMultiSortedStridePerm). Empty when that is C order.
MemoryOrder joined_order(const std::vector<const ViewGeometry*>& arrays);

// The order with `axes` (in the given order) moved to the end and the rest
// of `order` kept: where a reduction's folded axes go.
MemoryOrder with_axes_last(const MemoryOrder& order, int ndim, const std::vector<int>& axes);

// The axes of `shape` listed in `order`, i.e. the node shape an array in
// that order is stored as.
Dims permuted_shape(const Dims& shape, const MemoryOrder& order);
// `v` with its dimensions listed in `order` (what a node stored in that
// order reads of it at the same element).
ViewGeometry permuted(const ViewGeometry& v, const MemoryOrder& order);
NodeView permuted(NodeView v, const MemoryOrder& order);

// Element strides of a new array of `shape` laid out in `order`.
Dims order_strides(const Dims& shape, const MemoryOrder& order);

// A new array owning `node`, stored in `order`: the node's shape is the
// array's shape permuted by it (permuted_shape), and the array views it
// transposed back.
GpuArray of_ordered(NodeRef node, const MemoryOrder& order);

}  // namespace gpupy
