// Algebraic rewrites that keep NumPy's values bit for bit: what an
// expression is built as when a cheaper op computes exactly the same.
#pragma once

#include <optional>

#include "core/graph/node.hpp"

namespace gpupy {

// How x ** e is computed. NumPy's ndarray.__pow__ computes x**2, x**0.5 and
// x**-1 as square, sqrt and reciprocal, and np.power gives the same values;
// an integer power whose exponent may be negative must run in NumPy (which
// raises for it).
struct PowerPlan {
    OpCode op;            // POWER, SQUARE, SQRT or RECIPROCAL
    bool drop_exponent;   // the op takes the base alone
    bool needs_numpy;     // only NumPy can compute (or refuse) it
};
// `exponent`: the exponent's value when it is a scalar known now.
PowerPlan plan_power(std::optional<double> exponent, bool float_result);

// |x|^2 == x^2 bit for bit (and in wrapping integer arithmetic), so the
// square of an absolute value squares the value itself: the thesis's
// distance |x - x0|**2 costs two operations fewer per point. `v` is the
// operand of a SQUARE.
NodeView without_absolute(NodeView v);

// a OP b for one unsigned and one signed integer operand of different
// dtypes, exactly as NumPy 2 compares them (a negative signed value is
// below every unsigned one): the op table has one operand dtype per op.
NodeRef mixed_sign_compare(OpCode op, const NodeView& a, const NodeView& b, DType a_dtype, const Dims& shape);

}  // namespace gpupy
