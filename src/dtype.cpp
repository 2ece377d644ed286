#include "dtype.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace gpupy {

namespace {

struct DTypeInfo {
    const char* name;
    int itemsize;
};

const DTypeInfo kInfo[] = {
#define GPUPY_DTYPE(NAME, CTYPE, NUMPY_NAME, ITEMSIZE) {NUMPY_NAME, ITEMSIZE},
#include "dtypes.def"
#undef GPUPY_DTYPE
};

template <class T>
gpupy_scalar pack(T v) {
    gpupy_scalar s;
    if constexpr (std::is_floating_point_v<T>) {
        s.f = static_cast<double>(v);
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        s.u = v;
    } else {
        s.i = static_cast<int64_t>(v);
    }
    return s;
}

// Float to integer conversion as C's cast does it, but defined for every
// input: NaN and out-of-range values give what x86 gives NumPy (the
// "integer indefinite" value for 32/64-bit results), instead of C's
// undefined behaviour.
template <class T>
T float_to_int(double v) {
    if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t> ||
                  std::is_same_v<T, uint16_t> || std::is_same_v<T, int16_t>) {
        // NumPy converts through a 32-bit int (truncating) for small types.
        return static_cast<T>(float_to_int<int32_t>(v));
    } else if constexpr (std::is_same_v<T, uint32_t>) {
        return static_cast<T>(float_to_int<int64_t>(v));
    } else if constexpr (std::is_same_v<T, uint64_t>) {
        // x86's conversion sequence: 2^64 and above give 0; NaN and -2^63
        // and below give the "integer indefinite" value.
        if (v >= 18446744073709551616.0) return 0;
        if (std::isnan(v) || v <= -9223372036854775808.0) return static_cast<T>(0x8000000000000000ULL);
        if (v < 0) return static_cast<T>(static_cast<int64_t>(v));
        return static_cast<T>(v);
    } else {
        constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());
        constexpr double hi = -lo;  // 2^(bits-1)
        if (std::isnan(v) || v >= hi || v < lo) return std::numeric_limits<T>::min();
        return static_cast<T>(v);
    }
}

template <class T>
gpupy_scalar from_double(double v) {
    if constexpr (std::is_floating_point_v<T>) {
        return pack<T>(static_cast<T>(v));
    } else if constexpr (std::is_same_v<T, uint8_t>) {
        return pack<T>(static_cast<T>(float_to_int<int32_t>(v)));
    } else {
        return pack<T>(float_to_int<T>(v));
    }
}

}  // namespace

bool dtype_valid(DType t) { return t >= 0 && t < GPUPY_NUM_DTYPES; }
int dtype_itemsize(DType t) { return kInfo[t].itemsize; }
const char* dtype_name(DType t) { return kInfo[t].name; }
bool dtype_is_float(DType t) { return t == GPUPY_FLOAT32 || t == GPUPY_FLOAT64; }
bool dtype_is_signed_int(DType t) {
    return t == GPUPY_INT8 || t == GPUPY_INT16 || t == GPUPY_INT32 || t == GPUPY_INT64;
}
bool dtype_is_unsigned_int(DType t) {
    return t == GPUPY_UINT8 || t == GPUPY_UINT16 || t == GPUPY_UINT32 || t == GPUPY_UINT64;
}

gpupy_scalar scalar_from_double(DType t, double v) {
    if (t == GPUPY_BOOL) return pack<uint8_t>(v != 0.0);
    switch (t) {
#define GPUPY_DTYPE(NAME, CTYPE, NUMPY_NAME, ITEMSIZE) \
    case GPUPY_##NAME: return from_double<CTYPE>(v);
#include "dtypes.def"
#undef GPUPY_DTYPE
    }
    return pack<int64_t>(0);
}

gpupy_scalar scalar_from_int(DType t, int64_t v) {
    if (t == GPUPY_BOOL) return pack<uint8_t>(v != 0);
    switch (t) {
#define GPUPY_DTYPE(NAME, CTYPE, NUMPY_NAME, ITEMSIZE) \
    case GPUPY_##NAME: return pack<CTYPE>(static_cast<CTYPE>(v));
#include "dtypes.def"
#undef GPUPY_DTYPE
    }
    return pack<int64_t>(0);
}

gpupy_scalar scalar_from_uint(DType t, uint64_t v) {
    if (t == GPUPY_FLOAT32) return pack<float>(static_cast<float>(v));
    if (t == GPUPY_FLOAT64) return pack<double>(static_cast<double>(v));
    if (t == GPUPY_BOOL) return pack<uint8_t>(v != 0);
    return scalar_from_int(t, static_cast<int64_t>(v));
}

gpupy_scalar scalar_load(DType t, const void* p) {
    switch (t) {
#define GPUPY_DTYPE(NAME, CTYPE, NUMPY_NAME, ITEMSIZE) \
    case GPUPY_##NAME: {                               \
        CTYPE v;                                       \
        std::memcpy(&v, p, sizeof v);                  \
        return pack<CTYPE>(v);                         \
    }
#include "dtypes.def"
#undef GPUPY_DTYPE
    }
    return pack<int64_t>(0);
}

void scalar_store(DType t, gpupy_scalar s, void* p) {
    switch (t) {
#define GPUPY_DTYPE(NAME, CTYPE, NUMPY_NAME, ITEMSIZE)                                   \
    case GPUPY_##NAME: {                                                                 \
        CTYPE v;                                                                         \
        if constexpr (std::is_floating_point_v<CTYPE>) v = static_cast<CTYPE>(s.f);      \
        else if constexpr (std::is_same_v<CTYPE, uint64_t>) v = s.u;                     \
        else v = static_cast<CTYPE>(s.i);                                                \
        std::memcpy(p, &v, sizeof v);                                                    \
        return;                                                                          \
    }
#include "dtypes.def"
#undef GPUPY_DTYPE
    }
}

}  // namespace gpupy
