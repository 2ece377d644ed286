// The driver interface: the only way from the core down to a device.
//
// A driver is a shared library under drivers/<name>/ that exports one C
// symbol, `gpupy_driver_entry`, returning a table of the thesis's 14
// essential functions (Eitzen 2007, section 4.7), four for reporting,
// three optional capabilities and the op and dtype tables it was built
// with (the core refuses a driver whose tables differ from its own).
// The core loads it with dlopen and never includes a GL header; a driver
// never sees a Python object. Everything here is plain C layout so that a
// driver built by another compiler (or read through ctypes in the contract
// tests) agrees on it.
//
// Calls never overlap (the core serialises them), but successive calls may
// come from different OS threads.
#ifndef GPUPY_DRIVER_HPP
#define GPUPY_DRIVER_HPP

#include <stddef.h>
#include <stdint.h>

// Bumped on every change to the layout of the structs below, to the meaning
// of a function, or to an opcode or dtype code (ops.def, dtypes.def).
#define GPUPY_DRIVER_ABI_VERSION 9

// Most dimensions an evaluation domain may have on a device; views with
// more are evaluated by NumPy.
#define GPUPY_MAX_DIMS 8
// Most device blocks one LOAD leaf may span (consecutive blocks of one
// array); see gpupy_ir_instr.
#define GPUPY_MAX_LEAF_BLOCKS 4
// Most outputs one evaluation writes (gpupy_ir.noutputs).
#define GPUPY_MAX_OUTPUTS 4
// Opaque resource counters; their meaning belongs to the driver.
#define GPUPY_RESOURCE_SLOTS 8
// Output elements up to which a device evaluation costs more in fixed
// overhead (a dispatch and its readback) than it computes: the host
// engine's share for a driver without prefers_host (GPUPY_HOST_ELEMENTS
// overrides it), and the OpenGL driver's on a real GPU. Advice, not part
// of the interface.
#define GPUPY_SMALL_WORK_ELEMENTS (INT64_C(1) << 17)

