// Advanced indexing -- integer arrays and boolean masks -- of small arrays
// whose values are in host memory, by NumPy there at once, as small ufuncs
// and reductions are (py_ops.cpp, py_structural.cpp): in a loop
// (`x[cols]`, `a[mask] = v`) building a lazy gather would cost ten times
// NumPy's indexing. Larger or lazy arrays go to the package's indexing
// (gpupy/_indexing.py), which indexes on the device where it can (GATHER
// in the IR) and hands the rest to NumPy, writing through write_on_host
// too.
#include <cstring>
#include <string>

#include "bindings/py_array.hpp"
#include "core/building/writes.hpp"
#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/runtime/runtime.hpp"
#include "core/runtime/stats.hpp"

namespace gpupy {

namespace {

// `key` with each gpupy array in it (the key itself or an item of a tuple)
// replaced by a read-only ndarray of its host values; an empty object if
// one of them has values not in host memory.
py::object host_key(py::handle key) {
    if (is_gpuarray(key)) return host_values(gpuarray_ref(key));
    if (!PyTuple_Check(key.ptr())) return py::reinterpret_borrow<py::object>(key);
    const py::tuple items = py::reinterpret_borrow<py::tuple>(key);
    py::tuple out(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
        if (is_gpuarray(items[i])) {
            py::object h = host_values(gpuarray_ref(items[i]));
            if (!h) return py::object();
            out[i] = h;
        } else {
            out[i] = items[i];
        }
    }
    return std::move(out);
}

// a[mask] for a boolean gpupy mask of a's own shape with its values on the
// host (`x[x > 0]` of a few elements in a loop): the elements it selects,
// in C order, copied into a new 1-d node -- NumPy's boolean subscript,
// without viewing both as ndarrays and copying NumPy's result again.
// nullopt for any other key (NumPy's indexing decides, and raises).
std::optional<GpuArray> masked_on_host(const GpuArray& a, py::handle key) {
    if (!is_gpuarray(key)) return std::nullopt;
    const GpuArray& m = gpuarray_ref(key);
    const int64_t n = a.size();
    if (m.dtype() != GPUPY_BOOL || a.ndim() == 0 || m.geom.shape != a.geom.shape || !values_on_host(m))
        return std::nullopt;
    const size_t item = static_cast<size_t>(dtype_itemsize(a.dtype()));
    std::vector<char> mask_scratch, value_scratch;
    const char* picks = c_order_values(m, &mask_scratch);
    const char* values = c_order_values(a, &value_scratch);
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += picks[i] != 0;
    NodeRef out = NodeFactory::array_uninitialized(a.dtype(), Dims{count});
    char* dst = out->host_data();
    for (int64_t i = 0; i < n; ++i) {
        if (!picks[i]) continue;
        std::memcpy(dst, values + static_cast<size_t>(i) * item, item);
        dst += item;
    }
    return GpuArray::of(std::move(out));
}

// a[idx] for an integer gpupy index array (a signed type, or an unsigned one
// narrower than 64 bits) with its values on the host (`x[indices[s:e]]` per
// row of a sparse product): the rows of a's first axis it names, negative
// ones from the end, copied into a new array of shape idx.shape +
// a.shape[1:] -- NumPy's take along axis 0, with its IndexError. nullopt
// for any other key (a 0-d index is an integer to NumPy: a scalar read).
std::optional<GpuArray> taken_on_host(const GpuArray& a, py::handle key) {
    if (!is_gpuarray(key) || a.ndim() == 0) return std::nullopt;
    const GpuArray& k = gpuarray_ref(key);
    const DType kt = k.dtype();
    if (k.ndim() == 0 || kt == GPUPY_BOOL || dtype_is_float(kt) || kt == GPUPY_UINT64 || !values_on_host(k))
        return std::nullopt;
    const int64_t rows = a.geom.shape[0];
    const int64_t row_items = rows ? a.size() / rows : 0;
    const size_t row_bytes = static_cast<size_t>(row_items * dtype_itemsize(a.dtype()));
    std::vector<char> key_scratch, value_scratch;
    const char* keys = c_order_values(k, &key_scratch);
    const char* values = c_order_values(a, &value_scratch);
    Dims shape = k.geom.shape;
    for (size_t d = 1; d < a.geom.shape.size(); ++d) shape.push_back(a.geom.shape[d]);
    NodeRef out = NodeFactory::array_uninitialized(a.dtype(), shape);
    char* dst = out->host_data();
    const int key_item = dtype_itemsize(kt);
    for (int64_t i = 0; i < k.size(); ++i) {
        const int64_t index = scalar_load(kt, keys + i * key_item).i;  // (signed, or unsigned below 2^32: exact)
        const int64_t row = index < 0 ? index + rows : index;
        if (row < 0 || row >= rows) {
            throw IndexError("index " + std::to_string(index) + " is out of bounds for axis 0 with size " +
                             std::to_string(rows));
        }
        std::memcpy(dst, values + static_cast<size_t>(row) * row_bytes, row_bytes);
        dst += row_bytes;
    }
    return GpuArray::of(std::move(out));
}

}  // namespace

bool small_host_array(const GpuArray& a) {
    const Node* x = a.node();
    return x->size() <= Runtime::get().eager_elements() && x->host() && x->complete();
}

py::object small_advanced_get(const GpuArray& a, py::handle key) {
    if (!small_host_array(a)) return py::object();
    std::optional<GpuArray> picked = masked_on_host(a, key);
    if (!picked) picked = taken_on_host(a, key);
    if (picked) {
        ++stats().direct_host_ops;
        return py::cast(std::move(*picked));
    }
    py::object host = host_values(a);
    py::object k = host_key(key);
    if (!host || !k) return py::object();
    py::object r = py::reinterpret_steal<py::object>(PyObject_GetItem(host.ptr(), k.ptr()));
    if (!r) throw py::error_already_set();
    ++stats().eager_numpy_ops;
    if (PyArray_CheckExact(r.ptr())) return py::cast(from_numpy_result(r));
    return r;
}

bool small_advanced_set(const GpuArray& a, py::handle key, py::handle value) {
    if (!small_host_array(a)) return false;
    py::object k = host_key(key);
    py::object v = is_gpuarray(value) ? host_values(gpuarray_ref(value)) : py::reinterpret_borrow<py::object>(value);
    if (!k || !v) return false;
    write_on_host(a, k, v);
    ++stats().eager_numpy_ops;
    return true;
}

void write_on_host(const GpuArray& a, py::handle key, py::handle value) {
    // The value and key are read before the target is prepared: a value
    // viewing the target's own memory is then one NumPy buffers (it copies
    // an overlapping value first), as for ndarrays.
    Node* node = host_write_target(a);
    py::object dst = host_ndarray(node, a.geom, true);
    if (PyObject_SetItem(dst.ptr(), key.ptr(), value.ptr()) < 0) throw py::error_already_set();
}

}  // namespace gpupy
