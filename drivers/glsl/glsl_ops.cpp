#include "glsl_ops.hpp"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "gpupy/driver.hpp"
#include "gpupy/op_meta.hpp"
#include "glsl_types.hpp"

namespace gpupy_glsl {

namespace {

bool is_table_op(int op) { return gpupy::op_is_operation(op); }
const gpupy_op_row& info(int op) { return *gpupy::op_row(op); }

// float32 ops computed by a library function: glsl_math's gp_<numpy_name>
// when it exists, else this driver's stand-in gpo_<numpy_name> if any.
bool is_math_op(int op) {
    if (!is_table_op(op)) return false;
    // The remainder family needs a library routine in GLSL (exact quotients
    // beyond 2^23) although C has a short formula for it.
    return (info(op).flags & GPUPY_OPF_MATH) || op == GPUPY_OP_FLOOR_DIVIDE || op == GPUPY_OP_REMAINDER ||
           op == GPUPY_OP_FMOD;
}

std::string suffix(int dtype) {
    const GlslType& f = glsl_type(dtype);
    std::string bits = f.bits == 64 ? "64" : "32";
    switch (f.kind) {
        case DtypeKind::Float: return "f" + bits;
        case DtypeKind::Signed: return "i" + bits;
        default: return "u" + bits;
    }
}

// A literal of `dtype` holding the small integer v.
std::string lit(int dtype, int v) {
    const GlslType& f = glsl_type(dtype);
    std::string s = std::to_string(v);
    switch (f.kind) {
        case DtypeKind::Bool: return v ? "true" : "false";
        case DtypeKind::Signed: return f.bits == 64 ? s + "l" : s;
        case DtypeKind::Unsigned: return f.bits == 64 ? s + "ul" : s + "u";
        case DtypeKind::Float: return f.bits == 64 ? s + ".0lf" : s + ".0";
    }
    return s;
}

// Exact float constants, written as bit patterns so no GLSL compiler
// rounds a decimal literal differently.
std::string exact_float(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return "uintBitsToFloat(" + std::to_string(bits) + "u)";
}
std::string exact_double(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return "packDouble2x32(uvec2(" + std::to_string(static_cast<uint32_t>(bits)) + "u, " +
           std::to_string(static_cast<uint32_t>(bits >> 32)) + "u))";
}

// Narrow integers are held in 32-bit registers; bring a result back into
// the dtype's range as a C cast to that dtype would (two's complement wrap).
std::string wrap(int dtype, const std::string& e) {
    switch (dtype) {
        case GPUPY_INT8: return "(((" + e + ") << 24) >> 24)";
        case GPUPY_INT16: return "(((" + e + ") << 16) >> 16)";
        case GPUPY_UINT8: return "((" + e + ") & 0xFFu)";
        case GPUPY_UINT16: return "((" + e + ") & 0xFFFFu)";
        default: return e;
    }
}

// NumPy's truth value of x: nonzero (NaN is true).
std::string truth(int dtype, const std::string& x) {
    switch (glsl_type(dtype).kind) {
        case DtypeKind::Bool: return x;
        case DtypeKind::Float: return "!(" + x + " == " + lit(dtype, 0) + ")";
        default: return "(" + x + " != " + lit(dtype, 0) + ")";
    }
}

std::string call(ShaderFunctions& fns, const std::string& fn, const std::vector<std::string>& a) {
    fns.use(fn);
    std::string s = fn + "(";
    for (size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + a[i];
    return s + ")";
}

std::string cast_expression(int in, int out, const std::string& a, ShaderFunctions& fns) {
    const GlslType& fi = glsl_type(in);
    const GlslType& fo = glsl_type(out);
    if (in == out) return a;
    if (fo.kind == DtypeKind::Bool) return "(" + truth(in, a) + ")";
    if (fi.kind == DtypeKind::Bool) return "(" + a + " ? " + lit(out, 1) + " : " + lit(out, 0) + ")";
    if (fo.kind == DtypeKind::Float) {
        // 64-bit integers: exact helpers (int_to_float.glsl).
        if (fi.bits == 64 && fi.kind != DtypeKind::Float) {
            const std::string from = fi.kind == DtypeKind::Signed ? "i64" : "u64";
            return call(fns, std::string("gpo_cvt_") + (fo.bits == 64 ? "f64_" : "f32_") + from, {a});
        }
        return std::string(fo.glsl_type) + "(" + a + ")";
    }
    if (fi.kind == DtypeKind::Float) {
        std::string s = suffix(in);
        switch (out) {
            case GPUPY_INT8: case GPUPY_INT16: case GPUPY_INT32:
                return wrap(out, call(fns, "gpo_cvt_i32_" + s, {a}));
            case GPUPY_UINT8: case GPUPY_UINT16:
                return wrap(out, "uint(" + call(fns, "gpo_cvt_i32_" + s, {a}) + ")");
            case GPUPY_UINT32: return call(fns, "gpo_cvt_u32_" + s, {a});
            case GPUPY_INT64: return call(fns, "gpo_cvt_i64_" + s, {a});
            case GPUPY_UINT64: return call(fns, "gpo_cvt_u64_" + s, {a});
        }
        return "";
    }
    // integer to integer: two's complement truncation or extension.
    if (fo.bits == 64) {
        // A 32-bit signed value is widened from explicit halves (low word,
        // sign word): llvmpipe was measured miscompiling int64_t(int) inside
        // 64-bit remainder code (-1 % 6 gave 3, as if zero-extended).
        std::string wide = fi.kind == DtypeKind::Signed && fi.bits < 64
                               ? "packInt2x32(ivec2(" + a + ", (" + a + ") >> 31))"
                               : (fi.kind == DtypeKind::Signed ? "int64_t(" + a + ")" : "uint64_t(" + a + ")");
        return std::string(fo.glsl_type) + "(" + wide + ")";
    }
    std::string narrow = a;
    if (fi.bits == 64) narrow = "uint(uint64_t(" + a + "))";  // low 32 bits
    return wrap(out, std::string(fo.glsl_type) + "(" + narrow + ")");
}

// fn(x) with x's sign kept (see FLOOR below), x itself when |x| is so
// large that it is an integer.
std::string rounded(const char* fn, const std::string& x, const std::string& s, bool f64, ShaderFunctions& fns) {
    const std::string big = f64 ? "4503599627370496.0lf" : "8388608.0";
    return "(abs(" + x + ") >= " + big + " ? " + x + " : " +
           call(fns, "gpo_copysign_" + s, {std::string(fn) + "(" + x + ")", x}) + ")";
}

std::string float_op(int op, int dt, const std::vector<std::string>& a, ShaderFunctions& fns,
                     const DeviceCaps& caps, unsigned never_nan_args) {
    const std::string s = suffix(dt);
    const bool f64 = glsl_type(dt).bits == 64;
    const std::string T = glsl_type(dt).glsl_type;
    auto isnan = [&](const std::string& x) { return call(fns, "gpo_isnan_" + s, {x}); };
    switch (op) {
        case GPUPY_OP_ADD: return "(" + a[0] + " + " + a[1] + ")";
        case GPUPY_OP_SUBTRACT: return "(" + a[0] + " - " + a[1] + ")";
        case GPUPY_OP_MULTIPLY: return "(" + a[0] + " * " + a[1] + ")";
        case GPUPY_OP_DIVIDE: return "(" + a[0] + " / " + a[1] + ")";
        case GPUPY_OP_NEGATIVE: return "(-" + a[0] + ")";
        case GPUPY_OP_POSITIVE: return a[0];
        case GPUPY_OP_ABSOLUTE: case GPUPY_OP_FABS: return call(fns, "gpo_abs_" + s, {a[0]});
        case GPUPY_OP_SIGN:
            return "(" + a[0] + " > " + lit(dt, 0) + " ? " + lit(dt, 1) + " : (" + a[0] + " < " + lit(dt, 0) +
                   " ? " + lit(dt, -1) + " : (" + a[0] + " == " + lit(dt, 0) + " ? " + lit(dt, 0) + " : " +
                   a[0] + ")))";
        case GPUPY_OP_SQUARE: return "(" + a[0] + " * " + a[0] + ")";
        case GPUPY_OP_RECIPROCAL: return "(" + lit(dt, 1) + " / " + a[0] + ")";
        case GPUPY_OP_SQRT: return "sqrt(" + a[0] + ")";
        case GPUPY_OP_DEG2RAD:
            return "(" + a[0] + " * " +
                   (f64 ? exact_double(M_PI / 180.0) : exact_float(static_cast<float>(M_PI) / 180.0f)) + ")";
        case GPUPY_OP_RAD2DEG:
            return "(" + a[0] + " * " +
                   (f64 ? exact_double(180.0 / M_PI) : exact_float(180.0f / static_cast<float>(M_PI))) + ")";
        // Rounding never changes the sign, but llvmpipe's double ceil/trunc/
        // roundEven return +0.0 for small negative inputs (NumPy: -0.0), so
        // the input's sign is put back.
        // Values of 2^52 (2^23) and more are integers already; llvmpipe's
        // double roundEven was measured changing odd ones in [2^52, 2^53).
        case GPUPY_OP_FLOOR: return rounded("floor", a[0], s, f64, fns);
        case GPUPY_OP_CEIL: return rounded("ceil", a[0], s, f64, fns);
        case GPUPY_OP_TRUNC: return rounded("trunc", a[0], s, f64, fns);
        case GPUPY_OP_RINT: return rounded("roundEven", a[0], s, f64, fns);
        // maximum/minimum: a NaN on either side propagates (a NaN `a` by the
        // test, a NaN `b` because the comparison fails); ties (+0 vs -0)
        // give the second operand. fmax/fmin ignore a NaN unless both are;
        // ties give the first. One isnan per op: these sit in hot loops,
        // and none where an operand cannot be NaN: a NaN `b` with `a`
        // NaN-free fails the comparison; a NaN `a` with `b` NaN-free fails
        // the reversed one (`b <= a` picks `b` on ties too).
        case GPUPY_OP_MAXIMUM:
        case GPUPY_OP_MINIMUM: {
            const char* lt = op == GPUPY_OP_MAXIMUM ? " > " : " < ";
            const char* ge = op == GPUPY_OP_MAXIMUM ? " >= " : " <= ";
            if (never_nan_args & 1u) return "((" + a[0] + lt + a[1] + ") ? " + a[0] + " : " + a[1] + ")";
            if (never_nan_args & 2u) return "((" + a[1] + ge + a[0] + ") ? " + a[1] + " : " + a[0] + ")";
            return "((" + a[0] + lt + a[1] + " || " + isnan(a[0]) + ") ? " + a[0] + " : " + a[1] + ")";
        }
        case GPUPY_OP_FMAX:
            return "((" + a[0] + " >= " + a[1] + " || " + isnan(a[1]) + ") ? " + a[0] + " : " + a[1] + ")";
        case GPUPY_OP_FMIN:
            return "((" + a[0] + " <= " + a[1] + " || " + isnan(a[1]) + ") ? " + a[0] + " : " + a[1] + ")";
        case GPUPY_OP_EQUAL: return "(" + a[0] + " == " + a[1] + ")";
        case GPUPY_OP_NOT_EQUAL: return "!(" + a[0] + " == " + a[1] + ")";  // NaN != x is true
        case GPUPY_OP_LESS: return "(" + a[0] + " < " + a[1] + ")";
        case GPUPY_OP_LESS_EQUAL: return "(" + a[0] + " <= " + a[1] + ")";
        case GPUPY_OP_GREATER: return "(" + a[0] + " > " + a[1] + ")";
        case GPUPY_OP_GREATER_EQUAL: return "(" + a[0] + " >= " + a[1] + ")";
        case GPUPY_OP_ISNAN: return isnan(a[0]);
        case GPUPY_OP_ISINF: return call(fns, "gpo_isinf_" + s, {a[0]});
        case GPUPY_OP_ISFINITE: return call(fns, "gpo_isfinite_" + s, {a[0]});
        case GPUPY_OP_SIGNBIT: return call(fns, "gpo_signbit_" + s, {a[0]});
        case GPUPY_OP_COPYSIGN: return call(fns, "gpo_copysign_" + s, {a[0], a[1]});
    }
    if (is_math_op(op) && !f64) {
        std::string fn = math_function_for(op, caps);
        if (!fn.empty()) return call(fns, fn, a);
    }
    (void)T;
    return "";
}

std::string integer_op(int op, int dt, const std::vector<std::string>& a, ShaderFunctions& fns) {
    const GlslType& f = glsl_type(dt);
    const bool is_signed = f.kind == DtypeKind::Signed;
    const bool wide = f.bits == 64;
    const std::string helper_suffix = is_signed ? (wide ? "i64" : "i32") : (wide ? "u64" : "u32");
    const std::string bits = wide ? (is_signed ? "64l" : "64ul") : (is_signed ? "32" : "32u");
    const std::string width = std::to_string(f.bits) + (wide ? "ul" : "u");
    const std::string U = wide ? "uint64_t" : "uint";
    const std::string zero = lit(dt, 0);
    (void)bits;
    switch (op) {
        case GPUPY_OP_ADD: return wrap(dt, a[0] + " + " + a[1]);
        case GPUPY_OP_SUBTRACT: return wrap(dt, a[0] + " - " + a[1]);
        case GPUPY_OP_MULTIPLY: return wrap(dt, a[0] + " * " + a[1]);
        case GPUPY_OP_FLOOR_DIVIDE:
            if (is_signed) return wrap(dt, call(fns, "gpo_floor_divide_" + helper_suffix, {a[0], a[1]}));
            return "(" + a[1] + " == " + zero + " ? " + zero + " : " + a[0] + " / " + a[1] + ")";
        case GPUPY_OP_REMAINDER:
            if (is_signed) return wrap(dt, call(fns, "gpo_remainder_" + helper_suffix, {a[0], a[1]}));
            return "(" + a[1] + " == " + zero + " ? " + zero + " : " + a[0] + " % " + a[1] + ")";
        case GPUPY_OP_FMOD:
            if (is_signed) return wrap(dt, call(fns, "gpo_fmod_" + helper_suffix, {a[0], a[1]}));
            return "(" + a[1] + " == " + zero + " ? " + zero + " : " + a[0] + " % " + a[1] + ")";
        // Signed integer power raises ValueError in NumPy for negative
        // exponents, which a shader cannot report: unsigned only.
        case GPUPY_OP_POWER:
            if (is_signed) return "";
            return wrap(dt, call(fns, "gpo_power_" + helper_suffix, {a[0], a[1]}));
        case GPUPY_OP_NEGATIVE: return wrap(dt, is_signed ? "-" + a[0] : zero + " - " + a[0]);
        case GPUPY_OP_POSITIVE: return a[0];
        case GPUPY_OP_ABSOLUTE:
            return is_signed ? wrap(dt, "(" + a[0] + " < " + zero + " ? -" + a[0] + " : " + a[0] + ")") : a[0];
        case GPUPY_OP_SIGN:
            if (!is_signed) return "(" + a[0] + " > " + zero + " ? " + lit(dt, 1) + " : " + zero + ")";
            return "(" + a[0] + " > " + zero + " ? " + lit(dt, 1) + " : (" + a[0] + " < " + zero + " ? " +
                   lit(dt, -1) + " : " + zero + "))";
        case GPUPY_OP_SQUARE: return wrap(dt, a[0] + " * " + a[0]);
        // NumPy 2 gives integers identity loops for these.
        case GPUPY_OP_FLOOR: case GPUPY_OP_CEIL: case GPUPY_OP_TRUNC: return a[0];
        case GPUPY_OP_MAXIMUM: case GPUPY_OP_FMAX: return "max(" + a[0] + ", " + a[1] + ")";
        case GPUPY_OP_MINIMUM: case GPUPY_OP_FMIN: return "min(" + a[0] + ", " + a[1] + ")";
        case GPUPY_OP_EQUAL: return "(" + a[0] + " == " + a[1] + ")";
        case GPUPY_OP_NOT_EQUAL: return "(" + a[0] + " != " + a[1] + ")";
        case GPUPY_OP_LESS: return "(" + a[0] + " < " + a[1] + ")";
        case GPUPY_OP_LESS_EQUAL: return "(" + a[0] + " <= " + a[1] + ")";
        case GPUPY_OP_GREATER: return "(" + a[0] + " > " + a[1] + ")";
        case GPUPY_OP_GREATER_EQUAL: return "(" + a[0] + " >= " + a[1] + ")";
        case GPUPY_OP_BITWISE_AND: return "(" + a[0] + " & " + a[1] + ")";
        case GPUPY_OP_BITWISE_OR: return "(" + a[0] + " | " + a[1] + ")";
        case GPUPY_OP_BITWISE_XOR: return "(" + a[0] + " ^ " + a[1] + ")";
        case GPUPY_OP_INVERT: return wrap(dt, "~" + a[0]);
        // NumPy: a shift by >= the dtype's width (or by a negative amount,
        // seen as huge unsigned) gives 0, and -1 for a negative value
        // shifted right. GLSL leaves such shifts undefined.
        case GPUPY_OP_LEFT_SHIFT:
            return "(" + U + "(" + a[1] + ") < " + width + " ? " + wrap(dt, a[0] + " << " + (wide ? "int(" + a[1] + ")" : a[1])) +
                   " : " + zero + ")";
        case GPUPY_OP_RIGHT_SHIFT:
            return "(" + U + "(" + a[1] + ") < " + width + " ? (" + a[0] + " >> " +
                   (wide ? "int(" + a[1] + ")" : a[1]) + ") : " +
                   (is_signed ? "(" + a[0] + " < " + zero + " ? " + lit(dt, -1) + " : " + zero + ")" : zero) + ")";
        case GPUPY_OP_ISNAN: case GPUPY_OP_ISINF: return "false";
        case GPUPY_OP_ISFINITE: return "true";
    }
    return "";
}

std::string bool_op(int op, const std::vector<std::string>& a) {
    switch (op) {
        case GPUPY_OP_ADD: case GPUPY_OP_MAXIMUM: case GPUPY_OP_FMAX: case GPUPY_OP_BITWISE_OR:
            return "(" + a[0] + " || " + a[1] + ")";
        case GPUPY_OP_MULTIPLY: case GPUPY_OP_MINIMUM: case GPUPY_OP_FMIN: case GPUPY_OP_BITWISE_AND:
            return "(" + a[0] + " && " + a[1] + ")";
        case GPUPY_OP_BITWISE_XOR: case GPUPY_OP_NOT_EQUAL: return "(" + a[0] + " != " + a[1] + ")";
        case GPUPY_OP_EQUAL: return "(" + a[0] + " == " + a[1] + ")";
        case GPUPY_OP_LESS: return "(!" + a[0] + " && " + a[1] + ")";
        case GPUPY_OP_LESS_EQUAL: return "(!" + a[0] + " || " + a[1] + ")";
        case GPUPY_OP_GREATER: return "(" + a[0] + " && !" + a[1] + ")";
        case GPUPY_OP_GREATER_EQUAL: return "(" + a[0] + " || !" + a[1] + ")";
        case GPUPY_OP_INVERT: return "(!" + a[0] + ")";
        case GPUPY_OP_ABSOLUTE: case GPUPY_OP_FLOOR: case GPUPY_OP_CEIL: case GPUPY_OP_TRUNC: return a[0];
        case GPUPY_OP_ISNAN: case GPUPY_OP_ISINF: return "false";
        case GPUPY_OP_ISFINITE: return "true";
    }
    return "";
}

}  // namespace

void ShaderFunctions::use(const std::string& name) {
    if (!GlslLibrary::embedded().include(name, order, seen)) missing = true;
}

int op_arity(int op) {
    if (op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST) return 0;
    return is_table_op(op) ? info(op).arity : -1;
}
const char* op_numpy_name(int op) { return is_table_op(op) ? info(op).numpy_name : "?"; }
const char* op_enum_name(int op) {
    switch (op) {
        case GPUPY_OP_LOAD: return "LOAD";
        case GPUPY_OP_INDEX: return "INDEX";
        case GPUPY_OP_CONST: return "CONST";
    }
    return is_table_op(op) ? info(op).name : "?";
}

int op_result_dtype(int op, int in_dtype) {
    if (is_table_op(op) && (info(op).flags & GPUPY_OPF_PREDICATE)) return GPUPY_BOOL;
    return in_dtype;
}

std::string math_function_for(int op, const DeviceCaps& caps) {
    if (!is_math_op(op)) return "";
    const GlslLibrary& lib = GlslLibrary::embedded();
    std::string accurate = std::string("gp_") + info(op).numpy_name;
    if (caps.glsl_math && lib.has(accurate)) return accurate;
    std::string standin = std::string("gpo_") + info(op).numpy_name;
    if (lib.has(standin)) return standin;
    return "";
}

std::string op_expression(int op, int in_dtype, int out_dtype, const std::vector<std::string>& args,
                          ShaderFunctions& fns, const DeviceCaps& caps, unsigned never_nan_args) {
    if (!dtype_valid(in_dtype) || !dtype_valid(out_dtype)) return "";
    for (int dt : {in_dtype, out_dtype}) {
        if (glsl_type(dt).needs_int64 && !caps.int64) return "";
        if (glsl_type(dt).needs_fp64 && !caps.fp64) return "";
    }
    if (op == GPUPY_OP_CAST) return cast_expression(in_dtype, out_dtype, args[0], fns);
    if (!is_table_op(op) || static_cast<int>(args.size()) != info(op).arity) return "";
    if (out_dtype != op_result_dtype(op, in_dtype)) return "";
    if (op == GPUPY_OP_WHERE) return "(" + args[0] + " ? " + args[1] + " : " + args[2] + ")";
    if (op == GPUPY_OP_LOGICAL_AND || op == GPUPY_OP_LOGICAL_OR || op == GPUPY_OP_LOGICAL_XOR) {
        std::string x = truth(in_dtype, args[0]), y = truth(in_dtype, args[1]);
        const char* sym = op == GPUPY_OP_LOGICAL_AND ? " && " : op == GPUPY_OP_LOGICAL_OR ? " || " : " != ";
        return "((" + x + ")" + sym + "(" + y + "))";
    }
    if (op == GPUPY_OP_LOGICAL_NOT) return "!(" + truth(in_dtype, args[0]) + ")";
    switch (glsl_type(in_dtype).kind) {
        case DtypeKind::Float: return float_op(op, in_dtype, args, fns, caps, never_nan_args);
        case DtypeKind::Bool: return bool_op(op, args);
        default: return integer_op(op, in_dtype, args, fns);
    }
}

bool op_supported(int op, int dtype, const DeviceCaps& caps) {
    if (!dtype_valid(dtype)) return false;
    if (glsl_type(dtype).needs_int64 && !caps.int64) return false;
    if (glsl_type(dtype).needs_fp64 && !caps.fp64) return false;
    if (op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST) return true;
    ShaderFunctions fns;
    if (op == GPUPY_OP_CAST) {
        for (int out = 0; out < GPUPY_NUM_DTYPES; ++out) {
            if (!op_supported(GPUPY_OP_LOAD, out, caps)) continue;
            if (op_expression(op, dtype, out, {"x"}, fns, caps).empty()) return false;
        }
        return !fns.missing;
    }
    if (!is_table_op(op)) return false;
    std::vector<std::string> args(info(op).arity, "x");
    if (op == GPUPY_OP_WHERE) args[0] = "c";
    return !op_expression(op, dtype, op_result_dtype(op, dtype), args, fns, caps).empty() && !fns.missing;
}

bool expression_supported(int op, int in_dtype, int out_dtype, const DeviceCaps& caps) {
    if (op < 0 || op >= GPUPY_NUM_OPS || !dtype_valid(in_dtype) || !dtype_valid(out_dtype)) return false;
    // 0: not asked yet, 1: no, 2: yes. Answers never change, so a race
    // only computes one twice.
    static std::atomic<int8_t> known[GPUPY_NUM_OPS][GPUPY_NUM_DTYPES][GPUPY_NUM_DTYPES][8];
    const int c = (caps.fp64 ? 1 : 0) | (caps.int64 ? 2 : 0) | (caps.glsl_math ? 4 : 0);
    std::atomic<int8_t>& slot = known[op][in_dtype][out_dtype][c];
    int8_t v = slot.load(std::memory_order_relaxed);
    if (v == 0) {
        bool ok = false;
        if (is_table_op(op)) {
            ShaderFunctions fns;
            std::vector<std::string> args(info(op).arity, "x");
            ok = !op_expression(op, in_dtype, out_dtype, args, fns, caps).empty() && !fns.missing;
        }
        v = ok ? 2 : 1;
        slot.store(v, std::memory_order_relaxed);
    }
    return v == 2;
}

int op_cost(int op, int in_dtype) {
    if (op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST) return 1;
    if (op < 0 || op >= GPUPY_NUM_OPS || !dtype_valid(in_dtype)) return 1;
    static std::atomic<int> known[GPUPY_NUM_OPS][GPUPY_NUM_DTYPES];  // 0: not computed yet
    std::atomic<int>& slot = known[op][in_dtype];
    if (int v = slot.load(std::memory_order_relaxed)) return v;
    // Calls into a library function: count its size in lines as a proxy.
    ShaderFunctions fns;
    std::vector<std::string> args(op_arity(op) > 0 ? op_arity(op) : 1, "x");
    int out = op == GPUPY_OP_CAST ? GPUPY_FLOAT32 : op_result_dtype(op, in_dtype);
    DeviceCaps all{true, true};
    op_expression(op, in_dtype, out, args, fns, all);
    int cost = 1;
    for (const std::string& fn : fns.order) {
        const std::string& text = GlslLibrary::embedded().text(fn);
        for (char c : text) cost += c == ';';
    }
    slot.store(cost, std::memory_order_relaxed);
    return cost;
}

}  // namespace gpupy_glsl
