// Repeated segments of an IR list, written as one loop.
//
// A Python loop that folds many terms into one value -- the distance map's
// `m = minimum(dist(p), m)` over a thousand points, a polynomial or a sum
// built term by term -- reaches the driver as one long list in which the
// same few instructions repeat with other constants, each copy reading the
// value the copy before it produced. Written out straight, the shader grows
// with the number of terms, and so does the time a GPU's compiler needs for
// it (seconds for a thousand terms on NVIDIA). Written as a loop over the
// copies, with each copy's constants read from uniform arrays, the shader's
// size no longer depends on the number of terms; this is how a hand-written
// shader does the same work.
//
// The copies must compute exactly what the straight list computes: the same
// operations on the same dtypes, each reading either a value of its own
// copy, a value computed before the first copy (the same for every copy), or
// the value the previous copy handed on (the "carry"), which the first copy
// reads from an instruction before it. What the code generator may assume of
// a value (value_facts) must agree between the copies, since one body serves
// them all; so must the floating-point checks, one slot per copy at a fixed
// stride. Only the last copy's carry may be read after the loop.
#pragma once

#include <cstdint>
#include <vector>

#include "gpupy/driver.hpp"

namespace gpupy_glsl {

struct RolledLoop {
    int begin = -1;        // the first copy's first instruction (the loop body's template)
    int length = 0;        // instructions per copy
    int copies = 0;        // 0: nothing to roll
    int carry_in = -1;     // the instruction before the loop that the first copy reads as the carry
    int carry_out = -1;    // offset, within a copy, of the value the next copy reads
    int check_stride = 0;  // check slots between one copy's and the next's (gpupy_ir.check)

    bool found() const { return copies > 0; }
    int end() const { return begin + length * copies; }
    // The instruction of copy c at offset j.
    int at(int c, int j) const { return begin + c * length + j; }
    int last_carry() const { return at(copies - 1, carry_out); }
};

// Rolling pays only where the straight list is long: at least this many
// copies covering at least this many instructions.
constexpr int kMinRolledCopies = 4;
constexpr int kMinRolledInstructions = 32;
// Longest copy searched for (a copy is one term of the Python loop).
constexpr int kMaxRolledLength = 64;

// The repetition in `ir` covering the most instructions (ties: the shortest
// copy), or none. `facts` is value_facts(ir); `check_slot[i]` the check slot
// of instruction i or -1.
RolledLoop find_rolled_loop(const gpupy_ir& ir, const std::vector<uint8_t>& facts, const std::vector<int>& check_slot);

}  // namespace gpupy_glsl
