// The interpreter's loads: the element index of each domain point (index
// maps, with their remapped edges) and the reads of block memory at those
// indices, by runs and rows rather than one element at a time.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "chunk_interpreter.hpp"

namespace gpupy_sw {
namespace GPUPY_SW_VARIANT {

void Interpreter::map_indices(const gpupy_ir_instr& in, int64_t p0, int n, int64_t* out) {
    const gpupy_index_map& m = in.map;
    if (in.flags & GPUPY_INSTR_CONTIGUOUS) {
        for (int k = 0; k < n; ++k) out[k] = m.base + p0 + k;
        return;
    }
    int64_t pt[GPUPY_MAX_DIMS];
    int64_t rem = p0;
    for (int d = nd_ - 1; d >= 0; --d) {
        pt[d] = shape_[d] ? rem % shape_[d] : 0;
        rem = shape_[d] ? rem / shape_[d] : 0;
    }
    const bool remapped = in.flags & GPUPY_INSTR_REMAPPED;
    if (!remapped && nd_ > 0) {
        // A run along the innermost dimension is an arithmetic sequence:
        // its first index, then a step (a broadcast or an arange read
        // across rows of 16 spent most of its evaluation computing each
        // index from all its coordinates).
        const int last = nd_ - 1;
        const int64_t step = m.stride[last];
        for (int k = 0; k < n;) {
            const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
            int64_t first = m.base;
            for (int d = 0; d < nd_; ++d) first += pt[d] * m.stride[d];
            for (int64_t j = 0; j < run; ++j) out[k + j] = first + j * step;
            k += static_cast<int>(run);
            pt[last] += run;
            for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
                pt[d] = 0;
                ++pt[d - 1];
            }
        }
        return;
    }
    if (nd_ == 0) {
        for (int k = 0; k < n; ++k) out[k] = m.base;
        return;
    }
    // Remapped: a run along the innermost dimension shares the outer
    // dimensions' offset, and its coordinate is stepped rather than divided
    // per element (a roll's or a pad's read costs an add and a compare).
    const int last = nd_ - 1;
    const int64_t div = m.div[last] < 1 ? 1 : m.div[last], mod = m.mod[last], stride = m.stride[last];
    const int32_t edge = m.edge[last];
    const int64_t period = edge == GPUPY_EDGE_REFLECT ? 2 * mod - 2 : edge == GPUPY_EDGE_SYMMETRIC ? 2 * mod : mod;
    const int64_t top = edge == GPUPY_EDGE_SYMMETRIC ? 2 * mod - 1 : period;
    for (int k = 0; k < n;) {
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        int64_t outer = m.base;
        for (int d = 0; d < last; ++d) outer += gpupy_map_coordinate(pt[d], m.div[d], m.shift[d], m.mod[d], m.edge[d]) * m.stride[d];
        int64_t r = pt[last] % div;
        int64_t c = pt[last] / div + m.shift[last];  // before the edge
        int64_t t = period > 0 && edge != GPUPY_EDGE_CLAMP ? c % period : c;  // periodic edges: c within its period
        for (int64_t j = 0; j < run; ++j) {
            int64_t coord;
            switch (edge) {
            case GPUPY_EDGE_CLAMP: coord = c < 0 ? 0 : c >= mod ? mod - 1 : c; break;
            case GPUPY_EDGE_REFLECT:
            case GPUPY_EDGE_SYMMETRIC: coord = period > 0 ? std::min(t, top - t) : 0; break;
            default: coord = t;
            }
            out[k + j] = outer + coord * stride;
            if (++r == div) {
                r = 0;
                ++c;
                if (++t == period) t = 0;
            }
        }
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            pt[d] = 0;
            ++pt[d - 1];
        }
    }
}

