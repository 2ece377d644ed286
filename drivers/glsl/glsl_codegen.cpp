#include "glsl_codegen.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "glsl_contraction.hpp"
#include "glsl_types.hpp"
#include "glsl_writer.hpp"
#include "ir_validation.hpp"
#include "loop_rolling.hpp"
#include "value_facts.hpp"

namespace gpupy_glsl {

namespace {

constexpr int kWorkGroupSize = 64;
// Copies of a rolled loop's body per iteration (rolled_loop).
constexpr int kRolledUnroll = 4;
const int kFlagMask = GPUPY_INSTR_CONTIGUOUS | GPUPY_INSTR_REMAPPED;

// The GLSL vector of `lanes` components holding a uniform of `dtype` (a
// bool as uint, small integers as int, as scalar uniforms are held).
std::string vector_type(int dtype, int lanes) {
    const std::string n = std::to_string(lanes);
    switch (dtype) {
        case GPUPY_FLOAT32: case GPUPY_FLOAT16: return "vec" + n;
        case GPUPY_FLOAT64: return "dvec" + n;
        case GPUPY_INT64: return "i64vec" + n;
        case GPUPY_UINT64: return "u64vec" + n;
        case GPUPY_BOOL: case GPUPY_UINT8: case GPUPY_UINT16: case GPUPY_UINT32: return "uvec" + n;
        default: return "ivec" + n;
    }
}

bool is_leaf(int op) { return op == GPUPY_OP_LOAD || op == GPUPY_OP_INDEX || op == GPUPY_OP_CONST; }

// How one dimension of a remapped map is computed; the program key holds
// it, as each form is different code. Integer division by a uniform runs a
// lane at a time on llvmpipe (see gpo_udiv31), and a roll or a pad needs
// none: its div is 1, and its coordinate stays below twice its period, so
// one conditional subtraction replaces the remainder.
enum RemapForm { kDivOne = 16, kOneFold = 32, kNoModulo = 64 };

int remap_form(const gpupy_ir& ir, const gpupy_ir_instr& in, int d) {
    const gpupy_index_map& m = in.map;
    const int64_t div = m.div[d] < 1 ? 1 : m.div[d];
    int form = m.edge[d] & 15;
    if (div == 1) form |= kDivOne;
    const int64_t period = m.edge[d] == GPUPY_EDGE_REFLECT ? 2 * m.mod[d] - 2
                           : m.edge[d] == GPUPY_EDGE_SYMMETRIC ? 2 * m.mod[d] : m.mod[d];
    const int64_t highest = (ir.shape[d] - 1) / div + m.shift[d];
    if (m.edge[d] == GPUPY_EDGE_WRAP && m.mod[d] == 0) form |= kNoModulo;
    else if (m.edge[d] != GPUPY_EDGE_CLAMP && period > 0 && m.shift[d] >= 0 && highest < 2 * period) form |= kOneFold;
    return form;
}

using gpupy_driver::operand_dtype;

int const_components(int dtype) { return glsl_type(dtype).bits == 64 ? 2 : 1; }

// The structure is checked by the drivers' shared validation; here, what
// GLSL can compute on this device.
std::string validate(const gpupy_ir& ir, const DeviceCaps& caps, bool require_blocks) {
    std::string err = gpupy_driver::ir_structure_error(ir, require_blocks);
    if (!err.empty()) return err;
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        auto where = [&] { return "instruction " + std::to_string(i) + " (" + op_enum_name(in.op) + "): "; };
        if (is_leaf(in.op) || in.op == GPUPY_OP_GATHER) {
            if (!op_supported(in.op, in.dtype, caps)) return where() + "dtype " + glsl_type(in.dtype).numpy_name + " not supported";
            continue;
        }
        const int in_dtype = operand_dtype(ir, in);
        if (!expression_supported(in.op, in_dtype, in.dtype, caps)) {
            return where() + "not supported for " + glsl_type(in_dtype).numpy_name + " -> " +
                   glsl_type(in.dtype).numpy_name;
        }
    }
    for (int k = 0; k < ir.noutputs && ir.reduce_op != GPUPY_OP_NONE; ++k) {
        const int result = ir.instr[ir.output[k]].dtype;
        const int op = k ? ir.output_reduce_op[k] : ir.reduce_op;
        ShaderFunctions scratch;
        if (op_expression(op, result, result, {"a", "v"}, scratch, caps).empty() || scratch.missing) {
            return std::string("reduction ") + op_numpy_name(op) + " not supported for " + glsl_type(result).numpy_name;
        }
    }
    return "";
}

}  // namespace

