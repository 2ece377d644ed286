// The floating-point exception flags NumPy reports (invalid, divide,
// overflow, underflow), cleared before and tested after a NumPy inner loop
// the bindings call directly (py_eager.cpp, py_structural.cpp).
//
// glibc's feclearexcept saves and reloads the whole x87 environment
// (fnstenv/fldenv: about an eighth of a small eager op's time). On x86-64
// the loops compute with SSE/AVX, whose flags are in MXCSR; a flag raised
// through the x87 unit (glibc's feraiseexcept does so for overflow and
// underflow, as NumPy's integer loops call it) is in its status word. Both
// are read and cleared here an instruction each; the flags' bits are the
// same in both registers (and in <cfenv>'s FE_* on x86).
#pragma once

#include <cfenv>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gpupy {

inline constexpr int kReportedFpFlags = FE_INVALID | FE_DIVBYZERO | FE_OVERFLOW | FE_UNDERFLOW;

inline void clear_reported_fp_flags() {
#if defined(__x86_64__)
    // Written only when set (NumPy clears them after its own loops): a
    // write of MXCSR costs several times its read.
    constexpr unsigned kFlags = kReportedFpFlags;
    if (const unsigned csr = _mm_getcsr(); csr & kFlags) _mm_setcsr(csr & ~kFlags);
    unsigned short x87_status;
    __asm__ volatile("fnstsw %0" : "=am"(x87_status));
    if (x87_status & kFlags) __asm__ volatile("fnclex");
#else
    std::feclearexcept(kReportedFpFlags);
#endif
}

inline bool reported_fp_flags_raised() {
#if defined(__x86_64__)
    unsigned short x87_status;
    __asm__ volatile("fnstsw %0" : "=am"(x87_status));
    return ((_mm_getcsr() | x87_status) & static_cast<unsigned>(kReportedFpFlags)) != 0;
#else
    return std::fetestexcept(kReportedFpFlags) != 0;
#endif
}

}  // namespace gpupy
