// The measured cost of this machine's two places for one evaluation: the
// host engine (the software driver computing in place on host memory) and
// the active device. The package measures the parameters once per driver,
// device and gpupy version (gpupy/_calibration.py) and hands them here;
// until it does (or with GPUPY_CALIBRATION=off) the driver's own judgement
// decides (prefers_host). What placed evaluations then take corrects the
// parameters (runtime/placement_feedback.hpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpupy {

// One evaluation wanted in host memory, as the cost model sees it.
struct Work {
    int64_t elements = 0;  // outputs computed
    int64_t ops = 0;       // distinct operations (each planned once), `math` of them math functions
    int64_t math = 0;
    int64_t result_bytes = 0;    // what the device reads back
    int64_t upload_bytes = 0;    // inputs only on the host: what the device uploads first
    int64_t download_bytes = 0;  // inputs only on the device: what the host engine reads back first
    // Operations computed per output, `computed_math` of them math
    // functions: the distinct operations, each as many times as it is
    // computed for one output (below a reduction, once per element it
    // folds: a sum of 262,144 elements of a 7-operation expression
    // computes 7 x 262,144 for its one output).
    double computed = 0;
    double computed_math = 0;

    // Work whose operations each compute once per output.
    static Work elementwise(int64_t elements, int64_t ops, int64_t math, int64_t result_bytes, int64_t upload_bytes,
                            int64_t download_bytes) {
        return {elements, ops, math, result_bytes, upload_bytes, download_bytes, static_cast<double>(ops),
                static_cast<double>(math)};
    }
};

// The two places an evaluation wanted in host memory can run.
enum class Place { Host = 0, Device = 1 };

// A place's cost of some work: fixed (per evaluation) plus work (growing
// with the elements and bytes). The two are corrected apart.
struct Cost {
    double fixed = 0, work = 0;
    double total() const { return fixed + work; }
};

struct CostModel {
    bool calibrated = false;
    // Host engine: a fixed cost per evaluation (dispatch to its threads),
    // one per operation whatever the size (planning it: ~1-3 us an
    // operation, which a deep expression of few elements pays in full) and
    // a cost per output element and operation, for two classes
    // of operations: arithmetic, comparisons and the like (a few cycles),
    // and math-library functions (ops.def's GPUPY_OPF_MATH: exp, sin, ...;
    // tens of cycles, and a different ratio between the places).
    // Deep expressions cost the host engine more per operation (more
    // registers per element: smaller chunks, more cache traffic): its cost
    // per operation is measured at a shallow and at kDeepOps operations
    // and interpolated between (flat beyond).
    double host_dispatch_ns = 0;
    double host_ns_per_op = 0;
    double host_ns_per_element_op = 0;
    double host_ns_per_element_op_deep = 0;
    double host_ns_per_element_math = 0;
    // Device: a fixed cost per evaluation (dispatch), the round trip of
    // reading a result back (waiting for the device, the readback's own
    // latency: a GPU's is tens of microseconds whatever the size), one per
    // operation whatever the size (planning it, writing its program), a
    // cost per output element whatever it computes (on a CPU renderer every
    // shader invocation costs ~7-10 ns on its own) and per element and
    // operation.
    double device_dispatch_ns = 0;
    double device_readback_ns = 0;
    double device_ns_per_op = 0;
    double device_ns_per_element = 0;
    double device_ns_per_element_op = 0;
    double device_ns_per_element_math = 0;
    // Moving values between host and device memory, per byte, each way.
    double upload_ns_per_byte = 0;
    double download_ns_per_byte = 0;
    // Matrix products: NumPy's BLAS on the host and the device's own
    // product, per flop. Not measured (0, 0): the host, BLAS being the
    // known-good code.
    double host_product_ns_per_flop = 0;
    double device_product_ns_per_flop = 0;

    static constexpr int64_t kShallowOps = 96, kDeepOps = 1024;

    // The host engine computes in host memory; inputs only on the device
    // come back first.
    Cost host_engine(const Work& w) const {
        const double depth = std::clamp(static_cast<double>(w.ops - kShallowOps) / (kDeepOps - kShallowOps), 0.0, 1.0);
        const double op_ns = host_ns_per_element_op + depth * (host_ns_per_element_op_deep - host_ns_per_element_op);
        return {host_dispatch_ns + static_cast<double>(w.ops) * host_ns_per_op,
                static_cast<double>(w.elements) * per_element(w, op_ns, host_ns_per_element_math) +
                    static_cast<double>(w.download_bytes) * download_ns_per_byte};
    }
    // The device uploads inputs it does not hold, computes, and its result
    // comes back to the host.
    Cost device(const Work& w) const {
        const double e = static_cast<double>(w.elements);
        return {device_dispatch_ns + device_readback_ns + static_cast<double>(w.ops) * device_ns_per_op,
                e * (device_ns_per_element +
                     per_element(w, device_ns_per_element_op, device_ns_per_element_math)) +
                    static_cast<double>(w.upload_bytes) * upload_ns_per_byte +
                    static_cast<double>(w.result_bytes) * download_ns_per_byte};
    }

    Cost at(Place p, const Work& w) const { return p == Place::Host ? host_engine(w) : device(w); }

    // The host engine's or the device's parameters scaled: the fixed costs
    // by `fixed`, the costs of work by `work` (what the place measured
    // against what was predicted, PlacementFeedback).
    void scale_host(double fixed, double work) {
        host_dispatch_ns *= fixed;
        host_ns_per_op *= fixed;
        host_ns_per_element_op *= work;
        host_ns_per_element_op_deep *= work;
        host_ns_per_element_math *= work;
    }
    void scale_device(double fixed, double work) {
        device_dispatch_ns *= fixed;
        device_readback_ns *= fixed;
        device_ns_per_op *= fixed;
        device_ns_per_element *= work;
        device_ns_per_element_op *= work;
        device_ns_per_element_math *= work;
        upload_ns_per_byte *= work;
        download_ns_per_byte *= work;
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
    static double per_element(const Work& w, double op_ns, double math_ns) {
        return (w.computed - w.computed_math) * op_ns + w.computed_math * math_ns;
    }
};

}  // namespace gpupy
