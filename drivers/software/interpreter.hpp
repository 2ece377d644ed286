// The software driver's IR interpreter: evaluates a whole IR list per
// chunk of domain points (fused, like numexpr), never one operation per
// pass over memory.
#pragma once

#include <string>

#include "driver.hpp"

namespace gpupy_sw {

struct Block {
    int32_t dtype;
    int64_t nelems;
    char* data;
    bool owns_data;  // false for block_wrap blocks over host memory
};

// Domain points evaluated together: registers of this many elements per
// instruction stay in L1/L2 (numexpr's reasoning; 512 measured best here
// among 256..4096 for short and long IR lists alike).
constexpr int kChunk = 512;

// 1 if op runs with operands of dtype, else 0 (get_method).
int supports(int32_t op, int32_t dtype);

// Evaluates `ir` into `dst`; on failure returns false with *error set.
bool interpret(const gpupy_ir& ir, Block* dst, std::string* error);

}  // namespace gpupy_sw
