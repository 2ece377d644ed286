// Runtime controls for Python: driver choice and options, block size,
// cache budget, counters, the NumPy host evaluator, and introspection used
// by tests (IR of a block, cached blocks of an array).
#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <array>
#include <set>

#include "core/graph/node_factory.hpp"
#include "core/graph/recent_nodes.hpp"
#include "core/runtime/errors.hpp"
#include "core/execution/evaluator.hpp"
#include "core/execution/fp_errors.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// Driver counters are cumulative; reset_stats() remembers where they stood.
gpupy_driver_counters g_counter_base{};
std::string g_counter_driver;

// Work of one elementwise evaluation from its description as numbers:
// (elements, ops, math, result_bytes, upload_bytes, download_bytes, ...).
template <typename Numbers>
Work work_of(const Numbers& a) {
    return Work::elementwise(static_cast<int64_t>(a[0]), static_cast<int64_t>(a[1]), static_cast<int64_t>(a[2]),
                             static_cast<int64_t>(a[3]), static_cast<int64_t>(a[4]), static_cast<int64_t>(a[5]));
}

py::dict stats_dict() {
    const Stats& s = stats();
    py::dict d;
    d["evaluations"] = s.evaluations;
    d["blocks_uploaded"] = s.blocks_uploaded;
    d["blocks_downloaded"] = s.blocks_downloaded;
    d["bytes_uploaded"] = s.bytes_uploaded;
    d["bytes_downloaded"] = s.bytes_downloaded;
    d["blocks_packed"] = s.blocks_packed;
    d["evictions"] = s.evictions;
    d["eviction_readbacks"] = s.eviction_readbacks;
    d["collapses"] = s.collapses;
    d["shared_stores"] = s.shared_stores;
    d["exports_kept_device_copies"] = s.exports_kept_device_copies;
    d["device_copies_adopted"] = s.device_copies_adopted;
    d["sibling_outputs"] = s.sibling_outputs;
    d["sibling_search_nodes"] = s.sibling_search_nodes;
    d["checked_ops"] = s.checked_ops;
    d["fp_errors_reported"] = s.fp_errors_reported;
    d["check_ir_calls"] = s.check_ir_calls;
    d["stagings_reused"] = s.stagings_reused;
    d["planned_items"] = s.planned_items;
    d["planning_seconds"] = s.planning_ns * 1e-9;
    d["host_evaluations"] = s.host_evaluations;
    d["host_engine_evaluations"] = s.host_engine_evaluations;
    // Where evaluations wanted in host memory ran, and why (the package
    // adds NumPy's placements: eager small ops, BLAS/LAPACK).
    py::dict engine, device;
    auto put = [](py::dict& where, const char* why, int64_t n) {
        if (n) where[why] = n;
    };
    put(engine, "host threshold", s.host_engine_by_threshold);
    put(device, "host threshold", s.device_by_threshold);
    put(engine, "placement setting", s.host_engine_by_setting);
    put(device, "placement setting", s.device_by_setting);
    put(engine, "cost model", s.host_engine_by_cost);
    put(device, "cost model", s.device_by_cost);
    put(engine, "measured faster", s.host_engine_by_measurement);
    put(device, "measured faster", s.device_by_measurement);
    put(engine, "tried", s.host_engine_by_exploration);
    put(device, "tried", s.device_by_exploration);
    put(engine, "driver's judgement", s.host_engine_by_driver);
    put(device, "driver's judgement", s.device_by_driver);
    py::dict placements;
    placements["host engine"] = engine;
    placements["device"] = device;
    d["placements"] = placements;
    d["model_corrections"] = s.model_corrections;
    d["eager_numpy_ops"] = s.eager_numpy_ops;
    d["host_float16_folds"] = s.host_float16_folds;
    d["direct_numpy_loops"] = s.direct_numpy_loops;
    d["direct_writes"] = s.direct_writes;
    d["write_copies"] = s.write_copies;
    d["direct_host_ops"] = s.direct_host_ops;
    d["export_snapshots"] = NodeFactory::export_snapshots();
    d["snapshots_reused"] = NodeFactory::snapshots_reused();
    d["host_matmuls"] = s.host_matmuls;
    d["host_dots"] = s.host_dots;
    d["host_argmins"] = s.host_argmins;
    d["host_argmaxes"] = s.host_argmaxes;
    d["products_on_calling_thread"] = s.products_on_calling_thread;
    d["nodes_created"] = NodeFactory::created();
    d["nodes_shared"] = NodeFactory::shared_hits();
    d["node_lookups"] = NodeFactory::lookups();
    Runtime& rt = Runtime::get();
    if (rt.has_driver()) {
        gpupy_driver_counters c = rt.driver().counters();
        const bool same = g_counter_driver == rt.driver().name();
        d["programs_compiled"] = c.programs_compiled - (same ? g_counter_base.programs_compiled : 0);
        d["program_cache_hits"] = c.program_cache_hits - (same ? g_counter_base.program_cache_hits : 0);
        d["compile_seconds"] = (c.compile_ns - (same ? g_counter_base.compile_ns : 0)) * 1e-9;
        d["first_run_seconds"] = (c.first_run_ns - (same ? g_counter_base.first_run_ns : 0)) * 1e-9;
        d["cached_blocks"] = static_cast<int64_t>(rt.cache().count());
        d["cached_bytes"] = rt.cache().used_bytes();
    }
    return d;
}

