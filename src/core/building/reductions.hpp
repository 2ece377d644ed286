// Reductions and scans (thesis 4.8, Accelerator's reduction passes): chains
// of chunked REDUCE nodes, each folding many elements per output, with the
// operand expression fused into the first pass.
#pragma once

#include <string>
#include <vector>

#include "core/execution/fp_errors.hpp"
#include "core/graph/array.hpp"

namespace gpupy {

// The binary op a reduction folds with: a row of ops.def with a FOLD value;
// ValueError otherwise.
OpCode fold_op(const std::string& numpy_name);

// `a` folded with `fold` over `axes` (normalised, no duplicates: AxisError /
// ValueError as NumPy), accumulating in dtype t; folds of at most `chunk`
// elements per output per pass. `fp`: the floating-point errors its folds
// are checked for (fp_errors.hpp; none by default).
GpuArray reduce(const GpuArray& a, OpCode fold, const std::vector<int64_t>& axes, DType t, int64_t chunk,
                const FpWarnings& fp = {});
// Inclusive scan with `fold` along `axis` in dtype t; `fp` as for reduce.
GpuArray scan(const GpuArray& a, OpCode fold, int64_t axis, DType t, int64_t chunk, const FpWarnings& fp = {});

}  // namespace gpupy
