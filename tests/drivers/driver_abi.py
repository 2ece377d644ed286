"""A ctypes mirror of include/gpupy/driver.hpp, plus a small helper to load and call a driver.

The op and dtype tables are the ones the driver libraries carry
(gpupy_driver_api.op_rows / dtype_rows, from ops.def and dtypes.def), read
from the software driver, so they cannot drift from the C++ side; every
driver's tables are checked against them and against tests/golden/ in
test_tables.py.
"""

import ctypes
import importlib.util
import os
import sys
from pathlib import Path

import numpy as np

ABI_VERSION = 9
MAX_DIMS = 8
MAX_LEAF_BLOCKS = 4
MAX_OUTPUTS = 4
RESOURCE_SLOTS = 8

OK, ERROR, ERROR_NOMEM = 0, -1, -2
OPF_COMMUTATIVE, OPF_PREDICATE, OPF_INTERNAL, OPF_MATH = 1, 2, 4, 8
INSTR_CONTIGUOUS, INSTR_REMAPPED = 1, 2
EDGE_WRAP, EDGE_CLAMP, EDGE_REFLECT, EDGE_SYMMETRIC = 0, 1, 2, 3
REDUCE_CHUNKS, REDUCE_PREFIX = 0, 1
FOLD_NAMES = ("none", "zero", "one", "all_ones", "lowest", "highest", "nan_or_lowest", "nan_or_highest")


class Scalar(ctypes.Union):
    _fields_ = [("i", ctypes.c_int64), ("u", ctypes.c_uint64), ("f", ctypes.c_double)]


class IndexMap(ctypes.Structure):
    _fields_ = [("base", ctypes.c_int64), ("stride", ctypes.c_int64 * MAX_DIMS),
                ("div", ctypes.c_int64 * MAX_DIMS), ("mod", ctypes.c_int64 * MAX_DIMS),
                ("shift", ctypes.c_int64 * MAX_DIMS), ("edge", ctypes.c_int32 * MAX_DIMS)]


class IrInstr(ctypes.Structure):
    _fields_ = [("op", ctypes.c_int32), ("dtype", ctypes.c_int32), ("arg", ctypes.c_int32 * 3),
                ("flags", ctypes.c_int32), ("map", IndexMap), ("nblocks", ctypes.c_int32),
                ("blocks", ctypes.c_void_p * MAX_LEAF_BLOCKS), ("block_first", ctypes.c_int64),
                ("block_elems", ctypes.c_int64), ("div", ctypes.c_int64), ("mod", ctypes.c_int64),
                ("value", Scalar)]


class Ir(ctypes.Structure):
    _fields_ = [("ninstr", ctypes.c_int32), ("instr", ctypes.POINTER(IrInstr)), ("ndim", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_DIMS), ("start", ctypes.c_int64), ("count", ctypes.c_int64),
                ("dst_offset", ctypes.c_int64), ("reduce_op", ctypes.c_int32), ("reduce_mode", ctypes.c_int32),
                ("reduce_ndim", ctypes.c_int32), ("reduce_chunk", ctypes.c_int64), ("reduce_identity", Scalar),
                ("noutputs", ctypes.c_int32), ("output", ctypes.c_int32 * MAX_OUTPUTS),
                ("output_reduce_op", ctypes.c_int32 * MAX_OUTPUTS), ("output_identity", Scalar * MAX_OUTPUTS),
                ("ncheck", ctypes.c_int32), ("check", ctypes.POINTER(ctypes.c_int32)),
                ("check_flags", ctypes.POINTER(ctypes.c_uint32)), ("check_folds", ctypes.c_uint32),
                ("fold_flags", ctypes.POINTER(ctypes.c_uint32))]

# gpupy_fp_flag: what a checked instruction's values showed.
FP_NAN, FP_INF_AT_ZERO, FP_INF, FP_ZERO_DIVISOR, FP_INT_OVERFLOW = 1, 2, 4, 8, 16


class Resources(ctypes.Structure):
    _fields_ = [("slot", ctypes.c_int64 * RESOURCE_SLOTS)]


class OpRow(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("name", ctypes.c_char_p), ("numpy_name", ctypes.c_char_p),
                ("arity", ctypes.c_int32), ("flags", ctypes.c_int32), ("fold_start", ctypes.c_int32)]


