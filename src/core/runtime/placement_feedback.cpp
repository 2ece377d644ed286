#include "core/runtime/placement_feedback.hpp"

#include <algorithm>
#include <cmath>

namespace gpupy {

namespace {

int log2_bucket(int64_t x) {
    int b = 0;
    while (x > 1 && b < 62) {
        x >>= 1;
        ++b;
    }
    return b;
}

struct Scales {
    double fixed = 1, work = 1;
};

// Scales of the fixed part and of the work with measured ~ fixed x a +
// work x b, in relative error (each row divided by what it measured: a
// 20 us and a 20 ms evaluation count alike). A part no row gives a fair
// share of its prediction cannot be told from noise in the rows: it keeps
// its scale, and the other takes the geometric mean of measured over
// predicted.
template <typename Row>
Scales fit_scales(const std::vector<Row>& rows, double share_seen) {
    double ff = 0, fw = 0, ww = 0, fy = 0, wy = 0, logs = 0, share_fixed = 0, share_work = 0;
    for (const Row& r : rows) {
        const double total = std::max(r.fixed + r.work, 1e-3);
        const double f = r.fixed / r.measured, g = r.work / r.measured;
        ff += f * f;
        fw += f * g;
        ww += g * g;
        fy += f;
        wy += g;
        logs += std::log(r.measured / total);
        share_fixed = std::max(share_fixed, r.fixed / total);
        share_work = std::max(share_work, r.work / total);
    }
    const double mean = std::exp(logs / static_cast<double>(rows.size()));
    const bool sees_fixed = share_fixed >= share_seen, sees_work = share_work >= share_seen;
    if (!sees_fixed) return {1, mean};
    if (!sees_work) return {mean, 1};
    const double det = ff * ww - fw * fw;
    if (det > 1e-9 * ff * ww) {
        const double a = (fy * ww - wy * fw) / det, b = (wy * ff - fy * fw) / det;
        if (a > 0 && b > 0) return {a, b};
    }
    return {mean, mean};
}

}  // namespace

uint64_t PlacementFeedback::shape_key(const Work& w) {
    uint64_t k = static_cast<uint64_t>(log2_bucket(w.elements));
    k = k * 64 + static_cast<uint64_t>(std::min(log2_bucket(static_cast<int64_t>(w.computed) + 1), 63));
    k = k * 2 + (w.math > 0 ? 1 : 0);
    k = k * 2 + (w.upload_bytes > 0 ? 1 : 0);
    k = k * 2 + (w.download_bytes > 0 ? 1 : 0);
    return k;
}

PlacementFeedback::Choice PlacementFeedback::choose(const CostModel& m, const Work& w) {
    const double host = m.host_engine(w).total(), device = m.device(w).total();
    const Place modelled = host <= device ? Place::Host : Place::Device;
    const Place other = modelled == Place::Host ? Place::Device : Place::Host;
    const int o = static_cast<int>(other);
    const double ratio = std::max(host, device) / std::max(std::min(host, device), 1.0);
    auto it = shapes_.find(shape_key(w));
    if (it == shapes_.end()) return {modelled, Reason::Model};
    Shape& s = it->second;
    if (s.measured[0] > 0 && s.measured[1] > 0) {
        const Place faster = s.ns_per_element[0] <= s.ns_per_element[1] ? Place::Host : Place::Device;
        return {faster, faster == modelled ? Reason::Model : Reason::Measured};
    }
    if (s.measured[static_cast<int>(modelled)] >= kTryAfter && s.measured[o] == 0 && !s.tried[o] &&
        places_[o].checked && ratio < kCloseCall) {
        s.tried[o] = true;
        return {other, Reason::Exploration};
    }
    return {modelled, Reason::Model};
}

bool PlacementFeedback::observe(CostModel& m, Place p, const Work& w, double measured_ns) {
    if (w.elements <= 0 || !(measured_ns > 0)) return false;
    const int i = static_cast<int>(p);
    Shape& s = shapes_[shape_key(w)];
    const bool first_try = s.tried[i] && s.measured[i] == 0;
    const double per_element = measured_ns / static_cast<double>(w.elements);
    s.ns_per_element[i] = s.measured[i] ? 0.5 * (s.ns_per_element[i] + per_element) : per_element;
    ++s.measured[i];
    const Cost predicted = m.at(p, w);
    std::vector<Observation>& recent = recent_[i];
    recent.push_back({predicted.fixed, predicted.work, measured_ns});
    if (static_cast<int>(recent.size()) > kWindow) recent.erase(recent.begin());
    ++places_[i].observations;
    const Place other = p == Place::Host ? Place::Device : Place::Host;
    const int o = static_cast<int>(other);
    if (!places_[o].checked && !places_[o].probe_asked &&
        m.at(other, w).total() < kProbeRatio * std::max(predicted.total(), 1.0)) {
        unchecked_spent_ns_[o] += measured_ns;
        if (unchecked_spent_ns_[o] >= (other == Place::Host ? kProbeHostAfterNs : kProbeDeviceAfterNs)) {
            places_[o].probe_asked = true;
            probes_wanted_.push_back(other);
        }
    }
    // A try that took more than kOff times its prediction says the place's
    // parameters are off for work like this: corrected at once (it may be
    // the only such work that place sees).
    const bool missed = first_try && measured_ns > kOff * predicted.total();
    if (++since_fit_[i] < kRefitEvery && !missed) return false;
    since_fit_[i] = 0;
    const bool corrected = correct(m, p, recent);
    // Rows predicted by the old parameters are not fitted again; shapes
    // keep what they measured (that is what they are for).
    if (corrected) recent.clear();
    return corrected;
}

bool PlacementFeedback::probed(CostModel& m, Place p, const std::vector<Timed>& rows) {
    std::vector<Observation> observed;
    for (const Timed& r : rows) {
        if (r.work.elements <= 0 || !(r.ns > 0)) continue;
        const Cost predicted = m.at(p, r.work);
        observed.push_back({predicted.fixed, predicted.work, r.ns});
    }
    places_[static_cast<int>(p)].probe_asked = true;
    if (observed.empty()) return false;
    const bool corrected = correct(m, p, observed);
    if (corrected) recent_[static_cast<int>(p)].clear();
    return corrected;
}

bool PlacementFeedback::correct(CostModel& m, Place p, const std::vector<Observation>& rows) {
    Scales s = fit_scales(rows, kShareSeen);
    const double a = std::clamp(s.fixed, 1e-4, 1e4), b = std::clamp(s.work, 1e-4, 1e4);
    PlaceState& state = places_[static_cast<int>(p)];
    // Persistently off: the typical evaluation (the median of measured over
    // predicted) beyond kOff, not only the fit. A linear model misfits work
    // of different kinds (rolls against arithmetic) by a few times either
    // way; fitting each window's mix swung the host engine's scales from
    // 0.2 to 5 within one program, and the eager threshold with them.
    std::vector<double> ratios;
    ratios.reserve(rows.size());
    for (const Observation& r : rows) ratios.push_back(r.measured / std::max(r.fixed + r.work, 1.0));
    std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
    const double typical = ratios.empty() ? 1.0 : ratios[ratios.size() / 2];
    const bool off = std::abs(std::log(typical)) > std::log(kOff) &&
                     std::max(std::abs(std::log(a)), std::abs(std::log(b))) > std::log(kOff);
    state.checked = true;
    state.validated = !off;
    if (!off) return false;
    if (p == Place::Host) m.scale_host(a, b);
    else m.scale_device(a, b);
    state.last_fixed_scale = a;
    state.last_work_scale = b;
    ++state.corrections;
    return true;
}

std::vector<Place> PlacementFeedback::take_probes_wanted() {
    std::vector<Place> wanted;
    wanted.swap(probes_wanted_);
    return wanted;
}

void PlacementFeedback::reset() {
    shapes_.clear();
    probes_wanted_.clear();
    for (int i = 0; i < 2; ++i) {
        recent_[i].clear();
        since_fit_[i] = 0;
        unchecked_spent_ns_[i] = 0;
        places_[i] = PlaceState{};
    }
}

}  // namespace gpupy
