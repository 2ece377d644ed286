#include "glsl_contraction.hpp"

#include <algorithm>
#include <sstream>

#include "glsl_types.hpp"
#include "ir_validation.hpp"

namespace gpupy_glsl {

namespace {

// 16 x 16 invocations, each with a 4 x 4 block of outputs (one 4-vector of
// A and one of B per k) and staging one 4-vector of each panel per k step.
// (8 x 8 invocations with 8 x 8 outputs each were no faster on llvmpipe:
// 0.9-1.0 GFLOP/s either way at n = 256..1024.)
constexpr int kThreads = 16;
static_assert(kThreads * 4 == kContractionTile, "an invocation's outputs are one 4-vector wide");
static_assert(kThreads * kThreads == kContractionStep * kContractionTile / 4,
              "each invocation stages one 4-vector of each panel per k step");

// The form without shared memory: 8 x 8 invocations, each with 8 x 8
// outputs -- rows i0 + ly + 8r, columns j0 + lx + 8q, so that neighbouring
// invocations read neighbouring elements -- accumulated in registers from
// 8 elements of A and 8 of B per k, read straight from the textures (the
// texture cache shares them within the group). On a CPU renderer a texel
// fetch is one vector gather while a shared-memory load runs a lane at a
// time: measured on llvmpipe, this form is several times the speed of the
// shared one (docs/performance.md).
constexpr int kRegisterThreads = 8;
constexpr int kRegisterOutputs = kContractionTile / kRegisterThreads;
static_assert(kRegisterOutputs == 8, "an invocation's outputs are two 4-vectors per row");

void register_body(std::ostringstream& s, const std::string& T, const std::string& T4) {
    const char* comp = "xyzw";
    for (int r = 0; r < kRegisterOutputs; ++r) {
        s << "    int ra" << r << " = oa + min(i0 + ly + " << kRegisterThreads * r << ", n - 1) * sai;\n";
        s << "    " << T4 << " acc" << r << "0 = " << T4 << "(u_ident), acc" << r << "1 = " << T4 << "(u_ident);\n";
    }
    for (int q = 0; q < kRegisterOutputs; ++q)
        s << "    int cb" << q << " = ob + min(j0 + lx + " << kRegisterThreads * q << ", m - 1) * sbj;\n";
    // (Rows and columns past the edge read clamped; they are not stored.)
    s << "    for (int k = k0; k < k1; ++k) {\n";
    s << "        int ka = k * sak, kb = k * sbk;\n";
    for (int h = 0; h < 2; ++h) {
        s << "        " << T4 << " b" << h << " = " << T4 << "(";
        for (int q = 0; q < 4; ++q) s << (q ? ", " : "") << "read_b(cb" << 4 * h + q << " + kb)";
        s << ");\n";
    }
    for (int r = 0; r < kRegisterOutputs; ++r) {
        s << "        " << T << " a" << r << " = read_a(ra" << r << " + ka);\n";
        s << "        acc" << r << "0 += a" << r << " * b0;\n";
        s << "        acc" << r << "1 += a" << r << " * b1;\n";
    }
    s << "    }\n";
    for (int r = 0; r < kRegisterOutputs; ++r) {
        for (int q = 0; q < kRegisterOutputs; ++q) {
            s << "    store(n, m, nchunks, b, c, i0 + ly + " << kRegisterThreads * r << ", j0 + lx + "
              << kRegisterThreads * q << ", acc" << r << q / 4 << "." << comp[q % 4] << ");\n";
        }
    }
}

bool plain_strided(const gpupy_ir_instr& in) {
    return in.op == GPUPY_OP_LOAD && !(in.flags & (GPUPY_INSTR_CONTIGUOUS | GPUPY_INSTR_REMAPPED)) && in.nblocks == 1;
}

// The LOAD an operand of the product reads, through at most one CAST to
// `dtype`; sets *cast. -1 if the operand is anything else.
int operand_load(const gpupy_ir& ir, int arg, int dtype, int* cast) {
    *cast = -1;
    if (arg < 0 || arg >= ir.ninstr) return -1;
    if (ir.instr[arg].op == GPUPY_OP_CAST) {
        if (ir.instr[arg].dtype != dtype) return -1;
        *cast = arg;
        arg = ir.instr[arg].arg[0];
        if (arg < 0 || arg >= ir.ninstr) return -1;
    } else if (ir.instr[arg].dtype != dtype) {
        return -1;
    }
    return plain_strided(ir.instr[arg]) ? arg : -1;
}

constexpr int64_t kInt32Limit = 2147483647;

}  // namespace

bool match_contraction(const gpupy_ir& ir, ContractionForm* form) {
    if (ir.reduce_op != GPUPY_OP_ADD || ir.reduce_mode != GPUPY_REDUCE_CHUNKS || ir.reduce_ndim != 1 ||
        ir.noutputs != 1 || ir.output[0] != ir.ninstr - 1)
        return false;
    if (ir.ndim < 3 || ir.ndim > GPUPY_MAX_DIMS || ir.ninstr < 3 || ir.ninstr > 5) return false;
    const gpupy_ir_instr& mul = ir.instr[ir.ninstr - 1];
    if (mul.op != GPUPY_OP_MULTIPLY || (mul.dtype != GPUPY_FLOAT32 && mul.dtype != GPUPY_FLOAT64)) return false;
    ContractionForm f;
    f.batch_ndim = ir.ndim - 3;
    const int i_dim = ir.ndim - 3, j_dim = ir.ndim - 2;
    int cast[2];
    int load[2] = {operand_load(ir, mul.arg[0], mul.dtype, &cast[0]), operand_load(ir, mul.arg[1], mul.dtype, &cast[1])};
    if (load[0] < 0 || load[1] < 0 || load[0] == load[1]) return false;
    // Every instruction is one of these (nothing else computed per point).
    if (ir.ninstr != 3 + (cast[0] >= 0) + (cast[1] >= 0)) return false;
    // A is the operand constant over j; B the one constant over i.
    int a = ir.instr[load[0]].map.stride[j_dim] == 0 ? 0 : 1;
    if (ir.instr[load[a]].map.stride[j_dim] != 0 || ir.instr[load[1 - a]].map.stride[i_dim] != 0) return false;
    f.a_load = load[a];
    f.a_cast = cast[a];
    f.b_load = load[1 - a];
    f.b_cast = cast[1 - a];
    // Output positions (and every product of them the shader forms) fit 32
    // bits; element offsets do, as an operand is one block.
    int64_t outputs = 1;
    for (int d = 0; d < ir.ndim - 1; ++d) outputs *= ir.shape[d];
    const int64_t chunk = std::max<int64_t>(ir.reduce_chunk, 1);
    outputs *= (ir.shape[ir.ndim - 1] + chunk - 1) / chunk;
    if (outputs + 2 * kContractionTile * int64_t{kContractionTile} >= kInt32Limit) return false;
    if (ir.start < 0 || ir.start + ir.count > outputs) return false;
    *form = f;
    return true;
}

ContractionGrid contraction_grid(const gpupy_ir& ir) {
    ContractionGrid g;
    const int nd = ir.ndim;
    const int64_t n = ir.shape[nd - 3], m = ir.shape[nd - 2], k = ir.shape[nd - 1];
    const int64_t chunk = std::max<int64_t>(ir.reduce_chunk, 1), nchunks = std::max<int64_t>((k + chunk - 1) / chunk, 1);
    const int64_t row = m * nchunks, batch = n * row;
    auto tiles = [](int64_t x) { return (x + kContractionTile - 1) / kContractionTile; };
    if (ir.count <= 0 || batch <= 0) return g;
    const int64_t last = ir.start + ir.count - 1;
    g.first_batch = ir.start / batch;
    const int64_t batches = last / batch - g.first_batch + 1;
    int64_t rows = n;
    if (batches == 1) {
        g.first_row = (ir.start % batch) / row;
        rows = (last % batch) / row - g.first_row + 1;
    }
    g.groups[0] = tiles(m);
    g.groups[1] = tiles(rows);
    g.groups[2] = batches * nchunks;
    return g;
}

std::string contraction_source(const gpupy_ir& ir, const ContractionForm& form, const ParamLayout& layout,
                               const CodegenOptions& opt, ShaderFunctions& fns) {
    const int dtype = ir.instr[ir.ninstr - 1].dtype;
    const GlslType& t = glsl_type(dtype);
    const std::string T = t.glsl_type, T4 = dtype == GPUPY_FLOAT64 ? "dvec4" : "vec4";
    const int nb = form.batch_ndim;
    auto p = [](int slot) { return "u_p[" + std::to_string(slot) + "]"; };
    auto shape = [&](int d) { return p(layout.shape + d); };
    const int sa = layout.leaf[form.a_load], sb = layout.leaf[form.b_load];
    auto stride = [&](int s, int d) { return p(s + 1 + d); };

    // A GPU-like build (CodegenOptions::gpu_like) flushes float32 operands
    // and results.
    const bool flush = dtype == GPUPY_FLOAT32 && opt.gpu_like.flush_subnormals;
    if (flush) fns.use("gp__ftz");
    // One operand element as the product's dtype: the texel, then the IR's
    // own CAST where it has one (and the flush).
    auto reader = [&](const char* name, int load, int cast, int unit) {
        const int from = ir.instr[load].dtype;
        std::string v = texel_read(from, "u_t" + std::to_string(unit), "ivec2(e % W, e / W)");
        if (cast >= 0) v = op_expression(GPUPY_OP_CAST, from, dtype, {v}, fns, opt.caps);
        if (flush) v = "gp__ftz(" + v + ")";
        return "layout(binding = " + std::to_string(unit) + ") uniform " + glsl_type(from).sampler + " u_t" +
               std::to_string(unit) + ";\n" + T + " " + name + "(int e) { return " + v + "; }\n";
    };
    // Texture units follow the LOADs' order in the IR, as the driver binds them.
    const int a_unit = form.a_load < form.b_load ? 0 : 1;
    const std::string readers =
        reader("read_a", form.a_load, form.a_cast, a_unit) + reader("read_b", form.b_load, form.b_cast, 1 - a_unit);

    std::ostringstream s;
    s << "#version 450 core\n" << gpu_like_defines(opt.gpu_like);
    s << "// gpupy: tiled matrix product (glsl_contraction.hpp)\n";
    const int side = opt.shared_tiles ? kThreads : kRegisterThreads;
    s << "layout(local_size_x = " << side << ", local_size_y = " << side << ") in;\n";
    s << "const int W = " << opt.texture_width << ";  // block texture width\n";
    s << "layout(" << t.image_format << ", binding = 0) uniform writeonly restrict " << t.image_type << " u_dst;\n";
    s << "uniform int u_p[" << layout.total << "];\n";
    s << "int gpo_opaque_zero;  // a zero the compiler cannot fold (glsl_ops.cpp, snippet_CAST)\n";
    s << "uniform " << T << " u_ident;\n";
    if (opt.shared_tiles) {
        s << "// Panels of one k step, as 4-vectors: s_a[k][r] holds rows 4r..4r+3 of\n";
        s << "// A's panel, s_b[k][c] columns 4c..4c+3 of B's.\n";
        s << "shared " << T4 << " s_a[" << kContractionStep << "][" << kThreads << "];\n";
        s << "shared " << T4 << " s_b[" << kContractionStep << "][" << kThreads << "];\n";
    }
    for (const std::string& fn : fns.order) s << GlslLibrary::embedded().text(fn);
    s << readers;
    s << "void store(int n, int m, int nchunks, int b, int c, int i, int j, " << T << " value) {\n";
    s << "    int start = " << p(layout.start) << ";\n";
    s << "    int f = ((b * n + min(i, n - 1)) * m + min(j, m - 1)) * nchunks + c;\n";
    s << "    if (i < n && j < m && f >= start && f - start < " << p(layout.count) << ") {\n";
    s << "        int at = " << p(layout.dst_offset) << " + f - start;\n";
    s << "        imageStore(u_dst, ivec2(at % W, at / W), " << image_texel(dtype, flush ? "gp__ftz(value)" : "value")
      << ");\n";
    s << "    }\n";
    s << "}\n";
    s << "void main() {\n";
    s << "    gpo_opaque_zero = " << p(layout.zero) << ";\n";
    s << "    int n = " << shape(nb) << ", m = " << shape(nb + 1) << ";\n";
    s << "    int nchunks = " << p(layout.reduce + 1) << ", chunk = " << p(layout.reduce + 2) << ";\n";
    s << "    int z = int(gl_WorkGroupID.z);\n";
    s << "    int c = z % nchunks, b = " << p(layout.tile + 1) << " + z / nchunks;\n";
    // The batch's element offsets in A and B.
    s << "    int oa = " << p(sa) << ", ob = " << p(sb) << ";\n";
    if (nb > 0) {
        s << "    int rest = b;\n";
        for (int d = nb - 1; d >= 0; --d) {
            s << "    { int x = rest % " << shape(d) << "; rest /= " << shape(d) << "; oa += x * " << stride(sa, d)
              << "; ob += x * " << stride(sb, d) << "; }\n";
        }
    }
    s << "    int sai = " << stride(sa, nb) << ", sak = " << stride(sa, nb + 2) << ";\n";
    s << "    int sbj = " << stride(sb, nb + 1) << ", sbk = " << stride(sb, nb + 2) << ";\n";
    s << "    int i0 = " << p(layout.tile) << " + int(gl_WorkGroupID.y) * " << kContractionTile << ";\n";
    s << "    int j0 = int(gl_WorkGroupID.x) * " << kContractionTile << ";\n";
    s << "    int lx = int(gl_LocalInvocationID.x), ly = int(gl_LocalInvocationID.y);\n";
    s << "    int k0 = c * chunk, k1 = min(" << p(layout.reduce) << ", k0 + chunk);\n";
    if (!opt.shared_tiles) {
        register_body(s, T, T4);
        s << "}\n";
        return s.str();
    }
    s << "    int lid = ly * " << kThreads << " + lx;\n";
    // What this invocation stages: the 4-vector of A's panel at k step
    // position ka and row quad ra, and B's at column quad jb and position kb.
    s << "    int ka = lid % " << kContractionStep << ", ra = lid / " << kContractionStep << ";\n";
    s << "    int jb = lid % " << kThreads << ", kb = lid / " << kThreads << ";\n";
    s << "    " << T4 << " acc[4] = " << T4 << "[4](" << T4 << "(u_ident), " << T4 << "(u_ident), " << T4
      << "(u_ident), " << T4 << "(u_ident));\n";
    s << "    for (int kt = k0; kt < k1; kt += " << kContractionStep << ") {\n";
    // Stages one 4-vector of a panel: the elements at its k step position
    // `kpos` of the four lines (rows of A, columns of B) from `first`.
    // Reads stay inside the operand (clamped indices); what lies outside the
    // matrices or the chunk is staged as zero and never summed or stored.
    auto stage = [&](const std::string& slot, const char* read, const char* kpos, const char* first, const char* lines,
                     const char* base, const char* line_stride, const char* k_stride) {
        s << "        {\n";
        s << "            int k = min(kt + " << kpos << ", k1 - 1);\n";
        s << "            bool k_in = kt + " << kpos << " < k1;\n";
        for (int q = 0; q < 4; ++q) {
            s << "            int x" << q << " = " << first << " + " << q << ";\n";
            s << "            " << T << " v" << q << " = " << read << "(" << base << " + min(x" << q << ", " << lines
              << " - 1) * " << line_stride << " + k * " << k_stride << ");\n";
        }
        s << "            " << slot << " = " << T4 << "(";
        for (int q = 0; q < 4; ++q)
            s << (q ? ", " : "") << "(x" << q << " < " << lines << " && k_in) ? v" << q << " : " << T << "(0)";
        s << ");\n";
        s << "        }\n";
    };
    stage("s_a[ka][ra]", "read_a", "ka", "i0 + 4 * ra", "n", "oa", "sai", "sak");
    stage("s_b[kb][jb]", "read_b", "kb", "j0 + 4 * jb", "m", "ob", "sbj", "sbk");
    s << "        memoryBarrierShared();\n";
    s << "        barrier();\n";
    // Only the step's real k: the sum is the IR's, term for term.
    s << "        int steps = min(" << kContractionStep << ", k1 - kt);\n";
    s << "        for (int kk = 0; kk < steps; ++kk) {\n";
    s << "            " << T4 << " a = s_a[kk][ly], bk = s_b[kk][lx];\n";
    const char* comp = "xyzw";
    for (int r = 0; r < 4; ++r) s << "            acc[" << r << "] += a." << comp[r] << " * bk;\n";
    s << "        }\n";
    s << "        memoryBarrierShared();\n";
    s << "        barrier();\n";
    s << "    }\n";
    for (int r = 0; r < 4; ++r) {
        for (int q = 0; q < 4; ++q) {
            s << "    store(n, m, nchunks, b, c, i0 + 4 * ly + " << r << ", j0 + 4 * lx + " << q << ", acc[" << r << "]."
              << comp[q] << ");\n";
        }
    }
    s << "}\n";
    return s.str();
}

}  // namespace gpupy_glsl
