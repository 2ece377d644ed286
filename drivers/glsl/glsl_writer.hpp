// The writer of a generated shader's source (glsl_codegen.cpp), shared
// with the file that writes its floating-point checks (glsl_checks.cpp).
#ifndef GPUPY_GLSL_GLSL_WRITER_HPP
#define GPUPY_GLSL_GLSL_WRITER_HPP

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "glsl_codegen.hpp"
#include "glsl_ops.hpp"
#include "glsl_types.hpp"
#include "loop_rolling.hpp"

namespace gpupy_glsl {

class Writer {
public:
    Writer(const gpupy_ir& ir, const ParamLayout& layout, bool wide, const CodegenOptions& opt)
        : ir_(ir), layout_(layout), wide_(wide), opt_(opt), idx_(wide ? "int64_t" : "int") {}

    std::string generate(GeneratedShader& out);

private:
    std::string p(int slot) const { return "u_p[" + std::to_string(slot) + "]"; }
    // Instruction i's value: its register, or the name the rolled loop
    // gives it (the carry).
    std::string reg(int i) const {
        return alias_[static_cast<size_t>(i)].empty() ? "t" + std::to_string(i) : alias_[static_cast<size_t>(i)];
    }
    // Operand `arg` of instruction `in` as its operation reads it. A
    // GPU-like build (CodegenOptions::gpu_like) flushes the float32
    // operands and result of every operation but a selection, as NVIDIA's
    // arithmetic does; leaves and copies keep the bits.
    bool flushes(const gpupy_ir_instr& in) const {
        return opt_.gpu_like.flush_subnormals && in.op != GPUPY_OP_WHERE;
    }
    std::string operand(const gpupy_ir_instr& in, int arg) {
        return flushes(in) && ir_.instr[arg].dtype == GPUPY_FLOAT32 ? flushed(reg(arg)) : reg(arg);
    }
    // A float32 expression flushed (glsl_math's gp__ftz).
    std::string flushed(const std::string& e) {
        fns_.use("gp__ftz");
        return "gp__ftz(" + e + ")";
    }
    std::string map_index(int i);
    std::string remapped_coordinate(const gpupy_ir_instr& in, int d, const std::string& n, int s);
    std::string load(int i, int& unit);
    std::string gather(int i, int& unit);
    std::string fetch(int i, int& unit, const std::string& block_elems);
    std::string check(int i, int k, const std::string& flags);
    std::string instruction(int i, const std::vector<uint8_t>& facts, int& unit, GeneratedShader& out);
    std::string rolled_loop(const std::vector<uint8_t>& facts, int& unit, GeneratedShader& out);
    // A float classification function of glsl_runtime/float_bits.glsl
    // ("isnan", "isinf", "isfinite") applied to x, of dtype `dtype`.
    std::string classify(const char* what, int dtype, const std::string& x) {
        const std::string fn = std::string("gpo_") + what + (glsl_type(dtype).bits == 64 ? "_f64" : "_f32");
        fns_.use(fn);
        return fn + "(" + x + ")";
    }
    // Check slot k's copy in the rolled loop, or -1 outside the loop: the
    // full form keeps every copy's flags in the body's slot's array (copy
    // 0); the quick form ORs them into the body's slot, a plain flag as
    // outside the loop (-1), and never writes the other copies' slots.
    int rolled_check(int k) const {
        if (!loop_.found() || loop_.check_stride <= 0) return -1;
        const int i = ir_.check[k];
        if (i < loop_.begin || i >= loop_.end()) return -1;
        const int copy = (i - loop_.begin) / loop_.length;
        return !opt_.detailed_checks && copy == 0 ? -1 : copy;
    }
    bool fold_checked(int k) const { return ir_.reduce_op != GPUPY_OP_NONE && ((ir_.check_folds >> k) & 1u); }
    std::string fold_check(int k, const std::string& acc, const std::string& suffix);

    const gpupy_ir& ir_;
    const ParamLayout& layout_;
    bool wide_;
    const CodegenOptions& opt_;
    std::string idx_;  // GLSL type of index arithmetic
    ShaderFunctions fns_;
    std::ostringstream decl_;
    std::vector<std::string> alias_;  // per instruction: a name other than t<i>, or ""
    RolledLoop loop_;                 // the repetition written as a loop, if any
    bool in_loop_ = false;            // writing the loop's body
    int lane_ = -1;                   // the body's copy within an unrolled iteration, or -1
    bool declare_arrays_ = false;     // the body's first writing declares its constants' arrays
    std::vector<int> check_slot_;     // per instruction: its check slot, or -1
};

}  // namespace gpupy_glsl

#endif