std::string Writer::map_index(int i) {
    const gpupy_ir_instr& in = ir_.instr[i];
    int s = layout_.leaf[i];
    if (contiguous(in)) return p(s) + " + f";
    std::string e = p(s);
    for (int d = 0; d < ir_.ndim; ++d) {
        std::string n = "n" + std::to_string(d);
        if (remapped(in)) n = remapped_coordinate(in, d, n, s);
        e += " + " + n + " * " + p(s + 1 + d);
    }
    return e;
}

// gpupy_map_coordinate of domain coordinate n in dimension d of a remapped
// map whose parameters start at slot s, in the form remap_form chose.
std::string Writer::remapped_coordinate(const gpupy_ir_instr& in, int d, const std::string& n, int s) {
    const int form = remap_form(ir_, in, d);
    const std::string div = p(s + 1 + ir_.ndim + d), mod = p(s + 1 + 2 * ir_.ndim + d);
    const std::string c = "(" + (form & kDivOne ? n : n + " / " + div) + " + " + p(s + 1 + 3 * ir_.ndim + d) + ")";
    const std::string width = wide_ ? "_i64" : "_i32", two = wide_ ? "2l" : "2", one = wide_ ? "1l" : "1";
    const std::string fold = form & kOneFold ? "_once" : "";
    auto call = [&](const std::string& fn, const std::string& args) {
        fns_.use(fn + width);
        return fn + width + "(" + args + ")";
    };
    switch (in.map.edge[d]) {
        case GPUPY_EDGE_CLAMP: return call("gpo_clamp_index", c + ", " + mod);
        case GPUPY_EDGE_REFLECT:
        case GPUPY_EDGE_SYMMETRIC: {
            const bool reflect = in.map.edge[d] == GPUPY_EDGE_REFLECT;
            const std::string period = two + " * " + mod + (reflect ? " - " + two : "");
            const std::string top = two + " * " + mod + " - " + (reflect ? two : one);
            return call("gpo_mirror_index" + fold, c + ", " + period + ", " + top);
        }
        default:
            if (form & kNoModulo) return c;
            return form & kOneFold ? call("gpo_wrap_index_once", c + ", " + mod) : "(" + c + " % " + mod + ")";
    }
}

// A LOAD leaf: its element index, then the texel (fetch).
std::string Writer::load(int i, int& unit) {
    const gpupy_ir_instr& in = ir_.instr[i];
    const std::string l = "    " + idx_ + " l" + std::to_string(i) + " = " + map_index(i) + ";\n";
    return l + fetch(i, unit, p(layout_.leaf[i] + map_slots(in, ir_.ndim, wide_) - 1));
}

// A GATHER: its index value relative to the first bound element, kept
// inside the bound blocks (nothing outside is ever read), then the texel.
std::string Writer::gather(int i, int& unit) {
    const gpupy_ir_instr& in = ir_.instr[i];
    const int s = layout_.leaf[i];
    // Clamped in 64 bits: an index beyond 32 bits must not wrap inside.
    const std::string v = "clamp(" + reg(in.arg[0]) + " - int64_t(" + p(s) + "), 0l, int64_t(" + p(s + 1) + "))";
    const std::string l = "    " + idx_ + " l" + std::to_string(i) + " = " + (wide_ ? v : "int(" + v + ")") + ";\n";
    return l + fetch(i, unit, p(s + 2));
}

// The texel of element l<i> (relative to the first bound block) of
// instruction i's blocks, whose size is the parameter block_elems.
std::string Writer::fetch(int i, int& unit, const std::string& block_elems) {
    const gpupy_ir_instr& in = ir_.instr[i];
    const GlslType& f = glsl_type(in.dtype);
    for (const std::string& fn : texel_functions(in.dtype)) fns_.use(fn);
    std::string n = std::to_string(i);
    std::ostringstream s;
    int first_unit = unit;
    for (int b = 0; b < in.nblocks; ++b) {
        decl_ << "layout(binding = " << unit << ") uniform " << f.sampler << " u_t" << unit << ";\n";
        ++unit;
    }
    std::string coord = "ivec2(o" + n + " % W, o" + n + " / W)";
    if (in.nblocks == 1) {
        s << "    int o" << n << " = int(l" << n << ");\n";
        s << "    " << f.glsl_type << " " << reg(i) << " = "
          << texel_read(in.dtype, "u_t" + std::to_string(first_unit), coord) << ";\n";
        return s.str();
    }
    const std::string& e = block_elems;
    s << "    " << idx_ << " k" << n << " = l" << n << " / " << e << ";\n";
    s << "    int o" << n << " = int(l" << n << " - k" << n << " * " << e << ");\n";
    std::string pick = texel_read(in.dtype, "u_t" + std::to_string(first_unit + in.nblocks - 1), coord);
    for (int b = in.nblocks - 2; b >= 0; --b) {
        pick = "(k" + n + " == " + std::to_string(b) + (wide_ ? "l" : "") + " ? " +
               texel_read(in.dtype, "u_t" + std::to_string(first_unit + b), coord) + " : " + pick + ")";
    }
    s << "    " << f.glsl_type << " " << reg(i) << " = " << pick << ";\n";
    return s.str();
}

