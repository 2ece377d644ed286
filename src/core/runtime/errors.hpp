// Exceptions thrown inside the core. Each maps to one Python exception
// class at the pybind11 boundary (module.cpp), so C++ code never touches
// the Python error state itself.
#pragma once

#include <stdexcept>
#include <string>

namespace gpupy {

struct ValueError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct IndexError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct TypeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct OverflowError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// NumPy raises AxisError (a ValueError and IndexError) for bad axes.
struct AxisError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct AttributeError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A device that runs out of memory even after the cache is empty.
struct DeviceMemoryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// An array larger than the host's memory and swap (NumPy's MemoryError).
struct HostMemoryError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// The host engine would evaluate op `what()` while the user's fallback mode
// refuses CPU work; the bindings turn it into gpupy's FallbackError.
struct HostEvaluationRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A driver failed (GL error, shader compile failure, ...); the message
// carries the driver's own report.
struct DriverError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A broken internal invariant: a bug in gpupy, never bad user input.
struct InternalError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace gpupy
