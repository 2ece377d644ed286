// The GpuArray Python class: attributes, indexing, operators, conversion
// protocols. Anything NumPy-namespace shaped (repr, __array_ufunc__,
// __array_function__, pickling, iteration) is added by the gpupy package.
#include "core/graph/node_factory.hpp"
#include "core/runtime/errors.hpp"
#include "core/memory/host_memory.hpp"
#include "core/execution/evaluator.hpp"
#include "bindings/numpy_api.hpp"
#include "bindings/py_array.hpp"
#include "core/building/elementwise.hpp"
#include "core/graph/memory_order.hpp"
#include "core/building/writes.hpp"
#include "core/runtime/runtime.hpp"

#include <structmember.h>

#include <algorithm>
#include <cstdint>

namespace gpupy {

namespace {

// The package's handlers for advanced (fancy) indexing, which gpupy runs
// in NumPy: getitem(array, key) and setitem(array, key, value).
py::object& advanced_getitem() {
    static auto* f = new py::object();
    return *f;
}
py::object& advanced_setitem() {
    static auto* f = new py::object();
    return *f;
}

PyTypeObject* g_gpuarray_type = nullptr;  // set by register_array

}  // namespace

bool is_gpuarray(py::handle obj) { return PyObject_TypeCheck(obj.ptr(), g_gpuarray_type); }
bool is_exact_gpuarray(py::handle obj) { return Py_TYPE(obj.ptr()) == g_gpuarray_type; }

py::object wrap_gpuarray(GpuArray&& a) {
    PyObject* o = g_gpuarray_type->tp_alloc(g_gpuarray_type, 0);  // zeroed: no weak references yet
    if (!o) throw py::error_already_set();
    new (&reinterpret_cast<GpuArrayObject*>(o)->value) GpuArray(std::move(a));
    return py::reinterpret_steal<py::object>(o);
}

namespace {

// The array a view of `self` is taken of. A scalar result is immutable, and
// NumPy's views of a scalar (`s[...]`, `s.reshape(1)`) are new arrays: the
// view gets an owner of its own, sharing the value until either is written
// (a write then copies, as for any shared value), and is writable.
GpuArray viewed(py::handle self) {
    const GpuArray& a = gpuarray_ref(self);
    if (!is_scalar_result(self)) return a;
    GpuArray fresh = GpuArray::of_view(a.node_view());
    fresh.writeable = true;
    return fresh;
}

}  // namespace

// Marks a 0-d array object as a scalar result: read-only, and immutable
// as a NumPy scalar is (GpuArrayObject::scalar).
static void mark_scalar(py::handle obj) {
    if (gpuarray_ref(obj).ndim() != 0) return;
    gpuarray_mut(obj).writeable = false;
    reinterpret_cast<GpuArrayObject*>(obj.ptr())->scalar = true;
}

py::object wrap_result(GpuArray&& a) {
    py::object o = wrap_gpuarray(std::move(a));
    mark_scalar(o);
    return o;
}

namespace {

py::tuple dims_tuple(const Dims& d) {
    py::tuple t(d.size());
    for (size_t i = 0; i < d.size(); ++i) t[i] = d[i];
    return t;
}

// The value of the single element of a size-1 array, as a NumPy scalar.
py::object single_element(const GpuArray& a, const char* what) {
    if (a.size() != 1) {
        throw TypeError(std::string("only length-1 arrays can be converted to Python ") + what);
    }
    ensure_host(a.node_view());
    return numpy_scalar(a.node(), a.geom.offset);
}

// The element at owner offset `offset`, as a NumPy scalar.
py::object element_value(const GpuArray& a, int64_t offset) {
    // Evaluate the block of the array holding this element (thesis 4.4),
    // so reading its neighbours next costs nothing.
    if (!a.node()->complete()) {
        NodeView whole{a.owner->node, identity_view(a.node()->shape())};
        ensure_host(whole, offset, offset + 1);
    }
    return numpy_scalar(a.node(), offset);
}

// a[index] = value for the one element at owner offset `offset`: NumPy's
// item assignment, which takes a 0-d array but no sequence, not even of
// one element.
void store_element(const GpuArray& a, int64_t offset, py::handle value) {
    if (!a.writeable) throw ValueError("assignment destination is read-only");
    const DType t = a.dtype();
    gpupy_scalar element;
    ViewGeometry g;  // the element as a 0-d view
    g.offset = offset;
    if (!plain_element(value, t, &element)) {
        // A 0-d gpupy array stays lazy; anything else NumPy converts by its
        // rules for one element (a bool element takes the truth value of a
        // one-element array, other dtypes refuse it).
        if (is_gpuarray(value) && gpuarray_ref(value).ndim() == 0) {
            // `y[i] = x.argmin()`: a 0-d result of the element's dtype with
            // its value on the host is that element (read before the write:
            // it may be one of a's own); any other stays lazy.
            const GpuArray& v = gpuarray_ref(value);
            Node* node = v.dtype() == t && values_on_host(v) ? writable_in_place(a) : nullptr;
            if (!node) {
                assign_value(a.view(std::move(g)), value);
                return;
            }
            element = scalar_load(t, v.node()->host_data() + v.geom.offset * dtype_itemsize(t));
            forget_old_values(node);
            scalar_store(t, element, node->host_data() + offset * dtype_itemsize(t));
            return;
        }
        element = element_from_python(
            is_gpuarray(value) ? to_ndarray(gpuarray_ref(value)) : py::reinterpret_borrow<py::object>(value), t);
    }
    if (Node* node = writable_in_place(a)) {
        // `y[k] = v` in a loop: the element is stored where it lives.
        forget_old_values(node);
        scalar_store(t, element, node->host_data() + offset * dtype_itemsize(t));
        return;
    }
    assign(a.view(std::move(g)), NodeView{NodeFactory::constant(t, element), identity_view({})});
}

static py::object getitem_of(const GpuArray& a, py::handle self, py::handle key);

py::object getitem(py::object self, py::handle key) {
    if (is_scalar_result(self)) return getitem_of(viewed(self), self, key);
    return getitem_of(gpuarray_ref(self), self, key);
}

static py::object getitem_of(const GpuArray& a, py::handle self, py::handle key) {
    int64_t offset;
    if (element_key(a, key, &offset)) return element_value(a, offset);
    ViewGeometry g;
    bool scalar = false;
    if (!basic_index(a, key, &g, &scalar)) {
        if (py::object now = small_advanced_get(a, key)) return now;
        if (!advanced_getitem()) throw IndexError("advanced indexing is not available");
        return advanced_getitem()(self, key);
    }
    if (scalar) return element_value(a, g.offset);
    return py::cast(a.view(std::move(g)));
}

void setitem(py::object self, py::handle key, py::handle value) {
    if (is_scalar_result(self)) throw TypeError("a gpupy scalar (a 0-d result where NumPy gives a scalar) does not support item assignment");
    const GpuArray& a = gpuarray_ref(self);
    int64_t offset;
    if (element_key(a, key, &offset)) return store_element(a, offset, value);
    ViewGeometry g;
    bool scalar = false;
    if (!basic_index(a, key, &g, &scalar)) {
        if (!a.writeable) throw ValueError("assignment destination is read-only");
        if (small_advanced_set(a, key, value)) return;
        if (!advanced_setitem()) throw IndexError("advanced indexing is not available");
        advanced_setitem()(self, key, value);
        return;
    }
    if (scalar) return store_element(a, g.offset, value);
    if (is_gpuarray(value)) {
        // `y[:k] += v` ends with y.__setitem__(slice, the view it wrote
        // through): the same elements onto themselves, nothing to do.
        const GpuArray& v = gpuarray_ref(value);
        if (a.writeable && v.owner == a.owner && v.geom == g) return;
    }
    assign_value(a.view(std::move(g)), value);
}

py::object binary(OpCode op, py::handle a, py::handle b) { return apply_ufunc(op, {a, b}, py::handle(), true); }

// --- CPython slots ------------------------------------------------------------
// Indexing and the arithmetic operators are the hottest calls on an array
// (`a[i]`, `y[k] = v`, `x * 2.0` in a loop). As the type's own C slots they
// skip what the generic slot wrappers pay on every call -- the method
// lookup, a bound method and pybind11's argument dispatch, about a third of
// an element read. Installed by the package after it has added its Python
// methods: setting a dunder attribute on a type re-derives its slots.

template <OpCode op>
PyObject* slot_binary(PyObject* a, PyObject* b) {
    return guarded([&] { return binary(op, a, b); });
}
// `a @ b`: the package's __matmul__ / __rmatmul__, unless the core places
// the product on the host now. (The slot CPython derives from those
// methods cannot be called from here: it checks that it is the type's
// slot before it calls __matmul__.)
PyObject* python_operator(PyObject* self, const char* name, PyObject* other) {
    PyObject* method = PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(self)), name);
    if (!method) return nullptr;
    PyObject* args[] = {self, other};
    PyObject* r = PyObject_Vectorcall(method, args, 2, nullptr);
    Py_DECREF(method);
    return r;
}
PyObject* slot_matmul(PyObject* a, PyObject* b) {
    PyObject* r = guarded([&] { return host_product(a, b, false); });
    if (r || PyErr_Occurred()) return r;
    if (is_gpuarray(a)) {
        r = python_operator(a, "__matmul__", b);
        if (r != Py_NotImplemented) return r;
        Py_DECREF(r);
    }
    if (is_gpuarray(b) && Py_TYPE(a) != Py_TYPE(b)) return python_operator(b, "__rmatmul__", a);
    Py_RETURN_NOTIMPLEMENTED;
}
// `s += 1` on a scalar result makes a new scalar, as for NumPy's scalars.
template <OpCode op>
PyObject* slot_inplace(PyObject* self, PyObject* b) {
    if (is_scalar_result(self)) return slot_binary<op>(self, b);
    return guarded([&] { return inplace(op, py::reinterpret_borrow<py::object>(self), b); });
}
template <OpCode op>
PyObject* slot_unary(PyObject* a) {
    return guarded([&] { return apply_ufunc(op, {a}, py::handle()); });
}
PyObject* slot_power(PyObject* a, PyObject* b, PyObject* mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;  // no three-argument pow, as NumPy
    return guarded([&] { return binary(GPUPY_OP_POWER, a, b); });
}
PyObject* slot_inplace_power(PyObject* self, PyObject* b, PyObject* mod) {
    if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
    if (is_scalar_result(self)) return slot_power(self, b, mod);
    return guarded([&] { return inplace(GPUPY_OP_POWER, py::reinterpret_borrow<py::object>(self), b); });
}
// The operators, one row each, for both forms an array offers: its C slots
// (`a + b` from Python code, the fast path) and its methods
// (`a.__add__(b)`, `np.ndarray.__radd__` style calls).
using N = PyNumberMethods;
struct BinaryOperator {
    OpCode op;
    const char *name, *reflected, *in_place;
    binaryfunc N::*slot;           // nullptr: no binary slot (power's are ternary)
    binaryfunc N::*in_place_slot;
    binaryfunc plain_fn, in_place_fn;
};
template <OpCode op>
constexpr BinaryOperator binary_operator(const char* name, const char* reflected, const char* in_place,
                                         binaryfunc N::*slot, binaryfunc N::*in_place_slot) {
    return {op, name, reflected, in_place, slot, in_place_slot, slot_binary<op>, slot_inplace<op>};
}
const BinaryOperator kBinaryOperators[] = {
    binary_operator<GPUPY_OP_ADD>("__add__", "__radd__", "__iadd__", &N::nb_add, &N::nb_inplace_add),
    binary_operator<GPUPY_OP_SUBTRACT>("__sub__", "__rsub__", "__isub__", &N::nb_subtract, &N::nb_inplace_subtract),
    binary_operator<GPUPY_OP_MULTIPLY>("__mul__", "__rmul__", "__imul__", &N::nb_multiply, &N::nb_inplace_multiply),
    binary_operator<GPUPY_OP_DIVIDE>("__truediv__", "__rtruediv__", "__itruediv__", &N::nb_true_divide,
                                     &N::nb_inplace_true_divide),
    binary_operator<GPUPY_OP_FLOOR_DIVIDE>("__floordiv__", "__rfloordiv__", "__ifloordiv__", &N::nb_floor_divide,
                                           &N::nb_inplace_floor_divide),
    binary_operator<GPUPY_OP_REMAINDER>("__mod__", "__rmod__", "__imod__", &N::nb_remainder, &N::nb_inplace_remainder),
    binary_operator<GPUPY_OP_POWER>("__pow__", "__rpow__", "__ipow__", nullptr, nullptr),
    binary_operator<GPUPY_OP_BITWISE_AND>("__and__", "__rand__", "__iand__", &N::nb_and, &N::nb_inplace_and),
    binary_operator<GPUPY_OP_BITWISE_OR>("__or__", "__ror__", "__ior__", &N::nb_or, &N::nb_inplace_or),
    binary_operator<GPUPY_OP_BITWISE_XOR>("__xor__", "__rxor__", "__ixor__", &N::nb_xor, &N::nb_inplace_xor),
    binary_operator<GPUPY_OP_LEFT_SHIFT>("__lshift__", "__rlshift__", "__ilshift__", &N::nb_lshift,
                                         &N::nb_inplace_lshift),
    binary_operator<GPUPY_OP_RIGHT_SHIFT>("__rshift__", "__rrshift__", "__irshift__", &N::nb_rshift,
                                          &N::nb_inplace_rshift),
};
// In the order of CPython's comparison codes (Py_LT ... Py_GE), which
// tp_richcompare receives.
struct Comparison {
    const char* name;
    OpCode op;
};
const Comparison kComparisons[] = {
    {"__lt__", GPUPY_OP_LESS},      {"__le__", GPUPY_OP_LESS_EQUAL}, {"__eq__", GPUPY_OP_EQUAL},
    {"__ne__", GPUPY_OP_NOT_EQUAL}, {"__gt__", GPUPY_OP_GREATER},    {"__ge__", GPUPY_OP_GREATER_EQUAL},
};
static_assert(Py_LT == 0 && Py_LE == 1 && Py_EQ == 2 && Py_NE == 3 && Py_GT == 4 && Py_GE == 5);
struct UnaryOperator {
    OpCode op;
    const char* name;
    unaryfunc N::*slot;
    unaryfunc fn;
};
template <OpCode op>
constexpr UnaryOperator unary_operator(const char* name, unaryfunc N::*slot) {
    return {op, name, slot, slot_unary<op>};
}
const UnaryOperator kUnaryOperators[] = {
    unary_operator<GPUPY_OP_NEGATIVE>("__neg__", &N::nb_negative),
    unary_operator<GPUPY_OP_POSITIVE>("__pos__", &N::nb_positive),
    unary_operator<GPUPY_OP_ABSOLUTE>("__abs__", &N::nb_absolute),
    unary_operator<GPUPY_OP_INVERT>("__invert__", &N::nb_invert),
};