bool Interpreter::load(const gpupy_ir_instr& in, const int64_t* idx, int n, void* out) {
    const int item = itemsize(in.dtype);
    char* o = static_cast<char*>(out);
    if (in.nblocks < 1) return fail("LOAD without blocks");
    const auto* b0 = reinterpret_cast<const Block*>(in.blocks[0]);
    if (in.nblocks == 1) {
        const int64_t first = in.block_first;
        // A run of consecutive indices is one memcpy.
        if (n > 0 && idx[n - 1] - idx[0] == n - 1 && (in.flags & GPUPY_INSTR_CONTIGUOUS)) {
            const int64_t off = idx[0] - first;
            if (off < 0 || off + n > b0->nelems) return fail("LOAD index outside its block");
            std::memcpy(o, b0->data + off * item, static_cast<size_t>(n) * item);
            return true;
        }
        // Runs of consecutive indices (a roll's or a pad's rows between
        // their wraps) are one memcpy each.
        for (int k = 0; k < n;) {
            const int64_t off = idx[k] - first;
            int j = 1;
            while (k + j < n && idx[k + j] == idx[k] + j) ++j;
            if (off < 0 || off + j > b0->nelems) return fail("LOAD index outside its block");
            std::memcpy(o + k * item, b0->data + off * item, static_cast<size_t>(j) * item);
            k += j;
        }
        return true;
    }
    for (int k = 0; k < n; ++k) {
        const int64_t local = idx[k] - in.block_first;
        const int64_t bi = local / in.block_elems, off = local % in.block_elems;
        if (local < 0 || bi >= in.nblocks) return fail("LOAD index outside its blocks");
        const auto* b = reinterpret_cast<const Block*>(in.blocks[bi]);
        if (off >= b->nelems) return fail("LOAD index outside its block");
        std::memcpy(o + k * item, b->data + off * item, item);
    }
    return true;
}

namespace {

template <class T>
void copy_strided(T* out, const T* in, int64_t stride, int64_t n) {
    for (int64_t k = 0; k < n; ++k) out[k] = in[k * stride];
}

// A run of the innermost dimension of a remapped read: from coordinate c
// (before the edge) on, `length` points whose coordinates are `first`,
// first + step, ... (step 1, -1 or 0: a clamped edge repeats its element).
// gpupy_map_coordinate's rule, one run at a time instead of per point.
struct EdgeRun {
    int64_t first, step, length;
};

EdgeRun edge_run(int64_t c, int64_t mod, int32_t edge) {
    constexpr int64_t kEndless = INT64_MAX;
    // c % period, without the division where c is within the first period
    // (every run but a wrapped roll's or a pad's second; a division cost
    // more than copying a 512-element row).
    auto within = [c](int64_t period) { return c < period ? c : c % period; };
    switch (edge) {
    case GPUPY_EDGE_CLAMP:
        if (c < 0) return {0, 0, -c};
        if (c >= mod) return {mod - 1, 0, kEndless};
        return {c, 1, mod - c};
    case GPUPY_EDGE_REFLECT: {
        const int64_t period = 2 * mod - 2;
        if (period <= 0) return {0, 0, kEndless};
        const int64_t t = within(period);
        if (t < mod - 1) return {t, 1, mod - 1 - t};  // up to the last element
        return {period - t, -1, period - t};          // back down to element 1
    }
    case GPUPY_EDGE_SYMMETRIC: {
        const int64_t t = within(2 * mod);
        if (t < mod) return {t, 1, mod - t};
        return {2 * mod - 1 - t, -1, 2 * mod - t};
    }
    default:
        if (!mod) return {c, 1, kEndless};
        const int64_t t = within(mod);
        return {t, 1, mod - t};
    }
}

template <class T>
void copy_run(T* out, const T* in, int64_t stride, int64_t n) {
    if (stride == 1) {  // a short row: a loop costs less than a call to memcpy
        for (int64_t k = 0; k < n; ++k) out[k] = in[k];
    } else if (stride == 0) {
        std::fill(out, out + n, *in);
    } else {
        copy_strided(out, in, stride, n);
    }
}

// Copies n elements of `item` bytes, `step` elements apart in the source
// (negative: backwards; 0: one element repeated; 1: a memcpy unless short).
void copy_elements(char* dst, const char* src, int64_t step, int64_t n, int item) {
    if (step == 1 && n * item > 64) {
        std::memcpy(dst, src, static_cast<size_t>(n) * item);
        return;
    }
    switch (item) {
    case 1: copy_run(reinterpret_cast<uint8_t*>(dst), reinterpret_cast<const uint8_t*>(src), step, n); break;
    case 2: copy_run(reinterpret_cast<uint16_t*>(dst), reinterpret_cast<const uint16_t*>(src), step, n); break;
    case 4: copy_run(reinterpret_cast<uint32_t*>(dst), reinterpret_cast<const uint32_t*>(src), step, n); break;
    case 8: copy_run(reinterpret_cast<uint64_t*>(dst), reinterpret_cast<const uint64_t*>(src), step, n); break;
    default:
        for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * item, src + j * step * item, item);
    }
}

}  // namespace

