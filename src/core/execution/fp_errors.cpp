#include "core/execution/fp_errors.hpp"

#include <algorithm>

#include "core/runtime/stats.hpp"

namespace gpupy {

const char* const kFpReduce = "reduce";
const char* const kFpAccumulate = "accumulate";

namespace {

std::vector<std::pair<const char*, uint8_t>>& queued() {
    static auto* q = new std::vector<std::pair<const char*, uint8_t>>();
    return *q;
}

// Ops whose values never hold a NaN or an infinity their operands did not
// (sign changes, rounding, selections, comparisons): not worth a check.
bool never_makes_nonfinite(OpCode op) {
    switch (op) {
    case GPUPY_OP_NEGATIVE:
    case GPUPY_OP_POSITIVE:
    case GPUPY_OP_ABSOLUTE:
    case GPUPY_OP_FABS:
    case GPUPY_OP_SIGN:
    case GPUPY_OP_COPYSIGN:
    case GPUPY_OP_FLOOR:
    case GPUPY_OP_CEIL:
    case GPUPY_OP_TRUNC:
    case GPUPY_OP_RINT:
    case GPUPY_OP_MAXIMUM:
    case GPUPY_OP_MINIMUM:
    case GPUPY_OP_FMAX:
    case GPUPY_OP_FMIN:
    case GPUPY_OP_WHERE:
    case GPUPY_OP_CAST:
    case GPUPY_OP_GATHER:
        return true;
    default:
        return op_is_predicate(op);
    }
}

}  // namespace

const char* fp_kind_words(uint8_t kind) {
    switch (kind) {
    case kFpDivide: return "divide by zero";
    case kFpOverflow: return "overflow";
    default: return "invalid value";
    }
}

bool fp_checkable(OpCode op, DType result) {
    if (op < 0 || never_makes_nonfinite(op)) return false;
    if (dtype_is_float(result)) return true;
    return result != GPUPY_BOOL && (op == GPUPY_OP_FLOOR_DIVIDE || op == GPUPY_OP_REMAINDER ||
                                    op == GPUPY_OP_FMOD || op == GPUPY_OP_RECIPROCAL);
}

OpCode fp_op(const Node& n) { return n.op() == CORE_OP_REDUCE ? n.reduce_params().fold : n.op(); }

void mark_fp_checks(Node* node, const FpWarnings& w) {
    if (!w.kinds || node->kind() != NodeKind::Expression || node->complete()) return;
    const OpCode op = fp_op(*node);
    const bool checkable = node->op() == CORE_OP_REDUCE ? gpupy_fold_checkable(op, node->dtype())
                                                        : fp_checkable(op, node->dtype());
    if (!checkable) return;
    node->fp_warn |= w.kinds;
    if (w.name) {
        node->fp_name = w.name;
    } else if (w.ufunc != GPUPY_OP_NONE && w.ufunc != op) {
        node->fp_name = op_numpy_name(w.ufunc);
    }
}

void name_fp_errors(Node* node, const char* name) {
    if (node->fp_warn) node->fp_name = name;
}

uint8_t fp_kinds_of(OpCode op, uint32_t flags) {
    uint8_t kinds = 0;
    if (flags & GPUPY_FP_NAN) kinds |= kFpInvalid;
    // An infinity from a zero operand (1/0, log(0), 0**-1) is NumPy's
    // division by zero; from finite non-zero operands an overflow, except
    // where the op has a pole there (arctanh(1), log1p(-1)).
    if (flags & (GPUPY_FP_INF_AT_ZERO | GPUPY_FP_ZERO_DIVISOR)) kinds |= kFpDivide;
    // NumPy's integer reciprocal divides in floating point and converts
    // the infinity back: an invalid value too.
    if ((flags & GPUPY_FP_ZERO_DIVISOR) && op == GPUPY_OP_RECIPROCAL) kinds |= kFpInvalid;
    if (flags & GPUPY_FP_INF) kinds |= (op == GPUPY_OP_ARCTANH || op == GPUPY_OP_LOG1P) ? kFpDivide : kFpOverflow;
    if (flags & GPUPY_FP_INT_OVERFLOW) kinds |= kFpOverflow;
    // NumPy's float floor_divide of an overflowing quotient (100 / tiny)
    // also meets the remainder of an infinity.
    if ((flags & GPUPY_FP_INF) && op == GPUPY_OP_FLOOR_DIVIDE) kinds |= kFpInvalid;
    return kinds;
}

void note_fp_errors(Node* node, uint8_t kinds) {
    const uint8_t fresh = kinds & fp_kinds_to_check(*node);
    if (!fresh) return;
    node->fp_reported |= fresh;
    const char* named = node->fp_name ? node->fp_name : op_numpy_name(fp_op(*node));
    const bool once = named == kFpReduce || named == kFpAccumulate;
    // NumPy's order within one call: divide, over, invalid.
    for (uint8_t kind : {kFpDivide, kFpOverflow, kFpInvalid}) {
        if (!(fresh & kind)) continue;
        const std::pair<const char*, uint8_t> error(named, kind);
        if (once && std::find(queued().begin(), queued().end(), error) != queued().end()) continue;
        queued().push_back(error);
        ++stats().fp_errors_reported;
    }
}

std::vector<std::pair<const char*, uint8_t>> take_fp_errors() {
    std::vector<std::pair<const char*, uint8_t>> out;
    out.swap(queued());
    return out;
}

}  // namespace gpupy
