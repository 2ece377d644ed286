#include "dtype_formats.hpp"

namespace gpupy_gl {

// Narrow integers live in 8/16-bit integer textures and in 32-bit GLSL
// registers (GLSL has no narrower arithmetic); the code generator wraps every
// result back into range. 64-bit values are stored as two 32-bit words in an
// RG32 texture, low word in .r, exactly as a little-endian host lays them
// out, so uploads are plain memcpy-like transfers; the shader joins them with
// packInt2x32 / packUint2x32 / packDouble2x32.
static const DtypeFormat kFormats[GPUPY_NUM_DTYPES] = {
    // bool: one byte holding 0 or 1, as NumPy stores it.
    {"bool", 1, DtypeKind::Bool, 8, false, false, GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
     "bool", "usampler2D", "r8ui", "uimage2D"},
    {"int8", 1, DtypeKind::Signed, 8, false, false, GL_R8I, GL_RED_INTEGER, GL_BYTE,
     "int", "isampler2D", "r8i", "iimage2D"},
    {"uint8", 1, DtypeKind::Unsigned, 8, false, false, GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
     "uint", "usampler2D", "r8ui", "uimage2D"},
    {"int16", 2, DtypeKind::Signed, 16, false, false, GL_R16I, GL_RED_INTEGER, GL_SHORT,
     "int", "isampler2D", "r16i", "iimage2D"},
    {"uint16", 2, DtypeKind::Unsigned, 16, false, false, GL_R16UI, GL_RED_INTEGER, GL_UNSIGNED_SHORT,
     "uint", "usampler2D", "r16ui", "uimage2D"},
    {"int32", 4, DtypeKind::Signed, 32, false, false, GL_R32I, GL_RED_INTEGER, GL_INT,
     "int", "isampler2D", "r32i", "iimage2D"},
    {"uint32", 4, DtypeKind::Unsigned, 32, false, false, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT,
     "uint", "usampler2D", "r32ui", "uimage2D"},
    {"int64", 8, DtypeKind::Signed, 64, true, false, GL_RG32I, GL_RG_INTEGER, GL_INT,
     "int64_t", "isampler2D", "rg32i", "iimage2D"},
    {"uint64", 8, DtypeKind::Unsigned, 64, true, false, GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT,
     "uint64_t", "usampler2D", "rg32ui", "uimage2D"},
    {"float32", 4, DtypeKind::Float, 32, false, false, GL_R32F, GL_RED, GL_FLOAT,
     "float", "sampler2D", "r32f", "image2D"},
    {"float64", 8, DtypeKind::Float, 64, false, true, GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT,
     "double", "usampler2D", "rg32ui", "uimage2D"},
};

bool dtype_valid(int dtype) { return dtype >= 0 && dtype < GPUPY_NUM_DTYPES; }

const DtypeFormat& dtype_format(int dtype) { return kFormats[dtype]; }

}  // namespace gpupy_gl
