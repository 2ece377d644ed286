// NumPy's floating-point error state (np.errstate, np.seterr) as the
// ufuncs of the bindings read it (py_array.hpp: NumpyFpState).
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/execution/fp_errors.hpp"

namespace gpupy {

const char* const kErrstateReason =
    "np.errstate or np.seterr asks to raise or call on floating-point errors (or to report underflow), which "
    "NumPy's loops do and gpupy's device does not";

// NumPy's error state, read once per state object (py_array.hpp).
const NumpyFpState& numpy_fp_state() {
    static PyObject* var = nullptr;
    static PyObject* last = nullptr;
    static NumpyFpState state;
    if (!var) var = py::object(py::module_::import("numpy._core.umath").attr("_extobj_contextvar")).release().ptr();
    PyObject* now = nullptr;
    if (PyContextVar_Get(var, nullptr, &now) < 0) throw py::error_already_set();
    py::object held = py::reinterpret_steal<py::object>(now);
    if (now == last) return state;
    NumpyFpState fresh;
    py::dict modes = py::module_::import("numpy").attr("geterr")();
    const std::pair<const char*, uint8_t> detected[] = {{"divide", kFpDivide}, {"over", kFpOverflow}, {"invalid", kFpInvalid}};
    for (const auto& [name, kind] : detected) {
        const std::string mode = py::str(modes[name]);
        if (mode == "warn") fresh.warn |= kind;
        else if (mode != "ignore") fresh.numpy_acts = true;
    }
    if (std::string(py::str(modes["under"])) != "ignore") fresh.numpy_acts = true;
    Py_XDECREF(last);
    last = held.release().ptr();
    state = fresh;
    return state;
}

}  // namespace gpupy