// Instruction i's code at the domain point, its check included; inside
// the rolled loop's body a constant is the copy's element of a uniform
// array and a check sets the copy's flags.
std::string Writer::instruction(int i, const std::vector<uint8_t>& facts, int& unit, GeneratedShader& out) {
    std::ostringstream body;
    const gpupy_ir_instr& in = ir_.instr[i];
    const GlslType& f = glsl_type(in.dtype);
    std::string precise = f.kind == DtypeKind::Float ? "precise " : "";
    switch (in.op) {
        case GPUPY_OP_LOAD:
            body << load(i, unit);
            break;
        case GPUPY_OP_GATHER:
            body << gather(i, unit);
            break;
        case GPUPY_OP_INDEX: {
            // value = (index / div) % mod
            int s = layout_.leaf[i] + map_slots(in, ir_.ndim, true) - 2;
            if (wide_) {
                std::string v = "((" + map_index(i) + ") / " + p(s) + ") % " + p(s + 1);
                body << "    " << idx_ << " v" << i << " = " << v << ";\n";
            } else {
                const std::string udiv = "gpo_udiv31";
                fns_.use(udiv);
                std::string n = std::to_string(i);
                body << "    uint q" << n << " = " << udiv << "(uint(" << map_index(i) << "), uint(" << p(s + 2)
                     << "), uint(" << p(s + 3) << "));\n";
                body << "    uint w" << n << " = " << udiv << "(q" << n << ", uint(" << p(s + 4) << "), uint("
                     << p(s + 5) << "));\n";
                body << "    int v" << n << " = int(q" << n << " - w" << n << " * uint(" << p(s + 1) << "));\n";
            }
            ShaderFunctions& fns = fns_;
            std::string conv = op_expression(GPUPY_OP_CAST, wide_ ? GPUPY_INT64 : GPUPY_INT32, in.dtype,
                                             {"v" + std::to_string(i)}, fns, DeviceCaps{true, true});
            body << "    " << precise << f.glsl_type << " " << reg(i) << " = " << conv << ";\n";
            break;
        }
        case GPUPY_OP_CONST: {
            std::string utype = in.dtype == GPUPY_BOOL ? "uint" : f.glsl_type;
            std::string v = "u_c" + std::to_string(i);
            if (in_loop_) {
                // Each copy's constant, lane `it` of one array of 4-component
                // vectors: a GPU gives every element of a dynamically indexed
                // uniform array a whole register (NVIDIA: at most 1,024), so
                // scalars would take four times the space they are counted as.
                const int lanes = glsl_type(in.dtype).bits == 64 ? 2 : 4;
                if (declare_arrays_) {
                    GeneratedShader::ConstArray a;
                    a.name = v;
                    a.dtype = in.dtype;
                    a.lanes = lanes;
                    for (int c = 0; c < loop_.copies; ++c) a.instrs.push_back(loop_.at(c, i - loop_.begin));
                    decl_ << "uniform " << vector_type(in.dtype, lanes) << " " << v << "["
                          << (loop_.copies + lanes - 1) / lanes << "];\n";
                    out.const_arrays.push_back(std::move(a));
                }
                static_assert(kRolledUnroll % 4 == 0, "an unrolled iteration starts a vector");
                const int shift = lanes == 4 ? 2 : 1;
                if (lane_ < 0) {
                    v += "[it >> " + std::to_string(shift) + "][it & " + std::to_string(lanes - 1) + "]";
                } else {
                    v += "[(it0 >> " + std::to_string(shift) + ") + " + std::to_string(lane_ / lanes) + "][" +
                         std::to_string(lane_ % lanes) + "]";
                }
            } else {
                decl_ << "uniform " << utype << " " << v << ";\n";
                out.const_instrs.push_back(i);
            }
            if (in.dtype == GPUPY_BOOL) v = "(" + v + " != 0u)";
            body << "    " << f.glsl_type << " " << reg(i) << " = " << v << ";\n";
            break;
        }
        default: {
            int arity = op_arity(in.op);
            std::vector<std::string> args;
            unsigned never_nan = 0;
            for (int k = 0; k < arity; ++k) {
                args.push_back(operand(in, in.arg[k]));
                if (facts[in.arg[k]] & kNeverNan) never_nan |= 1u << k;
            }
            std::string e =
                op_expression(in.op, operand_dtype(ir_, in), in.dtype, args, fns_, opt_.caps, never_nan);
            if (flushes(in) && in.dtype == GPUPY_FLOAT32 && !e.empty()) e = flushed(e);
            body << "    " << precise << f.glsl_type << " " << reg(i) << " = " << e << ";\n";
        }
    }
    const int k = check_slot_[i];
    if (k >= 0) {
        // In the loop the quick form ORs every copy's flags into the
        // body's slot (it only decides whether the full form runs); the
        // full form keeps each copy's (they name the operation).
        const bool per_copy = in_loop_ && opt_.detailed_checks;
        body << check(i, k, per_copy ? "g_rolled" + std::to_string(k) + "[it]" : "g_check" + std::to_string(k));
    }
    return body.str();
}

