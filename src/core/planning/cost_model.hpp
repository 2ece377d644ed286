// The measured cost of this machine's two places for one evaluation: the
// host engine (the software driver computing in place on host memory) and
// the active device. The package measures the parameters once per driver,
// device and gpupy version (gpupy/_calibration.py) and hands them here;
// until it does (or with GPUPY_CALIBRATION=off) the driver's own judgement
// decides (prefers_host).
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpupy {

struct CostModel {
    bool calibrated = false;
    // Host engine: a fixed cost per evaluation (planning, dispatch to its
    // threads) and a cost per output element and operation, for two classes
    // of operations: arithmetic, comparisons and the like (a few cycles),
    // and math-library functions (ops.def's GPUPY_OPF_MATH: exp, sin, ...;
    // tens of cycles, and a different ratio between the places).
    // Deep expressions cost the host engine more per operation (more
    // registers per element: smaller chunks, more cache traffic): its cost
    // per operation is measured at a shallow and at kDeepOps operations
    // and interpolated between (flat beyond).
    double host_dispatch_ns = 0;
    double host_ns_per_element_op = 0;
    double host_ns_per_element_op_deep = 0;
    double host_ns_per_element_math = 0;
    // Device: a fixed cost per evaluation (planning, dispatch, the wait for
    // its result), a cost per output element whatever it computes (on a CPU
    // renderer every shader invocation costs ~7-10 ns on its own) and per
    // element and operation.
    double device_dispatch_ns = 0;
    double device_ns_per_element = 0;
    double device_ns_per_element_op = 0;
    double device_ns_per_element_math = 0;
    // Moving values between host and device memory, per byte (each way).
    double transfer_ns_per_byte = 0;
    // Matrix products: NumPy's BLAS on the host and the device's own
    // product, per flop. Not measured (0, 0): the host, BLAS being the
    // known-good code.
    double host_product_ns_per_flop = 0;
    double device_product_ns_per_flop = 0;

    static constexpr int64_t kShallowOps = 96, kDeepOps = 1024;

    // `ops` operations per element, `math` of them math functions.
    double host_engine_ns(int64_t elements, int64_t ops, int64_t math) const {
        const double depth = std::clamp(static_cast<double>(ops - kShallowOps) / (kDeepOps - kShallowOps), 0.0, 1.0);
        const double op_ns = host_ns_per_element_op + depth * (host_ns_per_element_op_deep - host_ns_per_element_op);
        return host_dispatch_ns + static_cast<double>(elements) * per_element(ops, math, op_ns,
                                                                              host_ns_per_element_math);
    }
    // The device computes the result and its bytes come back to the host
    // (the host engine writes host memory directly).
    double device_ns(int64_t elements, int64_t ops, int64_t math, int64_t result_bytes) const {
        const double e = static_cast<double>(elements);
        return device_dispatch_ns +
               e * (device_ns_per_element +
                    per_element(ops, math, device_ns_per_element_op, device_ns_per_element_math)) +
               static_cast<double>(result_bytes) * transfer_ns_per_byte;
    }

    bool products_cheaper_on_host() const {
        return !calibrated || host_product_ns_per_flop <= device_product_ns_per_flop;
    }

    // Whether a host product of `flops` reading `bytes` is worth BLAS's
    // worker threads. Once woken they spin waiting for the next product
    // (OpenBLAS: ~0.1 s of a core after each) and so take the cores the
    // host engine's workers need: a k-means step with one small product
    // per iteration ran at half speed on two cores. Two threads gain
    // 1.6-1.8x for a matrix product from a few Mflop and about as much for
    // a matrix-vector product, which is memory-bound (measured on a 2-core
    // machine); that pays for the spinning once the product takes
    // kThreadedProductNs on one thread, by its flops or by its bytes.
    static constexpr double kThreadedProductNs = 1e6;
    static constexpr double kDefaultProductNsPerFlop = 0.025;  // 40 Gflop/s: one core's dgemm here
    static constexpr double kProductNsPerByte = 0.1;           // 10 GB/s: one core's streaming reads here
    bool product_threads_pay(double flops, double bytes) const {
        const double per_flop = host_product_ns_per_flop > 0 ? host_product_ns_per_flop : kDefaultProductNsPerFlop;
        return std::max(flops * per_flop, bytes * kProductNsPerByte) >= kThreadedProductNs;
    }

private:
    static double per_element(int64_t ops, int64_t math, double op_ns, double math_ns) {
        return static_cast<double>(ops - math) * op_ns + static_cast<double>(math) * math_ns;
    }
};

}  // namespace gpupy
