#include "texture_formats.hpp"

namespace gpupy_gl {

// 64-bit values are RG32 texels (low word in .r), float64 as two uints.
static const TextureFormat kFormats[] = {
    {GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE},     // bool
    {GL_R8I, GL_RED_INTEGER, GL_BYTE},               // int8
    {GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE},     // uint8
    {GL_R16I, GL_RED_INTEGER, GL_SHORT},             // int16
    {GL_R16UI, GL_RED_INTEGER, GL_UNSIGNED_SHORT},   // uint16
    {GL_R32I, GL_RED_INTEGER, GL_INT},               // int32
    {GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT},     // uint32
    {GL_RG32I, GL_RG_INTEGER, GL_INT},               // int64
    {GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT},     // uint64
    {GL_R32F, GL_RED, GL_FLOAT},                     // float32
    {GL_RG32UI, GL_RG_INTEGER, GL_UNSIGNED_INT},     // float64
    {GL_R16UI, GL_RED_INTEGER, GL_UNSIGNED_SHORT},   // float16, as its bits
};

static_assert(sizeof kFormats / sizeof kFormats[0] == GPUPY_NUM_DTYPES, "one texture format per row of dtypes.def");

const TextureFormat& texture_format(int dtype) { return kFormats[dtype]; }

}  // namespace gpupy_gl
