// NumPy's cast rules for one element, shared by the core (constants, fold
// start values) and the drivers that compute on the CPU (the CAST kernel):
// the result of ndarray.astype(To, casting="unsafe") for one value From.
//
// C++ leaves float-to-integer conversion of NaN and out-of-range values
// undefined; NumPy gives what the x86 conversion instructions give (the
// "integer indefinite" value), and so does this, on every CPU.
#ifndef GPUPY_NUMPY_CASTS_HPP
#define GPUPY_NUMPY_CASTS_HPP

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "dtype_meta.hpp"

namespace gpupy {

template <class To, class From>
To numpy_cast(From v) {
    if constexpr (std::is_same_v<To, bool>) {
        return v != From(0);
    } else if constexpr (is_float_v<From> && std::is_integral_v<To>) {
        const double d = static_cast<double>(v);
        if constexpr (sizeof(To) < 4) {
            // NumPy converts through a 32-bit int (truncating) for small types.
            return static_cast<To>(numpy_cast<int32_t>(v));
        } else if constexpr (std::is_same_v<To, uint32_t>) {
            return static_cast<To>(numpy_cast<int64_t>(v));
        } else if constexpr (std::is_same_v<To, uint64_t>) {
            // x86's conversion sequence: 2^64 and above give 0; NaN and -2^63
            // and below give the "integer indefinite" value.
            if (d >= 18446744073709551616.0) return 0;
            if (std::isnan(d) || d <= -9223372036854775808.0) return static_cast<To>(0x8000000000000000ULL);
            if (d < 0) return static_cast<To>(static_cast<int64_t>(d));
            return static_cast<To>(d);
        } else {
            constexpr double lo = static_cast<double>(std::numeric_limits<To>::min());  // -2^(bits-1)
            if (std::isnan(d) || d >= -lo || d < lo) return std::numeric_limits<To>::min();
            return static_cast<To>(d);
        }
    } else {
        // Integer to integer wraps (two's complement), integer to float
        // rounds to nearest, float to float rounds to nearest: C++'s casts.
        return static_cast<To>(v);
    }
}

// --- gpupy_scalar: a constant of some dtype ---------------------------------------
// Floats are held in .f (a float32 exactly as a double), uint64 in .u,
// every other integer and bool in .i.

template <class T>
gpupy_scalar scalar_pack(T v) {
    gpupy_scalar s;
    if constexpr (is_float_v<T>) s.f = static_cast<double>(v);
    else if constexpr (std::is_same_v<T, uint64_t>) s.u = v;
    else s.i = static_cast<int64_t>(v);
    return s;
}

template <class T>
T scalar_as(gpupy_scalar s) {
    if constexpr (is_float_v<T>) return static_cast<T>(s.f);
    else if constexpr (std::is_same_v<T, bool>) return s.i != 0;
    else if constexpr (std::is_same_v<T, uint64_t>) return s.u;
    else return static_cast<T>(s.i);
}

// A value converted to dtype `t` as NumPy's astype(casting="unsafe") would.
inline gpupy_scalar scalar_from_double(int32_t t, double v) {
    return with_ctype<gpupy_scalar>(t, [&](auto x) { return scalar_pack(numpy_cast<decltype(x)>(v)); });
}
inline gpupy_scalar scalar_from_int(int32_t t, int64_t v) {
    return with_ctype<gpupy_scalar>(t, [&](auto x) { return scalar_pack(numpy_cast<decltype(x)>(v)); });
}
inline gpupy_scalar scalar_from_uint(int32_t t, uint64_t v) {
    return with_ctype<gpupy_scalar>(t, [&](auto x) { return scalar_pack(numpy_cast<decltype(x)>(v)); });
}

// Reads one element of dtype `t` from memory / writes one to memory.
inline gpupy_scalar scalar_load(int32_t t, const void* p) {
    return with_ctype<gpupy_scalar>(t, [&](auto x) {
        decltype(x) v;
        std::memcpy(&v, p, sizeof v);
        return scalar_pack(v);
    });
}
inline void scalar_store(int32_t t, gpupy_scalar s, void* p) {
    with_ctype<int>(t, [&](auto x) {
        const decltype(x) v = scalar_as<decltype(x)>(s);
        std::memcpy(p, &v, sizeof v);
        return 0;
    });
}

}  // namespace gpupy

#endif  // GPUPY_NUMPY_CASTS_HPP
