#include "core/runtime/runtime.hpp"

#include <cstdlib>
#include <string>

#include "core/runtime/errors.hpp"
#include "core/runtime/settings.hpp"
#include "core/graph/node_hooks.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

Runtime& Runtime::get() {
    // Leaked on purpose: Python may free arrays (and so nodes with cached
    // blocks) after static destructors ran at interpreter exit.
    static Runtime* rt = new Runtime();
    return *rt;
}

Runtime::Runtime() : Runtime(Settings::from_environment()) {}

Runtime::Runtime(const Settings& settings)
    : cache_(settings.block_size, settings.cache_bytes), host_elements_(settings.host_elements),
      eager_elements_(settings.eager_elements), eager_elements_chosen_(settings.eager_elements_chosen) {
    node_hooks().on_destroy = [](Node* n) { Runtime::get().cache().forget(n); };
    node_hooks().on_snapshot = [](Node* from, Node* copy) {
        stats().device_copies_adopted += Runtime::get().cache().move_blocks(from, copy);
    };
}

void Runtime::set_host_elements(int64_t n) {
    if (n < -1) throw ValueError("the host threshold must be >= 0 (or None to let the driver judge)");
    host_elements_ = n;
}

std::unique_ptr<Driver> Runtime::load(const std::string& name) {
    std::unique_ptr<Driver> d = Driver::load(name);
    d->offer_host_loops(host_loops_);
    return d;
}

Driver* Runtime::host_engine() {
    // The software driver is the host engine: dependency-free, so it loads
    // wherever the core does.
    auto it = drivers_.find("software");
    if (it == drivers_.end()) {
        if (host_engine_missing_) return nullptr;  // tried once: no library here
        try {
            it = drivers_.emplace("software", load("software")).first;
        } catch (const DriverError&) {
            host_engine_missing_ = true;
            return nullptr;
        }
    }
    return it->second->can_wrap() ? it->second.get() : nullptr;
}

bool Runtime::use_host_engine(const Work& w, bool* by_model) {
    if (by_model) *by_model = false;
    // A driver that computes on host memory itself gains nothing from it
    // (and the software driver as the active device keeps its own blocks,
    // so the cache mechanisms stay exercised).
    if (!active_ || active_->can_wrap() || host_engine() == nullptr) return false;
    Stats& s = stats();
    auto decide = [](bool host, int64_t& to_host, int64_t& to_device) {
        ++(host ? to_host : to_device);
        return host;
    };
    if (host_elements_ >= 0)
        return decide(w.elements <= host_elements_, s.host_engine_by_threshold, s.device_by_threshold);
    if (placement_ != Placement::Auto)
        return decide(placement_ == Placement::Host, s.host_engine_by_setting, s.device_by_setting);
    if (cost_model_.calibrated) {
        if (by_model) *by_model = true;
        const PlacementFeedback::Choice c = feedback_.choose(cost_model_, w);
        const bool host = c.place == Place::Host;
        switch (c.reason) {
        case PlacementFeedback::Reason::Model: return decide(host, s.host_engine_by_cost, s.device_by_cost);
        case PlacementFeedback::Reason::Measured:
            return decide(host, s.host_engine_by_measurement, s.device_by_measurement);
        case PlacementFeedback::Reason::Exploration:
            return decide(host, s.host_engine_by_exploration, s.device_by_exploration);
        }
    }
    const int judged = active_->prefers_host(w.elements, w.ops);
    return decide(judged >= 0 ? judged == 1 : w.elements <= GPUPY_SMALL_WORK_ELEMENTS, s.host_engine_by_driver,
                  s.device_by_driver);
}

void Runtime::note_evaluation(Place p, const Work& w, double measured_ns) {
    if (cost_model_.calibrated) count_correction(feedback_.observe(cost_model_, p, w, measured_ns));
}

void Runtime::note_probe(Place p, const std::vector<PlacementFeedback::Timed>& rows) {
    if (cost_model_.calibrated) count_correction(feedback_.probed(cost_model_, p, rows));
}

void Runtime::count_correction(bool corrected) {
    if (!corrected) return;
    model_corrected_ = true;
    ++stats().model_corrections;
}

Driver& Runtime::driver() {
    if (!active_) throw DriverError("no gpupy driver is active");
    return *active_;
}

void Runtime::add_driver(std::unique_ptr<Driver> driver) {
    const std::string name = driver->name();
    if (drivers_.count(name)) throw ValueError("a driver named '" + name + "' is loaded already");
    driver->offer_host_loops(host_loops_);
    drivers_.emplace(name, std::move(driver));
}

void Runtime::use_driver(const std::string& name) {
    auto it = drivers_.find(name);
    Driver* next;
    if (it == drivers_.end() && left_at_fork_.count(name)) {
        throw DriverError("the " + name + " driver was in use when this process was forked from its parent, and its "
                          "context cannot be used in the child; start processes with multiprocessing's 'spawn' or "
                          "'forkserver' method to use it there");
    }
    if (it == drivers_.end()) {
        std::unique_ptr<Driver> d = load(name);  // throws DriverError
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

void Runtime::before_fork() {
    if (active_ && !active_->can_wrap()) cache_.clear();
}

std::string Runtime::after_fork_in_child() {
    if (!active_ || active_->can_wrap()) return "";
    const std::string left = active_->name();
    for (auto it = drivers_.begin(); it != drivers_.end();) {
        if (it->second->can_wrap()) {
            ++it;
            continue;
        }
        // Never destroyed: its destructor would call into the parent's context.
        static_cast<void>(it->second.release());
        left_at_fork_.insert(it->first);
        it = drivers_.erase(it);
    }
    active_ = nullptr;
    use_driver("software");
    return left;
}

}  // namespace gpupy
