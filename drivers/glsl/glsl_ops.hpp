// The snippet table: GLSL for every (op, dtype) the driver runs.
//
// op_expression() is the only definition of what the driver can compute:
// get_method() asks it (with placeholder operands) and the code generator
// uses its text, so the declared set and the generated code cannot drift.
// Every snippet reproduces NumPy's result bit for bit, except the float32
// functions taken from glsl_math (gp_<numpy_name>), each within 1 ulp of
// the correctly rounded result (docs/accuracy.md, conformance tests).
#ifndef GPUPY_GLSL_GLSL_OPS_HPP
#define GPUPY_GLSL_GLSL_OPS_HPP

#include <set>
#include <string>
#include <vector>

#include "glsl_library.hpp"

namespace gpupy_glsl {

struct DeviceCaps {
    bool fp64 = false;
    bool int64 = false;
    // float32 arithmetic offered at all. False where the device flushes
    // float32 subnormals to zero (GLSL allows it; NVIDIA does) and the user
    // asked for NumPy's subnormals (GPUPY_FLOAT32_SUBNORMALS=exact): then
    // float32 work is left to the host.
    bool float32 = true;
    // Whether GLSL's `/` and sqrt() round correctly, as NumPy's do. GLSL only
    // promises 2.5 ulp (division) and about 3 ulp (sqrt); where the device
    // is measured short of exact (float_probe), float32 calls correctly
    // rounded library routines and float64 leaves the op to the host.
    bool f32_division_exact = true;
    bool f32_sqrt_exact = true;
    bool f64_division_exact = true;
    bool f64_sqrt_exact = true;
};

// The library functions a shader calls, in inclusion order.
struct ShaderFunctions {
    std::vector<std::string> order;
    std::set<std::string> seen;
    bool missing = false;  // a snippet named a function the library lacks
    void use(const std::string& name);
};

// The GLSL expression computing `op` on `args` (GLSL expressions holding
// operand values of `in_dtype`) with result dtype `out_dtype`, adding the
// library functions it calls to `fns`; "" if the driver cannot compute it
// exactly as NumPy does. For WHERE, in_dtype is the dtype of args[1..2].
// Bit k of `never_nan_args`: args[k] is known never to be NaN
// (value_facts.hpp), which spares maximum/minimum their NaN test.
std::string op_expression(int op, int in_dtype, int out_dtype, const std::vector<std::string>& args,
                          ShaderFunctions& fns, const DeviceCaps& caps, unsigned never_nan_args = 0);

// The result dtype of a non-CAST op applied to operands of `in_dtype`.
int op_result_dtype(int op, int in_dtype);
int op_arity(int op);
const char* op_numpy_name(int op);
const char* op_enum_name(int op);

// get_method(): can the driver run `op` on operands of `dtype`? For leaves:
// can it store and load the dtype; for CAST: can it convert from `dtype` to
// every dtype it stores.
bool op_supported(int op, int dtype, const DeviceCaps& caps);
// True if op_expression() computes `op` from `in_dtype` to `out_dtype` with
// every library function it needs. Memoised: validation asks it for every
// instruction of every IR list.
bool expression_supported(int op, int in_dtype, int out_dtype, const DeviceCaps& caps);

// Which GLSL function implements a float32 math op ("gp_exp" from
// glsl_math), or "" if the op is not a library op.
std::string math_function_for(int op);

// Extra text-level cost of an op in the instruction estimate (resources).
int op_cost(int op, int in_dtype);

}  // namespace gpupy_glsl

#endif
