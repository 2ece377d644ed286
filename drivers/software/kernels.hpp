// Scalar kernels of the software driver: one functor per row of ops.def,
// each computing exactly what NumPy's ufunc loop computes for one element.
//
// Every functor has
//   template <class T> static constexpr bool ok;   which operand dtypes it runs
//   template <class T> static R f(T a[, T b]);     the element operation
// where R is T, or bool (stored as uint8_t) for predicates. The interpreter
// instantiates loops from them with the X-macro over ops.def, so a row
// without a functor fails to compile.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "gpupy/numpy_casts.hpp"

namespace gpupy_sw {

using u8 = uint8_t;

template <class T>
constexpr bool is_bool = std::is_same_v<T, bool>;
// The type the kernels compute values of T in: float16 in float32, as
// NumPy's float16 loops do (each result rounded back to float16 by its
// store), every other type in itself. No kernel takes a float16.
template <class T>
using computed_t = std::conditional_t<std::is_same_v<T, gpupy::float16>, float, T>;
template <class T>
constexpr bool is_float = std::is_floating_point_v<T>;

// The C library's float functions (expf, sinhf, ...) differ in accuracy
// between libraries and versions (glibc documents up to 2 ulps for some).
// float32 goes through the double function instead and is rounded once:
// the double result is within a few double ulps of exact (any libm), so
// the float result is the correctly rounded one or, when the exact value
// lies within ~2^-50 of a rounding midpoint, its neighbour -- at most 1 ulp
// from the correctly rounded result on every machine (docs/accuracy.md).
// double runs the double function itself.
template <class T>
constexpr double wide(T a) { return static_cast<double>(a); }
template <class T>
constexpr bool is_int = std::is_integral_v<T> && !is_bool<T>;
template <class T>
constexpr bool is_sint = is_int<T> && std::is_signed_v<T>;
template <class T>
constexpr bool is_num = is_float<T> || is_int<T>;
template <class T>
constexpr bool any_type = true;

// Wrapping integer arithmetic (NumPy wraps; signed overflow is UB in C++).
template <class T>
T wrap_add(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrap_sub(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
T wrap_mul(T a, T b) {
    using U = std::make_unsigned_t<T>;
    // Promote small types to unsigned int to avoid int promotion overflow.
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
}

// NumPy's float divmod (npymath npy_divmod): floor division and a
// remainder with the divisor's sign, exact where C's fmod is.
template <class T>
T py_divmod(T a, T b, T* modulus) {
    T mod = std::fmod(a, b);
    if (b == 0) {
        *modulus = mod;
        return a / b;
    }
    T div = (a - mod) / b;
    if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
            mod += b;
            div -= T(1);
        }
    } else {
        mod = std::copysign(T(0), b);
    }
    T floordiv;
    if (div != 0) {
        floordiv = std::floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
    } else {
        floordiv = std::copysign(T(0), a / b);
    }
    *modulus = mod;
    return floordiv;
}

#define GPUPY_SW_UNARY(NAME, COND, EXPR)          \
    struct K_##NAME {                             \
        template <class T>                        \
        static constexpr bool ok = COND;          \
        template <class T>                        \
        static auto f(T a) {                      \
            return EXPR;                          \
        }                                         \
    };
#define GPUPY_SW_BINARY(NAME, COND, EXPR)         \
    struct K_##NAME {                             \
        template <class T>                        \
        static constexpr bool ok = COND;          \
        template <class T>                        \
        static auto f(T a, T b) {                 \
            return EXPR;                          \
        }                                         \
    };