class DtypeRow(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int32), ("numpy_name", ctypes.c_char_p), ("itemsize", ctypes.c_int32)]


class Counters(ctypes.Structure):
    _fields_ = [("programs_compiled", ctypes.c_int64), ("program_cache_hits", ctypes.c_int64),
                ("compile_ns", ctypes.c_int64), ("first_run_ns", ctypes.c_int64),
                ("reserved", ctypes.c_int64 * 4)]


_vp, _i32, _i64, _sz = ctypes.c_void_p, ctypes.c_int32, ctypes.c_int64, ctypes.c_size_t
_F = ctypes.CFUNCTYPE


class DriverApi(ctypes.Structure):
    _fields_ = [
        ("abi_version", ctypes.c_int32),
        ("name", ctypes.c_char_p),
        ("init", _F(ctypes.c_int, ctypes.POINTER(_vp), ctypes.c_char_p, _sz)),
        ("cleanup", _F(None, _vp)),
        ("get_method", _F(ctypes.c_int, _vp, _i32, _i32)),
        ("block_alloc", _F(ctypes.c_int, _vp, _i32, _i64, ctypes.POINTER(_vp))),
        ("block_free", _F(None, _vp, _vp)),
        ("block_read", _F(ctypes.c_int, _vp, _vp, _i64, _i64, _vp)),
        ("block_write", _F(ctypes.c_int, _vp, _vp, _i64, _i64, _vp)),
        ("check_ir", _F(ctypes.c_int, _vp, ctypes.POINTER(Ir), ctypes.POINTER(Resources))),
        ("eval_ir", _F(ctypes.c_int, _vp, ctypes.POINTER(Ir), ctypes.POINTER(_vp))),
        ("resource_get", _F(None, _vp, ctypes.POINTER(IrInstr), ctypes.POINTER(Resources))),
        ("resource_zero", _F(None, _vp, ctypes.POINTER(Resources))),
        ("resource_add", _F(None, _vp, ctypes.POINTER(Resources), ctypes.POINTER(Resources))),
        ("resource_sub", _F(None, _vp, ctypes.POINTER(Resources), ctypes.POINTER(Resources))),
        ("resource_check", _F(ctypes.c_int, _vp, ctypes.POINTER(Resources))),
        ("last_error", _F(ctypes.c_char_p, _vp)),
        ("describe", _F(ctypes.c_char_p, _vp)),
        ("set_option", _F(ctypes.c_int, _vp, ctypes.c_char_p, ctypes.c_char_p)),
        ("get_counters", _F(None, _vp, ctypes.POINTER(Counters))),
        ("block_wrap", _F(ctypes.c_int, _vp, _i32, _i64, _vp, ctypes.POINTER(_vp))),
        ("prefers_host", _F(ctypes.c_int, _vp, _i64, _i64)),
        ("offer_host_loop", _F(ctypes.c_int, _vp, _i32, _i32, _vp, _vp)),
        ("finish", _F(ctypes.c_int, _vp)),
        ("op_rows", ctypes.POINTER(OpRow)),
        ("num_op_rows", ctypes.c_int32),
        ("dtype_rows", ctypes.POINTER(DtypeRow)),
        ("num_dtype_rows", ctypes.c_int32),
    ]


def api_of(path):
    """The gpupy_driver_api table of a driver library (nothing initialised)."""
    lib = ctypes.CDLL(str(path))
    entry = lib.gpupy_driver_entry
    entry.restype = ctypes.POINTER(DriverApi)
    return entry().contents


def tables_of(api):
    """(ops, dtypes) a driver was built with: ops as (code, NAME, numpy
    name, arity, flags, fold name), dtypes as (code, numpy name, itemsize)."""
    ops = [(r.code, r.name.decode(), r.numpy_name.decode(), r.arity, r.flags, FOLD_NAMES[r.fold_start])
           for r in (api.op_rows[i] for i in range(api.num_op_rows))]
    dtypes = [(r.code, r.numpy_name.decode(), r.itemsize) for r in (api.dtype_rows[i] for i in range(api.num_dtype_rows))]
    return ops, dtypes


DRIVER_NAMES = ("software", "opengl")


