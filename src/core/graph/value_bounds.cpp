#include "core/graph/value_bounds.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <unordered_map>

#include "core/graph/op_table.hpp"

namespace gpupy {

namespace {

// Following further costs more than the check it saves.
constexpr int kMaxNodes = 1024;
constexpr int kMaxDepth = 256;

using Maybe = std::optional<ValueBounds>;

// Integers beyond this are not all exact in a double.
constexpr double kExactInteger = 9007199254740992.0;  // 2^53

// The values dtype t holds, lowest and highest, as doubles; integers only
// as far as a double holds every one exactly.
std::pair<double, double> held_range(DType t) {
    return with_ctype<std::pair<double, double>>(t, [](auto x) {
        using T = decltype(x);
        using L = std::numeric_limits<T>;
        double lo = static_cast<double>(L::lowest()), hi = static_cast<double>(L::max());
        if constexpr (std::is_integral_v<T>) {
            lo = std::max(lo, -kExactInteger);
            hi = std::min(hi, kExactInteger);
        }
        return std::pair<double, double>{lo, hi};
    });
}

// [lo, hi] as values of dtype t: nothing where t cannot hold them all (an
// integer result would wrap, a float one overflow to infinity -- and
// infinity minus infinity is NaN). `rounded`: the values are rounded to t
// (an arithmetic result, a conversion to a float), so the bounds widen by
// a few units in the last place of t, and by its smallest normal number
// (a device may flush subnormal results to zero).
Maybe fit(DType t, double lo, double hi, bool rounded) {
    if (!(lo <= hi)) return std::nullopt;  // (NaN bounds included)
    if (dtype_is_bool(t)) return ValueBounds{0, 1};
    if (rounded && dtype_is_float(t)) {
        // A few ulps of t (2^-10, 2^-23, 2^-52 apart) and its smallest normal.
        const double rel = t == GPUPY_FLOAT16 ? 0x1p-8 : t == GPUPY_FLOAT32 ? 0x1p-20 : 0x1p-48;
        const double tiny = t == GPUPY_FLOAT16 ? 0x1p-14 : t == GPUPY_FLOAT32 ? FLT_MIN : DBL_MIN;
        lo -= std::fabs(lo) * rel + tiny;
        hi += std::fabs(hi) * rel + tiny;
    }
    const auto [lowest, highest] = held_range(t);
    if (lo < lowest || hi > highest) return std::nullopt;
    return ValueBounds{lo, hi};
}

Maybe join(const Maybe& a, const Maybe& b) {
    if (!a || !b) return std::nullopt;
    return ValueBounds{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
}

Maybe of_constant(const Node& x) {
    const gpupy_scalar v = x.value();
    const DType t = x.dtype();
    if (dtype_is_float(t)) {
        if (!std::isfinite(v.f)) return std::nullopt;
        return fit(t, v.f, v.f, true);  // (a subnormal may reach a device as zero)
    }
    const double d = dtype_is_unsigned_int(t) ? static_cast<double>(v.u) : static_cast<double>(v.i);
    return fit(t, d, d, false);
}

class Prover {
public:
    Maybe of(const NodeView& v, int depth) {
        const Node* x = v.node.get();
        auto it = memo_.find(x);
        if (it != memo_.end()) return it->second;
        if (++visited_ > kMaxNodes || depth > kMaxDepth) return std::nullopt;
        Maybe b = dtype_is_bool(x->dtype()) ? Maybe{ValueBounds{0, 1}} : compute(*x, depth + 1);
        memo_.emplace(x, b);
        return b;
    }

private:
    Maybe compute(const Node& x, int depth) {
        if (x.kind() == NodeKind::Constant) return of_constant(x);
        if (x.kind() != NodeKind::Expression) return std::nullopt;  // values in memory
        const DType t = x.dtype();
        const OpCode op = x.op();
        if (op == GPUPY_OP_INDEX) {
            const double n = static_cast<double>(x.shape()[static_cast<size_t>(x.index_params().axis)]);
            return fit(t, 0, std::max(0.0, n - 1), dtype_is_float(t));
        }
        const auto& in = x.children();
        if (in.empty()) return std::nullopt;  // evaluated: its operands are gone
        auto arg = [&](size_t k) { return k < in.size() ? of(in[k], depth) : Maybe{}; };
        switch (op) {
        case CORE_OP_REMAP:  // every edge mode reads elements of the operand
            return arg(0);
        case CORE_OP_CONCAT: {
            Maybe all = arg(0);
            for (size_t k = 1; k < in.size() && all; ++k) all = join(all, arg(k));
            return all;
        }
        case GPUPY_OP_GATHER:  // an element of the source (children: index, source)
            return arg(1);
        case GPUPY_OP_WHERE:
            return join(arg(1), arg(2));
        case GPUPY_OP_CAST: {
            const Maybe a = arg(0);
            if (!a) return std::nullopt;
            if (dtype_is_float(t)) return fit(t, a->lo, a->hi, true);
            if (dtype_is_float(in[0].node->dtype()))  // astype truncates toward zero
                return fit(t, std::trunc(a->lo), std::trunc(a->hi), false);
            return fit(t, a->lo, a->hi, false);
        }
        case GPUPY_OP_POSITIVE:
            return arg(0);
        case GPUPY_OP_NEGATIVE: {
            const Maybe a = arg(0);
            return a ? fit(t, -a->hi, -a->lo, false) : std::nullopt;
        }
        case GPUPY_OP_ABSOLUTE:
        case GPUPY_OP_FABS: {
            const Maybe a = arg(0);
            if (!a) return std::nullopt;
            if (a->lo >= 0) return a;
            if (a->hi <= 0) return fit(t, -a->hi, -a->lo, false);
            return fit(t, 0, std::max(-a->lo, a->hi), false);
        }
        case GPUPY_OP_FLOOR:
        case GPUPY_OP_CEIL:
        case GPUPY_OP_TRUNC:
        case GPUPY_OP_RINT: {
            const Maybe a = arg(0);
            if (!a) return std::nullopt;
            if (!dtype_is_float(t)) return a;  // integers are their own rounding
            // Each is monotonic; rint's ties go either way.
            if (op == GPUPY_OP_FLOOR) return fit(t, std::floor(a->lo), std::floor(a->hi), false);
            if (op == GPUPY_OP_CEIL) return fit(t, std::ceil(a->lo), std::ceil(a->hi), false);
            if (op == GPUPY_OP_TRUNC) return fit(t, std::trunc(a->lo), std::trunc(a->hi), false);
            return fit(t, std::floor(a->lo), std::ceil(a->hi), false);
        }
        case GPUPY_OP_MAXIMUM:
        case GPUPY_OP_FMAX: {
            const Maybe a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return ValueBounds{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
        }
        case GPUPY_OP_MINIMUM:
        case GPUPY_OP_FMIN: {
            const Maybe a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            return ValueBounds{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
        }
        case GPUPY_OP_ADD:
        case GPUPY_OP_SUBTRACT:
        case GPUPY_OP_MULTIPLY: {
            const Maybe a = arg(0), b = arg(1);
            if (!a || !b) return std::nullopt;
            const bool rounded = dtype_is_float(t);
            if (op == GPUPY_OP_ADD) return fit(t, a->lo + b->lo, a->hi + b->hi, rounded);
            if (op == GPUPY_OP_SUBTRACT) return fit(t, a->lo - b->hi, a->hi - b->lo, rounded);
            const double p[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
            return fit(t, *std::min_element(p, p + 4), *std::max_element(p, p + 4), rounded);
        }
        case GPUPY_OP_SQUARE: {
            const Maybe a = arg(0);
            if (!a) return std::nullopt;
            const double l = a->lo * a->lo, h = a->hi * a->hi;
            const double low = a->lo <= 0 && a->hi >= 0 ? 0 : std::min(l, h);
            return fit(t, low, std::max(l, h), dtype_is_float(t));
        }
        default:
            return std::nullopt;
        }
    }

    std::unordered_map<const Node*, Maybe> memo_;
    int visited_ = 0;
};

}  // namespace

std::optional<ValueBounds> value_bounds(const NodeView& v) { return Prover().of(v, 0); }

}  // namespace gpupy
