// Process-wide state: the loaded drivers, the active one, its block cache
// and the settings. The Python bindings talk to the core through this.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "block_cache.hpp"
#include "driver_loader.hpp"
#include "node.hpp"

namespace gpupy {

class Runtime {
public:
    static Runtime& get();

    // Loads `name` if needed and makes it the active driver. Blocks on the
    // previous driver are read back and freed first.
    void use_driver(const std::string& name);
    bool has_driver() const { return active_ != nullptr; }
    Driver& driver();
    BlockCache& cache() { return cache_; }

    // Evaluates one expression node in NumPy (fallback), filling its whole
    // host buffer; set by the bindings.
    std::function<void(Node& node)> host_evaluator;

    // Evaluations whose output is at most this many elements run on the
    // host interpreter instead of the device (0: never); see evaluator.cpp.
    int64_t small_work_elements = 0;

private:
    Runtime();
    std::map<std::string, std::unique_ptr<Driver>> drivers_;
    Driver* active_ = nullptr;
    BlockCache cache_;
};

}  // namespace gpupy
