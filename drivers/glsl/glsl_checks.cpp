// The code of the floating-point checks a generated shader carries: each
// checked instruction's flags (gpupy_ir.check) and each checked fold's
// (gpupy_ir.check_folds), in the quick form or the full one.
#include <algorithm>
#include <sstream>

#include "glsl_writer.hpp"
#include "gpupy/op_meta.hpp"

namespace gpupy_glsl {

// The gpupy_fp_flag bits of instruction i's value at this point, ORed into
// the invocation's flags of check k: NaN or infinity from operands without
// them (telling a zero operand apart), or an integer division by zero.
std::string Writer::check(int i, int k, const std::string& flags) {
    const gpupy_ir_instr& in = ir_.instr[i];
    const GlslType& f = glsl_type(in.dtype);
    std::ostringstream s;
    if (f.kind != DtypeKind::Float) {
        if (f.kind == DtypeKind::Bool) return "";
        const int divisor = in.arg[op_arity(in.op) >= 2 ? 1 : 0];
        s << "    if (" << reg(divisor) << " == 0) " << flags << " |= " << GPUPY_FP_ZERO_DIVISOR << "u;\n";
        if (f.kind == DtypeKind::Signed && in.op == GPUPY_OP_FLOOR_DIVIDE) {
            // The dtype's minimum over -1 (int8 and int16 are held in int).
            static const char* const kMinimum[] = {"-128", "-32768", "(-2147483647 - 1)", "(-9223372036854775807l - 1l)"};
            const int which = in.dtype == GPUPY_INT8 ? 0 : in.dtype == GPUPY_INT16 ? 1 : in.dtype == GPUPY_INT32 ? 2 : 3;
            s << "    if (" << reg(in.arg[0]) << " == " << kMinimum[which] << " && " << reg(divisor) << " == -1) " << flags
              << " |= " << GPUPY_FP_INT_OVERFLOW << "u;\n";
        }
        return s.str();
    }
    // The float operands, each once (x * x: one test).
    std::vector<int> floats;
    for (int a = 0; a < op_arity(in.op); ++a) {
        const int arg = in.arg[a];
        if (glsl_type(ir_.instr[arg].dtype).kind == DtypeKind::Float &&
            std::find(floats.begin(), floats.end(), arg) == floats.end())
            floats.push_back(arg);
    }
    const std::string v = reg(i);
    // Whether an operand is NaN, as far as the flags care: logaddexp's every
    // NaN is flagged (gpupy_fp_flag), its operands' too.
    std::string nan_in = "false";
    for (int arg : floats) nan_in += " || " + classify("isnan", ir_.instr[arg].dtype, reg(arg));
    const std::string nan_in_flagged = gpupy_fp_flags_every_nan(in.op) ? "false" : nan_in;
    if (!opt_.detailed_checks) {
        // The quick form: whether this value is an error the full form
        // would name -- not finite where every float operand is finite, or
        // a NaN where none is -- without a branch. v - v is 0.0 for a
        // finite v and a NaN otherwise (precise: an optimiser may otherwise
        // take it for 0.0). NaNs and infinities carried from the operands
        // (missing values in the data) do not send the evaluation to the
        // full form.
        auto nonfinite = [&](int arg) {
            const std::string x = reg(arg), z = "z" + std::to_string(k) + "_" + std::to_string(arg);
            if (glsl_type(ir_.instr[arg].dtype).bits == 64) {
                s << "    precise double " << z << " = " << x << " - " << x << ";\n";
                return "(unpackDouble2x32(" + z + ") != uvec2(0u))";
            }
            s << "    precise float " << z << " = " << x << " - " << x << ";\n";
            return "(floatBitsToUint(" + z + ") != 0u)";
        };
        std::string finite_in = "true";
        for (int arg : floats) finite_in += " && !" + nonfinite(arg);
        const std::string made = nonfinite(i);
        s << "    " << flags << " |= uint(" << made << " && " << finite_in << ") | uint(" << classify("isnan", in.dtype, v)
          << " && !(" << nan_in_flagged << "));\n";
        return s.str();
    }
    std::string inf_in = "false", zero_in = "false";
    for (int arg : floats) {
        inf_in += " || " + classify("isinf", ir_.instr[arg].dtype, reg(arg));
        zero_in += " || " + operand(in, arg) + " == 0.0";  // as the operation read it
    }
    // One test on the common path (a finite value); the operands are
    // looked at only where the value is not.
    s << "    if (!" << classify("isfinite", in.dtype, v) << ") {\n";
    s << "        if (" << classify("isnan", in.dtype, v) << ") {\n";
    s << "            if (!(" << nan_in_flagged << ")) " << flags << " |= " << GPUPY_FP_NAN << "u;\n";
    s << "        } else if (!(" << nan_in << " || " << inf_in << ")) {\n";
    s << "            " << flags << " |= (" << zero_in << ") ? " << GPUPY_FP_INF_AT_ZERO << "u : " << GPUPY_FP_INF << "u;\n";
    s << "        }\n";
    s << "    }\n";
    return s.str();
}

// The flags of a checked fold (gpupy_ir.check_folds) for output k, whose
// accumulator is `acc` after the loop, ORed into g_fold<k>. The quick form
// only says whether the value is not finite (v - v is not 0.0), once per
// output; the full form, run where the quick one found something, names
// the error from what the loop saw of the body values (bnan<k>, binf<k>),
// as gpupy_fold_flags does.
std::string Writer::fold_check(int k, const std::string& acc, const std::string& suffix) {
    const int t = ir_.instr[ir_.output[k]].dtype;
    const std::string flags = "g_fold" + std::to_string(k);
    std::ostringstream s;
    if (!opt_.detailed_checks) {
        if (glsl_type(t).bits == 64) {
            s << "        precise double zf" << suffix << " = " << acc << " - " << acc << ";\n";
            s << "        " << flags << " |= uint(unpackDouble2x32(zf" << suffix << ") != uvec2(0u));\n";
        } else {
            s << "        precise float zf" << suffix << " = " << acc << " - " << acc << ";\n";
            s << "        " << flags << " |= uint(floatBitsToUint(zf" << suffix << ") != 0u);\n";
        }
        return s.str();
    }
    s << "        if (!bnan" << suffix << ") {\n";
    s << "            if (" << classify("isnan", t, acc) << ") " << flags << " |= binf" << suffix << " ? "
      << GPUPY_FP_NAN << "u : " << (GPUPY_FP_NAN | GPUPY_FP_INF) << "u;\n";
    s << "            else if (" << classify("isinf", t, acc) << " && !binf" << suffix << ") " << flags
      << " |= " << GPUPY_FP_INF << "u;\n";
    s << "        }\n";
    return s.str();
}

}  // namespace gpupy_glsl