PyObject* slot_richcompare(PyObject* a, PyObject* b, int cmp) {
    return guarded([&] { return binary(kComparisons[cmp].op, a, b); });
}
PyObject* slot_subscript(PyObject* self, PyObject* key) {
    return guarded([&] { return getitem(py::reinterpret_borrow<py::object>(self), key); });
}
int slot_ass_subscript(PyObject* self, PyObject* key, PyObject* value) {
    if (!value) {
        PyErr_SetString(PyExc_ValueError, "cannot delete array elements");
        return -1;
    }
    PyObject* r = guarded([&] {
        setitem(py::reinterpret_borrow<py::object>(self), key, value);
        return py::none();
    });
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

void install_slots() {
    PyTypeObject* tp = g_gpuarray_type;
    PyNumberMethods* nb = tp->tp_as_number;
    for (const BinaryOperator& o : kBinaryOperators) {
        if (!o.slot) continue;
        nb->*o.slot = o.plain_fn;
        nb->*o.in_place_slot = o.in_place_fn;
    }
    for (const UnaryOperator& o : kUnaryOperators) nb->*o.slot = o.fn;
    nb->nb_matrix_multiply = slot_matmul;
    nb->nb_power = slot_power;  // ternary: pow(a, b, mod)
    nb->nb_inplace_power = slot_inplace_power;
    tp->tp_richcompare = slot_richcompare;
    tp->tp_as_mapping->mp_subscript = slot_subscript;
    tp->tp_as_mapping->mp_ass_subscript = slot_ass_subscript;
    PyType_Modified(tp);
    install_array_ufunc(tp);  // not a slot's name: setting it leaves the slots above as they are
}

// --- the type object ------------------------------------------------------------

void array_dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    auto* o = reinterpret_cast<GpuArrayObject*>(self);
    if (o->weakrefs) PyObject_ClearWeakRefs(self);
    o->value.~GpuArray();
    type->tp_free(self);
    Py_DECREF(type);  // a heap type: each instance holds a reference to it
}