bool Interpreter::rows_loadable(const gpupy_ir_instr& in) const {
    if (in.nblocks != 1) return false;
    if (!(in.flags & GPUPY_INSTR_REMAPPED) || nd_ == 0) return true;
    // Remapped: the innermost dimension must step one coordinate per point
    // (div 1); the outer ones may be anything.
    return in.map.div[nd_ - 1] <= 1;
}

bool Interpreter::load_rows(const gpupy_ir_instr& in, int64_t p0, int n, void* out) {
    const gpupy_index_map& m = in.map;
    const auto* b = reinterpret_cast<const Block*>(in.blocks[0]);
    const int item = itemsize(in.dtype);
    char* o = static_cast<char*>(out);
    if (nd_ == 0) {
        const int64_t off = m.base - in.block_first;
        if (n > 1 || off < 0 || off >= b->nelems) return n == 0 || fail("LOAD index outside its block");
        if (n == 1) std::memcpy(o, b->data + off * item, item);
        return true;
    }
    const bool remapped = in.flags & GPUPY_INSTR_REMAPPED;
    const int last = nd_ - 1;
    int64_t pt[GPUPY_MAX_DIMS];
    int64_t rem = p0;
    for (int d = last; d >= 0; --d) {
        pt[d] = shape_[d] ? rem % shape_[d] : 0;
        rem = shape_[d] ? rem / shape_[d] : 0;
    }
    if (!remapped) {
        auto rows = [&](auto* typed_out) {
            using T = std::remove_pointer_t<decltype(typed_out)>;
            return load_plain_rows(reinterpret_cast<const T*>(b->data), b->nelems, m.base - in.block_first, m, pt, n,
                                   typed_out);
        };
        switch (item) {
        case 1: return rows(reinterpret_cast<uint8_t*>(o));
        case 2: return rows(reinterpret_cast<uint16_t*>(o));
        case 4: return rows(reinterpret_cast<uint32_t*>(o));
        case 8: return rows(reinterpret_cast<uint64_t*>(o));
        default: return fail("bad LOAD dtype");
        }
    }
    const int64_t stride = m.stride[last];
    // Copies `count` elements whose first has index `first` and the others
    // follow `step` elements apart, checked against the block.
    auto copy_checked = [&](char* dst, int64_t first, int64_t step, int64_t count) {
        const int64_t end = first + (count - 1) * step;
        if (std::min(first, end) < 0 || std::max(first, end) >= b->nelems) return fail("LOAD index outside its block");
        copy_elements(dst, b->data + first * item, step, count, item);
        return true;
    };
    // The outer dimensions' share of the row's element offset, each
    // dimension's term recomputed only when its coordinate moves.
    int64_t term[GPUPY_MAX_DIMS];
    auto term_of = [&](int d) {
        return gpupy_map_coordinate(pt[d], m.div[d], m.shift[d], m.mod[d], m.edge[d]) * m.stride[d];
    };
    int64_t outer = m.base - in.block_first;
    for (int d = 0; d < last; ++d) outer += (term[d] = term_of(d));
    for (int k = 0; k < n;) {
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        char* dst = o + static_cast<int64_t>(k) * item;
        // The innermost coordinates of this row, a run of the edge at a time.
        for (int64_t j = 0; j < run;) {
            const EdgeRun r = edge_run(pt[last] + j + m.shift[last], m.mod[last], m.edge[last]);
            const int64_t count = std::min(r.length, run - j);
            if (!copy_checked(dst + j * item, outer + r.first * stride, r.step * stride, count)) return false;
            j += count;
        }
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            pt[d] = 0;
            ++pt[d - 1];
            for (int e = d - 1; e <= d && e < last; ++e) {  // the dimensions whose coordinate moved
                outer -= term[e];
                outer += (term[e] = term_of(e));
            }
        }
    }
    return true;
}