def driver_dirs():
    """Where driver libraries are looked for: $GPUPY_DRIVER_DIR, then the
    installed package's gpupy/_drivers/ (found without importing gpupy)."""
    dirs = []
    if os.environ.get("GPUPY_DRIVER_DIR"):
        dirs.append(Path(os.environ["GPUPY_DRIVER_DIR"]))
    spec = importlib.util.find_spec("gpupy")
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            dirs.append(Path(loc) / "_drivers")
    # A child process started in the project root finds the source tree's
    # gpupy/ first, which holds no built drivers: look behind it too.
    for entry in sys.path:
        dirs.append(Path(entry or ".") / "gpupy" / "_drivers")
    return dirs


def find_driver(name):
    for d in driver_dirs():
        path = d / f"libgpupy_driver_{name}.so"
        if path.exists():
            return path
    return None


def _reference_tables():
    path = find_driver("software")
    if path is None:
        raise ImportError("libgpupy_driver_software.so not found (set GPUPY_DRIVER_DIR or install gpupy)")
    return tables_of(api_of(path))


_OP_ROWS, _DTYPE_ROWS = _reference_tables()
DTYPES = [(name.upper(), name, size) for _, name, size in _DTYPE_ROWS]   # [(ENUM_NAME, numpy name, itemsize)]
DTYPE = {name: code for (code, _, _), (name, _, _) in zip(_DTYPE_ROWS, DTYPES)}  # "FLOAT32" -> 9
DTYPE_OF_NUMPY = {np.dtype(npname): code for code, npname, _ in _DTYPE_ROWS}
NUMPY_OF_DTYPE = {code: np.dtype(npname) for code, npname, _ in _DTYPE_ROWS}

OP_NONE, OP_LOAD, OP_INDEX, OP_CONST = -1, 0, 1, 2
OPS = [(name, numpy_name, arity, flags) for _, name, numpy_name, arity, flags, _ in _OP_ROWS]
OP = {"LOAD": OP_LOAD, "INDEX": OP_INDEX, "CONST": OP_CONST}
OP.update({name: code for code, name, *_ in _OP_ROWS})
OP_INFO = {code: (name, numpy_name, arity, flags) for code, name, numpy_name, arity, flags, _ in _OP_ROWS}
FOLD_OF = {code: fold for code, *_, fold in _OP_ROWS}
NUM_OPS = max(OP_INFO) + 1


class DriverError(RuntimeError):
    pass