// --- arithmetic ---------------------------------------------------------------
struct K_ADD {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_bool<T>) return a | b;  // branch-free, as the logical ops below
        else if constexpr (is_int<T>) return wrap_add(a, b);
        else return a + b;
    }
};
struct K_SUBTRACT {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_int<T>) return wrap_sub(a, b);
        else return a - b;
    }
};
struct K_MULTIPLY {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_bool<T>) return a & b;
        else if constexpr (is_int<T>) return wrap_mul(a, b);
        else return a * b;
    }
};
GPUPY_SW_BINARY(DIVIDE, is_float<T>, a / b)
struct K_FLOOR_DIVIDE {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) {
            if (b == 0) return a / b;
            T mod;
            return py_divmod(a, b, &mod);
        } else {
            if (b == 0) return 0;
            if constexpr (is_sint<T>) {
                if (a == std::numeric_limits<T>::min() && b == -1) return a;
                T q = static_cast<T>(a / b);
                if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
                return q;
            } else {
                return static_cast<T>(a / b);
            }
        }
    }
};
struct K_REMAINDER {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) {
            if (b == 0) return std::fmod(a, b);
            T mod;
            py_divmod(a, b, &mod);
            return mod;
        } else {
            if (b == 0) return 0;
            if constexpr (is_sint<T>) {
                if (b == -1) return 0;
                T r = static_cast<T>(a % b);
                if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
                return r;
            } else {
                return static_cast<T>(a % b);
            }
        }
    }
};
struct K_FMOD {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) {
            return std::fmod(a, b);
        } else {
            if (b == 0) return 0;
            if constexpr (is_sint<T>) {
                if (b == -1) return 0;
            }
            return static_cast<T>(a % b);
        }
    }
};
// The core sends integer powers here only with exponents >= 0 (NumPy
// raises for negative ones, so those run in NumPy).
struct K_POWER {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) {
            return static_cast<T>(std::pow(wide(a), wide(b)));  // see wide()
        } else {
            T result = 1;
            for (uint64_t e = b < 0 ? 0 : static_cast<uint64_t>(b); e; e >>= 1) {
                if (e & 1) result = wrap_mul(result, a);
                a = wrap_mul(a, a);
            }
            return result;
        }
    }
};
struct K_NEGATIVE {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a) {
        if constexpr (is_int<T>) return wrap_sub(T(0), a);
        else return -a;
    }
};
GPUPY_SW_UNARY(POSITIVE, is_num<T>, a)
struct K_ABSOLUTE {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a) {
        if constexpr (is_float<T>) return std::fabs(a);
        else if constexpr (is_sint<T>) return a < 0 ? wrap_sub(T(0), a) : a;
        else return a;
    }
};
GPUPY_SW_UNARY(FABS, is_float<T>, std::fabs(a))
struct K_SIGN {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a) {
        if constexpr (is_float<T>) {
            if (std::isnan(a)) return a;
            return a > 0 ? T(1) : (a < 0 ? T(-1) : T(0));
        } else {
            return static_cast<T>((a > 0) - (a < T(0)));
        }
    }
};
struct K_SQUARE {
    template <class T>
    static constexpr bool ok = is_num<T>;
    template <class T>
    static T f(T a) {
        if constexpr (is_int<T>) return wrap_mul(a, a);
        else return a * a;
    }
};
#define GPUPY_SW_MATH1(NAME, FN) GPUPY_SW_UNARY(NAME, is_float<T>, static_cast<T>(FN(wide(a))))
#define GPUPY_SW_MATH2(NAME, FN) GPUPY_SW_BINARY(NAME, is_float<T>, static_cast<T>(FN(wide(a), wide(b))))

// Integers: NumPy's loop computes 1.0 / x and converts it to the integer
// type (0 for |x| > 1; 1 / 0 gives the x86 conversion of inf, which
// numpy_cast reproduces on every CPU).
template <class T>
T reciprocal(T a) {
    if constexpr (is_float<T>) return T(1) / a;
    else return gpupy::numpy_cast<T>(1.0 / static_cast<double>(a));
}
GPUPY_SW_UNARY(RECIPROCAL, is_num<T>, reciprocal(a))
GPUPY_SW_UNARY(SQRT, is_float<T>, std::sqrt(a))
GPUPY_SW_MATH1(CBRT, std::cbrt)

