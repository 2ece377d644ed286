// What placed evaluations took, against what the cost model predicted.
//
// A cost model measured once can be wrong for good: measured on a loaded
// machine, under other settings, on other hardware than the file's key
// says. So every evaluation the model places is timed (its wall time, on
// the calling thread: no extra synchronisation, the result is wanted on
// the host anyway) and compared with the prediction:
//
// * Each place's parameters are corrected: its fixed cost and its cost of
//   work are fitted to what it measured (scales, in relative error, over
//   its recent evaluations); where either is off by more than 2x, the model
//   takes the fitted scales (CostModel::scale_host / scale_device).
// * A place the model has not sent work to is never measured that way. So
//   once decisions that rested on such a place being the worse one have
//   cost some time (kProbeHostAfterNs, kProbeDeviceAfterNs), that place is
//   probed: the package times a few small evaluations there once the
//   current evaluation is complete (gpupy/_calibration.py, probe) and hands
//   them to probed(), which corrects its parameters as a refit would. A
//   probe costs milliseconds; trying the real work there could cost
//   seconds (a deep expression on a CPU renderer).
// * Work of one shape (its size and depth to within a factor of 2, whether
//   it has math functions, where its inputs live) remembers what each place
//   took: once both places were measured for it, the faster one is used,
//   whatever the model says -- a decision that keeps losing is revised. A
//   close call (the other place predicted within 2x, its parameters checked
//   by measurement) is tried there once, after the model's choice ran a few
//   times; a try that took more than 2x its prediction corrects that
//   place's parameters at once.
//
// So a wrong model heals within a bounded number of evaluations, and the
// package saves the corrected parameters (gpupy/_calibration.py).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/planning/cost_model.hpp"

namespace gpupy {

class PlacementFeedback {
public:
    enum class Reason { Model, Measured, Exploration };
    struct Choice {
        Place place;
        Reason reason;
    };

    // Where `w` goes: the model's choice, a measured better place, or a try
    // of the other one. Changes nothing but the bookkeeping of tries.
    Choice choose(const CostModel& m, const Work& w);
    // What an evaluation placed at `p` took. May correct `m` (returns true
    // when it did), and may want the other place probed.
    bool observe(CostModel& m, Place p, const Work& w, double measured_ns);
    // What a probe of `p` measured: pairs of work and its time. Corrects `m`
    // where the place's predictions are off (returns true when it did); the
    // place counts as checked either way.
    struct Timed {
        Work work;
        double ns;
    };
    bool probed(CostModel& m, Place p, const std::vector<Timed>& rows);
    // The places a decision wanted probed since the last call (each asked
    // for once per model).
    std::vector<Place> take_probes_wanted();

    // What has been seen, for stats() and the package.
    struct PlaceState {
        int64_t observations = 0;  // since the process started
        int64_t corrections = 0;   // times the model's parameters for this place were rescaled
        double last_fixed_scale = 1, last_work_scale = 1;
        bool checked = false;      // measured in this process (evaluations or a probe)
        bool validated = false;    // the last check found the predictions within 2x
        bool probe_asked = false;
    };
    const PlaceState& place(Place p) const { return places_[static_cast<int>(p)]; }
    int64_t shapes_seen() const { return static_cast<int64_t>(shapes_.size()); }
    void reset();

    // Tuning, with the reasons for the values.
    static constexpr int kRefitEvery = 8;        // observations between fits of a place's scales
    static constexpr int kWindow = 32;           // observations a fit uses
    static constexpr double kOff = 2.0;          // a scale beyond this (or its inverse) corrects the model
    static constexpr int kTryAfter = 2;          // evaluations of a shape on one place before trying the other
    static constexpr double kCloseCall = 2.0;    // predicted ratio up to which the other place is tried
    // A place not yet checked is probed once evaluations placed elsewhere,
    // each predicted less than kProbeRatio times cheaper than it would have
    // been there (beyond, even a model 100x wrong decides alike), took this
    // long: about what a probe of it costs, so that probing at most doubles
    // what a short program spends (a host-engine probe takes ~4 ms on 2
    // cores; a device probe ~20 ms on llvmpipe, mostly compiling, far less
    // on a GPU).
    static constexpr double kProbeHostAfterNs = 4e6;
    static constexpr double kProbeDeviceAfterNs = 2e7;
    static constexpr double kProbeRatio = 1000.0;
    // A part (fixed, work) whose share of every row's prediction is below
    // this is not told apart by the rows: it keeps its scale.
    static constexpr double kShareSeen = 0.2;

private:
    struct Shape {
        double ns_per_element[2] = {0, 0};  // what each place took, per element (moving average)
        int64_t measured[2] = {0, 0};
        bool tried[2] = {false, false};
    };
    struct Observation {
        double fixed, work, measured;
    };
    static uint64_t shape_key(const Work& w);
    // Rescales `p`'s parameters where `rows` say they are off; returns
    // whether it did.
    bool correct(CostModel& m, Place p, const std::vector<Observation>& rows);

    std::unordered_map<uint64_t, Shape> shapes_;
    std::vector<Observation> recent_[2];
    int since_fit_[2] = {0, 0};
    double unchecked_spent_ns_[2] = {0, 0};  // time placed elsewhere while this place was not checked
    PlaceState places_[2];
    std::vector<Place> probes_wanted_;
};

}  // namespace gpupy
