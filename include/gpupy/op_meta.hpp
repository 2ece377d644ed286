// The op table (ops.def) as data, shared by the core and every driver:
// names, arity, flags, result dtypes and fold start values, looked up by
// opcode. Nothing here is rebuilt elsewhere: a driver that needs an op's
// arity or name reads it from this header.
#ifndef GPUPY_OP_META_HPP
#define GPUPY_OP_META_HPP

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "driver.hpp"
#include "dtype_meta.hpp"
#include "numpy_casts.hpp"

namespace gpupy {

// The rows of ops.def, in code order, as the driver ABI carries them
// (gpupy_driver_api.op_rows).
inline constexpr gpupy_op_row gpupy_op_rows[] = {
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) {CODE, #NAME, NUMPY_NAME, ARITY, FLAGS, FOLD},
#include "ops.def"
#undef GPUPY_OP
};
inline constexpr int32_t gpupy_num_op_rows = sizeof gpupy_op_rows / sizeof gpupy_op_rows[0];

constexpr bool op_codes_increase() {
    int32_t previous = GPUPY_OP_CONST;
    for (const gpupy_op_row& r : gpupy_op_rows) {
        if (r.code <= previous) return false;
        previous = r.code;
    }
    return true;
}
static_assert(op_codes_increase(), "ops.def: codes must increase down the file and start above CONST (2)");
static_assert(gpupy_op_rows[gpupy_num_op_rows - 1].code + 1 == GPUPY_NUM_OPS, "ops.def: GPUPY_NUM_OPS");

// The leaves, which are not rows of ops.def.
inline constexpr gpupy_op_row kLeafRows[] = {
    {GPUPY_OP_LOAD, "LOAD", "load", 0, 0, GPUPY_FOLD_NONE},
    {GPUPY_OP_INDEX, "INDEX", "index", 0, 0, GPUPY_FOLD_NONE},
    {GPUPY_OP_CONST, "CONST", "const", 0, 0, GPUPY_FOLD_NONE},
};

namespace detail {
// Position of each opcode's row in gpupy_op_rows, -1 for unused codes.
constexpr std::array<int16_t, GPUPY_NUM_OPS> row_of_code() {
    std::array<int16_t, GPUPY_NUM_OPS> a{};
    for (auto& x : a) x = -1;
    for (int i = 0; i < gpupy_num_op_rows; ++i) a[gpupy_op_rows[i].code] = static_cast<int16_t>(i);
    return a;
}
inline constexpr std::array<int16_t, GPUPY_NUM_OPS> kRowOfCode = row_of_code();
}  // namespace detail

// The row of an opcode (a leaf's included), or nullptr if no op has it.
constexpr const gpupy_op_row* op_row(int32_t op) {
    if (op >= GPUPY_OP_LOAD && op <= GPUPY_OP_CONST) return &kLeafRows[op];
    if (op <= GPUPY_OP_CONST || op >= GPUPY_NUM_OPS || detail::kRowOfCode[op] < 0) return nullptr;
    return &gpupy_op_rows[detail::kRowOfCode[op]];
}
constexpr bool op_valid(int32_t op) { return op_row(op) != nullptr; }
constexpr bool op_is_leaf(int32_t op) { return op >= GPUPY_OP_LOAD && op <= GPUPY_OP_CONST; }
// A row of ops.def (not a leaf).
constexpr bool op_is_operation(int32_t op) { return op_valid(op) && !op_is_leaf(op); }
constexpr int op_arity(int32_t op) { return op_valid(op) ? op_row(op)->arity : 0; }
constexpr const char* op_name(int32_t op) { return op_valid(op) ? op_row(op)->name : "NONE"; }
constexpr const char* op_numpy_name(int32_t op) { return op_valid(op) ? op_row(op)->numpy_name : ""; }
constexpr bool op_has_flag(int32_t op, int flag) { return op_valid(op) && (op_row(op)->flags & flag) != 0; }
constexpr bool op_is_commutative(int32_t op) { return op_has_flag(op, GPUPY_OPF_COMMUTATIVE); }
constexpr bool op_is_predicate(int32_t op) { return op_has_flag(op, GPUPY_OPF_PREDICATE); }
constexpr bool op_is_internal(int32_t op) { return op_has_flag(op, GPUPY_OPF_INTERNAL); }
constexpr bool op_is_math(int32_t op) { return op_has_flag(op, GPUPY_OPF_MATH); }
constexpr bool op_folds(int32_t op) { return op_valid(op) && op_row(op)->fold_start != GPUPY_FOLD_NONE; }

// The result dtype of an op other than CAST on operands of `in_dtype` (for
// WHERE: of its value operands).
constexpr int32_t op_result_dtype(int32_t op, int32_t in_dtype) {
    return op_is_predicate(op) ? static_cast<int32_t>(GPUPY_BOOL) : in_dtype;
}

// The value a fold with `op` over dtype `t` starts from (folding it with x
// gives x); zero for an op that does not fold.
inline gpupy_scalar op_fold_start(int32_t op, int32_t t) {
    const int start = op_valid(op) ? op_row(op)->fold_start : GPUPY_FOLD_NONE;
    return with_ctype<gpupy_scalar>(t, [&](auto x) {
        using T = decltype(x);
        using L = std::numeric_limits<T>;
        constexpr bool flt = is_float_v<T>;
        switch (start) {
        case GPUPY_FOLD_ONE: return scalar_pack(T(1));
        case GPUPY_FOLD_ALL_ONES:
            if constexpr (std::is_same_v<T, bool>) return scalar_pack(true);
            else if constexpr (flt) return scalar_pack(T(0));  // no bitwise ops on floats
            else return scalar_pack(static_cast<T>(~std::make_unsigned_t<T>(0)));
        case GPUPY_FOLD_NAN_OR_LOWEST:
            if constexpr (flt) return scalar_pack(L::quiet_NaN());
            [[fallthrough]];
        case GPUPY_FOLD_LOWEST: return scalar_pack(flt ? static_cast<T>(-L::infinity()) : L::lowest());
        case GPUPY_FOLD_NAN_OR_HIGHEST:
            if constexpr (flt) return scalar_pack(L::quiet_NaN());
            [[fallthrough]];
        case GPUPY_FOLD_HIGHEST: return scalar_pack(flt ? L::infinity() : L::max());
        default: return scalar_pack(T(0));
        }
    });
}

}  // namespace gpupy

#endif  // GPUPY_OP_META_HPP
