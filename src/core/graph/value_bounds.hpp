// What an expression's values can be, proven from how it is built.
//
// Indexing with an integer array checks the indices first, for NumPy's
// IndexError at the call: one reduction over them, which evaluates them.
// An index expression is often bounded by construction -- clipped,
// `indices`, `arange` -- and then that pass proves nothing new: bilinear
// rotation spent most of its time checking its four gathers' indices, all
// made with clip. value_bounds proves such bounds without evaluating.
#pragma once

#include <optional>

#include "core/graph/node.hpp"

namespace gpupy {

// Every element is a number (never NaN) within [lo, hi].
struct ValueBounds {
    double lo;
    double hi;
};

// Bounds every element of `v` lies within, or nothing where they cannot be
// proven from the graph alone (data read from memory, an op this analysis
// does not follow, a value that may be NaN or overflow its dtype, a
// subgraph too large to follow). Never narrower than the values: bounds of
// float results are widened to cover rounding (and a device that flushes
// subnormals to zero).
std::optional<ValueBounds> value_bounds(const NodeView& v);

}  // namespace gpupy