// gpupy.ndarray(shape, dtype=float, buffer=None, offset=0, strides=None,
// order=None): numpy.ndarray's constructor, a bound function (set by
// register_array).
PyObject* g_constructor = nullptr;

PyObject* array_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    PyObject* made = PyObject_Call(g_constructor, args, kwargs);  // an exact GpuArray
    if (!made || type == g_gpuarray_type) return made;
    // A Python subclass: the same value in an instance of it.
    PyObject* o = type->tp_alloc(type, 0);
    if (o) new (&reinterpret_cast<GpuArrayObject*>(o)->value) GpuArray(std::move(gpuarray_mut(made)));
    Py_DECREF(made);
    return o;
}

// --- attributes -----------------------------------------------------------------
// C getters: a property calling a bound function costs a pybind11 dispatch,
// more than NumPy's whole attribute read, and `a.shape`, `a.dtype`, `a.ndim`
// are read by every function of the package.

template <class F>
PyObject* attribute(PyObject* self, F f) {
    return guarded([&] { return py::object(f(gpuarray_ref(self))); });
}

PyObject* get_shape(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return dims_tuple(a.geom.shape); });
}

// Whether the installed NumPy warns when an array's shape is set (2.5 on).
bool numpy_deprecates_setting_shape() {
    static const bool deprecated = [] {
        py::object version = py::module_::import("numpy").attr("lib").attr("NumpyVersion")(
            py::module_::import("numpy").attr("__version__"));
        return py::cast<bool>(version.attr("__ge__")("2.5.0"));
    }();
    return deprecated;
}

