#include "value_facts.hpp"

#include <cmath>

#include "glsl_types.hpp"

namespace gpupy_glsl {

namespace {

bool is_float(int dtype) { return glsl_type(dtype).kind == DtypeKind::Float; }

uint8_t cast_facts(int from, int to, uint8_t src) {
    if (!is_float(to)) return kNeverNan | kFinite;
    if (!is_float(from)) {
        // Every integer fits in float32's and float64's range (not float16's).
        return kNeverNan | (glsl_type(to).bits >= 32 ? kFinite : 0) |
               (glsl_type(from).kind == DtypeKind::Signed ? 0 : kNonNegative);
    }
    uint8_t f = src & (kNeverNan | kNonNegative);
    if (glsl_type(to).bits >= glsl_type(from).bits) f |= src & kFinite;
    return f;
}

// Facts of an arithmetic instruction from its operands' (float result).
uint8_t op_facts(const gpupy_ir_instr& in, const std::vector<uint8_t>& facts) {
    auto has = [&](int k, uint8_t f) { return (facts[in.arg[k]] & f) == f; };
    switch (in.op) {
        case GPUPY_OP_ADD: {
            // inf + -inf is the only NaN of two numbers: impossible when both
            // are finite or both are non-negative.
            const bool nn = has(0, kNonNegative | kNeverNan) && has(1, kNonNegative | kNeverNan);
            const bool fin = has(0, kFinite | kNeverNan) && has(1, kFinite | kNeverNan);
            return (nn || fin ? kNeverNan : 0) | (nn ? kNonNegative : 0);
        }
        case GPUPY_OP_SUBTRACT:
            return has(0, kFinite | kNeverNan) && has(1, kFinite | kNeverNan) ? kNeverNan : 0;
        case GPUPY_OP_MULTIPLY: {
            if (in.arg[0] == in.arg[1]) return has(0, kNeverNan) ? kNeverNan | kNonNegative : 0;
            // 0 * inf is the only NaN of two numbers.
            const bool fin = has(0, kFinite | kNeverNan) && has(1, kFinite | kNeverNan);
            const bool nn = has(0, kNonNegative) && has(1, kNonNegative);
            return fin ? kNeverNan | (nn ? kNonNegative : 0) : 0;
        }
        case GPUPY_OP_SQUARE: return has(0, kNeverNan) ? kNeverNan | kNonNegative : 0;
        case GPUPY_OP_SQRT: return has(0, kNeverNan | kNonNegative) ? kNeverNan | kNonNegative : 0;
        case GPUPY_OP_ABSOLUTE:
        case GPUPY_OP_FABS:
            return has(0, kNeverNan) ? (facts[in.arg[0]] & kFinite) | kNeverNan | kNonNegative : 0;
        case GPUPY_OP_NEGATIVE:
        case GPUPY_OP_POSITIVE: {
            const uint8_t keep = in.op == GPUPY_OP_POSITIVE ? (kNeverNan | kFinite | kNonNegative) : (kNeverNan | kFinite);
            return facts[in.arg[0]] & keep;
        }
        case GPUPY_OP_MAXIMUM:
        case GPUPY_OP_MINIMUM: {
            if (!has(0, kNeverNan) || !has(1, kNeverNan)) return 0;
            const bool fin = has(0, kFinite) && has(1, kFinite);
            const bool nn = in.op == GPUPY_OP_MINIMUM ? has(0, kNonNegative) && has(1, kNonNegative)
                                                      : has(0, kNonNegative) || has(1, kNonNegative);
            return kNeverNan | (fin ? kFinite : 0) | (nn ? kNonNegative : 0);
        }
        default:
            return 0;
    }
}

}  // namespace

uint8_t const_facts(const gpupy_ir_instr& in) {
    if (!is_float(in.dtype)) return kNeverNan | kFinite;
    const double v = in.value.f;
    if (std::isnan(v)) return 0;
    // Not the sign: constants of either sign share one program.
    return kNeverNan | (std::isfinite(v) ? kFinite : 0);
}

std::vector<uint8_t> value_facts(const gpupy_ir& ir) {
    std::vector<uint8_t> facts(ir.ninstr > 0 ? ir.ninstr : 0, 0);
    for (int i = 0; i < ir.ninstr; ++i) {
        const gpupy_ir_instr& in = ir.instr[i];
        if (in.op == GPUPY_OP_CONST) {
            facts[i] = const_facts(in);
        } else if (!is_float(in.dtype)) {
            facts[i] = kNeverNan | kFinite;  // integers and bools
        } else if (in.op == GPUPY_OP_INDEX) {
            facts[i] = kNeverNan | kFinite | kNonNegative;  // an element index, converted
        } else if (in.op == GPUPY_OP_LOAD) {
            facts[i] = 0;  // data: anything
        } else if (in.op == GPUPY_OP_CAST) {
            facts[i] = cast_facts(ir.instr[in.arg[0]].dtype, in.dtype, facts[in.arg[0]]);
        } else if (is_float(ir.instr[in.arg[0]].dtype)) {
            facts[i] = op_facts(in, facts);
        }
    }
    return facts;
}

}  // namespace gpupy_glsl