#ifdef __cplusplus
extern "C" {
#endif

// Dtypes: one per row of dtypes.def, numbered by its CODE column.
enum gpupy_dtype {
#define GPUPY_DTYPE(NAME, CODE, CTYPE, NUMPY_NAME, ITEMSIZE) GPUPY_##NAME = CODE,
#include "dtypes.def"
#undef GPUPY_DTYPE
    GPUPY_DTYPE_AFTER_LAST  // one past the last row's code (rows increase)
};
#define GPUPY_NUM_DTYPES GPUPY_DTYPE_AFTER_LAST

enum gpupy_op_flags {
    GPUPY_OPF_COMMUTATIVE = 1,
    GPUPY_OPF_PREDICATE = 2,
    GPUPY_OPF_INTERNAL = 4,
    GPUPY_OPF_MATH = 8,
};

// The value a fold (reduction) with an op starts from: the FOLD column of
// ops.def. LOWEST/HIGHEST are -inf/+inf for floats and the dtype's limits
// for integers (false/true for bool); the NAN_OR_ ones are NaN for floats.
enum gpupy_fold_start {
    GPUPY_FOLD_NONE = 0,  // the op does not fold
    GPUPY_FOLD_ZERO,
    GPUPY_FOLD_ONE,
    GPUPY_FOLD_ALL_ONES,  // every bit set (-1 for signed integers, true for bool)
    GPUPY_FOLD_LOWEST,
    GPUPY_FOLD_HIGHEST,
    GPUPY_FOLD_NAN_OR_LOWEST,
    GPUPY_FOLD_NAN_OR_HIGHEST,
};

// Opcodes: three leaf kinds, then one per row of ops.def, numbered by its
// CODE column.
enum gpupy_op {
    GPUPY_OP_NONE = -1,
    GPUPY_OP_LOAD = 0,   // read a device block through an index map
    GPUPY_OP_INDEX = 1,  // a component of the element's own index (arange, indices)
    GPUPY_OP_CONST = 2,  // a scalar; passed as a uniform, not baked into code
#define GPUPY_OP(NAME, CODE, NUMPY_NAME, ARITY, FLAGS, FOLD) GPUPY_OP_##NAME = CODE,
#include "ops.def"
#undef GPUPY_OP
    GPUPY_OP_AFTER_LAST  // one past the last row's code (rows increase)
};
#define GPUPY_NUM_OPS GPUPY_OP_AFTER_LAST

// One row of ops.def / dtypes.def as a driver was built with them.
typedef struct gpupy_op_row {
    int32_t code;  // enum gpupy_op
    const char* name;        // "ADD"
    const char* numpy_name;  // "add"
    int32_t arity;
    int32_t flags;       // enum gpupy_op_flags
    int32_t fold_start;  // enum gpupy_fold_start
} gpupy_op_row;

typedef struct gpupy_dtype_row {
    int32_t code;  // enum gpupy_dtype
    const char* numpy_name;
    int32_t itemsize;
} gpupy_dtype_row;

// Status codes returned by driver functions.
enum gpupy_status {
    GPUPY_OK = 0,
    GPUPY_ERROR = -1,        // see last_error()
    GPUPY_ERROR_NOMEM = -2,  // block_alloc: device memory full; the core evicts and retries
};

// A scalar in an instruction. Integers and bool in .i (or .u for uint64),
// floats in .f (a float32 constant is stored exactly as a double).
typedef union gpupy_scalar {
    int64_t i;
    uint64_t u;
    double f;
} gpupy_scalar;

// A device block: one texture (or buffer) of `nelems` elements of a dtype.
// Defined by each driver.
typedef struct gpupy_block gpupy_block;

// How a remapped coordinate outside its operand's extent comes back inside
// it (numpy.roll and numpy.pad's modes; Accelerator's Rotate and Pad).
enum gpupy_edge {
    GPUPY_EDGE_WRAP = 0,       // c % mod (no modulo where mod == 0); c >= 0
    GPUPY_EDGE_CLAMP = 1,      // the nearest of 0 and mod - 1 outside them
    GPUPY_EDGE_REFLECT = 2,    // mirrored about the first and last element,
                               // which are not repeated (period 2 mod - 2,
                               // mod >= 2); c >= 0
    GPUPY_EDGE_SYMMETRIC = 3,  // mirrored with the edge element repeated
                               // (period 2 mod); c >= 0
};

// Maps a point n of the evaluation domain to an element index:
//   index(n) = base + sum_d coordinate_d(n[d]) * stride[d]
// over d < gpupy_ir.ndim, where coordinate_d first computes
//   c = n[d] / div[d] + shift[d]    (integer division, div[d] >= 1)
// and then brings c inside [0, mod[d]) as edge[d] says (gpupy_edge;
// gpupy_map_coordinate below is the definition). Plain NumPy views have
// div 1, shift 0, mod 0 and WRAP everywhere; repeat/tile-like reads, rolls
// and pads use the others (flagged GPUPY_INSTR_REMAPPED). The core keeps c
// >= 0 where the edge says so, so drivers may use truncating remainders.
typedef struct gpupy_index_map {
    int64_t base;
    int64_t stride[GPUPY_MAX_DIMS];
    int64_t div[GPUPY_MAX_DIMS];
    int64_t mod[GPUPY_MAX_DIMS];
    int64_t shift[GPUPY_MAX_DIMS];
    int32_t edge[GPUPY_MAX_DIMS];
} gpupy_index_map;

// One dimension's coordinate of a remapped index map.
static inline int64_t gpupy_map_coordinate(int64_t n, int64_t div, int64_t shift, int64_t mod, int32_t edge) {
    int64_t c = n / (div < 1 ? 1 : div) + shift;
    switch (edge) {
        case GPUPY_EDGE_CLAMP: return c < 0 ? 0 : c >= mod ? mod - 1 : c;
        case GPUPY_EDGE_REFLECT: {
            const int64_t period = 2 * mod - 2;
            if (period <= 0) return 0;
            const int64_t t = c % period;
            return t < period - t ? t : period - t;
        }
        case GPUPY_EDGE_SYMMETRIC: {
            const int64_t t = c % (2 * mod);
            return t < 2 * mod - 1 - t ? t : 2 * mod - 1 - t;
        }
        default: return mod ? c % mod : c;
    }
}

// Instruction flags.
enum gpupy_instr_flags {
    // The map's strides are the C-order strides of the domain, so
    // index(n) = base + (flat position of n). Lets code skip unravelling.
    GPUPY_INSTR_CONTIGUOUS = 1,
    // Some dimension of the map has div != 1, mod != 0, shift != 0 or an
    // edge other than WRAP.
    GPUPY_INSTR_REMAPPED = 2,
};

// One IR instruction. An IR list is evaluated once per domain point; an
// instruction's operands are earlier instructions of the same list.
typedef struct gpupy_ir_instr {
    int32_t op;      // enum gpupy_op
    int32_t dtype;   // enum gpupy_dtype of the result
    int32_t arg[3];  // operand instruction indices; -1 where unused
    int32_t flags;   // enum gpupy_instr_flags

    // LOAD and INDEX: which element of the source this domain point reads.
    gpupy_index_map map;

    // LOAD (and GATHER, whose index is its operand's value): element i = map
    // index lives in blocks[(i - block_first) / block_elems]
    // at offset (i - block_first) % block_elems. Only the last block may hold
    // fewer than block_elems elements. The core guarantees every index the
    // evaluation reads falls inside the blocks given.
    int32_t nblocks;
    gpupy_block* blocks[GPUPY_MAX_LEAF_BLOCKS];
    int64_t block_first;
    int64_t block_elems;

    // INDEX: value = (map index / div) % mod, converted to dtype (mod == 0:
    // no modulo). arange, indices, fromfunction, linspace are built from it.
    int64_t div;
    int64_t mod;

    // CONST: the value, already converted to dtype by the core. GATHER:
    // value.i is the number of elements its blocks hold from block_first on
    // (indices are kept below it).
    gpupy_scalar value;
} gpupy_ir_instr;

enum gpupy_reduce_mode {
    // Output index space = outer dims ++ [nchunks]: output (o, c) folds the
    // body over flattened inner positions r in [c*chunk, min(I, (c+1)*chunk)).
    GPUPY_REDUCE_CHUNKS = 0,
    // Output index space = the domain: output (o, r) folds the body over
    // r' in [floor(r / chunk) * chunk, r] (an inclusive scan within a chunk).
    GPUPY_REDUCE_PREFIX = 1,
};

// One evaluation: a list of instructions, its domain and its output range.
//
// Elementwise (reduce_op == GPUPY_OP_NONE): the output index space is the
// domain. For each output position f in [start, start + count), with n the
// domain point whose C-order flat position is f, the value at n of
// instruction output[k] is written to element dst_offset + (f - start) of
// dst[k], for each output k < noutputs. Several outputs share the work
// below them: expressions needed together (the channels of an image,
// divmod's quotient and remainder) computed in one pass.
//
// Reduction (reduce_op is a binary op of ops.def, e.g. ADD or MAXIMUM):
// the last `reduce_ndim` dims of the domain are reduced (I = their product,
// r = C-order flat position within them, unravelled to those dims). Each
// output element starts from reduce_identity and folds body values with
// reduce_op in increasing r, as described by reduce_mode. The body is
// instruction output[0], of the accumulator's dtype, which is dst[0]'s. A
// reduction in CHUNKS mode may have further outputs: output k >= 1 folds
// the values of instruction output[k] with output_reduce_op[k] from
// output_identity[k], over the same chunks, into dst[k] (a sum and a
// maximum of one operand, a sum of x and of x * x, in one pass).
typedef struct gpupy_ir {
    int32_t ninstr;
    const gpupy_ir_instr* instr;  // instr[ninstr - 1] is the result
    int32_t ndim;                 // 0 <= ndim <= GPUPY_MAX_DIMS
    int64_t shape[GPUPY_MAX_DIMS];
    int64_t start;
    int64_t count;
    int64_t dst_offset;

    int32_t reduce_op;    // enum gpupy_op; GPUPY_OP_NONE for elementwise
    int32_t reduce_mode;  // enum gpupy_reduce_mode
    int32_t reduce_ndim;
    int64_t reduce_chunk;
    gpupy_scalar reduce_identity;

    // 1 <= noutputs <= GPUPY_MAX_OUTPUTS; output[k] is the instruction whose
    // values go to dst[k] (elementwise: distinct instructions), each
    // destination block of that instruction's dtype and distinct from the
    // others and from every block the IR reads.
    int32_t noutputs;
    int32_t output[GPUPY_MAX_OUTPUTS];
    // A reduction's further outputs, k >= 1 (entry 0 unused: reduce_op and
    // reduce_identity are output 0's).
    int32_t output_reduce_op[GPUPY_MAX_OUTPUTS];
    gpupy_scalar output_identity[GPUPY_MAX_OUTPUTS];

    // Floating-point error checks (NumPy's np.errstate). For each k <
    // ncheck, instruction check[k] (an op of ops.def) is checked at every
    // domain point the evaluation computes it, and the driver ORs into
    // check_flags[k] the gpupy_fp_flag bits found there (the core zeroes
    // them first; they are complete when eval_ir returns). ncheck 0:
    // nothing is checked, and check and check_flags may be null.
    int32_t ncheck;
    const int32_t* check;
    uint32_t* check_flags;

    // A reduction's folds checked (np.errstate for np.sum, np.cumprod...):
    // bit k set asks the driver to check output k's folds and OR into
    // fold_flags[k] (GPUPY_MAX_OUTPUTS entries, zeroed by the core) the
    // gpupy_fold_flags() of every output element it computes -- whether
    // the folded value is a NaN or an infinity that its body values did
    // not carry. Only gpupy_fold_checkable folds may be checked (an IR
    // checking another is malformed): a finite output needs no further
    // look. 0: no fold is checked; fold_flags may be null.
    uint32_t check_folds;
    uint32_t* fold_flags;
} gpupy_ir;

// What a checked instruction's values showed (gpupy_ir.check). "Float
// operands" are the instruction's operands of a float dtype; the core
// turns these into NumPy's kinds of error (divide by zero, overflow,
// invalid) for the op at hand.
enum gpupy_fp_flag {
    GPUPY_FP_NAN = 1,            // a float result is NaN, no float operand is;
                                 // for LOGADDEXP and LOGADDEXP2 any NaN result
                                 // (NumPy's loop compares their operands, an
                                 // ordered comparison that flags a NaN one)
    GPUPY_FP_INF_AT_ZERO = 2,    // a float result is +-inf, every float operand
                                 // is finite and one is zero (+-0)
    GPUPY_FP_INF = 4,            // a float result is +-inf, every float operand
                                 // is finite and none is zero
    GPUPY_FP_ZERO_DIVISOR = 8,   // an integer (not bool) result whose divisor is 0:
                                 // operand 1, or a unary op's operand (reciprocal)
    GPUPY_FP_INT_OVERFLOW = 16,  // a signed integer FLOOR_DIVIDE of the dtype's
                                 // minimum by -1 (the quotient does not fit)
};

// The ops whose every NaN result is GPUPY_FP_NAN, a NaN operand's too.
static inline int gpupy_fp_flags_every_nan(int32_t op) {
    return op == GPUPY_OP_LOGADDEXP || op == GPUPY_OP_LOGADDEXP2;
}

// The folds that may be checked (gpupy_ir.check_folds): float sums and
// products, whose accumulator, once not finite, stays so.
static inline int gpupy_fold_checkable(int32_t op, int32_t dtype) {
    return (dtype == GPUPY_FLOAT32 || dtype == GPUPY_FLOAT64) && (op == GPUPY_OP_ADD || op == GPUPY_OP_MULTIPLY);
}

// The gpupy_fp_flag bits of one checked fold's output element
// (gpupy_ir.check_folds), from what it is and what its body values were
// (any NaN among them, any infinity), whatever the order of the fold: an
// infinity from finite values overflowed (GPUPY_FP_INF); a NaN from
// values without one was made by infinities meeting (inf - inf, inf * 0:
// GPUPY_FP_NAN), infinities that overflowed first where no value was one.
static inline uint32_t gpupy_fold_flags(int is_nan, int is_inf, int body_nan, int body_inf) {
    if (body_nan) return 0u;
    if (is_nan) return body_inf ? (uint32_t)GPUPY_FP_NAN : (uint32_t)(GPUPY_FP_NAN | GPUPY_FP_INF);
    return is_inf && !body_inf ? (uint32_t)GPUPY_FP_INF : 0u;
}

typedef struct gpupy_resources {
    int64_t slot[GPUPY_RESOURCE_SLOTS];
} gpupy_resources;

// An elementwise inner loop with the C signature of NumPy's ufunc loops
// (PyUFuncGenericFunction): n elements; args holds the inputs, then the
// output; steps their strides in bytes; data is the loop's own pointer.
typedef void (*gpupy_host_loop)(char** args, const int64_t* n, const int64_t* steps, void* data);

// Counters a driver keeps for gpupy.stats().
typedef struct gpupy_driver_counters {
    int64_t programs_compiled;   // programs built (compiled and linked)
    int64_t program_cache_hits;  // evaluations that reused a built program
    int64_t compile_ns;          // time spent building programs
    int64_t first_run_ns;        // time of first runs of new programs (JIT)
    int64_t reserved[4];
} gpupy_driver_counters;

typedef struct gpupy_driver_api {
    int32_t abi_version;  // GPUPY_DRIVER_ABI_VERSION
    const char* name;     // "software", "opengl", ...

    // --- infrastructure --------------------------------------------------
    // Initialise the device. On failure return GPUPY_ERROR and write a
    // one-line reason (e.g. "libEGL: no display") into errbuf.
    int (*init)(void** ctx, char* errbuf, size_t errlen);
    // Undo init. Must not fail. Frees any blocks still allocated.
    void (*cleanup)(void* ctx);
    // 1 if the driver can run `op` whose operands have `dtype` (for leaves:
    // can store and load `dtype`; for CAST: can convert from `dtype` to any
    // dtype it stores), else 0. The core evaluates everything else in NumPy.
    int (*get_method)(void* ctx, int32_t op, int32_t dtype);

    // --- blocks ----------------------------------------------------------
    // GPUPY_ERROR_NOMEM tells the core to evict a block and retry.
    int (*block_alloc)(void* ctx, int32_t dtype, int64_t nelems, gpupy_block** out);
    void (*block_free)(void* ctx, gpupy_block* block);
    // Copy `count` elements starting at element `offset` of the block to or
    // from host memory laid out as NumPy lays out the dtype.
    int (*block_read)(void* ctx, gpupy_block* block, int64_t offset, int64_t count, void* dst);
    int (*block_write)(void* ctx, gpupy_block* block, int64_t offset, int64_t count, const void* src);

    // --- IR --------------------------------------------------------------
    // Exact resources of `ir` into *out; 1 if one evaluation can run it,
    // 0 if not, GPUPY_ERROR on error. The core checks IR before it binds
    // blocks: LOAD leaves may have null blocks here (nblocks and
    // block_elems are set).
    int (*check_ir)(void* ctx, const gpupy_ir* ir, gpupy_resources* out);
    // Evaluate `ir` into dst[0 .. ir->noutputs - 1] (never one of the IR's
    // own LOAD blocks).
    int (*eval_ir)(void* ctx, const gpupy_ir* ir, gpupy_block* const* dst);

    // --- resources -------------------------------------------------------
    // Upper bound of what one node costs, the node described as an
    // instruction (op, dtype, flags, nblocks; operand indices unused).
    void (*resource_get)(void* ctx, const gpupy_ir_instr* node, gpupy_resources* out);
    void (*resource_zero)(void* ctx, gpupy_resources* r);
    void (*resource_add)(void* ctx, gpupy_resources* acc, const gpupy_resources* r);
    void (*resource_sub)(void* ctx, gpupy_resources* acc, const gpupy_resources* r);
    // 1 if one evaluation can hold `r`, else 0.
    int (*resource_check)(void* ctx, const gpupy_resources* r);

    // --- reporting (beyond the thesis) ------------------------------------
    // Message of the last failed call; valid until the next call. For a
    // failed shader build it carries the numbered source and the log.
    const char* (*last_error)(void* ctx);
    // "key: value" lines for gpupy.show_config(): device, versions, limits.
    const char* (*describe)(void* ctx);
    // Driver-specific setting, e.g. ("max_ops", "1"); GPUPY_ERROR if the key
    // or value is not understood.
    int (*set_option)(void* ctx, const char* key, const char* value);
    void (*get_counters)(void* ctx, gpupy_driver_counters* out);

    // --- optional capability (may be null) --------------------------------
    // A block over `nelems` elements of host memory at `host`, used in
    // place (no copy): drivers that compute on the CPU offer it, and the
    // core evaluates small work through it instead of moving it to a device.
    // block_free releases the block, never the memory.
    int (*block_wrap)(void* ctx, int32_t dtype, int64_t nelems, void* host, gpupy_block** out);
    // 1 if an evaluation of `elements` outputs costing about `ops` operations
    // each would finish sooner on the host engine than on this device
    // (dispatch, transfers and per-element overheads included), else 0.
    // Drivers that cannot judge leave it null: the core then moves only
    // small evaluations (GPUPY_HOST_ELEMENTS) to the host.
    int (*prefers_host)(void* ctx, int64_t elements, int64_t ops);
    // The core offers, for `op` with operands of `dtype`, the inner loop
    // NumPy itself runs for that ufunc (vectorised where NumPy's is). A
    // driver computing on the host may call it in place of its own kernel,
    // for chunks of contiguous operands: then its values are NumPy's, bit
    // for bit. Returns 1 if the driver will use it, else 0. Never offered
    // after the first eval_ir.
    int (*offer_host_loop)(void* ctx, int32_t op, int32_t dtype, gpupy_host_loop loop, void* data);
    // Waits until the work eval_ir handed the device is complete. A device
    // runs evaluations asynchronously (a GPU returns from a dispatch before
    // the work is done); the calibration times passes left on the device
    // through it. Null where eval_ir returns only once its work is done.
    int (*finish)(void* ctx);

    // --- the tables the driver was built with (required) ------------------
    // The core checks them against its own at load and refuses a driver
    // whose opcodes or dtypes mean something else. op_meta.hpp and
    // dtype_meta.hpp provide them (gpupy_op_rows, gpupy_dtype_rows).
    const gpupy_op_row* op_rows;
    int32_t num_op_rows;
    const gpupy_dtype_row* dtype_rows;
    int32_t num_dtype_rows;
} gpupy_driver_api;

// The one symbol a driver library exports.
typedef const gpupy_driver_api* (*gpupy_driver_entry_fn)(void);
#define GPUPY_DRIVER_ENTRY_SYMBOL "gpupy_driver_entry"

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // GPUPY_DRIVER_HPP
