// The dtype table (dtypes.def) as data: names, sizes, kinds and C++ types,
// shared by the core and every driver so none of them keeps its own copy.
#ifndef GPUPY_DTYPE_META_HPP
#define GPUPY_DTYPE_META_HPP

#include <cstdint>
#include <type_traits>

#include "driver.hpp"
#include "float16.hpp"

namespace gpupy {

enum class DtypeKind : uint8_t { Bool, Signed, Unsigned, Float };

struct DtypeMeta {
    int32_t code;
    const char* name;        // "FLOAT32"
    const char* numpy_name;  // "float32"
    int itemsize;
    DtypeKind kind;
};

namespace detail {
template <class C>
constexpr DtypeKind kind_of(bool is_bool) {
    if (is_bool) return DtypeKind::Bool;
    if (is_float_v<C>) return DtypeKind::Float;
    return std::is_signed_v<C> ? DtypeKind::Signed : DtypeKind::Unsigned;
}
}  // namespace detail

inline constexpr DtypeMeta kDtypeRows[] = {
#define GPUPY_DTYPE(NAME, CODE, CTYPE, NUMPY_NAME, ITEMSIZE) \
    {CODE, #NAME, NUMPY_NAME, ITEMSIZE, detail::kind_of<CTYPE>(CODE == GPUPY_BOOL)},
#include "dtypes.def"
#undef GPUPY_DTYPE
};

constexpr bool dtype_codes_are_dense() {
    // dtypes index arrays everywhere: their codes are 0, 1, 2, ... in order.
    for (int i = 0; i < static_cast<int>(sizeof kDtypeRows / sizeof kDtypeRows[0]); ++i) {
        if (kDtypeRows[i].code != i) return false;
    }
    return true;
}
static_assert(dtype_codes_are_dense(), "dtypes.def: codes must be 0, 1, 2, ... in row order");
static_assert(sizeof kDtypeRows / sizeof kDtypeRows[0] == GPUPY_NUM_DTYPES, "dtypes.def: one row per code");

constexpr bool dtype_valid(int32_t t) { return t >= 0 && t < GPUPY_NUM_DTYPES; }
// Callers check dtype_valid first where the dtype comes from outside.
constexpr const DtypeMeta& dtype_meta(int32_t t) { return kDtypeRows[t]; }
constexpr int dtype_itemsize(int32_t t) { return dtype_valid(t) ? kDtypeRows[t].itemsize : 0; }
constexpr const char* dtype_name(int32_t t) { return dtype_valid(t) ? kDtypeRows[t].numpy_name : "?"; }
constexpr bool dtype_is_bool(int32_t t) { return dtype_valid(t) && kDtypeRows[t].kind == DtypeKind::Bool; }
constexpr bool dtype_is_float(int32_t t) { return dtype_valid(t) && kDtypeRows[t].kind == DtypeKind::Float; }
constexpr bool dtype_is_signed_int(int32_t t) { return dtype_valid(t) && kDtypeRows[t].kind == DtypeKind::Signed; }
constexpr bool dtype_is_unsigned_int(int32_t t) { return dtype_valid(t) && kDtypeRows[t].kind == DtypeKind::Unsigned; }
constexpr bool dtype_is_integer(int32_t t) { return dtype_is_signed_int(t) || dtype_is_unsigned_int(t); }

// The C++ type that holds one element of dtype D (bool as bool: one byte
// holding 0 or 1, as NumPy stores it).
template <int D>
struct CType;
#define GPUPY_DTYPE(NAME, CODE, CTYPE, NUMPY_NAME, ITEMSIZE)                          \
    template <>                                                                        \
    struct CType<CODE> {                                                               \
        using type = std::conditional_t<CODE == GPUPY_BOOL, bool, CTYPE>;              \
        static_assert(sizeof(type) == ITEMSIZE, "dtypes.def: itemsize of " #NAME);    \
    };
#include "dtypes.def"
#undef GPUPY_DTYPE

// Calls fn(T{}) with T the C++ type of `dtype` and returns its result;
// returns R{} for an unknown dtype.
template <class R, class Fn>
R with_ctype(int32_t dtype, Fn&& fn) {
    switch (dtype) {
#define GPUPY_DTYPE(NAME, CODE, CTYPE, NUMPY_NAME, ITEMSIZE) \
    case CODE:                                              \
        return fn(typename CType<CODE>::type{});
#include "dtypes.def"
#undef GPUPY_DTYPE
    }
    return R{};
}

// The dtype table as the driver ABI carries it (gpupy_driver_api.dtype_rows).
inline constexpr gpupy_dtype_row gpupy_dtype_rows[] = {
#define GPUPY_DTYPE(NAME, CODE, CTYPE, NUMPY_NAME, ITEMSIZE) {CODE, NUMPY_NAME, ITEMSIZE},
#include "dtypes.def"
#undef GPUPY_DTYPE
};
inline constexpr int32_t gpupy_num_dtype_rows = sizeof gpupy_dtype_rows / sizeof gpupy_dtype_rows[0];

}  // namespace gpupy

#endif  // GPUPY_DTYPE_META_HPP
