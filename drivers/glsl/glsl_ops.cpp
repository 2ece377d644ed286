#include "glsl_ops.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <cstdint>

#include "gpupy/driver.hpp"
#include "gpupy/op_meta.hpp"
#include "glsl_types.hpp"

namespace gpupy_glsl {

namespace {

bool is_table_op(int op) { return gpupy::op_is_operation(op); }
const gpupy_op_row& info(int op) { return *gpupy::op_row(op); }

// float32 ops computed by a library function: glsl_math's gp_<numpy_name>.
// There are no builtin-based substitutes: GLSL leaves the accuracy of
// exp/log/pow/sin... to the implementation (exp: 3 + 2|x| ulp, sin: none),
// so an op glsl_math lacks is not declared and falls back to the host.
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
std::string exact_float(float v) { return "uintBitsToFloat(" + std::to_string(gpupy::bits_of(v)) + "u)"; }
std::string exact_double(double v) {
    const uint64_t bits = gpupy::bits_of(v);
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

// --- the snippets: one function per row of ops.def -------------------------------------
//
// Each gets its operands' GLSL and returns the expression computing the op
// for the operand dtype `in`, exactly as NumPy does, or "" where the driver
// cannot (a dtype kind NumPy has no loop for, or no exact formula here).

struct Snippet {
    int op, in, out;
    const std::vector<std::string>& a;
    ShaderFunctions& fns;
    unsigned never_nan;  // bit k: a[k] is never NaN (value_facts.hpp)
    const DeviceCaps& caps;

    DtypeKind kind() const { return glsl_type(in).kind; }
    bool is_float() const { return kind() == DtypeKind::Float; }
    bool is_bool() const { return kind() == DtypeKind::Bool; }
    bool is_signed() const { return kind() == DtypeKind::Signed; }
    bool f64() const { return glsl_type(in).bits == 64; }
    std::string s() const { return suffix(in); }
    std::string zero() const { return lit(in, 0); }
    std::string fn(const std::string& name, const std::vector<std::string>& args) const { return call(fns, name, args); }
    // Integer helpers of glsl_runtime/ are named by signedness and width.
    std::string int_helper(const char* name) const {
        const bool wide = glsl_type(in).bits == 64;
        return std::string("gpo_") + name + "_" + (is_signed() ? (wide ? "i64" : "i32") : (wide ? "u64" : "u32"));
    }
    // A float32 math-library op: glsl_math's gp_<name>.
    std::string library() const {
        if (!is_float() || f64() || !is_math_op(op)) return "";
        const std::string name = math_function_for(op);
        return name.empty() ? "" : fn(name, a);
    }
    std::string binary(const char* sym) const { return "(" + a[0] + sym + a[1] + ")"; }
};

using SnippetFn = std::string (*)(const Snippet&);

std::string snippet_ADD(const Snippet& s) {
    if (s.is_float()) return s.binary(" + ");
    if (s.is_bool()) return s.binary(" || ");
    return wrap(s.in, s.a[0] + " + " + s.a[1]);
}
std::string snippet_SUBTRACT(const Snippet& s) {
    if (s.is_float()) return s.binary(" - ");
    if (s.is_bool()) return "";
    return wrap(s.in, s.a[0] + " - " + s.a[1]);
}
std::string snippet_MULTIPLY(const Snippet& s) {
    if (s.is_float()) return s.binary(" * ");
    if (s.is_bool()) return s.binary(" && ");
    return wrap(s.in, s.a[0] + " * " + s.a[1]);
}
// a / b as IEEE rounds it: GLSL's operator where the device was measured
// exact, else glsl_math's correction for float32; float64 is then left to
// the host (no float64 routine). A zero divisor gives IEEE's infinity or
// NaN explicitly (gpo_quotient: GLSL leaves that case undefined).
std::string quotient(const Snippet& s, const std::string& a, const std::string& b) {
    std::string q;
    if (s.f64()) q = s.caps.f64_division_exact ? "(" + a + " / " + b + ")" : "";
    else q = s.caps.f32_division_exact ? "(" + a + " / " + b + ")" : s.fn("gp__div_rn", {a, b});
    return q.empty() ? q : s.fn("gpo_quotient_" + s.s(), {a, b, q});
}
std::string snippet_DIVIDE(const Snippet& s) { return s.is_float() ? quotient(s, s.a[0], s.a[1]) : ""; }
// The division family. Floats: exact quotients beyond 2^23 need a library
// routine (glsl_math). Signed: a glsl_runtime helper (NumPy's rounding and
// signs, 0 for a zero divisor). Unsigned: the GLSL operator, NumPy's 0 for a
// zero divisor.
std::string division(const Snippet& s, const char* helper, const char* glsl_op) {
    if (s.is_float()) return s.library();
    if (s.is_bool()) return "";
    if (s.is_signed()) return wrap(s.in, s.fn(s.int_helper(helper), {s.a[0], s.a[1]}));
    return "(" + s.a[1] + " == " + s.zero() + " ? " + s.zero() + " : " + s.a[0] + glsl_op + s.a[1] + ")";
}
std::string snippet_FLOOR_DIVIDE(const Snippet& s) { return division(s, "floor_divide", " / "); }
std::string snippet_REMAINDER(const Snippet& s) { return division(s, "remainder", " % "); }
std::string snippet_FMOD(const Snippet& s) { return division(s, "fmod", " % "); }
// Signed integer power raises ValueError in NumPy for negative exponents,
// which a shader cannot report: unsigned only.
std::string snippet_POWER(const Snippet& s) {
    if (s.is_float()) return s.library();
    if (s.is_bool() || s.is_signed()) return "";
    return wrap(s.in, s.fn(s.int_helper("power"), {s.a[0], s.a[1]}));
}
std::string snippet_NEGATIVE(const Snippet& s) {
    if (s.is_float()) return "(-" + s.a[0] + ")";
    if (s.is_bool()) return "";
    return wrap(s.in, s.is_signed() ? "-" + s.a[0] : s.zero() + " - " + s.a[0]);
}
std::string snippet_POSITIVE(const Snippet& s) { return s.is_bool() ? "" : s.a[0]; }
std::string snippet_ABSOLUTE(const Snippet& s) {
    if (s.is_float()) return s.fn("gpo_abs_" + s.s(), {s.a[0]});
    if (s.is_signed()) return wrap(s.in, "(" + s.a[0] + " < " + s.zero() + " ? -" + s.a[0] + " : " + s.a[0] + ")");
    return s.a[0];
}
std::string snippet_FABS(const Snippet& s) { return s.is_float() ? s.fn("gpo_abs_" + s.s(), {s.a[0]}) : ""; }
std::string snippet_SIGN(const Snippet& s) {
    const std::string& x = s.a[0];
    const int t = s.in;
    if (s.is_float())
        return "(" + x + " > " + lit(t, 0) + " ? " + lit(t, 1) + " : (" + x + " < " + lit(t, 0) + " ? " + lit(t, -1) +
               " : (" + x + " == " + lit(t, 0) + " ? " + lit(t, 0) + " : " + x + ")))";
    if (s.is_bool()) return "";
    if (!s.is_signed()) return "(" + x + " > " + s.zero() + " ? " + lit(t, 1) + " : " + s.zero() + ")";
    return "(" + x + " > " + s.zero() + " ? " + lit(t, 1) + " : (" + x + " < " + s.zero() + " ? " + lit(t, -1) + " : " +
           s.zero() + "))";
}
std::string snippet_SQUARE(const Snippet& s) {
    if (s.is_float()) return "(" + s.a[0] + " * " + s.a[0] + ")";
    if (s.is_bool()) return "";
    return wrap(s.in, s.a[0] + " * " + s.a[0]);
}
std::string snippet_RECIPROCAL(const Snippet& s) { return s.is_float() ? quotient(s, lit(s.in, 1), s.a[0]) : ""; }
// sqrt of a negative number is NaN explicitly (GLSL leaves it undefined).
// Where the device's root is inexact, a correctly rounded routine: glsl_math's
// for float32, glsl_runtime/float64_roots.glsl's for float64.
std::string snippet_SQRT(const Snippet& s) {
    if (!s.is_float()) return "";
    std::string root;
    if (s.f64()) root = s.caps.f64_sqrt_exact ? "sqrt(" + s.a[0] + ")" : s.fn("gpo_sqrt_rn_f64", s.a);
    else root = s.caps.f32_sqrt_exact ? "sqrt(" + s.a[0] + ")" : s.fn("gp__sqrt_rn", s.a);
    return root.empty() ? root : s.fn("gpo_sqrt_guard_" + s.s(), {s.a[0], root});
}
// The math-library functions: glsl_math (float32); float64 has no GLSL
// library and runs on the host.
std::string snippet_CBRT(const Snippet& s) { return s.library(); }
std::string snippet_EXP(const Snippet& s) { return s.library(); }
std::string snippet_EXP2(const Snippet& s) { return s.library(); }
std::string snippet_EXPM1(const Snippet& s) { return s.library(); }
std::string snippet_LOG(const Snippet& s) { return s.library(); }
std::string snippet_LOG2(const Snippet& s) { return s.library(); }
std::string snippet_LOG10(const Snippet& s) { return s.library(); }
std::string snippet_LOG1P(const Snippet& s) { return s.library(); }
std::string snippet_LOGADDEXP(const Snippet& s) { return s.library(); }
std::string snippet_LOGADDEXP2(const Snippet& s) { return s.library(); }
std::string snippet_SIN(const Snippet& s) { return s.library(); }
std::string snippet_COS(const Snippet& s) { return s.library(); }
std::string snippet_TAN(const Snippet& s) { return s.library(); }
std::string snippet_ARCSIN(const Snippet& s) { return s.library(); }
std::string snippet_ARCCOS(const Snippet& s) { return s.library(); }
std::string snippet_ARCTAN(const Snippet& s) { return s.library(); }
std::string snippet_ARCTAN2(const Snippet& s) { return s.library(); }
std::string snippet_HYPOT(const Snippet& s) { return s.library(); }
std::string snippet_SINH(const Snippet& s) { return s.library(); }
std::string snippet_COSH(const Snippet& s) { return s.library(); }
std::string snippet_TANH(const Snippet& s) { return s.library(); }
std::string snippet_ARCSINH(const Snippet& s) { return s.library(); }
std::string snippet_ARCCOSH(const Snippet& s) { return s.library(); }
std::string snippet_ARCTANH(const Snippet& s) { return s.library(); }
std::string snippet_DEG2RAD(const Snippet& s) {
    if (!s.is_float()) return "";
    return "(" + s.a[0] + " * " + (s.f64() ? exact_double(M_PI / 180.0) : exact_float(static_cast<float>(M_PI) / 180.0f)) + ")";
}
std::string snippet_RAD2DEG(const Snippet& s) {
    if (!s.is_float()) return "";
    return "(" + s.a[0] + " * " + (s.f64() ? exact_double(180.0 / M_PI) : exact_float(180.0f / static_cast<float>(M_PI))) + ")";
}
// Rounding never changes the sign, but llvmpipe's double ceil/trunc/
// roundEven return +0.0 for small negative inputs (NumPy: -0.0), so the
// input's sign is put back. Values of 2^52 (2^23) and more are integers
// already; llvmpipe's double roundEven was measured changing odd ones in
// [2^52, 2^53). NumPy 2 gives integers and bools identity loops for floor,
// ceil and trunc.
std::string snippet_FLOOR(const Snippet& s) { return s.is_float() ? rounded("floor", s.a[0], s.s(), s.f64(), s.fns) : s.a[0]; }
std::string snippet_CEIL(const Snippet& s) { return s.is_float() ? rounded("ceil", s.a[0], s.s(), s.f64(), s.fns) : s.a[0]; }
std::string snippet_TRUNC(const Snippet& s) { return s.is_float() ? rounded("trunc", s.a[0], s.s(), s.f64(), s.fns) : s.a[0]; }
std::string snippet_RINT(const Snippet& s) { return s.is_float() ? rounded("roundEven", s.a[0], s.s(), s.f64(), s.fns) : ""; }
// maximum/minimum: a NaN on either side propagates; ties (+0 vs -0) give
// the second operand. fmax/fmin ignore a NaN unless both are; ties give the
// first. One isnan per op (these sit in hot loops), on the operand that may
// be NaN, and none where neither can be. A NaN-free side does not make the
// other side's test redundant: Mesa's NIR rewrites a bare `(a > b) ? a : b`
// into fmax/fmin, which return the non-NaN operand (IEEE maxNum), `precise`
// or not (found by the differential fuzzer: maximum(0, nan) gave 0).
std::string extremum(const Snippet& s, bool max) {
    if (s.is_bool()) return s.binary(max ? " || " : " && ");
    if (!s.is_float()) return std::string(max ? "max(" : "min(") + s.a[0] + ", " + s.a[1] + ")";
    const std::string pick_a = s.a[0] + (max ? " > " : " < ") + s.a[1];
    const std::string tail = ") ? " + s.a[0] + " : " + s.a[1] + ")";
    if ((s.never_nan & 3u) == 3u) return "((" + pick_a + tail;
    // Only `a` is NaN-free: `b` wins when it is NaN. Otherwise `a` wins when
    // it is NaN, and a NaN `b` fails the comparison.
    if (s.never_nan & 1u) return "((" + pick_a + " && !" + s.fn("gpo_isnan_" + s.s(), {s.a[1]}) + tail;
    return "((" + pick_a + " || " + s.fn("gpo_isnan_" + s.s(), {s.a[0]}) + tail;
}
std::string extremum_ignoring_nan(const Snippet& s, bool max) {
    if (s.is_bool()) return s.binary(max ? " || " : " && ");
    if (!s.is_float()) return std::string(max ? "max(" : "min(") + s.a[0] + ", " + s.a[1] + ")";
    return "((" + s.a[0] + (max ? " >= " : " <= ") + s.a[1] + " || " + s.fn("gpo_isnan_" + s.s(), {s.a[1]}) + ") ? " +
           s.a[0] + " : " + s.a[1] + ")";
}
std::string snippet_MAXIMUM(const Snippet& s) { return extremum(s, true); }
std::string snippet_MINIMUM(const Snippet& s) { return extremum(s, false); }
std::string snippet_FMAX(const Snippet& s) { return extremum_ignoring_nan(s, true); }
std::string snippet_FMIN(const Snippet& s) { return extremum_ignoring_nan(s, false); }
// Comparisons; bools as 0 < 1.
std::string snippet_EQUAL(const Snippet& s) { return s.binary(" == "); }
std::string snippet_NOT_EQUAL(const Snippet& s) {
    return s.is_float() ? "!(" + s.a[0] + " == " + s.a[1] + ")" : s.binary(" != ");  // NaN != x is true
}
std::string snippet_LESS(const Snippet& s) { return s.is_bool() ? "(!" + s.a[0] + " && " + s.a[1] + ")" : s.binary(" < "); }
std::string snippet_LESS_EQUAL(const Snippet& s) {
    return s.is_bool() ? "(!" + s.a[0] + " || " + s.a[1] + ")" : s.binary(" <= ");
}
std::string snippet_GREATER(const Snippet& s) {
    return s.is_bool() ? "(" + s.a[0] + " && !" + s.a[1] + ")" : s.binary(" > ");
}
std::string snippet_GREATER_EQUAL(const Snippet& s) {
    return s.is_bool() ? "(" + s.a[0] + " || !" + s.a[1] + ")" : s.binary(" >= ");
}
// Logic on any dtype: operands are tested against zero (NaN is true).
std::string logical(const Snippet& s, const char* sym) {
    return "((" + truth(s.in, s.a[0]) + ")" + sym + "(" + truth(s.in, s.a[1]) + "))";
}
std::string snippet_LOGICAL_AND(const Snippet& s) { return logical(s, " && "); }
std::string snippet_LOGICAL_OR(const Snippet& s) { return logical(s, " || "); }
std::string snippet_LOGICAL_XOR(const Snippet& s) { return logical(s, " != "); }
std::string snippet_LOGICAL_NOT(const Snippet& s) { return "!(" + truth(s.in, s.a[0]) + ")"; }
// Bits: integers and bools.
std::string snippet_BITWISE_AND(const Snippet& s) { return s.is_float() ? "" : s.binary(s.is_bool() ? " && " : " & "); }
std::string snippet_BITWISE_OR(const Snippet& s) { return s.is_float() ? "" : s.binary(s.is_bool() ? " || " : " | "); }
std::string snippet_BITWISE_XOR(const Snippet& s) { return s.is_float() ? "" : s.binary(s.is_bool() ? " != " : " ^ "); }
std::string snippet_INVERT(const Snippet& s) {
    if (s.is_float()) return "";
    if (s.is_bool()) return "(!" + s.a[0] + ")";
    return wrap(s.in, "~" + s.a[0]);
}
// NumPy: a shift by >= the dtype's width (or by a negative amount, seen as
// huge unsigned) gives 0, and -1 for a negative value shifted right. GLSL
// leaves such shifts undefined.
std::string shift_guard(const Snippet& s) {
    const bool wide = glsl_type(s.in).bits == 64;
    return std::string("(") + (wide ? "uint64_t" : "uint") + "(" + s.a[1] + ") < " + std::to_string(glsl_type(s.in).bits) +
           (wide ? "ul" : "u") + " ? ";
}
std::string shift_amount(const Snippet& s) { return glsl_type(s.in).bits == 64 ? "int(" + s.a[1] + ")" : s.a[1]; }
std::string snippet_LEFT_SHIFT(const Snippet& s) {
    if (s.is_float() || s.is_bool()) return "";
    return shift_guard(s) + wrap(s.in, s.a[0] + " << " + shift_amount(s)) + " : " + s.zero() + ")";
}
std::string snippet_RIGHT_SHIFT(const Snippet& s) {
    if (s.is_float() || s.is_bool()) return "";
    const std::string beyond =
        s.is_signed() ? "(" + s.a[0] + " < " + s.zero() + " ? " + lit(s.in, -1) + " : " + s.zero() + ")" : s.zero();
    return shift_guard(s) + "(" + s.a[0] + " >> " + shift_amount(s) + ") : " + beyond + ")";
}
// Float classification; integers and bools are never NaN or infinite.
std::string snippet_ISNAN(const Snippet& s) { return s.is_float() ? s.fn("gpo_isnan_" + s.s(), {s.a[0]}) : "false"; }
std::string snippet_ISINF(const Snippet& s) { return s.is_float() ? s.fn("gpo_isinf_" + s.s(), {s.a[0]}) : "false"; }
std::string snippet_ISFINITE(const Snippet& s) { return s.is_float() ? s.fn("gpo_isfinite_" + s.s(), {s.a[0]}) : "true"; }
std::string snippet_SIGNBIT(const Snippet& s) { return s.is_float() ? s.fn("gpo_signbit_" + s.s(), {s.a[0]}) : ""; }
std::string snippet_COPYSIGN(const Snippet& s) {
    return s.is_float() ? s.fn("gpo_copysign_" + s.s(), {s.a[0], s.a[1]}) : "";
}
// A boolean or an integer made a float is made opaque to the compiler: the
// comparison of a value with itself folds to a known boolean (exactly), and
// Mesa then simplified `0.0 * x` to 0 for NaN or infinite x, `precise` or
// not -- an infinity or NaN lost through a folded constant, which GLSL
// permits. Adding a zero the compiler cannot know (a uniform's, +0.0:
// an integer converts to no -0.0) keeps every later float operation a
// runtime one.
std::string snippet_CAST(const Snippet& s) {
    std::string c = cast_expression(s.in, s.out, s.a[0], s.fns);
    if (c.empty() || s.in == s.out || glsl_type(s.out).kind != DtypeKind::Float || s.is_float()) return c;
    return "(" + c + " + " + glsl_type(s.out).glsl_type + "(gpo_opaque_zero))";
}
std::string snippet_WHERE(const Snippet& s) { return "(" + s.a[0] + " ? " + s.a[1] + " : " + s.a[2] + ")"; }
// A texel read, not an expression of registers: the code generator writes
// it as it writes a LOAD (glsl_codegen.cpp).
std::string snippet_GATHER(const Snippet&) { return ""; }

// Every row of ops.def must have its snippet: a row without one fails to
// build (snippet_<NAME> undeclared), never becomes a silent fallback.
constexpr std::array<SnippetFn, GPUPY_NUM_OPS> snippet_table() {
    std::array<SnippetFn, GPUPY_NUM_OPS> t{};
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) t[CODE] = &snippet_##NAME;
#include "gpupy/ops.def"
#undef GPUPY_OP
    return t;
}
constexpr std::array<SnippetFn, GPUPY_NUM_OPS> kSnippets = snippet_table();

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

std::string math_function_for(int op) {
    if (!is_math_op(op)) return "";
    const GlslLibrary& lib = GlslLibrary::embedded();
    std::string accurate = std::string("gp_") + info(op).numpy_name;
    return lib.has(accurate) ? accurate : "";
}

// Whether values of this dtype are computed on the device at all
// (float16 is computed in float32: where float32 is).
static bool dtype_offered(int dtype, const DeviceCaps& caps) {
    const GlslType& t = glsl_type(dtype);
    if (t.needs_int64 && !caps.int64) return false;
    if (t.needs_fp64 && !caps.fp64) return false;
    return (dtype != GPUPY_FLOAT32 && dtype != GPUPY_FLOAT16) || caps.float32;
}

namespace {

// Ops whose float result is one of their float16 operands' values, or an
// integer no larger than them, or a sign change of one: a float16 value
// already, nothing to round.
bool keeps_float16_values(int op) {
    switch (op) {
        case GPUPY_OP_WHERE: case GPUPY_OP_NEGATIVE: case GPUPY_OP_POSITIVE: case GPUPY_OP_ABSOLUTE:
        case GPUPY_OP_FABS: case GPUPY_OP_COPYSIGN: case GPUPY_OP_SIGN: case GPUPY_OP_MAXIMUM: case GPUPY_OP_MINIMUM:
        case GPUPY_OP_FMAX: case GPUPY_OP_FMIN: case GPUPY_OP_FLOOR: case GPUPY_OP_CEIL: case GPUPY_OP_TRUNC:
        case GPUPY_OP_RINT:
            return true;
    }
    return false;
}

// An op with float16 operands or result, as NumPy's float16 loops compute
// it: on float32 values (a float16 register holds one exactly), the float
// result rounded to float16. A cast to float16 rounds once: from float64
// directly (through float32 it would round twice), from the others through
// float32 (exact for every integer float16 can hold; the rest overflow
// either way).
std::string float16_expression(int op, int in, int out, const std::vector<std::string>& args, ShaderFunctions& fns,
                               const DeviceCaps& caps, unsigned never_nan_args) {
    auto wide = [](int t) { return t == GPUPY_FLOAT16 ? static_cast<int>(GPUPY_FLOAT32) : t; };
    if (op == GPUPY_OP_CAST && out == GPUPY_FLOAT16) {
        if (in == GPUPY_FLOAT16) return args[0];
        if (in == GPUPY_FLOAT64) return call(fns, "gpo_f16_from_f64", args);
    }
    std::string e = op_expression(op, wide(in), wide(out), args, fns, caps, never_nan_args);
    if (e.empty() || out != GPUPY_FLOAT16 || (op != GPUPY_OP_CAST && keeps_float16_values(op))) return e;
    return call(fns, "gpo_round_f16", {e});
}

}  // namespace

std::string op_expression(int op, int in_dtype, int out_dtype, const std::vector<std::string>& args,
                          ShaderFunctions& fns, const DeviceCaps& caps, unsigned never_nan_args) {
    if (!dtype_valid(in_dtype) || !dtype_valid(out_dtype)) return "";
    for (int dt : {in_dtype, out_dtype}) {
        if (!dtype_offered(dt, caps)) return "";
    }
    if (!is_table_op(op) || static_cast<int>(args.size()) != info(op).arity) return "";
    if (op != GPUPY_OP_CAST && out_dtype != op_result_dtype(op, in_dtype)) return "";
    if (in_dtype == GPUPY_FLOAT16 || out_dtype == GPUPY_FLOAT16)
        return float16_expression(op, in_dtype, out_dtype, args, fns, caps, never_nan_args);
    return kSnippets[op](Snippet{op, in_dtype, out_dtype, args, fns, never_nan_args, caps});
}

bool op_supported(int op, int dtype, const DeviceCaps& caps) {
    if (!dtype_valid(dtype) || !dtype_offered(dtype, caps)) return false;
    if (op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST) return true;
    if (op == GPUPY_OP_GATHER) return caps.int64;  // its index is an INT64 value
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
    static std::atomic<int8_t> known[GPUPY_NUM_OPS][GPUPY_NUM_DTYPES][GPUPY_NUM_DTYPES][128];
    const int c = (caps.fp64 ? 1 : 0) | (caps.int64 ? 2 : 0) | (caps.float32 ? 4 : 0) |
                  (caps.f32_division_exact ? 8 : 0) | (caps.f32_sqrt_exact ? 16 : 0) |
                  (caps.f64_division_exact ? 32 : 0) | (caps.f64_sqrt_exact ? 64 : 0);
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
