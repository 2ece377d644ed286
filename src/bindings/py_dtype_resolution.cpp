#include "bindings/py_dtype_resolution.hpp"

#include <unordered_map>

#include "bindings/numpy_api.hpp"

namespace gpupy {

namespace {

// The signature's code of a weak Python scalar (past every dtype code).
constexpr int kWeakInt = 30, kWeakFloat = 31;

int operand_code(const Operand& o) {
    switch (o.kind) {
    case Operand::Array: return o.dtype();
    case Operand::PyInt: return kWeakInt;
    case Operand::PyFloat: return kWeakFloat;
    default: return -1;
    }
}

std::unordered_map<uint64_t, Loop>& loop_cache() {
    static auto* m = new std::unordered_map<uint64_t, Loop>();
    return *m;
}

}  // namespace

Loop resolve_loop(OpCode op, const std::vector<Operand>& ops) {
    uint64_t key = static_cast<uint64_t>(op);
    for (const Operand& o : ops) key = key * 64 + static_cast<uint64_t>(operand_code(o) + 1);
    auto& cache = loop_cache();
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    py::module_ np = py::module_::import("numpy");
    py::object ufunc = np.attr(op_display_name(op));
    py::tuple sig(ops.size() + 1);
    py::object builtins = py::module_::import("builtins");
    for (size_t i = 0; i < ops.size(); ++i) {
        switch (ops[i].kind) {
        case Operand::PyInt: sig[i] = builtins.attr("int"); break;
        case Operand::PyFloat: sig[i] = builtins.attr("float"); break;
        default: sig[i] = numpy_dtype(ops[i].dtype()); break;
        }
    }
    sig[ops.size()] = py::none();
    py::tuple res = ufunc.attr("resolve_dtypes")(sig);
    Loop loop{};
    loop.representable = true;
    for (size_t i = 0; i <= ops.size(); ++i) {
        const DType t = dtype_from_object(res[i]);
        if (t < 0) loop.representable = false;
        if (i < ops.size()) loop.in[i] = t;
        else loop.out = t;
    }
    cache.emplace(key, loop);
    return loop;
}

}  // namespace gpupy
