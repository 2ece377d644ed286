// NumPy's BLAS on the calling thread alone, for one product.
#pragma once

namespace gpupy {

// While alive (and `active`), BLAS products started on this thread use
// no worker threads; the previous setting comes back at the end. Works
// with OpenBLAS (the BLAS NumPy's wheels ship), through its thread-local
// setting; with another BLAS, or an OpenBLAS without that setting, it
// does nothing.
class BlasOnCallingThread {
public:
    explicit BlasOnCallingThread(bool active);
    ~BlasOnCallingThread();
    BlasOnCallingThread(const BlasOnCallingThread&) = delete;
    BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;
    // Whether BLAS was held to this thread (active, and a BLAS that has the
    // setting).
    bool held() const { return previous_ >= 0; }

private:
    int previous_ = -1;  // -1: nothing changed
};

}  // namespace gpupy