// --- exponentials and logarithms ---------------------------------------------------
GPUPY_SW_MATH1(EXP, std::exp)
GPUPY_SW_MATH1(EXP2, std::exp2)
GPUPY_SW_MATH1(EXPM1, std::expm1)
GPUPY_SW_MATH1(LOG, std::log)
GPUPY_SW_MATH1(LOG2, std::log2)
GPUPY_SW_MATH1(LOG10, std::log10)
GPUPY_SW_MATH1(LOG1P, std::log1p)
struct K_LOGADDEXP {
    template <class T>
    static constexpr bool ok = is_float<T>;
    // NumPy's formula, evaluated in double for float32 (see wide()): its
    // cancellation near a result of 0 then costs nothing after rounding.
    static double g(double x, double y) {
        if (x == y) return x + 0.693147180559945309417232121458176568;  // also inf + inf
        const double d = x - y;
        if (d > 0) return x + std::log1p(std::exp(-d));
        if (d <= 0) return y + std::log1p(std::exp(d));
        return d;  // NaN
    }
    template <class T>
    static T f(T x, T y) { return static_cast<T>(g(wide(x), wide(y))); }
};
struct K_LOGADDEXP2 {
    template <class T>
    static constexpr bool ok = is_float<T>;
    static double g(double x, double y) {
        const double log2e = 1.442695040888963407359924681001892137;
        if (x == y) return x + 1;
        const double d = x - y;
        if (d > 0) return x + log2e * std::log1p(std::exp2(-d));
        if (d <= 0) return y + log2e * std::log1p(std::exp2(d));
        return d;
    }
    template <class T>
    static T f(T x, T y) { return static_cast<T>(g(wide(x), wide(y))); }
};

// --- trigonometric and hyperbolic ------------------------------------------------
GPUPY_SW_MATH1(SIN, std::sin)
GPUPY_SW_MATH1(COS, std::cos)
GPUPY_SW_MATH1(TAN, std::tan)
GPUPY_SW_MATH1(ARCSIN, std::asin)
GPUPY_SW_MATH1(ARCCOS, std::acos)
GPUPY_SW_MATH1(ARCTAN, std::atan)
GPUPY_SW_MATH2(ARCTAN2, std::atan2)
GPUPY_SW_MATH2(HYPOT, std::hypot)
GPUPY_SW_MATH1(SINH, std::sinh)
GPUPY_SW_MATH1(COSH, std::cosh)
GPUPY_SW_MATH1(TANH, std::tanh)
GPUPY_SW_MATH1(ARCSINH, std::asinh)
GPUPY_SW_MATH1(ARCCOSH, std::acosh)
GPUPY_SW_MATH1(ARCTANH, std::atanh)
// NumPy multiplies by a constant computed in the dtype: pi/180 with pi
// rounded to the dtype first.
template <class T>
constexpr T kPi = static_cast<T>(3.14159265358979323846264338327950288);
GPUPY_SW_UNARY(DEG2RAD, is_float<T>, a * (kPi<T> / T(180)))
GPUPY_SW_UNARY(RAD2DEG, is_float<T>, a * (T(180) / kPi<T>))

// --- rounding ------------------------------------------------------------------
// Integers and bools are already integral (NumPy 2 has loops returning them).
struct K_FLOOR {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a) {
        if constexpr (is_float<T>) return std::floor(a);
        else return a;
    }
};
struct K_CEIL {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a) {
        if constexpr (is_float<T>) return std::ceil(a);
        else return a;
    }
};
struct K_TRUNC {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a) {
        if constexpr (is_float<T>) return std::trunc(a);
        else return a;
    }
};
GPUPY_SW_UNARY(RINT, is_float<T>, std::nearbyint(a))

// --- extrema -------------------------------------------------------------------
// NaN handling as NumPy's. On ties (+0 vs -0) maximum/minimum return the
// second operand and fmax/fmin the first, as NumPy's loops do.
struct K_MAXIMUM {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) return ((a > b) | std::isnan(a)) ? a : b;
        else return a >= b ? a : b;
    }
};
struct K_MINIMUM {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) return ((a < b) | std::isnan(a)) ? a : b;
        else return a <= b ? a : b;
    }
};
struct K_FMAX {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) return ((a >= b) | std::isnan(b)) ? a : b;
        else return a >= b ? a : b;
    }
};
struct K_FMIN {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static T f(T a, T b) {
        if constexpr (is_float<T>) return ((a <= b) | std::isnan(b)) ? a : b;
        else return a <= b ? a : b;
    }
};

