// Shared by the core's C++ tests: the runtime with the fake driver active,
// settings put back after each test, and host arrays in and out.
#pragma once

#include <cstring>
#include <vector>

#include "core/execution/evaluator.hpp"
#include "core/graph/array.hpp"
#include "core/graph/node_factory.hpp"
#include "core/memory/host_transfer.hpp"
#include "core/runtime/runtime.hpp"
#include "fake_driver.hpp"

namespace support {

// The runtime with the fake driver active; a Scope puts the block size,
// cache budget and fake limits back as they were and empties the cache.
inline gpupy::Runtime& runtime() {
    gpupy::Runtime& rt = gpupy::Runtime::get();
    if (!rt.has_driver() || rt.driver().name() != "fake") {
        rt.add_driver(gpupy::Driver::from_api(fake::api(), "fake", "the tests' fake driver"));
        rt.use_driver("fake");
    }
    return rt;
}

struct Scope {
    gpupy::Runtime& rt = runtime();
    int64_t block = rt.cache().block_size();
    int64_t budget = rt.cache().budget();
    fake::Limits limits = fake::limits();
    Scope() {
        rt.cache().clear();
        fake::record() = fake::Record{};
    }
    ~Scope() {
        rt.cache().clear();
        rt.cache().set_block_size(block);
        rt.cache().set_budget(budget);
        fake::limits() = limits;
    }
};

// A float64 ARRAY node holding `values` in `shape`.
inline gpupy::GpuArray array(const std::vector<double>& values, gpupy::Dims shape = {}) {
    if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
    auto buf = std::make_shared<gpupy::HostBuffer>(values.size() * sizeof(double));
    std::memcpy(buf->data(), values.data(), values.size() * sizeof(double));
    return gpupy::GpuArray::of(gpupy::NodeFactory::array(GPUPY_FLOAT64, shape, std::move(buf)));
}

inline std::vector<double> ramp(int64_t n, double start = 0, double step = 1) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[i] = start + step * static_cast<double>(i);
    return v;
}

// The values of a view, evaluated, in C order.
inline std::vector<double> values(const gpupy::GpuArray& a) {
    gpupy::ensure_host(a.node_view());
    std::vector<double> out(static_cast<size_t>(a.size()));
    gpupy::gather_from_host(a.node(), a.geom, 0, a.size(), reinterpret_cast<char*>(out.data()));
    return out;
}

inline gpupy::GpuArray binary(gpupy::OpCode op, const gpupy::GpuArray& a, const gpupy::GpuArray& b) {
    return gpupy::GpuArray::of(gpupy::NodeFactory::expression(op, GPUPY_FLOAT64, a.geom.shape, {a.node_view(), b.node_view()}));
}

}  // namespace support
