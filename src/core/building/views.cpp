#include "core/building/views.hpp"

#include <algorithm>
#include <string>

#include "core/building/elementwise.hpp"
#include "core/runtime/errors.hpp"

namespace gpupy {

int normalize_axis(int64_t axis, int ndim) {
    if (axis < -ndim || axis >= ndim) {
        throw AxisError("axis " + std::to_string(axis) + " is out of bounds for array of dimension " +
                        std::to_string(ndim));
    }
    return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

int64_t checked_index(int64_t idx, int64_t n, int axis) {
    if (idx < -n || idx >= n) {
        throw IndexError("index " + std::to_string(idx) + " is out of bounds for axis " + std::to_string(axis) +
                         " with size " + std::to_string(n));
    }
    return idx < 0 ? idx + n : idx;
}

namespace {

// CPython's PySlice_AdjustIndices: start and stop clamped into a dimension
// of length n for this step; returns the number of elements selected.
int64_t adjust_slice(int64_t n, int64_t* start, int64_t* stop, int64_t step) {
    auto clamp = [&](int64_t* x) {
        if (*x < 0) {
            *x += n;
            if (*x < 0) *x = step < 0 ? -1 : 0;
        } else if (*x >= n) {
            *x = step < 0 ? n - 1 : n;
        }
    };
    clamp(start);
    clamp(stop);
    if (step < 0) return *stop < *start ? (*start - *stop - 1) / (-step) + 1 : 0;
    return *start < *stop ? (*stop - *start - 1) / step + 1 : 0;
}

}  // namespace

ViewGeometry index_view(const GpuArray& a, const std::vector<IndexItem>& items, bool* scalar) {
    int consumed = 0, ellipses = 0, new_axes = 0, integers = 0;
    bool all_int = true;
    for (const IndexItem& it : items) {
        switch (it.kind) {
        case IndexItem::Integer: ++consumed; ++integers; break;
        case IndexItem::Slice: ++consumed; all_int = false; break;
        case IndexItem::Ellipsis: ++ellipses; all_int = false; break;
        case IndexItem::NewAxis: ++new_axes; all_int = false; break;
        }
    }
    const int nd = a.ndim();
    if (ellipses > 1) throw IndexError("an index can only have a single ellipsis ('...')");
    if (consumed > nd) {
        throw IndexError("too many indices for array: array is " + std::to_string(nd) + "-dimensional, but " +
                         std::to_string(consumed) + " were indexed");
    }
    ViewGeometry g;
    g.offset = a.geom.offset;
    g.shape.reserve(static_cast<size_t>(nd - integers + new_axes));  // one allocation each, none for an element
    g.strides.reserve(static_cast<size_t>(nd - integers + new_axes));
    int d = 0;
    for (const IndexItem& it : items) {
        switch (it.kind) {
        case IndexItem::NewAxis:
            g.shape.push_back(1);
            g.strides.push_back(0);
            break;
        case IndexItem::Ellipsis:
            for (int k = 0; k < nd - consumed; ++k, ++d) {
                g.shape.push_back(a.geom.shape[d]);
                g.strides.push_back(a.geom.strides[d]);
            }
            break;
        case IndexItem::Integer:
            g.offset += checked_index(it.value, a.geom.shape[d], d) * a.geom.strides[d];
            ++d;
            break;
        case IndexItem::Slice: {
            int64_t start = it.start, stop = it.stop;
            const int64_t len = adjust_slice(a.geom.shape[d], &start, &stop, it.step);
            if (len > 0) g.offset += start * a.geom.strides[d];
            g.shape.push_back(len);
            g.strides.push_back(a.geom.strides[d] * it.step);
            ++d;
            break;
        }
        }
    }
    for (; d < nd; ++d) {
        g.shape.push_back(a.geom.shape[d]);
        g.strides.push_back(a.geom.strides[d]);
    }
    *scalar = all_int && consumed == nd;
    return g;
}

GpuArray reshape(const GpuArray& a, Dims shape) {
    int unknown = -1;
    int64_t known = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] < 0) {  // NumPy takes any negative length as the unknown one
            if (unknown >= 0) throw ValueError("can only specify one unknown dimension");
            unknown = static_cast<int>(i);
        } else {
            known *= shape[i];
        }
    }
    const int64_t size = a.size();
    if (unknown >= 0) {
        if (known == 0 || size % known != 0) {
            std::string s = "(";
            for (size_t i = 0; i < shape.size(); ++i) {
                if (i) s += ",";
                s += shape[i] < 0 ? "newaxis" : std::to_string(shape[i]);
            }
            if (shape.size() == 1) s += ",";
            throw ValueError("cannot reshape array of size " + std::to_string(size) + " into shape " + s + ")");
        }
        shape[unknown] = size / known;
    } else if (known != size) {
        throw ValueError("cannot reshape array of size " + std::to_string(size) + " into shape " + shape_str(shape));
    }
    Dims strides;
    if (reshape_strides(a.geom.shape, a.geom.strides, shape, &strides)) {
        ViewGeometry g{a.geom.offset, shape, strides};
        GpuArray r = a.view(std::move(g));
        r.writeable = a.writeable;
        return r;
    }
    // NumPy copies when no strided view can express the new shape.
    GpuArray c = lazy_copy(a);
    return c.view(ViewGeometry{0, shape, c_strides(shape)});
}

GpuArray transpose(const GpuArray& a, const std::vector<int>& axes) {
    const int nd = a.ndim();
    std::vector<int> perm;
    if (axes.empty()) {
        for (int i = nd - 1; i >= 0; --i) perm.push_back(i);
    } else {
        if (static_cast<int>(axes.size()) != nd) throw ValueError("axes don't match array");
        std::vector<bool> seen(nd, false);
        for (int ax : axes) {
            const int n = normalize_axis(ax, nd);
            if (seen[n]) throw ValueError("repeated axis in transpose");
            seen[n] = true;
            perm.push_back(n);
        }
    }
    ViewGeometry g;
    g.offset = a.geom.offset;
    for (int p : perm) {
        g.shape.push_back(a.geom.shape[p]);
        g.strides.push_back(a.geom.strides[p]);
    }
    GpuArray r = a.view(std::move(g));
    r.writeable = a.writeable;
    return r;
}

GpuArray broadcast_to(const GpuArray& a, const Dims& shape) {
    for (int64_t d : shape) {
        if (d < 0) throw ValueError("all elements of broadcast shape must be non-negative");
    }
    if (shape.size() < a.geom.shape.size())
        throw ValueError("input operand has more dimensions than allowed by the axis remapping");
    bool ok = true;
    for (size_t i = 0; ok && i < a.geom.shape.size(); ++i) {
        const int64_t have = a.geom.shape[i], want = shape[shape.size() - a.geom.shape.size() + i];
        ok = have == want || have == 1;
    }
    if (!ok) {
        throw ValueError("operands could not be broadcast together with remapped shapes [original->remapped]: " +
                         shape_str(a.geom.shape) + "  and requested shape " + shape_str(shape));
    }
    ViewGeometry g{a.geom.offset, shape, broadcast_strides(a.geom.shape, a.geom.strides, shape)};
    GpuArray r = a.view(std::move(g));
    r.writeable = false;  // as NumPy: a broadcast view repeats elements
    return r;
}

}  // namespace gpupy