int set_shape(PyObject* self, PyObject* value, void*) {
    PyObject* r = guarded([&] {
        if (!value) throw AttributeError("Cannot delete array shape");
        // NumPy 2.5 deprecates it (arrays shared between threads): where the
        // installed NumPy warns, so does gpupy.
        if (numpy_deprecates_setting_shape() &&
            PyErr_WarnEx(PyExc_DeprecationWarning,
                         "Setting the shape on a NumPy array has been deprecated in NumPy 2.5.\nAs an alternative, "
                         "you can create a new view using np.reshape (with copy=False if needed).",
                         1) < 0)
            throw py::error_already_set();
        GpuArray& a = gpuarray_mut(self);
        // As NumPy: only when the new shape is a view of the same data.
        GpuArray viewed = reshape(a, shape_from_python(value));
        if (viewed.owner != a.owner) {
            throw AttributeError("Incompatible shape for in-place modification. Use `.reshape()` to make a "
                                 "copy with the desired shape.");
        }
        a.geom = viewed.geom;
        return py::none();
    });
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

PyObject* get_ndim(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(a.ndim()); });
}
PyObject* get_size(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(a.size()); });
}
PyObject* get_dtype(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return numpy_dtype(a.dtype()); });
}
PyObject* get_itemsize(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(dtype_itemsize(a.dtype())); });
}
PyObject* get_nbytes(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(a.size() * dtype_itemsize(a.dtype())); });
}
PyObject* get_strides(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) {
        Dims s = a.geom.strides;
        // NumPy reports zero strides for an array with no elements.
        for (int64_t& x : s) x = a.size() == 0 ? 0 : x * dtype_itemsize(a.dtype());
        return dims_tuple(s);
    });
}
PyObject* get_transposed(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return wrap_gpuarray(transpose(a, {})); });
}
PyObject* get_writeable(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::bool_(a.writeable); });
}
PyObject* get_is_scalar(PyObject* self, void*) { return PyBool_FromLong(is_scalar_result(self)); }

