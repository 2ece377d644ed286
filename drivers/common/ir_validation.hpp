// The structural checks every driver makes on a gpupy_ir before it
// generates code for it or interprets it: a malformed IR is an error with a
// reason, never a crash. What a driver can compute (its ops and dtypes) it
// checks itself, after these.
#ifndef GPUPY_DRIVER_COMMON_IR_VALIDATION_HPP
#define GPUPY_DRIVER_COMMON_IR_VALIDATION_HPP

#include <string>

#include "gpupy/driver.hpp"

namespace gpupy_driver {

// "" if `ir` is well formed, else why not ("instruction 3 (ADD): operand 1
// is not an earlier instruction"). Checks the domain and output range,
// every instruction's op, dtype, operands (earlier instructions of the
// dtypes the op takes) and result dtype, LOAD blocks (non-null only when
// `require_blocks`: check_ir sees IR before blocks are bound), the outputs
// and the reduction's fields.
std::string ir_structure_error(const gpupy_ir& ir, bool require_blocks);

// "" if the destination blocks dst[0 .. ir.noutputs - 1] of a well-formed
// `ir` suit it -- distinct blocks, none read by an instruction, each of
// its output's dtype (dst_dtypes[k], the driver knows its blocks' dtypes)
// -- else which does not.
std::string destinations_error(const gpupy_ir& ir, gpupy_block* const* dst, const int32_t* dst_dtypes);

// The dtype of the operands of instruction `in` (for WHERE, its value
// operands; for CAST, what it converts from).
int32_t operand_dtype(const gpupy_ir& ir, const gpupy_ir_instr& in);

// Whether the instruction reads device blocks (LOAD, GATHER): the ones whose
// blocks are bound and checked.
inline bool reads_blocks(const gpupy_ir_instr& in) { return in.op == GPUPY_OP_LOAD || in.op == GPUPY_OP_GATHER; }

}  // namespace gpupy_driver

#endif