// The repetition loop_ found, as a loop over its copies: the first copy's
// instructions are the body, the carry is a variable that starts as the
// value the first copy reads and ends as the last copy's, which is what
// the instructions after the loop read.
std::string Writer::rolled_loop(const std::vector<uint8_t>& facts, int& unit, GeneratedShader& out) {
    const RolledLoop& l = loop_;
    const gpupy_ir_instr& carried = ir_.instr[l.carry_in];
    const GlslType& ct = glsl_type(carried.dtype);
    std::ostringstream s;
    s << "    " << (ct.kind == DtypeKind::Float ? "precise " : "") << ct.glsl_type << " carry = " << reg(l.carry_in)
      << ";\n";
    // The body, `indent` levels deeper, for copy `it`: with its constants'
    // lane known (`lane` >= 0, the unrolled copies, it0 a multiple of
    // kRolledUnroll) or picked at run time (-1).
    bool first = true;
    auto body = [&](int indent, int lane) {
        alias_[static_cast<size_t>(l.carry_in)] = "carry";
        in_loop_ = true;
        lane_ = lane;
        declare_arrays_ = first;
        first = false;
        std::string inner;
        for (int j = 0; j < l.length; ++j) inner += instruction(l.at(0, j), facts, unit, out);
        in_loop_ = false;
        alias_[static_cast<size_t>(l.carry_in)] = "";
        inner += "    carry = " + reg(l.at(0, l.carry_out)) + ";\n";
        std::istringstream lines(inner);
        for (std::string line; std::getline(lines, line);) s << std::string(4 * static_cast<size_t>(indent), ' ') << line << "\n";
    };
    // Unrolled by kRolledUnroll, each copy in its own scope, and the
    // remaining copies one at a time: a CPU renderer keeps more of the
    // straight code's speed, a GPU's compiler still sees a short body.
    const int unrolled = l.copies / kRolledUnroll * kRolledUnroll;
    if (unrolled > 0) {
        s << "    for (int it0 = 0; it0 < " << unrolled << "; it0 += " << kRolledUnroll << ") {\n";
        for (int u = 0; u < kRolledUnroll; ++u) {
            s << "        {\n";
            s << "            int it = it0 + " << u << ";\n";
            body(2, u);
            s << "        }\n";
        }
        s << "    }\n";
    }
    if (unrolled < l.copies) {
        s << "    for (int it = " << unrolled << "; it < " << l.copies << "; ++it) {\n";
        body(1, -1);
        s << "    }\n";
    }
    alias_[static_cast<size_t>(l.last_carry())] = "carry";
    return s.str();
}

