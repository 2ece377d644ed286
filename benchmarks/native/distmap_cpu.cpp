// The distance map of thesis appendix A.3 written directly in C++, as the
// thesis's "C version" (Figure 5.2). Built by benchmarks/native.py with
// g++ -O3 -fno-math-errno (the flags gpupy itself is built with; without
// -fno-math-errno GCC keeps a scalar errno check around every sqrt and the
// loop does not vectorise); a second build adds -fopenmp. Loaded with ctypes
// so that Python's time.perf_counter times it like every other version.
//
// Same arithmetic as the NumPy program, in float32: for row x and column y
//   d = sqrt((x - x0)^2 + (y - y0)^2), distMin = min over the points,
//   pxls = 255 * ((distMin - 0) / (max(distMin) - 0)).
#include <cmath>
#include <cstdint>
#include <limits>
#ifdef _OPENMP
#include <omp.h>
#endif

extern "C" {

// Number of threads the OpenMP build uses (1 without OpenMP).
int distmap_threads() {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

// out: n*n floats, row-major (row = first index, as numpy.fromfunction's x).
// px, py: the points' coordinates, already rounded to float32 as NumPy
// rounds a Python float operand of a float32 array (NEP 50).
void distmap(float* out, int n, const float* px, const float* py, int npts) {
    const float inf = std::numeric_limits<float>::infinity();
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; ++i) {
        float* row = out + static_cast<int64_t>(i) * n;
        const float x = static_cast<float>(i);
        for (int j = 0; j < n; ++j) row[j] = inf;
        // Points outside, columns inside: the row (n floats) stays in L1
        // and the inner loop is a straight vectorisable min/sqrt.
        for (int k = 0; k < npts; ++k) {
            const float dx = x - px[k];
            const float dx2 = dx * dx;
            const float y0 = py[k];
            for (int j = 0; j < n; ++j) {
                const float dy = static_cast<float>(j) - y0;
                const float d = std::sqrt(dx2 + dy * dy);
                row[j] = d < row[j] ? d : row[j];
            }
        }
    }
    float mx = 0.0f;
    const int64_t total = static_cast<int64_t>(n) * n;
#pragma omp parallel for reduction(max : mx) schedule(static)
    for (int64_t i = 0; i < total; ++i) mx = out[i] > mx ? out[i] : mx;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < total; ++i) out[i] = 255.0f * ((out[i] - 0.0f) / (mx - 0.0f));
}

}  // extern "C"
