#include "core/graph/geometry.hpp"

#include <algorithm>

#include "core/runtime/errors.hpp"

namespace gpupy {

int64_t shape_size(const Dims& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

Dims c_strides(const Dims& shape) {
    Dims s(shape.size());
    int64_t acc = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        s[i] = acc;
        acc *= std::max<int64_t>(shape[i], 1);
    }
    return s;
}

bool is_c_contiguous(const Dims& shape, const Dims& strides) {
    if (shape_size(shape) == 0) return true;
    int64_t expect = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        if (shape[i] == 1) continue;
        if (strides[i] != expect) return false;
        expect *= shape[i];
    }
    return true;
}

bool is_f_contiguous(const Dims& shape, const Dims& strides) {
    if (shape_size(shape) == 0) return true;
    int64_t expect = 1;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 1) continue;
        if (strides[i] != expect) return false;
        expect *= shape[i];
    }
    return true;
}

std::string shape_str(const Dims& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ",";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

std::string shape_tuple_str(const Dims& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

Dims broadcast_shapes(const std::vector<Dims>& shapes) {
    size_t nd = 0;
    for (const Dims& s : shapes) nd = std::max(nd, s.size());
    Dims out(nd, 1);
    for (const Dims& s : shapes) {
        for (size_t i = 0; i < s.size(); ++i) {
            int64_t& o = out[nd - s.size() + i];
            int64_t d = s[i];
            if (d == o || d == 1) continue;
            if (o == 1) {
                o = d;
                continue;
            }
            std::string msg = "operands could not be broadcast together with shapes ";
            for (const Dims& t : shapes) msg += shape_str(t) + " ";
            throw ValueError(msg);
        }
    }
    return out;
}

Dims broadcast_strides(const Dims& shape, const Dims& strides, const Dims& target) {
    Dims out(target.size(), 0);
    const size_t lead = target.size() - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
        out[lead + i] = (shape[i] == 1 && target[lead + i] != 1) ? 0 : strides[i];
    }
    return out;
}

void unravel(int64_t flat, const Dims& shape, int64_t* index) {
    for (size_t i = shape.size(); i-- > 0;) {
        const int64_t d = shape[i];
        index[i] = d ? flat % d : 0;
        flat = d ? flat / d : 0;
    }
}

ViewGeometry identity_view(const Dims& shape) { return ViewGeometry{0, shape, c_strides(shape)}; }

bool is_identity_view(const ViewGeometry& v, const Dims& owner_shape) {
    return v.offset == 0 && v.shape == owner_shape && is_c_contiguous(v.shape, v.strides);
}

namespace {

// A run of owner dimensions the operand stores contiguously relative to
// each other: within it, the owner's flat index and the operand's index
// are both affine in one "group flat index".
struct DimGroup {
    int64_t size;          // product of the group's dimension sizes
    int64_t owner_stride;  // owner C-stride of the group's innermost dim
    int64_t child_stride;  // operand stride of the group's innermost dim
    int64_t coord0;        // group coordinate of the outer view's offset
    int64_t lo, hi;        // range the outer view sweeps, relative to coord0
};

}  // namespace

bool compose_views(const Dims& owner_shape, const ViewGeometry& outer, const ViewGeometry& child,
                   ViewGeometry* out) {
    out->shape = outer.shape;
    out->strides.assign(outer.shape.size(), 0);
    if (is_identity_view(outer, owner_shape)) {
        out->offset = child.offset;
        out->strides = child.strides;
        return true;
    }
    // Build groups from the innermost dimension outwards; dims of size 1
    // never move, so they neither start nor break a group.
    std::vector<DimGroup> groups;
    const Dims owner_cs = c_strides(owner_shape);
    for (size_t k = owner_shape.size(); k-- > 0;) {
        const int64_t n = owner_shape[k];
        if (n == 1) continue;
        if (!groups.empty()) {
            DimGroup& g = groups.back();
            // Same group if stepping this dim equals stepping `g.size`
            // positions of the group's flat index, for owner and operand.
            if (child.strides[k] == g.child_stride * g.size && owner_cs[k] == g.owner_stride * g.size) {
                g.size *= n;
                continue;
            }
        }
        groups.push_back(DimGroup{n, owner_cs[k], child.strides[k], 0, 0, 0});
    }
    int64_t off = child.offset;
    for (DimGroup& g : groups) {
        g.coord0 = (outer.offset / g.owner_stride) % g.size;
        off += g.coord0 * g.child_stride;
    }
    for (size_t d = 0; d < outer.shape.size(); ++d) {
        const int64_t t = outer.strides[d];
        const int64_t n = outer.shape[d];
        if (n <= 1 || t == 0) continue;
        const int64_t at = t < 0 ? -t : t;
        DimGroup* hit = nullptr;
        for (DimGroup& g : groups) {
            if (at >= g.owner_stride && at < g.owner_stride * g.size) {
                hit = &g;
                break;
            }
        }
        if (!hit || at % hit->owner_stride != 0) return false;
        const int64_t q = t / hit->owner_stride;
        const int64_t sweep = q * (n - 1);
        if (sweep < 0) hit->lo += sweep;
        else hit->hi += sweep;
        out->strides[d] = q * hit->child_stride;
    }
    for (const DimGroup& g : groups) {
        // The sweep must stay inside the group: no carry into the next one.
        if (g.coord0 + g.lo < 0 || g.coord0 + g.hi >= g.size) return false;
    }
    out->offset = off;
    return true;
}

namespace {

// Min/max of sum_{d >= dim} n_d * strides[d] over C-order positions
// [f0, f1) of the sub-array of dims >= dim (f0 < f1).
Span span_from(const ViewGeometry& v, size_t dim, const std::vector<int64_t>& inner_size, int64_t f0,
               int64_t f1) {
    if (dim == v.shape.size()) return {0, 0};
    const int64_t inner = inner_size[dim + 1];  // elements per step of this dim
    const int64_t s = v.strides[dim];
    const int64_t i0 = f0 / inner, i1 = (f1 - 1) / inner;
    if (i0 == i1) {
        Span r = span_from(v, dim + 1, inner_size, f0 - i0 * inner, f1 - i0 * inner);
        return {r.lo + i0 * s, r.hi + i0 * s};
    }
    // First partial row, last partial row, and the full rows between.
    Span a = span_from(v, dim + 1, inner_size, f0 - i0 * inner, inner);
    Span b = span_from(v, dim + 1, inner_size, 0, f1 - i1 * inner);
    Span r{std::min(a.lo + i0 * s, b.lo + i1 * s), std::max(a.hi + i0 * s, b.hi + i1 * s)};
    if (i1 - i0 >= 2) {
        Span full = span_from(v, dim + 1, inner_size, 0, inner);
        const int64_t lo_row = std::min((i0 + 1) * s, (i1 - 1) * s);
        const int64_t hi_row = std::max((i0 + 1) * s, (i1 - 1) * s);
        r.lo = std::min(r.lo, full.lo + lo_row);
        r.hi = std::max(r.hi, full.hi + hi_row);
    }
    return r;
}

}  // namespace

Span view_span(const ViewGeometry& v, int64_t f0, int64_t f1) {
    // Most views in an expression are contiguous: positions are offsets.
    if (is_c_contiguous(v.shape, v.strides)) return {v.offset + f0, v.offset + f1 - 1};
    std::vector<int64_t> inner_size(v.shape.size() + 1, 1);
    for (size_t d = v.shape.size(); d-- > 0;) inner_size[d] = inner_size[d + 1] * v.shape[d];
    Span r = span_from(v, 0, inner_size, f0, f1);
    return {r.lo + v.offset, r.hi + v.offset};
}

bool reshape_strides(const Dims& shape, const Dims& strides, const Dims& new_shape, Dims* new_strides) {
    new_strides->assign(new_shape.size(), 0);
    const int64_t size = shape_size(shape);
    if (size == 0 || size == 1) {
        *new_strides = c_strides(new_shape);
        return true;
    }
    // Drop dims of size 1 from the old view; they carry no stride information.
    Dims od, os;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] != 1) {
            od.push_back(shape[i]);
            os.push_back(strides[i]);
        }
    }
    const size_t on = od.size(), nn = new_shape.size();
    size_t oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < nn && oi < on) {
        int64_t np_ = new_shape[ni], op_ = od[oi];
        while (np_ != op_) {
            if (np_ < op_) np_ *= new_shape[nj++];
            else op_ *= od[oj++];
        }
        // The old dims merged here must be contiguous relative to each other.
        for (size_t ok = oi; ok + 1 < oj; ++ok) {
            if (os[ok] != od[ok + 1] * os[ok + 1]) return false;
        }
        (*new_strides)[nj - 1] = os[oj - 1];
        for (size_t nk = nj - 1; nk > ni; --nk) (*new_strides)[nk - 1] = (*new_strides)[nk] * new_shape[nk];
        ni = nj++;
        oi = oj++;
    }
    // Trailing new dims of size 1 take any stride; NumPy uses the last one.
    const int64_t last = ni > 0 ? (*new_strides)[ni - 1] : 1;
    for (size_t i = ni; i < nn; ++i) (*new_strides)[i] = last;
    return true;
}

}  // namespace gpupy