std::string Writer::generate(GeneratedShader& out) {
    const int result = ir_.instr[ir_.output[0]].dtype;
    const GlslType& rf = glsl_type(result);
    bool need_int64 = wide_, need_unravel = false;
    for (int i = 0; i < ir_.ninstr; ++i) {
        if (glsl_type(ir_.instr[i].dtype).needs_int64) need_int64 = true;
        if (has_map(ir_.instr[i]) && !contiguous(ir_.instr[i])) need_unravel = true;
    }
    if (need_unravel && !wide_ && ir_.ndim > 1) fns_.use("gpo_udiv31");

    std::ostringstream body;
    int unit = 0;
    const std::vector<uint8_t> facts = value_facts(ir_);
    check_slot_.assign(static_cast<size_t>(ir_.ninstr), -1);
    for (int k = 0; k < ir_.ncheck; ++k) check_slot_[ir_.check[k]] = k;
    alias_.assign(static_cast<size_t>(ir_.ninstr), std::string());
    if (opt_.roll_loops) loop_ = find_rolled_loop(ir_, facts, check_slot_);
    for (int i = 0; i < ir_.ninstr; ++i) {
        if (loop_.found() && i == loop_.begin) {
            body << rolled_loop(facts, unit, out);
            i = loop_.end() - 1;
            continue;
        }
        body << instruction(i, facts, unit, out);
    }
    const bool several = ir_.noutputs > 1;
    if (several) {
        for (int k = 0; k < ir_.noutputs; ++k) body << "    out" << k << " = " << reg(ir_.output[k]) << ";\n";
    } else {
        body << "    return " << reg(ir_.output[0]) << ";\n";
    }

    std::ostringstream src;
    src << "#version 450 core\n" << gpu_like_defines(opt_.gpu_like);
    if (need_int64) src << "#extension GL_ARB_gpu_shader_int64 : require\n";
    src << "// gpupy: generated from IR (" << ir_.ninstr << " instructions)\n";
    src << "layout(local_size_x = " << kWorkGroupSize << ") in;\n";
    src << "const int W = " << opt_.texture_width << ";  // block texture width\n";
    for (int k = 0; k < ir_.noutputs; ++k) {
        const GlslType& of = glsl_type(ir_.instr[ir_.output[k]].dtype);
        for (const std::string& fn : texel_functions(ir_.instr[ir_.output[k]].dtype)) fns_.use(fn);
        src << "layout(" << of.image_format << ", binding = " << k << ") uniform writeonly restrict " << of.image_type
            << " u_dst" << (k ? std::to_string(k) : "") << ";\n";
    }
    src << "uniform " << idx_ << " u_p[" << layout_.total << "];\n";
    // A zero read from a uniform in main(): see snippet_CAST (glsl_ops.cpp).
    src << "int gpo_opaque_zero;\n";
    src << decl_.str();
    bool reduce = ir_.reduce_op != GPUPY_OP_NONE;
    if (ir_.ncheck > 0 || (reduce && ir_.check_folds)) {
        // Floating-point error checks: each invocation gathers its flags
        // privately and adds them to the buffer once, at the end (an
        // atomic per invocation that found something; usually none). The
        // folds' flags follow the instructions'.
        src << "layout(std430, binding = " << kCheckBinding << ") buffer GpupyChecks { uint u_checks[]; };\n";
        for (int k = 0; k < ir_.ncheck; ++k) {
            if (rolled_check(k) < 0) src << "uint g_check" << k << " = 0u;\n";
            // (the rolled loop's: one element per copy, zeroed in main())
            else if (rolled_check(k) == 0) src << "uint g_rolled" << k << "[" << loop_.copies << "];\n";
        }
        for (int k = 0; k < ir_.noutputs; ++k) {
            if (fold_checked(k)) src << "uint g_fold" << k << " = 0u;\n";
        }
    }
    // A reduction's accumulators: acc (output 0), acc1, ... each folding
    // its output's value v, v1, ... with its op, from its identity.
    std::vector<std::string> folds;
    auto suffix = [](int k) { return k ? std::to_string(k) : std::string(); };
    auto dtype_of = [&](int k) { return ir_.instr[ir_.output[k]].dtype; };
    for (int k = 0; k < ir_.noutputs && reduce; ++k) {
        const int t = dtype_of(k);
        src << "uniform " << (t == GPUPY_BOOL ? "uint" : glsl_type(t).glsl_type) << " u_ident" << suffix(k) << ";\n";
        folds.push_back(op_expression(k ? ir_.output_reduce_op[k] : ir_.reduce_op, t, t,
                                      {"acc" + suffix(k), "v" + suffix(k)}, fns_, opt_.caps));
        if (t == GPUPY_FLOAT32 && opt_.gpu_like.flush_subnormals) folds.back() = flushed(folds.back());
    }
    // The checked folds' code, written now: the functions it uses go in
    // with the others just below.
    std::vector<std::string> fold_checks(static_cast<size_t>(ir_.noutputs));
    for (int k = 0; k < ir_.noutputs; ++k) {
        if (fold_checked(k)) fold_checks[k] = fold_check(k, "acc" + suffix(k), suffix(k));
    }
    const bool track_body = opt_.detailed_checks && reduce && ir_.check_folds;
    for (const std::string& fn : fns_.order) src << GlslLibrary::embedded().text(fn);

    // The body: the IR evaluated at the domain point with C-order flat
    // position f.
    if (several) {
        // Every output's value at the point, from one evaluation of the list.
        src << "void eval_point(" << idx_ << " f";
        for (int k = 0; k < ir_.noutputs; ++k) src << ", out " << glsl_type(ir_.instr[ir_.output[k]].dtype).glsl_type << " out" << k;
        src << ") {\n";
    } else {
        src << rf.glsl_type << " eval_point(" << idx_ << " f) {\n";
    }
    if (need_unravel && ir_.ndim > 0) {
        src << "    " << idx_ << " r = f;\n";
        for (int d = ir_.ndim - 1; d >= 1; --d) {
            if (wide_) {
                src << "    " << idx_ << " n" << d << " = r % " << p(layout_.shape + d) << "; r = r / "
                    << p(layout_.shape + d) << ";\n";
            } else {
                src << "    int q" << d << "_ = int(gpo_udiv31(uint(r), uint(" << p(layout_.shape_magic + 2 * d)
                    << "), uint(" << p(layout_.shape_magic + 2 * d + 1) << ")));\n";
                src << "    int n" << d << " = r - q" << d << "_ * " << p(layout_.shape + d) << "; r = q" << d << "_;\n";
            }
        }
        src << "    " << idx_ << " n0 = r;\n";
    }
    src << body.str() << "}\n";

    std::string I = idx_;
    src << "void main() {\n";
    src << "    gpo_opaque_zero = int(" << p(layout_.zero) << ");\n";
    for (int k = 0; k < ir_.ncheck; ++k) {
        if (rolled_check(k) == 0) src << "    for (int c = 0; c < " << loop_.copies << "; ++c) g_rolled" << k << "[c] = 0u;\n";
    }
    src << "    " << I << " gid = " << I << "(gl_GlobalInvocationID.y) * " << I << "(gl_NumWorkGroups.x * "
        << kWorkGroupSize << "u) + " << I << "(gl_GlobalInvocationID.x);\n";
    // Invocations past the end evaluate the last element again and skip
    // only the store. Neither an early return nor a branch around the
    // body: llvmpipe turns uniform reads under divergent control flow into
    // per-lane gathers, which cost the distance map ~3x (docs/performance.md).
    src << "    bool inside = gid < " << p(layout_.count) << ";\n";
    src << "    if (!inside) gid = " << p(layout_.count) << " - 1;\n";
    src << "    {\n";
    src << "        " << I << " f = " << p(layout_.start) << " + gid;\n";
    std::string precise = rf.kind == DtypeKind::Float ? "precise " : "";
    if (several && !reduce) {
        for (int k = 0; k < ir_.noutputs; ++k)
            src << "        " << glsl_type(ir_.instr[ir_.output[k]].dtype).glsl_type << " result" << k << ";\n";
        src << "        eval_point(f";
        for (int k = 0; k < ir_.noutputs; ++k) src << ", result" << k;
        src << ");\n";
    } else if (!reduce) {
        src << "        " << rf.glsl_type << " result = eval_point(f);\n";
    } else {
        for (int k = 0; k < ir_.noutputs; ++k) {
            const int t = dtype_of(k);
            const std::string ident = "u_ident" + suffix(k);
            src << "        " << (glsl_type(t).kind == DtypeKind::Float ? "precise " : "") << glsl_type(t).glsl_type
                << " acc" << suffix(k) << " = " << (t == GPUPY_BOOL ? "(" + ident + " != 0u)" : ident) << ";\n";
        }
        for (int k = 0; k < ir_.noutputs && track_body; ++k) {
            if (fold_checked(k)) src << "        bool bnan" << suffix(k) << " = false, binf" << suffix(k) << " = false;\n";
        }
        src << "        " << I << " size = " << p(layout_.reduce) << ", chunk = " << p(layout_.reduce + 2) << ";\n";
        if (ir_.reduce_mode == GPUPY_REDUCE_CHUNKS) {
            src << "        " << I << " nchunks = " << p(layout_.reduce + 1) << ";\n";
            src << "        " << I << " o = f / nchunks, c = f - o * nchunks;\n";
            src << "        " << I << " r0 = c * chunk, r1 = min(size, r0 + chunk);\n";
            src << "        for (" << I << " r = r0; r < r1; ++r) {\n";
        } else {
            src << "        " << I << " o = f / size, rl = f - o * size;\n";
            src << "        " << I << " r0 = (rl / chunk) * chunk;\n";
            src << "        for (" << I << " r = r0; r <= rl; ++r) {\n";
        }
        if (several) {
            for (int k = 0; k < ir_.noutputs; ++k)
                src << "            " << glsl_type(dtype_of(k)).glsl_type << " v" << suffix(k) << ";\n";
            src << "            eval_point(o * size + r";
            for (int k = 0; k < ir_.noutputs; ++k) src << ", v" << suffix(k);
            src << ");\n";
        } else {
            src << "            " << rf.glsl_type << " v = eval_point(o * size + r);\n";
        }
        for (int k = 0; k < ir_.noutputs; ++k) src << "            acc" << suffix(k) << " = " << folds[k] << ";\n";
        for (int k = 0; k < ir_.noutputs && track_body; ++k) {
            if (!fold_checked(k)) continue;
            const int t = dtype_of(k);
            const std::string v = "v" + suffix(k), sk = suffix(k);
            src << "            bnan" << sk << " = bnan" << sk << " || " << classify("isnan", t, v) << ";\n";
            src << "            binf" << sk << " = binf" << sk << " || " << classify("isinf", t, v) << ";\n";
        }
        src << "        }\n";
        for (const std::string& c : fold_checks) src << c;
        for (int k = 0; k < ir_.noutputs; ++k) {
            src << "        " << glsl_type(dtype_of(k)).glsl_type << " result" << (several ? std::to_string(k) : "")
                << " = acc" << suffix(k) << ";\n";
        }
    }
    src << "        if (inside) {\n";
    src << "            " << I << " at = " << p(layout_.dst_offset) << " + gid;\n";
    if (several) {
        for (int k = 0; k < ir_.noutputs; ++k) {
            src << "            imageStore(u_dst" << (k ? std::to_string(k) : "") << ", ivec2(int(at % W), int(at / W)), "
                << image_texel(ir_.instr[ir_.output[k]].dtype, "result" + std::to_string(k)) << ");\n";
        }
    } else {
        src << "            imageStore(u_dst, ivec2(int(at % W), int(at / W)), " << image_texel(result, "result") << ");\n";
    }
    if (!opt_.debug_append.empty()) src << opt_.debug_append << "\n";
    if (!opt_.debug_append_unkeyed.empty()) src << opt_.debug_append_unkeyed << "\n";
    src << "        }\n";
    src << "    }\n";
    for (int k = 0; k < ir_.ncheck; ++k) {
        if (rolled_check(k) < 0) {
            src << "    if (g_check" << k << " != 0u) atomicOr(u_checks[" << k << "], g_check" << k << ");\n";
        } else if (rolled_check(k) == 0) {
            src << "    for (int c = 0; c < " << loop_.copies << "; ++c) {\n";
            src << "        if (g_rolled" << k << "[c] != 0u) atomicOr(u_checks[" << k << " + c * " << loop_.check_stride
                << "], g_rolled" << k << "[c]);\n";
            src << "    }\n";
        }
    }
    for (int k = 0; k < ir_.noutputs; ++k) {
        if (fold_checked(k))
            src << "    if (g_fold" << k << " != 0u) atomicOr(u_checks[" << ir_.ncheck + k << "], g_fold" << k << ");\n";
    }
    src << "}\n";

    if (fns_.missing) return "a GLSL library function is missing";
    out.source = src.str();
    return "";
}