class Driver:
    """One initialised driver: thin Python wrappers over the api table."""

    def __init__(self, path):
        self.path = Path(path)
        try:
            self.lib = ctypes.CDLL(str(path))
        except OSError as e:  # a library it needs (libEGL, libGLEW, ...) is missing
            raise DriverError(f"cannot load {self.path.name}: {e}") from None
        entry = self.lib.gpupy_driver_entry
        entry.restype = ctypes.POINTER(DriverApi)
        self.api = entry().contents
        if self.api.abi_version != ABI_VERSION:
            raise DriverError(f"{self.path.name}: ABI version {self.api.abi_version}, these tests mirror {ABI_VERSION}")
        self.name = self.api.name.decode()
        self.ctx = ctypes.c_void_p()
        errbuf = ctypes.create_string_buffer(512)
        rc = self.api.init(ctypes.byref(self.ctx), errbuf, len(errbuf))
        if rc != OK:
            raise DriverError(f"{self.name}: init failed: {errbuf.value.decode()}")

    def close(self):
        if self.ctx:
            self.api.cleanup(self.ctx)
            self.ctx = ctypes.c_void_p()

    # --- reporting ---------------------------------------------------------
    def last_error(self):
        return (self.api.last_error(self.ctx) or b"").decode()

    def describe(self):
        text = self.api.describe(self.ctx).decode()
        return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)

    def set_option(self, key, value):
        return self.api.set_option(self.ctx, key.encode(), str(value).encode())

    def counters(self):
        c = Counters()
        self.api.get_counters(self.ctx, ctypes.byref(c))
        return c

    def check(self, rc, what):
        if rc != OK:
            raise DriverError(f"{what}: rc={rc}: {self.last_error()}")

    # --- capabilities ------------------------------------------------------
    def get_method(self, op, dtype):
        return self.api.get_method(self.ctx, op, dtype)

    # --- blocks ------------------------------------------------------------
    def alloc_rc(self, dtype, n):
        out = ctypes.c_void_p()
        rc = self.api.block_alloc(self.ctx, dtype, n, ctypes.byref(out))
        return rc, out

    def alloc(self, dtype, n):
        rc, out = self.alloc_rc(dtype, n)
        self.check(rc, "block_alloc")
        return out

    def free(self, block):
        self.api.block_free(self.ctx, block)

    def can_wrap(self):
        return bool(self.api.block_wrap)

    def wrap(self, array):
        """A block over the memory of a contiguous NumPy array (no copy)."""
        out = ctypes.c_void_p()
        rc = self.api.block_wrap(self.ctx, DTYPE_OF_NUMPY[array.dtype], array.size, array.ctypes.data, ctypes.byref(out))
        self.check(rc, "block_wrap")
        return out

    def upload(self, values, dtype=None):
        """A new block holding `values` (a 1-d NumPy array)."""
        values = np.ascontiguousarray(values)
        dt = DTYPE_OF_NUMPY[values.dtype] if dtype is None else dtype
        block = self.alloc(dt, values.size)
        self.write(block, 0, values)
        return block

    def write(self, block, offset, values):
        values = np.ascontiguousarray(values)
        self.check(self.api.block_write(self.ctx, block, offset, values.size, values.ctypes.data), "block_write")

    def read(self, block, offset, count, np_dtype):
        out = np.empty(count, dtype=np_dtype)
        self.check(self.api.block_read(self.ctx, block, offset, count, out.ctypes.data), "block_read")
        return out

    # --- IR ----------------------------------------------------------------
    def check_ir(self, ir):
        res = Resources()
        rc = self.api.check_ir(self.ctx, ctypes.byref(ir.struct), ctypes.byref(res))
        return rc, res

    def eval_rc(self, ir, dst):
        """Evaluates into `dst`, one block or a list of one per output."""
        blocks = list(dst) if isinstance(dst, (list, tuple)) else [dst]
        array = (_vp * max(len(blocks), 1))(*blocks)
        return self.api.eval_ir(self.ctx, ctypes.byref(ir.struct), array)

    def eval(self, ir, dst):
        self.check(self.eval_rc(ir, dst), "eval_ir")

    # --- resources ---------------------------------------------------------
    def resource_get(self, instr):
        res = Resources()
        self.api.resource_get(self.ctx, ctypes.byref(instr), ctypes.byref(res))
        return res


