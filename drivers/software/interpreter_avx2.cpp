// The interpreter compiled with AVX2 (see interpreter.cpp); chosen at run
// time on CPUs that have it. Wheels stay runnable on baseline x86-64.
#define GPUPY_SW_VARIANT avx2
#define GPUPY_SW_SECONDARY_VARIANT
#include "interpreter.cpp"
