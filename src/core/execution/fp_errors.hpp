// Floating-point errors found on the device, reported as NumPy reports
// them (np.errstate's "warn": "divide by zero encountered in divide").
//
// A ufunc built under NumPy's error state marks its node with the kinds of
// error NumPy would warn about (Node::fp_warn). Every pass that computes
// such a node asks the driver to check its values (gpupy_ir.check); the
// driver's flags (gpupy_fp_flag) say what it saw, and fp_kinds_of turns
// them into NumPy's kinds for the op. Errors found while an evaluation
// runs are queued and handed to Runtime::on_fp_error once the outermost
// evaluation is complete (the hook may raise, or run Python that uses
// gpupy). Each kind is reported once per node.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/graph/node.hpp"

namespace gpupy {

// NumPy's kinds of floating-point error that gpupy detects (np.errstate's
// divide, over and invalid; underflow is never looked for).
enum FpKind : uint8_t {
    kFpDivide = 1,
    kFpOverflow = 2,
    kFpInvalid = 4,
};

// What a ufunc built now is to be checked for: the kinds NumPy's error
// state says to warn about (FpKind bits), and the ufunc named (a power
// built as a square warns as "power") or, for the nodes of a reduction or
// a scan, the name NumPy's warnings give ("reduce", "accumulate").
struct FpWarnings {
    uint8_t kinds = 0;
    OpCode ufunc = GPUPY_OP_NONE;
    const char* name = nullptr;  // a string that lives as long as the process
};

// Marks `node` (just built for w.ufunc) to be checked for w's kinds, where
// its op can show them (fp_checkable; a REDUCE node: where its fold is
// gpupy_fold_checkable, and then its folds are checked). A node shared by
// hash-consing is checked for every kind any of its builders asked for.
void mark_fp_checks(Node* node, const FpWarnings& w);

// The op whose values a node's checks look at: a REDUCE node's fold, else
// the node's op.
OpCode fp_op(const Node& n);

// NumPy's word for a kind in its messages ("divide by zero", "overflow",
// "invalid value").
const char* fp_kind_words(uint8_t kind);

// Whether values of `op` with a result of `result` can show an error NumPy
// warns about: float results of ops that can make a NaN or an infinity
// from operands without them, and integer division, remainders and
// reciprocals (by zero). Elsewhere a check would find nothing.
bool fp_checkable(OpCode op, DType result);

// NumPy's kinds for the gpupy_fp_flag bits seen in op's values.
uint8_t fp_kinds_of(OpCode op, uint32_t flags);

// The node's kinds still to look for: asked for and not yet reported.
inline uint8_t fp_kinds_to_check(const Node& n) { return n.fp_warn & static_cast<uint8_t>(~n.fp_reported); }

// The names of a reduction's and a scan's warnings (NumPy's ufunc
// methods). One such call is several nodes (a chain of REDUCE nodes; a
// scan's chunks, their totals and the sums of both), any of which can
// find the same error where NumPy warns once: a kind of error under one
// of these names is queued once per evaluation.
extern const char* const kFpReduce;      // "reduce"
extern const char* const kFpAccumulate;  // "accumulate"

// Queues the kinds found for `node` (those not yet reported) and marks
// them reported.
void note_fp_errors(Node* node, uint8_t kinds);

// The errors queued since the last call, in the order found: the function
// named in the message and the kind.
std::vector<std::pair<const char*, uint8_t>> take_fp_errors();

// Names the function a node's warnings name (a string that lives as long
// as the process), where the node is to be checked.
void name_fp_errors(Node* node, const char* name);

}  // namespace gpupy