class IrBuilder:
    """Builds a gpupy_ir: leaves and ops append instructions and return their index."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.instrs = []

    def _add(self, op, dtype, args=(), flags=0):
        ins = IrInstr()
        ins.op, ins.dtype, ins.flags = op, dtype, flags
        for k in range(3):
            ins.arg[k] = args[k] if k < len(args) else -1
        self.instrs.append(ins)
        return len(self.instrs) - 1, ins

    def _set_map(self, ins, base, strides, div=None, mod=None, shift=None, edge=None):
        ins.map.base = base
        for d in range(len(self.shape)):
            ins.map.stride[d] = strides[d]
            ins.map.div[d] = 1 if div is None else div[d]
            ins.map.mod[d] = 0 if mod is None else mod[d]
            ins.map.shift[d] = 0 if shift is None else shift[d]
            ins.map.edge[d] = EDGE_WRAP if edge is None else edge[d]

    def c_strides(self):
        strides, acc = [], 1
        for n in reversed(self.shape):
            strides.insert(0, acc)
            acc *= n
        return strides

    def load(self, blocks, dtype, base=0, strides=None, div=None, mod=None, shift=None, edge=None, block_first=0,
             block_elems=None):
        blocks = blocks if isinstance(blocks, (list, tuple)) else [blocks]
        remapped = any(x is not None for x in (div, mod, shift, edge))
        contiguous = strides is None and not remapped
        flags = (INSTR_CONTIGUOUS if contiguous else 0) | (INSTR_REMAPPED if remapped else 0)
        idx, ins = self._add(OP_LOAD, dtype, flags=flags)
        self._set_map(ins, base, strides if strides is not None else self.c_strides(), div, mod, shift, edge)
        ins.nblocks = len(blocks)
        for k, b in enumerate(blocks):
            ins.blocks[k] = b
        ins.block_first = block_first
        ins.block_elems = block_elems if block_elems is not None else int(np.prod(self.shape, dtype=np.int64))
        return idx

    def index(self, dtype, base=0, strides=None, div=1, mod=0, contiguous=False):
        flags = INSTR_CONTIGUOUS if contiguous else 0
        idx, ins = self._add(OP_INDEX, dtype, flags=flags)
        self._set_map(ins, base, strides if strides is not None else self.c_strides())
        ins.div, ins.mod = div, mod
        return idx

    def const(self, dtype, value):
        idx, ins = self._add(OP_CONST, dtype)
        if NUMPY_OF_DTYPE[dtype].kind == "f":
            ins.value.f = float(value)
        elif NUMPY_OF_DTYPE[dtype] == np.uint64:
            ins.value.u = int(value)
        else:
            ins.value.i = int(value)
        return idx

    def op(self, name, dtype, *args):
        return self._add(OP[name], dtype, args)[0]

    def gather(self, blocks, dtype, index, nelems, block_first=0, block_elems=None):
        """GATHER: element `index` (an INT64 instruction) of the source in
        `blocks`, which hold `nelems` elements from block_first on."""
        blocks = blocks if isinstance(blocks, (list, tuple)) else [blocks]
        idx, ins = self._add(OP["GATHER"], dtype, (index,))
        ins.nblocks = len(blocks)
        for k, b in enumerate(blocks):
            ins.blocks[k] = b
        ins.block_first = block_first
        ins.block_elems = block_elems if block_elems is not None else nelems
        ins.value.i = nelems
        return idx

    def build(self, start=0, count=None, dst_offset=0, reduce_op=OP_NONE, reduce_mode=REDUCE_CHUNKS,
              reduce_ndim=0, reduce_chunk=1, reduce_identity=0.0, identity_dtype=None, outputs=None, checks=(),
              check_folds=0):
        """The IR; `outputs`: instructions written to destinations 1, 2, ...
        besides the last one (destination 0); `checks`: instructions checked
        for floating-point errors (their flags: BuiltIr.check_flags());
        `check_folds`: bit k checks output k's folds (BuiltIr.fold_flags())."""
        ir = Ir()
        arr = (IrInstr * len(self.instrs))(*self.instrs)
        ir.ninstr = len(self.instrs)
        ir.instr = ctypes.cast(arr, ctypes.POINTER(IrInstr))
        ir.ndim = len(self.shape)
        for d, n in enumerate(self.shape):
            ir.shape[d] = n
        total = int(np.prod(self.shape, dtype=np.int64))
        ir.start = start
        ir.count = total - start if count is None else count
        ir.dst_offset = dst_offset
        ir.reduce_op, ir.reduce_mode, ir.reduce_ndim, ir.reduce_chunk = reduce_op, reduce_mode, reduce_ndim, reduce_chunk
        if identity_dtype is not None and NUMPY_OF_DTYPE[identity_dtype].kind != "f":
            ir.reduce_identity.i = int(reduce_identity)
        else:
            ir.reduce_identity.f = float(reduce_identity)
        extra = list(outputs or [])
        ir.noutputs = 1 + len(extra)
        for k, i in enumerate([len(self.instrs) - 1] + extra):
            ir.output[k] = i
        checks = list(checks)
        check = (ctypes.c_int32 * max(len(checks), 1))(*checks)
        flags = (ctypes.c_uint32 * max(len(checks), 1))()
        ir.ncheck = len(checks)
        if checks:
            ir.check = ctypes.cast(check, ctypes.POINTER(ctypes.c_int32))
            ir.check_flags = ctypes.cast(flags, ctypes.POINTER(ctypes.c_uint32))
        folds = (ctypes.c_uint32 * MAX_OUTPUTS)()
        ir.check_folds = check_folds
        if check_folds:
            ir.fold_flags = ctypes.cast(folds, ctypes.POINTER(ctypes.c_uint32))
        return BuiltIr(ir, (arr, check, flags, folds))


class BuiltIr:
    """A gpupy_ir and the arrays it points into (kept alive)."""

    def __init__(self, struct, keep):
        self.struct = struct
        self._keep = keep

    def check_flags(self):
        """The gpupy_fp_flag bits the driver found, per checked instruction."""
        return [self._keep[2][k] for k in range(self.struct.ncheck)]

    def fold_flags(self):
        """The gpupy_fp_flag bits the driver found, per output's folds."""
        return [self._keep[3][k] for k in range(self.struct.noutputs)]