// --- comparisons and logic -------------------------------------------------------
GPUPY_SW_BINARY(EQUAL, any_type<T>, static_cast<bool>(a == b))
GPUPY_SW_BINARY(NOT_EQUAL, any_type<T>, static_cast<bool>(a != b))
GPUPY_SW_BINARY(LESS, any_type<T>, static_cast<bool>(a < b))
GPUPY_SW_BINARY(LESS_EQUAL, any_type<T>, static_cast<bool>(a <= b))
GPUPY_SW_BINARY(GREATER, any_type<T>, static_cast<bool>(a > b))
GPUPY_SW_BINARY(GREATER_EQUAL, any_type<T>, static_cast<bool>(a >= b))
// Bitwise & and | of the two truth values, not && and ||: no branch per
// element (on random masks a short-circuit mispredicts half the time and
// does not vectorise: 4x slower than NumPy's loop at 400,000 elements).
GPUPY_SW_BINARY(LOGICAL_AND, any_type<T>, static_cast<bool>((a != T(0)) & (b != T(0))))
GPUPY_SW_BINARY(LOGICAL_OR, any_type<T>, static_cast<bool>((a != T(0)) | (b != T(0))))
GPUPY_SW_BINARY(LOGICAL_XOR, any_type<T>, static_cast<bool>((a != T(0)) != (b != T(0))))
GPUPY_SW_UNARY(LOGICAL_NOT, any_type<T>, static_cast<bool>(a == T(0)))

// --- bits ------------------------------------------------------------------------
GPUPY_SW_BINARY(BITWISE_AND, !is_float<T>, static_cast<T>(a & b))
GPUPY_SW_BINARY(BITWISE_OR, !is_float<T>, static_cast<T>(a | b))
GPUPY_SW_BINARY(BITWISE_XOR, !is_float<T>, static_cast<T>(a ^ b))
struct K_INVERT {
    template <class T>
    static constexpr bool ok = !is_float<T>;
    template <class T>
    static T f(T a) {
        if constexpr (is_bool<T>) return !a;
        else return static_cast<T>(~a);
    }
};
// NumPy compares the shift count as a size_t, so negative counts are huge.
template <class T>
uint64_t shift_count(T b) {
    if constexpr (is_sint<T>) return static_cast<uint64_t>(static_cast<int64_t>(b));
    else return static_cast<uint64_t>(b);
}
struct K_LEFT_SHIFT {
    template <class T>
    static constexpr bool ok = is_int<T>;
    template <class T>
    static T f(T a, T b) {
        using U = std::make_unsigned_t<T>;
        if (shift_count(b) < sizeof(T) * 8) return static_cast<T>(static_cast<U>(static_cast<U>(a) << shift_count(b)));
        return 0;
    }
};
struct K_RIGHT_SHIFT {
    template <class T>
    static constexpr bool ok = is_int<T>;
    template <class T>
    static T f(T a, T b) {
        if (shift_count(b) < sizeof(T) * 8) return static_cast<T>(a >> shift_count(b));
        if constexpr (is_sint<T>) return a < 0 ? T(-1) : T(0);
        else return 0;
    }
};

// --- floating-point classification ------------------------------------------------
struct K_ISNAN {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static bool f(T a) {
        if constexpr (is_float<T>) return std::isnan(a);
        else return false;
    }
};
struct K_ISINF {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static bool f(T a) {
        if constexpr (is_float<T>) return std::isinf(a);
        else return false;
    }
};
struct K_ISFINITE {
    template <class T>
    static constexpr bool ok = true;
    template <class T>
    static bool f(T a) {
        if constexpr (is_float<T>) return std::isfinite(a);
        else return true;
    }
};
GPUPY_SW_UNARY(SIGNBIT, is_float<T>, static_cast<bool>(std::signbit(a)))
GPUPY_SW_BINARY(COPYSIGN, is_float<T>, std::copysign(a, b))

// CAST, WHERE and GATHER are handled by the interpreter itself (their
// operand and result dtypes differ); these entries only say which dtypes
// they accept.
struct K_CAST {
    template <class T>
    static constexpr bool ok = true;
};
struct K_WHERE {
    template <class T>
    static constexpr bool ok = true;
};
struct K_GATHER {
    template <class T>
    static constexpr bool ok = true;
};

#undef GPUPY_SW_UNARY
#undef GPUPY_SW_BINARY

}  // namespace gpupy_sw
