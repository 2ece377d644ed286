#include "glsl_types.hpp"

namespace gpupy_glsl {

static const GlslType kTypes[] = {
    // bool: one byte holding 0 or 1, as NumPy stores it.
    {"bool", DtypeKind::Bool, 8, false, false, "bool", "usampler2D", "r8ui", "uimage2D"},
    {"int8", DtypeKind::Signed, 8, false, false, "int", "isampler2D", "r8i", "iimage2D"},
    {"uint8", DtypeKind::Unsigned, 8, false, false, "uint", "usampler2D", "r8ui", "uimage2D"},
    {"int16", DtypeKind::Signed, 16, false, false, "int", "isampler2D", "r16i", "iimage2D"},
    {"uint16", DtypeKind::Unsigned, 16, false, false, "uint", "usampler2D", "r16ui", "uimage2D"},
    {"int32", DtypeKind::Signed, 32, false, false, "int", "isampler2D", "r32i", "iimage2D"},
    {"uint32", DtypeKind::Unsigned, 32, false, false, "uint", "usampler2D", "r32ui", "uimage2D"},
    {"int64", DtypeKind::Signed, 64, true, false, "int64_t", "isampler2D", "rg32i", "iimage2D"},
    {"uint64", DtypeKind::Unsigned, 64, true, false, "uint64_t", "usampler2D", "rg32ui", "uimage2D"},
    {"float32", DtypeKind::Float, 32, false, false, "float", "sampler2D", "r32f", "image2D"},
    {"float64", DtypeKind::Float, 64, false, true, "double", "usampler2D", "rg32ui", "uimage2D"},
    // float16: its 16 bits in the texel, a float in registers (float16.glsl).
    {"float16", DtypeKind::Float, 16, false, false, "float", "usampler2D", "r16ui", "uimage2D"},
};

static_assert(sizeof kTypes / sizeof kTypes[0] == GPUPY_NUM_DTYPES, "one GLSL type per row of dtypes.def");

const GlslType& glsl_type(int dtype) { return kTypes[dtype]; }

std::string texel_read(int dtype, const std::string& sampler, const std::string& coord) {
    std::string t = "texelFetch(" + sampler + ", " + coord + ", 0)";
    switch (dtype) {
        case GPUPY_BOOL: return "(" + t + ".r != 0u)";
        case GPUPY_INT64: return "packInt2x32(" + t + ".rg)";
        case GPUPY_UINT64: return "packUint2x32(" + t + ".rg)";
        case GPUPY_FLOAT64: return "packDouble2x32(" + t + ".rg)";
        case GPUPY_FLOAT16: return "gpo_f16_value(" + t + ".r)";
        default: return t + ".r";
    }
}

std::string image_texel(int dtype, const std::string& v) {
    switch (dtype) {
        case GPUPY_BOOL: return "uvec4(" + v + " ? 1u : 0u, 0u, 0u, 0u)";
        case GPUPY_INT64: return "ivec4(unpackInt2x32(" + v + "), 0, 0)";
        case GPUPY_UINT64: return "uvec4(unpackUint2x32(" + v + "), 0u, 0u)";
        case GPUPY_FLOAT64: return "uvec4(unpackDouble2x32(" + v + "), 0u, 0u)";
        case GPUPY_FLOAT32: return "vec4(" + v + ", 0.0, 0.0, 0.0)";
        case GPUPY_FLOAT16: return "uvec4(gpo_f16_bits(" + v + "), 0u, 0u, 0u)";
    }
    return glsl_type(dtype).kind == DtypeKind::Signed ? "ivec4(" + v + ", 0, 0, 0)" : "uvec4(" + v + ", 0u, 0u, 0u)";
}

std::vector<std::string> texel_functions(int dtype) {
    if (dtype == GPUPY_FLOAT16) return {"gpo_f16_value", "gpo_f16_bits"};
    return {};
}

}  // namespace gpupy_glsl
