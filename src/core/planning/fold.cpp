#include "core/planning/fold.hpp"

#include "core/runtime/errors.hpp"

namespace gpupy {

namespace {

// A run of domain dimensions that every map reads as one: its size and,
// per map, the stride, div and mod of its innermost dimension.
struct Group {
    int64_t size;
    std::vector<int64_t> stride, div, mod;  // per map
};

bool plain(const Group& g, size_t m) { return g.div[m] == 1 && g.mod[m] == 0; }

}  // namespace

DomainFold fold_domain(const Dims& shape, const std::vector<WideMap>& maps, std::vector<gpupy_ir_instr>& instrs) {
    const size_t nmaps = maps.size();
    std::vector<Group> groups;
    for (size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] == 1) continue;  // its coordinate is always 0
        Group g{shape[d], {}, {}, {}};
        for (const WideMap& m : maps) {
            g.stride.push_back(m.stride[d]);
            g.div.push_back(m.div[d]);
            g.mod.push_back(m.mod[d]);
        }
        if (!groups.empty()) {
            Group& outer = groups.back();
            bool merge = true;
            for (size_t m = 0; m < nmaps && merge; ++m)
                merge = plain(outer, m) && plain(g, m) && outer.stride[m] == g.stride[m] * g.size;
            if (merge) {
                outer.size *= g.size;
                outer.stride = g.stride;  // the merged run steps as its inner part
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
        bool contiguous = true;
        int64_t expect = 1;
        for (int d = GPUPY_MAX_DIMS - 1; d >= 0; --d) {
            const size_t g = nlead + static_cast<size_t>(d);
            const bool used = g < groups.size();
            in.map.stride[d] = used ? groups[g].stride[m] : 0;
            in.map.div[d] = used ? groups[g].div[m] : 1;
            in.map.mod[d] = used ? groups[g].mod[m] : 0;
        }
        for (size_t g = groups.size(); g-- > nlead;) {
            contiguous = contiguous && plain(groups[g], m) && groups[g].stride[m] == expect;
            expect *= groups[g].size;
        }
        in.flags &= ~(GPUPY_INSTR_CONTIGUOUS | GPUPY_INSTR_REMAPPED);
        bool remapped = false;
        for (size_t g = nlead; g < groups.size(); ++g) remapped = remapped || !plain(groups[g], m);
        if (remapped) in.flags |= GPUPY_INSTR_REMAPPED;
        else if (contiguous) in.flags |= GPUPY_INSTR_CONTIGUOUS;
        DomainFold::Lead lead{maps[m].instr, {}, {}, {}};
        for (size_t g = 0; g < nlead; ++g) {
            lead.stride.push_back(groups[g].stride[m]);
            lead.div.push_back(groups[g].div[m]);
            lead.mod.push_back(groups[g].mod[m]);
        }
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
        for (size_t d = 0; d < coord.size(); ++d) {
            int64_t c = coord[d] / l.div[d];
            if (l.mod[d]) c %= l.mod[d];
            add += c * l.stride[d];
        }
        instrs[l.instr].map.base += add;
    }
    return a - outer * f.tail;
}

}  // namespace gpupy
