#include "core/planning/fold.hpp"

#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

// A run of domain dimensions that every map reads as one: its size and,
// per map, how it reads the run's innermost dimension.
struct Group {
    int64_t size;
    std::vector<MapDim> dims;  // per map
};

}  // namespace

DomainFold fold_domain(const Dims& shape, const std::vector<WideMap>& maps, std::vector<gpupy_ir_instr>& instrs) {
    const size_t nmaps = maps.size();
    std::vector<Group> groups;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) continue;  // its coordinate is always 0
        Group g{shape[d], {}};
        for (const WideMap& m : maps) g.dims.push_back(m.dims[d]);
        if (!groups.empty()) {
            Group& outer = groups.back();
            bool merge = true;
            for (size_t m = 0; m < nmaps && merge; ++m) {
                const MapDim &o = outer.dims[m], &i = g.dims[m];
                merge = o.plain() && i.plain() && o.stride == i.stride * g.size;
            }
            if (merge) {
                outer.size *= g.size;
                outer.dims = g.dims;  // the merged run steps as its inner part
                continue;
            }
        }
        groups.push_back(std::move(g));
    }
    DomainFold f;
    f.active = true;
    const size_t nlead = groups.size() > GPUPY_MAX_DIMS ? groups.size() - GPUPY_MAX_DIMS : 0;
    for (size_t i = 0; i < groups.size(); ++i) {
        if (i < nlead) f.lead_shape.push_back(groups[i].size);
        else f.ir_shape.push_back(groups[i].size);
    }
    f.tail = shape_size(f.ir_shape);
    for (size_t m = 0; m < nmaps; ++m) {
        gpupy_ir_instr& in = instrs[maps[m].instr];
        in.map.base = maps[m].base;
        for (int d = GPUPY_MAX_DIMS - 1; d >= 0; --d) {
            const size_t g = nlead + static_cast<size_t>(d);
            (g < groups.size() ? groups[g].dims[m] : MapDim{}).write(in.map, d);
        }
        bool contiguous = true, remapped = false;
        int64_t expect = 1;
        for (size_t g = groups.size(); g-- > nlead;) {
            const MapDim& x = groups[g].dims[m];
            contiguous = contiguous && x.plain() && x.stride == expect;
            remapped = remapped || !x.plain();
            expect *= groups[g].size;
        }
        in.flags &= ~(GPUPY_INSTR_CONTIGUOUS | GPUPY_INSTR_REMAPPED);
        if (remapped) in.flags |= GPUPY_INSTR_REMAPPED;
        else if (contiguous) in.flags |= GPUPY_INSTR_CONTIGUOUS;
        DomainFold::Lead lead{maps[m].instr, {}};
        for (size_t g = 0; g < nlead; ++g) lead.dims.push_back(groups[g].dims[m]);
        f.leads.push_back(std::move(lead));
    }
    return f;
}

int64_t fold_piece(const DomainFold& f, std::vector<gpupy_ir_instr>& instrs, int64_t a) {
    if (f.tail <= 0) return a;
    const int64_t outer = a / f.tail;
    if (f.lead_shape.empty()) return a;
    std::vector<int64_t> coord(f.lead_shape.size());
    unravel(outer, f.lead_shape, coord.data());
    for (const DomainFold::Lead& l : f.leads) {
        int64_t add = 0;
        for (size_t d = 0; d < coord.size(); ++d) add += l.dims[d].offset(coord[d]);
        instrs[l.instr].map.base += add;
    }
    return a - outer * f.tail;
}

}  // namespace gpupy
