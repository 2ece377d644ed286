// NumPy's BLAS on the calling thread alone, for one product.
#pragma once

namespace gpupy {

// While alive, a host product of `flops` reading `bytes` started on this
// thread uses BLAS's worker threads only if they pay for it
// (Runtime::product_threads_pay); otherwise it runs on the calling thread
// alone, counted in stats().products_on_calling_thread, and the previous
// setting comes back at the end. Works with OpenBLAS (the BLAS NumPy's
// wheels ship), through its thread-local setting; with another BLAS, or an
// OpenBLAS without that setting, it does nothing.
// Whether NumPy's BLAS offers that thread-local setting (OpenBLAS 0.3.27
// and later, exported unprefixed: NumPy 2.5's scipy-openblas build does not
// export it).
bool blas_threads_settable();

class BlasOnCallingThread {
public:
    BlasOnCallingThread(double flops, double bytes);
    ~BlasOnCallingThread();
    BlasOnCallingThread(const BlasOnCallingThread&) = delete;
    BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;

private:
    int previous_ = -1;  // -1: nothing changed
};

}  // namespace gpupy