// What a scalar result shows as its __class__, by dtype kind (set by
// _set_scalar_classes; none for bool, which NumPy does not make a number).
// type(s) stays GpuArray; isinstance(s, numbers.Real) -- which asks
// __class__ when the type is not registered -- becomes true, as it is for
// the NumPy scalar NumPy gives there, and arrays are never numbers.
enum ScalarKind { kIntegerScalar, kRealScalar, kScalarKinds };
PyObject* g_scalar_classes[kScalarKinds] = {};

PyObject* get_apparent_class(PyObject* self, void*) {
    PyObject* shown = reinterpret_cast<PyObject*>(Py_TYPE(self));
    if (is_scalar_result(self)) {
        const DType t = reinterpret_cast<GpuArrayObject*>(self)->value.dtype();
        if (dtype_is_float(t)) {
            shown = g_scalar_classes[kRealScalar];
        } else if (dtype_is_integer(t)) {
            shown = g_scalar_classes[kIntegerScalar];
        }
        if (!shown) shown = reinterpret_cast<PyObject*>(Py_TYPE(self));
    }
    Py_INCREF(shown);
    return shown;
}
PyObject* get_node_id(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(a.node()->id()); });
}
PyObject* get_owner_id(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) { return py::int_(reinterpret_cast<uintptr_t>(a.owner.get())); });
}
PyObject* get_view(PyObject* self, void*) {
    return attribute(self, [](const GpuArray& a) {
        return py::make_tuple(a.geom.offset, dims_tuple(a.geom.shape), dims_tuple(a.geom.strides));
    });
}