void reset_stats() {
    stats() = Stats{};
    Runtime& rt = Runtime::get();
    if (rt.has_driver()) {
        g_counter_base = rt.driver().counters();
        g_counter_driver = rt.driver().name();
    }
}

py::list ir_to_python(const std::vector<gpupy_ir_instr>& ir) {
    py::list out;
    for (const gpupy_ir_instr& in : ir) {
        py::dict d;
        d["op"] = op_display_name(in.op);
        d["dtype"] = dtype_name(in.dtype);
        py::list args;
        for (int a : in.arg) {
            if (a >= 0) args.append(a);
        }
        d["args"] = args;
        d["contiguous"] = (in.flags & GPUPY_INSTR_CONTIGUOUS) != 0;
        out.append(d);
    }
    return out;
}

void install_host_evaluation_hook(py::object fn) {
    // Called once the outermost evaluation is complete (never while the
    // core is mid-evaluation, so other threads may run while it does), and
    // by the exception translator for a refused host evaluation, where the
    // FallbackError it raises is the error the user sees.
    Runtime::get().on_host_evaluation = [fn](const char* name) { fn(name); };
}

}  // namespace

void register_runtime(py::module_& m) {
    // Ctrl-C during an evaluation: Python's handler has only set a flag;
    // running it between blocks raises KeyboardInterrupt there (evaluations
    // hold the GIL, which PyErr_CheckSignals needs).
    Runtime::get().check_interrupt = [] {
        if (PyErr_CheckSignals() < 0) throw py::error_already_set();
    };
    // Floating-point errors found on the device: NumPy's RuntimeWarning, in
    // NumPy's words, once the evaluation that found them is complete (a
    // filter turning it into an error raises it there).
    Runtime::get().on_fp_error = [](const char* function, uint8_t kind) {
        const std::string message = std::string(fp_kind_words(kind)) + " encountered in " + function;
        if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) < 0) throw py::error_already_set();
    };
    m.def("use_driver", [](const std::string& name) { Runtime::get().use_driver(name); });
    m.def("before_fork", [] { Runtime::get().before_fork(); });
    m.def("after_fork_in_child", [] { return Runtime::get().after_fork_in_child(); });
    m.def("driver_name", []() -> py::object {
        Runtime& rt = Runtime::get();
        if (!rt.has_driver()) return py::none();
        return py::str(rt.driver().name());
    });
    m.def("driver_describe", [] { return Runtime::get().driver().describe(); });
    m.def("host_engine_describe", []() -> py::object {
        Driver* engine = Runtime::get().host_engine();
        if (!engine) return py::none();
        return py::str(engine->describe());
    });
    m.def("set_driver_option", [](const std::string& key, py::handle value) {
        Runtime::get().driver().set_option(key, std::string(py::str(value)));
    });
    m.def("driver_library_dir", &Driver::library_dir);
    m.def("block_size", [] { return Runtime::get().cache().block_size(); });
    m.def("set_block_size", [](int64_t n) {
        Runtime::get().cache().set_block_size(n);
    });
    m.def("host_threshold", []() -> py::object {
        const int64_t n = Runtime::get().host_elements();
        return n < 0 ? py::none() : py::object(py::int_(n));
    });
    m.def("set_host_threshold", [](py::object n) {
        if (n.is_none()) return Runtime::get().set_host_elements(-1);  // the driver judges
        const int64_t v = py::cast<int64_t>(n);
        if (v < 0) throw ValueError("the host threshold must be >= 0 (or None to let the driver judge)");
        Runtime::get().set_host_elements(v);
    });
    m.def("set_placement_mode", [](const std::string& mode) {
        Runtime::get().set_placement(mode == "host"     ? Runtime::Placement::Host
                                     : mode == "device" ? Runtime::Placement::Device
                                                        : Runtime::Placement::Auto);
    });
    // The calibrated cost model (gpupy/_calibration.py measures it); an
    // empty dict returns to the driver's judgement.
    // The parameters by name, as gpupy/_calibration.py keeps them.
    static const std::pair<const char*, double CostModel::*> kParameters[] = {
        {"host_dispatch_ns", &CostModel::host_dispatch_ns},
        {"host_ns_per_op", &CostModel::host_ns_per_op},
        {"host_ns_per_element_op", &CostModel::host_ns_per_element_op},
        {"host_ns_per_element_op_deep", &CostModel::host_ns_per_element_op_deep},
        {"host_ns_per_element_math", &CostModel::host_ns_per_element_math},
        {"device_dispatch_ns", &CostModel::device_dispatch_ns},
        {"device_readback_ns", &CostModel::device_readback_ns},
        {"device_ns_per_op", &CostModel::device_ns_per_op},
        {"device_ns_per_element", &CostModel::device_ns_per_element},
        {"device_ns_per_element_op", &CostModel::device_ns_per_element_op},
        {"device_ns_per_element_math", &CostModel::device_ns_per_element_math},
        {"upload_ns_per_byte", &CostModel::upload_ns_per_byte},
        {"download_ns_per_byte", &CostModel::download_ns_per_byte},
        {"blas_ns_per_flop", &CostModel::host_product_ns_per_flop},
        {"device_product_ns_per_flop", &CostModel::device_product_ns_per_flop},
    };
    m.def("cost_model_parameters", [] {
        py::list names;
        for (const auto& [name, field] : kParameters) names.append(name);
        return names;
    });
    static auto model_from = [](const py::dict& p) {
        CostModel m;
        if (!p.empty()) {
            for (const auto& [name, field] : kParameters) m.*field = p[name].cast<double>();
            m.calibrated = true;
        }
        return m;
    };
    static auto dict_from = [](const CostModel& c) {
        py::dict d;
        if (!c.calibrated) return d;
        for (const auto& [name, field] : kParameters) d[name] = c.*field;
        return d;
    };
    m.def("set_cost_model", [](const py::dict& p) { Runtime::get().set_cost_model(model_from(p)); });
    m.def("cost_model_in_use", [] { return Runtime::get().cost_model().calibrated; });
    // The model as measurements have corrected it (empty: none in use).
    m.def("corrected_cost_model", [] { return dict_from(Runtime::get().cost_model()); });
    // The feedback loop on its own (tests: deterministic, whatever the
    // machine): a model placing `works` (tuples of elements, ops, math,
    // result_bytes, upload_bytes, download_bytes), `rounds` times over, on a
    // machine whose places cost what `truth` predicts; probes time
    // `probe_works` there. Returns each decision as (place, reason) and the
    // model as corrected.
    m.def("_simulate_placement", [](const py::dict& model, const py::dict& truth,
                                    const std::vector<std::array<int64_t, 6>>& works, int rounds,
                                    const std::vector<std::array<int64_t, 6>>& probe_works) {
        CostModel m = model_from(model);
        const CostModel t = model_from(truth);
        auto took = [&](Place p, const Work& w) { return t.at(p, w).total(); };
        PlacementFeedback f;
        py::list decisions;
        const char* reasons[] = {"cost model", "measured faster", "tried"};
        for (int r = 0; r < rounds; ++r) {
            for (const auto& a : works) {
                const Work w = work_of(a);
                const PlacementFeedback::Choice c = f.choose(m, w);
                decisions.append(py::make_tuple(c.place == Place::Host ? "host engine" : "device",
                                                reasons[static_cast<int>(c.reason)]));
                f.observe(m, c.place, w, took(c.place, w));
                for (Place p : f.take_probes_wanted()) {
                    std::vector<PlacementFeedback::Timed> rows;
                    for (const auto& b : probe_works) rows.push_back({work_of(b), took(p, work_of(b))});
                    f.probed(m, p, rows);
                }
            }
        }
        return py::make_tuple(decisions, dict_from(m));
    });
    // What placed evaluations measured against the model, per place.
    m.def("placement_feedback", [] {
        const PlacementFeedback& f = Runtime::get().feedback();
        py::dict d;
        for (Place p : {Place::Host, Place::Device}) {
            const PlacementFeedback::PlaceState& s = f.place(p);
            py::dict one;
            one["observations"] = s.observations;
            one["corrections"] = s.corrections;
            one["last_fixed_scale"] = s.last_fixed_scale;
            one["last_work_scale"] = s.last_work_scale;
            one["checked"] = s.checked;
            one["validated"] = s.validated;
            d[p == Place::Host ? "host engine" : "device"] = one;
        }
        d["shapes"] = f.shapes_seen();
        return d;
    });
    // Evaluates every block of `a` into the device cache, reading nothing
    // back (the calibration times the readback apart). With `wait`, returns
    // once the device has done the work (a GPU's dispatch returns while it
    // is queued: the calibration times passes so); without, the work may
    // still be queued (a benchmark's loop of dispatches, waited for once).
    m.def(
        "evaluate_on_device",
        [](const GpuArray& a, bool wait) {
            const int64_t B = Runtime::get().cache().block_size();
            for (int64_t k = 0; k * B < a.size(); ++k) ensure_device_block(a.node_view(), k);
            if (wait) Runtime::get().driver().finish();
        },
        py::arg("array"), py::arg("wait") = false);
    // fn() once an evaluation that corrected the cost model is complete.
    m.def("set_model_corrected_hook", [](py::object fn) {
        Runtime::get().on_model_corrected = [fn] { fn(); };
    });
    // fn(places) once an evaluation whose decisions wanted places probed is
    // complete ("host engine", "device").
    m.def("set_probe_hook", [](py::object fn) {
        Runtime::get().on_probe_wanted = [fn](const std::vector<Place>& places) {
            py::list names;
            for (Place p : places) names.append(p == Place::Host ? "host engine" : "device");
            fn(names);
        };
    });
    // What a probe measured on `place`: rows of (elements, ops, math,
    // result_bytes, upload_bytes, download_bytes, ns).
    m.def("note_probe", [](const std::string& place, const std::vector<std::array<double, 7>>& rows) {
        if (place != "host engine" && place != "device") throw ValueError("place must be 'host engine' or 'device'");
        std::vector<PlacementFeedback::Timed> timed;
        for (const auto& r : rows) {
            timed.push_back({work_of(r), r[6]});
        }
        Runtime::get().note_probe(place == "host engine" ? Place::Host : Place::Device, timed);
    });
    // fn() with the counters of stats() as they were before it (work the
    // package does for itself: a probe).
    m.def("uncounted", [](py::object fn) {
        const Stats saved = stats();
        try {
            fn();
        } catch (...) {
            stats() = saved;
            throw;
        }
        stats() = saved;
    });
    m.attr("DEFAULT_BLOCK_SIZE") = kDefaultBlockSize;
    m.attr("DEFAULT_CACHE_BYTES") = kDefaultCacheBytes;
    // Where the cost model (and what it has measured) would place work of
    // this description now: "host engine" or "device" (no side effects).
    m.def(
        "placement_of",
        [](int64_t elements, int64_t ops, int64_t math, int64_t result_bytes, int64_t upload_bytes,
           int64_t download_bytes) {
            const CostModel& c = Runtime::get().cost_model();
            if (!c.calibrated) throw ValueError("no cost model is in use");
            const Work w = Work::elementwise(elements, ops, math, result_bytes, upload_bytes, download_bytes);
            return c.host_engine(w).total() <= c.device(w).total() ? "host engine" : "device";
        },
        py::arg("elements"), py::arg("ops"), py::arg("math") = 0, py::arg("result_bytes") = 0,
        py::arg("upload_bytes") = 0, py::arg("download_bytes") = 0);
    m.def("products_on_host", [] { return Runtime::get().products_on_host(); });
    m.attr("COST_MODEL_SHALLOW_OPS") = CostModel::kShallowOps;
    m.attr("COST_MODEL_DEEP_OPS") = CostModel::kDeepOps;
    m.def("eager_threshold", [] { return Runtime::get().eager_elements(); });
    // Whether the user chose the threshold (GPUPY_EAGER_ELEMENTS), read
    // where the core reads its other settings.
    m.def("eager_threshold_set_in_environment", [] { return Runtime::get().eager_elements_chosen(); });
    m.def("set_eager_threshold", [](int64_t n) {
        if (n < 0) throw ValueError("the eager threshold must be >= 0");
        Runtime::get().set_eager_elements(n);
    });
    m.def("cache_budget", [] { return Runtime::get().cache().budget(); });
    m.def("set_cache_budget", [](int64_t n) { Runtime::get().cache().set_budget(n); });
    m.def("clear_cache", [] { Runtime::get().cache().clear(); });
    m.def("stats", &stats_dict);
    m.def("needed_together", [](const py::args& arrays) {
        std::vector<Node*> nodes;
        for (py::handle a : arrays) nodes.push_back(a.cast<GpuArray>().node());
        mark_needed_together(nodes);
    }, "Marks the results of one call (divmod's, modf's) to be evaluated in one pass where they can be.");
    m.def("warn_as", [](py::args arrays) {
        // The name, kept for the process (warnings may come much later).
        static std::set<std::string>* names = new std::set<std::string>();
        const char* name = names->insert(py::cast<std::string>(arrays[0])).first->c_str();
        for (size_t k = 1; k < arrays.size(); ++k) name_fp_errors(arrays[k].cast<GpuArray>().node(), name);
    }, "warn_as(name, *arrays): the arrays' floating-point warnings name `name` (divmod's results: 'divmod').");
    m.def("set_sibling_min_elements", &set_recent_min_elements,
          "The least size of an expression evaluated with others in one pass (tests lower it); returns the previous.");
    m.def("reset_stats", &reset_stats);
    m.def("retained_host_bytes", [](const GpuArray& a) { return retained_host_bytes(a.node()); },
          "The host bytes the array keeps alive until it is evaluated (its operands' too).");
    m.def("set_host_evaluation_hook", &install_host_evaluation_hook);
    m.def("set_refuse_host_evaluation", [](bool refuse) { Runtime::get().refuse_host_evaluation = refuse; });
    m.def("_ir", [](const GpuArray& a, int64_t block) { return ir_to_python(plan_ir(a.node_view(), block)); },
          py::arg("array"), py::arg("block") = 0);
    m.def("_cached_blocks", [](const GpuArray& a) {
        return static_cast<int64_t>(Runtime::get().cache().blocks_of(a.node()).size());
    });
    m.def("_live_hashed_nodes", [] { return NodeFactory::live_hashed(); });
}

}  // namespace gpupy
