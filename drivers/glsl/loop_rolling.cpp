#include "loop_rolling.hpp"

#include <algorithm>

#include "glsl_ops.hpp"

namespace gpupy_glsl {

namespace {

// Instructions a copy may hold: anything computed from operands, and
// constants (each copy's own, read from a uniform array). Leaves that read
// blocks or the domain index have per-instruction parameters and stay out.
bool rollable(const gpupy_ir_instr& in) {
    return in.op != GPUPY_OP_LOAD && in.op != GPUPY_OP_INDEX && in.op != GPUPY_OP_GATHER;
}

// How each operand of the template reads, decided from the second copy and
// held by every later one.
enum class Role : uint8_t { Unknown, Own, Before, Carry };

// Whether `copies` copies of `length` instructions from `begin` compute what
// one loop body does; fills `loop` if so.
bool verify(const gpupy_ir& ir, const std::vector<uint8_t>& facts, const std::vector<int>& check_slot, int begin,
            int length, int copies, RolledLoop* loop) {
    RolledLoop r;
    r.begin = begin, r.length = length, r.copies = copies;
    std::vector<Role> role(static_cast<size_t>(length) * 3, Role::Unknown);
    for (int c = 0; c < copies; ++c) {
        for (int j = 0; j < length; ++j) {
            const int x = r.at(c, j), y = r.at(0, j);
            const gpupy_ir_instr &in = ir.instr[x], &tp = ir.instr[y];
            if (!rollable(tp) || in.op != tp.op || in.dtype != tp.dtype || facts[x] != facts[y]) return false;
            // One check slot per copy, at a fixed stride (the core lists
            // checks in instruction order).
            if ((check_slot[x] < 0) != (check_slot[y] < 0)) return false;
            if (check_slot[y] >= 0) {
                const int step = check_slot[x] - check_slot[y];
                if (c == 1 && r.check_stride == 0) r.check_stride = step;
                if (c > 0 && (step <= 0 || step != c * r.check_stride)) return false;
            }
            if (tp.op == GPUPY_OP_CONST) continue;
            for (int k = 0; k < op_arity(tp.op); ++k) {
                const int a = in.arg[k], b = tp.arg[k];
                if (a < 0 || b < 0 || ir.instr[a].dtype != ir.instr[b].dtype || facts[a] != facts[b]) return false;
                Role& rk = role[static_cast<size_t>(j) * 3 + k];
                if (b >= begin) {  // an operand of the same copy
                    if (a != b + c * length) return false;
                    rk = Role::Own;
                    continue;
                }
                if (c == 0) continue;
                Role seen = Role::Before;
                if (a != b) {
                    // The previous copy's carry, which the first copy reads at b.
                    const int o = a - r.at(c - 1, 0);
                    if (o < 0 || o >= length) return false;
                    if (r.carry_out < 0) r.carry_out = o, r.carry_in = b;
                    if (o != r.carry_out || b != r.carry_in) return false;
                    seen = Role::Carry;
                }
                if (rk != Role::Unknown && rk != seen) return false;
                rk = seen;
            }
        }
    }
    if (r.carry_out < 0) return false;
    // The carry's start is read only as the carry (the body renames it).
    for (int j = 0; j < length; ++j) {
        const gpupy_ir_instr& tp = ir.instr[r.at(0, j)];
        if (tp.op == GPUPY_OP_CONST) continue;
        for (int k = 0; k < op_arity(tp.op); ++k) {
            if (tp.arg[k] == r.carry_in && role[static_cast<size_t>(j) * 3 + k] != Role::Carry) return false;
        }
    }
    if (ir.instr[r.carry_in].dtype != ir.instr[r.at(0, r.carry_out)].dtype) return false;
    // After the loop only the last carry is read.
    const int last = r.last_carry();
    auto inside = [&](int i) { return i >= r.begin && i < r.end(); };
    for (int i = r.end(); i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (in.op == GPUPY_OP_CONST || in.op == GPUPY_OP_LOAD || in.op == GPUPY_OP_INDEX) continue;
        for (int k = 0; k < op_arity(in.op); ++k) {
            if (inside(in.arg[k]) && in.arg[k] != last) return false;
        }
    }
    for (int k = 0; k < ir.noutputs; ++k) {
        if (inside(ir.output[k]) && ir.output[k] != last) return false;
    }
    *loop = r;
    return true;
}

}  // namespace

RolledLoop find_rolled_loop(const gpupy_ir& ir, const std::vector<uint8_t>& facts, const std::vector<int>& check_slot) {
    RolledLoop best;
    const int n = ir.ninstr;
    if (n < kMinRolledInstructions) return best;
    // Copies agree in op and dtype at every offset: runs where instruction
    // i matches i + length are where `length` may be a copy's size.
    auto same = [&](int i, int j) { return ir.instr[i].op == ir.instr[j].op && ir.instr[i].dtype == ir.instr[j].dtype; };
    for (int length = 1; length <= kMaxRolledLength && length * kMinRolledCopies <= n; ++length) {
        int i = 0;
        while (i + length < n) {
            if (!same(i, i + length)) {
                ++i;
                continue;
            }
            int run_end = i;  // [i, run_end) matches `length` later
            while (run_end + length < n && same(run_end, run_end + length)) ++run_end;
            // Copies starting at each phase of the run: all that fit in it,
            // else one fewer (a last copy whose value more than the next
            // copy reads). A phase is tried only where it could cover more
            // than the best found.
            for (int begin = i; begin < i + length; ++begin) {
                const int fits = (run_end + length - begin) / length;
                for (int copies = fits; copies >= std::max(kMinRolledCopies, fits - 1); --copies) {
                    if (copies * length < kMinRolledInstructions || copies * length <= best.copies * best.length) break;
                    RolledLoop r;
                    if (verify(ir, facts, check_slot, begin, length, copies, &r)) {
                        best = r;
                        break;
                    }
                }
            }
            i = run_end + 1;
        }
    }
    return best;
}

}  // namespace gpupy_glsl
