// The software interpreter is compiled twice: for the x86-64 baseline
// and with AVX2 (GPUPY_SW_VARIANT=avx2, CMakeLists.txt); interpret()
// picks at run time. Same source, same semantics, wider loops; wheels stay
// runnable on baseline x86-64. Each build's code lives in its own
// namespace, gpupy_sw::baseline or gpupy_sw::avx2.
#pragma once

#include <string>

#include "interpreter.hpp"

#ifndef GPUPY_SW_VARIANT
#define GPUPY_SW_VARIANT baseline
#endif

namespace gpupy_sw {

// Evaluates `ir` into dst as interpret() does, on this thread: the whole
// range, or (pieces set) each piece it hands out in turn.
namespace baseline {
bool interpret_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
                     const PieceSource* pieces);
}
namespace avx2 {
bool interpret_range(const gpupy_ir& ir, Block* const* dst, std::string* error, const HostLoops* loops,
                     const PieceSource* pieces);
}

}  // namespace gpupy_sw