PyGetSetDef array_getset[] = {
    {"shape", get_shape, set_shape, nullptr, nullptr},
    {"ndim", get_ndim, nullptr, nullptr, nullptr},
    {"size", get_size, nullptr, nullptr, nullptr},
    {"dtype", get_dtype, nullptr, nullptr, nullptr},
    {"itemsize", get_itemsize, nullptr, nullptr, nullptr},
    {"nbytes", get_nbytes, nullptr, nullptr, nullptr},
    {"strides", get_strides, nullptr, nullptr, nullptr},
    {"T", get_transposed, nullptr, nullptr, nullptr},
    {"_writeable", get_writeable, nullptr, nullptr, nullptr},
    {"_node_id", get_node_id, nullptr, nullptr, nullptr},
    {"_is_scalar", get_is_scalar, nullptr, nullptr, nullptr},
    {"__class__", get_apparent_class, nullptr, nullptr, nullptr},
    {"_owner_id", get_owner_id, nullptr, nullptr, nullptr},
    {"_view", get_view, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef array_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(GpuArrayObject, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyTypeObject* make_array_type() {
    PyType_Slot slots[] = {
        {Py_tp_dealloc, reinterpret_cast<void*>(array_dealloc)},
        {Py_tp_new, reinterpret_cast<void*>(array_new)},
        {Py_tp_members, array_members},
        {Py_tp_getset, array_getset},
        {Py_bf_getbuffer, reinterpret_cast<void*>(gpuarray_getbuffer)},
        {0, nullptr},
    };
    PyType_Spec spec{"gpupy._core.GpuArray", static_cast<int>(sizeof(GpuArrayObject)), 0,
                     Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, slots};
    PyObject* type = PyType_FromSpec(&spec);
    if (!type) throw py::error_already_set();
    return reinterpret_cast<PyTypeObject*>(type);
}

// Methods of bound C++ functions on the type, as pybind11's class_ defines
// them (class_ itself would register a pybind11 type).
class Methods {
  public:
    explicit Methods(py::handle cls) : cls_(cls) {}

    template <class F, class... Extra>
    Methods& def(const char* name, F&& f, const Extra&... extra) {
        py::cpp_function method(std::forward<F>(f), py::name(name), py::is_method(cls_),
                                py::sibling(py::getattr(cls_, name, py::none())), extra...);
        cls_.attr(name) = method;
        return *this;
    }
  private:
    py::handle cls_;
};

}  // namespace

void register_array(py::module_& m) {
    PyTypeObject* tp = make_array_type();
    g_gpuarray_type = tp;
    py::object type_object = py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(tp));
    m.add_object("GpuArray", type_object);
    Methods cls(type_object);

    // gpupy.ndarray is GpuArray, so its constructor is numpy.ndarray's:
    // ndarray(shape, dtype=float, buffer=None, offset=0, strides=None).
    g_constructor = py::cpp_function(
        [](py::handle shape, py::handle dtype, py::handle buffer, py::handle offset, py::handle strides,
           py::handle order) {
            py::object host = py::module_::import("numpy").attr("ndarray")(shape, dtype, buffer, offset, strides, order);
            if (buffer.is_none()) host.attr("fill")(0);  // deterministic, unlike uninitialised memory
            GpuArray a;
            if (!as_gpuarray(host, &a)) throw TypeError("gpupy cannot hold dtype " + std::string(py::str(host.attr("dtype"))));
            return a;
        },
        py::name("GpuArray"), py::arg("shape"), py::arg("dtype") = py::type::of(py::float_(0.0)),
        py::arg("buffer") = py::none(), py::arg("offset") = 0, py::arg("strides") = py::none(),
        py::arg("order") = py::none())
                        .release()
                        .ptr();  // kept for the process's life, as the type

    // A 0-d result the package made where NumPy gives a scalar (NumPy's own
    // scalar, wrapped): marked as the core's scalar results are.
    m.def("as_scalar", [](py::object x) {
        if (is_gpuarray(x)) mark_scalar(x);
        return x;
    });
    cls.def("_set_writeable",
             [](GpuArray& a, bool writeable) {
                 // NumPy refuses to make a broadcast view writeable (its
                 // repeated elements share one memory location).
                 for (size_t d = 0; d < a.geom.shape.size() && writeable; ++d) {
                     if (a.geom.strides[d] == 0 && a.geom.shape[d] > 1)
                         throw ValueError("cannot set WRITEABLE flag to True of this array");
                 }
                 a.writeable = writeable;
             })
        .def("_evaluated_count", [](const GpuArray& a) { return a.node()->kind() == NodeKind::Expression ? a.node()->bits().count() : a.node()->size(); })
        .def("_is_complete", [](const GpuArray& a) { return a.node()->complete(); })
        .def("_flush", [](const GpuArray& a) { ensure_host(a.node_view()); })
        .def("__len__",
             [](const GpuArray& a) {
                 if (a.ndim() == 0) throw TypeError("len() of unsized object");
                 return a.geom.shape[0];
             })
        .def("__getitem__", &getitem)
        .def("__setitem__", &setitem)
        .def("_reshape", [](py::handle self, py::handle shape) { return reshape(viewed(self), shape_from_python(shape)); })
        .def("transpose",
             [](const GpuArray& a, py::args args) {
                 std::vector<int> axes;
                 py::handle src = args;
                 if (args.size() == 1 && !args[0].is_none() && PySequence_Check(args[0].ptr())) src = args[0];
                 if (!(args.size() == 1 && args[0].is_none())) {
                     for (py::handle x : py::reinterpret_borrow<py::iterable>(src)) {
                         // (beyond int: out of range all the same, never wrapped into it)
                         const int64_t v = index_value(x);
                         axes.push_back(static_cast<int>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)));
                     }
                 }
                 return transpose(a, axes);
             })
        .def("_broadcast_to", [](const GpuArray& a, py::handle shape) { return broadcast_to(a, shape_from_python(shape)); })
        .def(
            "astype",
            [](py::object self, py::handle dtype, bool copy, py::handle order) -> py::object {
                const GpuArray& a = gpuarray_ref(self);
                const DType t = dtype_from_object(dtype);
                if (t < 0) {
                    // A dtype gpupy cannot hold (float16, complex, ...): NumPy's.
                    return to_ndarray(a).attr("astype")(dtype, py::arg("order") = order);
                }
                // NumPy's copy=False: the array itself where it already is
                // of that dtype and in that order.
                if (!copy && t == a.dtype() && in_requested_order(a, order)) return self;
                return py::cast(copy_as(a, t, requested_order(a, order)));
            },
            py::arg("dtype"), py::arg("copy") = true, py::arg("order") = "K")
        .def("copy", [](const GpuArray& a, py::handle order) { return copy_as(a, a.dtype(), requested_order(a, order)); },
             py::arg("order") = "C")
        .def("fill",
             [](const GpuArray& a, py::handle value) {
                 const DType t = a.dtype();
                 assign(a, NodeView{NodeFactory::constant(t, scalar_from_python(value, t)), identity_view({})});
             })
        .def(
            "__array__",
            [](py::object self, py::object dtype, py::object copy) -> py::object {
                raise_export_error(self);
                const GpuArray& a = gpuarray_ref(self);
                py::object arr = to_ndarray(a);
                const bool want_copy = !copy.is_none() && py::cast<bool>(copy);
                if (!dtype.is_none()) {
                    if (!copy.is_none() && !py::cast<bool>(copy) && dtype_from_object(dtype) != a.dtype())
                        throw ValueError("Unable to avoid copy while creating an array as requested.");
                    return arr.attr("astype")(dtype);
                }
                if (want_copy) return arr.attr("copy")();
                return arr;
            },
            py::arg("dtype") = py::none(), py::kw_only(), py::arg("copy") = py::none())
        .def("__bool__",
             [](const GpuArray& a) {
                 if (a.size() == 0) {
                     // NumPy's releases differ (2.0 warns and says False, later ones raise): its own verdict.
                     return py::bool_(py::module_::import("numpy").attr("empty")(0).attr("__bool__")());
                 }
                 if (a.size() != 1) {
                     throw ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()");
                 }
                 return py::bool_(single_element(a, "scalars"));
             })
        // Exact Python types (a float subclass from __float__ is deprecated).
        .def("__float__", [](const GpuArray& a) { return PyFloat_AsDouble(single_element(a, "scalars").ptr()); })
        .def("__int__", [](const GpuArray& a) {
            return py::reinterpret_steal<py::object>(PyNumber_Long(single_element(a, "scalars").ptr()));
        })
        .def("__complex__", [](const GpuArray& a) { return single_element(a, "scalars").attr("__complex__")(); })
        .def("__index__",
             [](const GpuArray& a) -> py::object {
                 if (a.ndim() != 0 || !(dtype_is_integer(a.dtype()) || a.dtype() == GPUPY_BOOL) || a.dtype() == GPUPY_BOOL)
                     throw TypeError("only integer scalar arrays can be converted to a scalar index");
                 return single_element(a, "scalars").attr("__index__")();
             })
        .def("item",
             [](const GpuArray& a, py::args args) -> py::object {
                 py::object arr = to_ndarray(a);
                 return arr.attr("item")(*args);
             });

    // Operators (the table above, whose rows are also the C slots). Each
    // builds one lazy node and returns at once.
    for (const BinaryOperator& b : kBinaryOperators) {
        const OpCode op = b.op;
        cls.def(b.name, [op](py::object self, py::handle other) { return binary(op, self, other); }, py::is_operator());
        cls.def(b.reflected, [op](py::object self, py::handle other) { return binary(op, other, self); },
                py::is_operator());
        cls.def(b.in_place, [op](py::object self, py::handle other) { return inplace(op, self, other); },
                py::is_operator());
    }
    for (const Comparison& c : kComparisons) {
        const OpCode op = c.op;
        cls.def(c.name, [op](py::object self, py::handle other) { return binary(op, self, other); }, py::is_operator());
    }
    for (const UnaryOperator& u : kUnaryOperators) {
        const OpCode op = u.op;
        cls.def(u.name, [op](py::object self) { return apply_ufunc(op, {self}, py::handle()); });
    }
    // Arrays are mutable: unhashable, as NumPy's.
    type_object.attr("__hash__") = py::none();

    m.def("_install_slots", &install_slots);
    m.def("_raise_export_error", &raise_export_error);
    m.def("_install_reduce_methods", [](int64_t chunk) { install_reduce_methods(g_gpuarray_type, chunk); });
    m.def("_set_scalar_classes", [](py::object integer, py::object real) {
        PyObject* given[kScalarKinds] = {integer.ptr(), real.ptr()};
        for (int k = 0; k < kScalarKinds; ++k) {
            Py_XDECREF(g_scalar_classes[k]);
            g_scalar_classes[k] = given[k] == Py_None ? nullptr : (Py_INCREF(given[k]), given[k]);
        }
    });
    m.def("_set_advanced_indexing", [](py::object get, py::object set) {
        advanced_getitem() = std::move(get);
        advanced_setitem() = std::move(set);
    });
}

}  // namespace gpupy
