#include "runtime.hpp"

#include "errors.hpp"
#include "node_hooks.hpp"
#include "stats.hpp"

namespace gpupy {

Stats& stats() {
    static Stats s;
    return s;
}

Runtime& Runtime::get() {
    // Leaked on purpose: Python may free arrays (and so nodes with cached
    // blocks) after static destructors ran at interpreter exit.
    static Runtime* rt = new Runtime();
    return *rt;
}

Runtime::Runtime() {
    node_hooks().on_destroy = [](Node* n) { Runtime::get().cache().forget(n); };
}

Driver& Runtime::driver() {
    if (!active_) throw DriverError("no gpupy driver is active");
    return *active_;
}

void Runtime::use_driver(const std::string& name) {
    auto it = drivers_.find(name);
    Driver* next;
    if (it == drivers_.end()) {
        std::unique_ptr<Driver> d = Driver::load(name);  // throws DriverError
        next = d.get();
        drivers_.emplace(name, std::move(d));
    } else {
        next = it->second.get();
    }
    if (next == active_) return;
    if (active_) cache_.clear();
    active_ = next;
    cache_.attach(next);
}

}  // namespace gpupy