// Rows of at most this many elements are copied a column at a time.
constexpr int64_t kShortRow = 4;

template <class T>
bool Interpreter::load_plain_rows(const T* src, int64_t nelems, int64_t first, const gpupy_index_map& m, int64_t* pt,
                                  int n, T* out) {
    const int last = nd_ - 1;
    const int64_t stride = m.stride[last];
    // The element offset of the row's first point, kept as the points
    // advance (a reduction over 8 x 8 tiles reads rows of 8: recomputing it
    // from every coordinate, and a memcpy call, per row cost more than the
    // copy).
    int64_t offset = first;
    for (int d = 0; d < nd_; ++d) offset += pt[d] * m.stride[d];
    const int64_t width = shape_[last];
    for (int k = 0; k < n;) {
        if (width <= kShortRow && nd_ >= 2 && pt[last] == 0) {
            // Rows of a few elements (the channels of stack(axis=-1), read
            // from planes): whole rows of the next dimension at a time,
            // element j of every row together -- the per-row bookkeeping
            // cost ~10x the copy of 3 values.
            const int64_t rows = std::min<int64_t>((n - k) / width, shape_[last - 1] - pt[last - 1]);
            if (rows >= 2) {
                const int64_t step = m.stride[last - 1];
                const int64_t down = (rows - 1) * step, across = (width - 1) * stride;
                const int64_t lo = offset + std::min<int64_t>(0, down) + std::min<int64_t>(0, across);
                const int64_t hi = offset + std::max<int64_t>(0, down) + std::max<int64_t>(0, across);
                if (lo < 0 || hi >= nelems) return fail("LOAD index outside its block");
                for (int64_t j = 0; j < width; ++j) {
                    const T* from = src + offset + j * stride;
                    T* to = out + k + j;
                    for (int64_t r = 0; r < rows; ++r) to[r * width] = from[r * step];
                }
                offset += rows * step;
                k += static_cast<int>(rows * width);
                pt[last - 1] += rows;
                for (int d = last - 1; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
                    offset += m.stride[d - 1] - shape_[d] * m.stride[d];
                    pt[d] = 0;
                    ++pt[d - 1];
                }
                continue;
            }
        }
        const int64_t run = std::min<int64_t>(n - k, shape_[last] - pt[last]);
        const int64_t end = offset + (run - 1) * stride;
        if (std::min(offset, end) < 0 || std::max(offset, end) >= nelems) return fail("LOAD index outside its block");
        const T* from = src + offset;
        T* to = out + k;
        if (stride == 1 && run > 16) {
            std::memcpy(to, from, static_cast<size_t>(run) * sizeof(T));
        } else {
            for (int64_t j = 0; j < run; ++j) to[j] = from[j * stride];
        }
        offset += run * stride;
        k += static_cast<int>(run);
        pt[last] += run;
        for (int d = last; d > 0 && pt[d] >= shape_[d]; --d) {  // carry into the outer dimensions
            offset += m.stride[d - 1] - shape_[d] * m.stride[d];
            pt[d] = 0;
            ++pt[d - 1];
        }
    }
    return true;
}

}  // namespace GPUPY_SW_VARIANT
}  // namespace gpupy_sw
