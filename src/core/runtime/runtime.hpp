// Process-wide state: the loaded drivers, the active one, its block cache
// and the settings. The Python bindings talk to the core through this.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/memory/block_cache.hpp"
#include "core/planning/cost_model.hpp"
#include "core/runtime/placement_feedback.hpp"
#include "core/runtime/settings.hpp"
#include "core/runtime/driver_loader.hpp"
#include "core/graph/node.hpp"

namespace gpupy {

class Runtime {
public:
    static Runtime& get();

    // Loads `name` if needed and makes it the active driver. Blocks on the
    // previous driver are read back and freed first.
    void use_driver(const std::string& name);
    // Registers a driver made in-process (Driver::from_api), e.g. a test
    // driver; use_driver(its name) then activates it.
    void add_driver(std::unique_ptr<Driver> driver);
    bool has_driver() const { return active_ != nullptr; }
    Driver& driver();
    BlockCache& cache() { return cache_; }

    // Called (with the op's NumPy name) before the host engine evaluates a
    // node the active driver cannot run, so the package can account for it
    // as a fallback -- or refuse it by throwing; set by the bindings.
    std::function<void(const char* op_name)> on_host_evaluation;
    // Called, once the outermost evaluation is complete, for each kind of
    // floating-point error (execution/fp_errors.hpp: FpKind) found in the
    // values of a ufunc built to warn about it; may throw (a warning
    // turned into an error). Set by the bindings.
    std::function<void(const char* function, uint8_t kind)> on_fp_error;
    // Called once the outermost evaluation is complete when measurements
    // corrected the cost model during it (the package saves the corrected
    // parameters). Set by the bindings.
    std::function<void()> on_model_corrected;
    // Called once the outermost evaluation is complete with the places a
    // decision wanted probed (PlacementFeedback); the package times a few
    // evaluations there and hands them to note_probe. Set by the bindings.
    std::function<void(const std::vector<Place>&)> on_probe_wanted;
    // Throw HostEvaluationRefused instead of evaluating on the host.
    bool refuse_host_evaluation = false;
    // Called between the steps (blocks) of an evaluation; throws to stop it
    // there, with everything computed so far kept and nothing half-written
    // (the bindings raise KeyboardInterrupt on Ctrl-C). Empty: never.
    std::function<void()> check_interrupt;

    // The host engine: a driver that computes on host memory in place
    // (block_wrap), used for evaluations of at most host_elements outputs
    // when the active driver is a device that would have to copy them.
    // nullptr when no such driver loads.
    Driver* host_engine();
    // Whether an evaluation of `w`, wanted in host memory, goes to the host
    // engine: by the host threshold when one is set (GPUPY_HOST_ELEMENTS,
    // set_host_threshold), else by the forced placement (GPUPY_PLACEMENT),
    // else by the calibrated cost model -- as corrected by what placed
    // evaluations took (placement_feedback.hpp) --, else by the active
    // driver's judgement (prefers_host), else by the default size. Each
    // decision is counted with its reason (stats()). *by_model: the cost
    // model (with its feedback) decided, so what the evaluation takes is
    // worth telling note_evaluation.
    bool use_host_engine(const Work& w, bool* by_model = nullptr);
    // What an evaluation the cost model placed took (wall time, ns).
    void note_evaluation(Place p, const Work& w, double measured_ns);
    // What a probe of `p` measured (PlacementFeedback::probed).
    void note_probe(Place p, const std::vector<PlacementFeedback::Timed>& rows);
    std::vector<Place> take_probes_wanted() { return feedback_.take_probes_wanted(); }
    const PlacementFeedback& feedback() const { return feedback_; }
    // Whether the model was corrected since the last call (the package
    // saves the corrected parameters).
    bool take_model_corrected() {
        const bool c = model_corrected_;
        model_corrected_ = false;
        return c;
    }

    // Where work with a choice goes when no threshold says: by cost, or
    // forced to the host or to the device (tests, benchmarks).
    enum class Placement { Auto, Host, Device };
    Placement placement() const { return placement_; }
    void set_placement(Placement p) { placement_ = p; }
    const CostModel& cost_model() const { return cost_model_; }
    // Whether matrix products and decompositions run in NumPy's BLAS and
    // LAPACK on host values: forced by the placement setting, else where
    // the cost model measured the product cheaper (on a CPU renderer
    // always).
    bool products_on_host() const {
        return placement_ == Placement::Host ||
               (placement_ == Placement::Auto && cost_model_.products_cheaper_on_host());
    }
    // Whether a host product of `flops` reading `bytes` should use BLAS's
    // threads (else it runs on the calling thread alone;
    // CostModel::product_threads_pay).
    bool product_threads_pay(double flops, double bytes) const { return cost_model_.product_threads_pay(flops, bytes); }
    // A new model starts without feedback.
    void set_cost_model(const CostModel& m) {
        cost_model_ = m;
        feedback_.reset();
        model_corrected_ = false;
    }
    // NumPy's ufunc inner loops (found by the bindings at import), offered
    // to every driver as it loads: a driver computing on the host then
    // gives NumPy's values at NumPy's (vectorised) speed.
    void set_host_loops(std::vector<HostLoop> loops) { host_loops_ = std::move(loops); }

    // -1: no explicit threshold (the driver judges).
    int64_t host_elements() const { return host_elements_; }

    // fork(): a device's context does not survive into a child process (its
    // driver's threads and handles are the parent's; Mesa's child waits
    // forever on them). Before the fork every block the device holds is
    // read back to host memory, so the child has every value; the child
    // then leaves the device driver untouched -- never called, never
    // destroyed -- and runs on the software driver. Returns the device
    // driver's name it left ("" if the active driver computes in host memory
    // and carries on). A driver left so cannot be loaded again in the child.
    void before_fork();
    std::string after_fork_in_child();
    // Ops on host values of at most this many outputs run in NumPy at once
    // (the bindings decide; 0: never).
    int64_t eager_elements() const { return eager_elements_; }
    void set_eager_elements(int64_t n) { eager_elements_ = n; }
    // Whether GPUPY_EAGER_ELEMENTS chose the threshold at start.
    bool eager_elements_chosen() const { return eager_elements_chosen_; }
    void set_host_elements(int64_t n);

private:
    Runtime();
    explicit Runtime(const Settings& settings);
    std::unique_ptr<Driver> load(const std::string& name);

    std::map<std::string, std::unique_ptr<Driver>> drivers_;
    std::vector<HostLoop> host_loops_;
    Driver* active_ = nullptr;
    BlockCache cache_;
    int64_t host_elements_;
    int64_t eager_elements_;
    bool eager_elements_chosen_;
    Placement placement_ = Placement::Auto;
    CostModel cost_model_;
    PlacementFeedback feedback_;
    bool model_corrected_ = false;
    void count_correction(bool corrected);
    bool host_engine_missing_ = false;
    std::set<std::string> left_at_fork_;  // device drivers of a parent process
};

}  // namespace gpupy
