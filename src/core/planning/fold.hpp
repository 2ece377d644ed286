// Domains of more dimensions than an IR can hold (GPUPY_MAX_DIMS; NumPy
// allows 64). The domain is folded for the driver: dimensions of size 1 are
// dropped, neighbours that every index map reads as one run are merged,
// and if that still leaves too many, the leading ones are taken out of the
// IR's domain. Each piece then lies within one index of those leading
// dimensions, and what that index adds is folded into the maps' bases.
// Only elementwise domains fold (reductions are built within the limit).
#pragma once

#include <cstdint>
#include <vector>

#include "core/graph/geometry.hpp"
#include "gpupy/driver.hpp"

namespace gpupy {

// How one index map reads one domain dimension: a stride and the remap's
// coordinate function (gpupy_index_map).
struct MapDim {
    int64_t stride = 0;
    int64_t div = 1;
    int64_t mod = 0;
    int64_t shift = 0;
    int32_t edge = GPUPY_EDGE_WRAP;

    bool plain() const { return div == 1 && mod == 0 && shift == 0 && edge == GPUPY_EDGE_WRAP; }
    // Writes this as dimension d of an IR index map.
    void write(gpupy_index_map& m, int d) const {
        m.stride[d] = stride;
        m.div[d] = div;
        m.mod[d] = mod;
        m.shift[d] = shift;
        m.edge[d] = edge;
    }
    int64_t offset(int64_t n) const { return gpupy_map_coordinate(n, div, shift, mod, edge) * stride; }
};

// An index map over the whole domain (any number of dimensions).
struct WideMap {
    int32_t instr;  // the LOAD or INDEX instruction it belongs to
    int64_t base;
    std::vector<MapDim> dims;
};

struct DomainFold {
    bool active = false;
    Dims ir_shape;     // the domain the driver sees (<= GPUPY_MAX_DIMS dims)
    Dims lead_shape;   // leading dimensions taken out of it
    int64_t tail = 1;  // domain positions per index of the leading dimensions
    struct Lead {
        int32_t instr;
        std::vector<MapDim> dims;  // over lead_shape
    };
    std::vector<Lead> leads;
};

// Folds `shape` for these maps and writes each map's folded form into its
// instruction.
DomainFold fold_domain(const Dims& shape, const std::vector<WideMap>& maps, std::vector<gpupy_ir_instr>& instrs);

// For outputs starting at domain position a (within one leading index):
// adds the leading dimensions' offsets to the maps of `instrs` (a copy of
// the pass's) and returns the position within the IR's domain.
int64_t fold_piece(const DomainFold& fold, std::vector<gpupy_ir_instr>& instrs, int64_t a);

}  // namespace gpupy