bool needs_wide_index(const gpupy_ir& ir) {
    const double limit = 2147483647.0 - 65536.0 * kWorkGroupSize;
    double total = 1;
    for (int d = 0; d < ir.ndim; ++d) total *= static_cast<double>(ir.shape[d]);
    if (total > limit) return true;
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (in.op != GPUPY_OP_INDEX) continue;
        double bound = std::fabs(static_cast<double>(in.map.base));
        if (contiguous(in)) {
            bound += total;
        } else {
            for (int d = 0; d < ir.ndim; ++d) {
                bound += std::fabs(static_cast<double>(in.map.stride[d])) * static_cast<double>(ir.shape[d] - 1);
            }
        }
        if (bound > limit) return true;
    }
    return false;
}

std::string gpu_like_defines(const GpuLikeFloats& g) {
    std::string s;
    if (g.flush_subnormals) s += "#define GPUPY_FLUSH_SUBNORMALS\n";
    if (g.loose_division) s += "#define GPUPY_LOOSE_DIVISION\n";
    if (g.loose_sqrt) s += "#define GPUPY_LOOSE_SQRT\n";
    return s;
}

std::string generate_shader(const gpupy_ir& ir, const CodegenOptions& opt, bool want_source, GeneratedShader& out) {
    std::string err = validate(ir, opt.caps, opt.require_blocks);
    if (!err.empty()) return err;
    out = GeneratedShader{};
    ContractionForm form;
    // (The tiled form leaves floating-point checks out: whether a product is
    // tiled must not depend on them, since the core sizes passes without.)
    out.tiled = opt.tiled_products && match_contraction(ir, &form);
    out.wide_index = !out.tiled && needs_wide_index(ir);
    if (out.wide_index && !opt.caps.int64) {
        return "index arithmetic needs 64 bits (domain or INDEX values beyond int32) and the device lacks "
               "GL_ARB_gpu_shader_int64";
    }
    out.layout = make_layout(ir, out.wide_index);
    if (out.tiled) {
        out.layout.tile = out.layout.total;
        out.layout.total += 2;
    }

    // The key: the IR's structure as fixed-width binary fields (each field's
    // meaning follows from the ones before it, so keys cannot alias); built
    // for every eval_ir and check_ir, so no formatting.
    std::string& key = out.key;
    key.reserve(64 + 24 * static_cast<size_t>(ir.ninstr));
    auto put = [&key](int64_t v) {
        const int32_t w = static_cast<int32_t>(v);
        key.append(reinterpret_cast<const char*>(&w), sizeof w);
    };
    put(opt.texture_width);
    put(ir.ndim);
    put(out.wide_index);
    put(ir.reduce_op);
    if (ir.reduce_op != GPUPY_OP_NONE) {
        put(ir.reduce_mode);
        put(ir.reduce_ndim);
    }
    put(ir.ninstr);
    put(ir.noutputs);
    for (int k = 0; k < ir.noutputs; ++k) put(ir.output[k]);
    for (int k = 1; k < ir.noutputs && ir.reduce_op != GPUPY_OP_NONE; ++k) put(ir.output_reduce_op[k]);
    put(ir.ncheck);
    for (int k = 0; k < ir.ncheck; ++k) put(ir.check[k]);
    const uint32_t check_folds = ir.reduce_op != GPUPY_OP_NONE ? ir.check_folds : 0u;
    put(check_folds);
    if (ir.ncheck > 0 || check_folds) put(opt.detailed_checks);
    // The tiled form, and which operand is A, follow from stride values.
    put(out.tiled);
    if (out.tiled) {
        put(form.a_load);
        put(form.b_load);
        put(opt.shared_tiles);
    }
    int cost = 0, const_comps = 0;
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        int arity = op_arity(in.op);
        put(in.op);
        put(in.dtype);
        for (int k = 0; k < arity; ++k) put(in.arg[k]);
        if (has_map(in)) {
            put(in.flags & kFlagMask);
            if (remapped(in)) {
                for (int d = 0; d < ir.ndim; ++d) put(remap_form(ir, in, d));
            }
        }
        if (gpupy_driver::reads_blocks(in)) {
            put(in.nblocks);
            out.texture_units += in.nblocks;
        }
        if (in.op == GPUPY_OP_CONST) {
            const_comps += const_components(in.dtype);
            put(const_facts(in));  // what the code may assume of its value
        }
        cost += op_cost(in.op, is_leaf(in.op) ? in.dtype : operand_dtype(ir, in));
    }
    put(opt.gpu_like.flush_subnormals | opt.gpu_like.loose_division << 1 | opt.gpu_like.loose_sqrt << 2);
    // (Where the loop is and what it carries follow from the fields above.)
    put(opt.roll_loops);
    if (!opt.debug_append.empty()) key += "|debug:" + opt.debug_append;
    out.instruction_cost = cost;
    // Only what leaves add; the fixed part (start, count, shape, ...) is
    // reserved from the limit (resources.hpp).
    int first_leaf_slot = out.layout.shape + ir.ndim + (ir.reduce_op != GPUPY_OP_NONE ? 3 : 0);
    out.uniform_components = (out.layout.total - first_leaf_slot) * (out.wide_index ? 2 : 1) + const_comps;
    if (!want_source) return "";
    if (out.tiled) {
        ShaderFunctions fns;
        out.source = contraction_source(ir, form, out.layout, opt, fns);
        return fns.missing ? "a GLSL library function is missing" : "";
    }
    Writer w(ir, out.layout, out.wide_index, opt);
    return w.generate(out);
}

}  // namespace gpupy_glsl
