// What code generation can prove about each value of an IR list: that it is
// never NaN, always finite, never negative. Used to drop NaN tests NumPy's
// semantics would otherwise need (maximum/minimum propagate a NaN operand:
// when that operand cannot be NaN, a plain select does it).
//
// Facts about CONST instructions come from their values, which reach the
// shader as uniforms; the program key therefore includes const_facts() so a
// program is never reused for a constant that breaks what it assumed.
#pragma once

#include <cstdint>
#include <vector>

#include "gpupy/driver.hpp"

namespace gpupy_glsl {

enum ValueFact : uint8_t {
    kNeverNan = 1,
    kFinite = 2,
    kNonNegative = 4,  // >= 0 or -0 (a NaN is not)
};

// The facts of a CONST instruction's value (never NaN, finite; not its
// sign, so constants of either sign share a program).
uint8_t const_facts(const gpupy_ir_instr& in);

// Facts of every instruction of `ir`, in order.
std::vector<uint8_t> value_facts(const gpupy_ir& ir);

}  // namespace gpupy_glsl
