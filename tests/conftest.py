"""Fixtures for the core and conformance tests.

`gpu` runs a test once per available driver ("software", and "opengl" when
it initialises), with the fallback mode set to "raise" so that nothing can
silently run in NumPy, and puts every setting back afterwards (driver,
block size, cache budget, driver options, fallback mode). `software` is the
same fixture pinned to the software driver, for the tests that use its
test-only limits (max_ops); `opengl` is pinned to the OpenGL driver.

The comparison helpers live on the fixture object (`gpu.assert_same`,
`gpu.assert_ulp`) so that every test module shares one definition of
"equal to NumPy".
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

# The OpenGL driver regenerates every program it finds in its cache and
# compares the source (a key that leaves out a decision of the code writer
# would otherwise reuse a wrong program in silence); children inherit it.
os.environ.setdefault("GPUPY_GL_CHECK_PROGRAM_KEYS", "1")

import gpupy as gp  # noqa: E402 -- after the setting above

DRIVERS = ("software", "opengl")
ROOT = Path(__file__).resolve().parents[1]

# Every dtype a GpuArray can hold (src/dtypes.def), bool first.
ALL_DTYPES = tuple(np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                         "uint64", "float16", "float32", "float64"))
INT_DTYPES = tuple(t for t in ALL_DTYPES if t.kind in "iu")
FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def holdable(dtype):
    """True if a GpuArray can hold values of this dtype."""
    return np.dtype(dtype) in ALL_DTYPES


# --- which (op, dtype) pairs each driver declares ---------------------------------------------
#
# The core asks the driver's get_method(op, dtype) and runs everything the
# driver declines in NumPy. The tests need the same answer to know when a
# FallbackError is the right outcome and when it is a bug, so it is read
# from the driver libraries themselves, in a subprocess (an OpenGL context
# of our own must not share the process with gpupy's).
_DECLARED_SCRIPT = textwrap.dedent(r"""
    import ctypes, json, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])  # tests/drivers: the ctypes mirror of the driver ABI
    from driver_abi import api_of, tables_of
    libdir = Path(sys.argv[2])
    out = {}
    for name in sys.argv[3:]:
        path = libdir / f"libgpupy_driver_{name}.so"
        if not path.exists():
            continue
        try:
            api = api_of(path)
        except OSError:  # a library it needs (libEGL, libGLEW, ...) is missing
            continue
        ops, dtypes = tables_of(api)
        ctx, err = ctypes.c_void_p(), ctypes.create_string_buffer(1024)
        if api.init(ctypes.byref(ctx), err, len(err)) != 0:
            continue
        out[name] = {numpy_name: [dt for dcode, dt, _ in dtypes if api.get_method(ctx, code, dcode)]
                     for code, _, numpy_name, *_ in ops}
        api.cleanup(ctx)
    print(json.dumps(out))
""")



def _declared_tables():
    libdir = gp._core.driver_library_dir()
    env = dict(os.environ, GPUPY_DRIVER_DIR=libdir)
    proc = subprocess.run([sys.executable, "-c", _DECLARED_SCRIPT, str(ROOT / "tests" / "drivers"), libdir, *DRIVERS],
                          env=env,
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError(f"reading the drivers' get_method tables failed:\n{proc.stderr}")
    return {name: {op: {np.dtype(d) for d in ds} for op, ds in table.items()}
            for name, table in json.loads(proc.stdout).items()}


_declared_cache = []


def declared_tables():
    if not _declared_cache:
        _declared_cache.append(_declared_tables())
    return _declared_cache[0]


# --- where gpupy runs a ufunc -------------------------------------------------------------------

PREDICATES = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
              "logical_xor", "logical_not", "isnan", "isinf", "isfinite", "signbit"}


def operand_signature(x):
    """What NumPy 2 promotes an operand as: Python int and float are weak
    (NEP 50); NumPy scalars, Python bools and arrays have their dtype."""
    if type(x) is int:
        return int
    if type(x) is float:
        return float
    if isinstance(x, bool):
        return np.dtype(bool)
    if isinstance(x, gp.GpuArray):
        return x.dtype
    return np.asarray(x).dtype


def numpy_loop(name, signature):
    """NumPy's loop ((input dtypes), output dtype) for operands of these
    signatures, or None when NumPy has no loop."""
    sig = tuple(d if d in (int, float) else np.dtype(d) for d in signature)
    try:
        res = getattr(np, name).resolve_dtypes(sig + (None,))
    except Exception:  # noqa: BLE001 -- NumPy's no-loop errors vary in class
        return None
    return res[:-1], res[-1]


def _fits(value, dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min <= value <= info.max
    return True


def _scalar_value(x):
    if isinstance(x, (int, float, np.generic)) and np.ndim(x) == 0:
        return float(x)
    return None


def expected_path(gpu_name, name, operands):
    """Where gpupy should run ufunc `name` on these operands:
    'device', 'host' (the core evaluates the node in NumPy because the
    driver declines the (op, dtype)), 'numpy' (the call itself goes to
    NumPy: dtypes gpupy cannot hold, integer powers with a possibly
    negative exponent, comparisons with out-of-range Python ints), or
    'error' (NumPy has no loop)."""
    signature = [operand_signature(x) for x in operands]
    loop = numpy_loop(name, signature)
    if loop is None:
        return "error"
    ins, out = loop
    if not all(holdable(t) for t in (*ins, out)):
        return "numpy"
    op = name
    if name == "power":
        # the core computes x**2, x**0.5 and x**-1 as NumPy's __pow__ does
        e = _scalar_value(operands[1])
        if e == 2.0:
            op = "square"
        elif out.kind == "f" and e == 0.5:
            op = "sqrt"
        elif out.kind == "f" and e == -1.0:
            op = "reciprocal"
        elif out.kind != "f" and not (e is not None and e >= 0):
            return "numpy"
    if name in PREDICATES:
        for x, t in zip(operands, ins):
            if type(x) is int and not _fits(x, t):
                return "numpy"
    table = declared_tables()[gpu_name]
    if ins[0] not in table[op]:
        return "host"
    for sig, t in zip(signature, ins):
        if sig not in (int, float) and np.dtype(sig) != t and np.dtype(sig) not in table["astype"]:
            return "host"
    return "device"


# --- comparisons --------------------------------------------------------------------------------

def ordered_bits(values):
    """Float values mapped to integers that are monotonic in the value and
    adjacent for adjacent floats (+0 and -0 both map to 0): the ulp
    distance of two floats is the difference of their images (Python ints
    for float64, whose differences do not fit in 64 bits)."""
    values = np.asarray(values)
    if values.dtype.itemsize in (2, 4):
        width = values.dtype.itemsize * 8
        bits = values.view({2: np.int16, 4: np.int32}[values.dtype.itemsize]).astype(np.int64)
        magnitude = bits & ((1 << (width - 1)) - 1)
    else:
        bits = values.view(np.int64)
        magnitude = (bits & np.int64(0x7FFFFFFFFFFFFFFF)).astype(object)
    return np.where(bits < 0, -magnitude, magnitude)


def ulp_distance(got, expected):
    """Per-element ulp distance in the arrays' own float dtype; 0 where both
    are NaN, a huge number where exactly one is NaN."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    d = np.abs(ordered_bits(got) - ordered_bits(expected))
    nan_got, nan_exp = np.isnan(got), np.isnan(expected)
    d = np.where(nan_got & nan_exp, 0, d)
    return np.where(nan_got ^ nan_exp, 1 << 62, d)


def describe_mismatch(got, expected, bad, inputs=()):
    idx = np.flatnonzero(bad.ravel())[:8]
    lines = [f"{bad.sum()} of {bad.size} elements differ; first ones:"]
    for i in idx:
        ins = ", ".join(repr(np.asarray(x).ravel()[i]) if np.asarray(x).size == bad.size else repr(x) for x in inputs)
        g, e = np.asarray(got).ravel()[i], np.asarray(expected).ravel()[i]
        lines.append(f"  [{i}] inputs ({ins}): gpupy {g!r} numpy {e!r}")
    return "\n".join(lines)


# The float bounds and flushing rules the driver tests hold to (one module
# for the whole suite: tests/drivers imports it by the same name).
sys.path.insert(0, str(ROOT / "tests" / "drivers"))
import float_bounds  # noqa: E402

# --- what a device that flushes float32 subnormals may return ---------------------------------
#
# GLSL lets a device flush any float32 subnormal "input into a shader or
# potentially generated by any operation in a shader" to zero; NVIDIA's
# GPUs do, and the OpenGL driver's GPU-like build (GPUPY_GL_FLOAT_PROBE=
# subnormals_flushed) does on any device. Where the driver says it flushes
# (and float32 stays on the device), an element of a result may be NumPy's
# value, or the same computed from its operands with their subnormals
# flushed (`flushed=`, NumPy's own result for flush_subnormals(operands)),
# and either with a subnormal result flushed; and a subnormal made inside
# the computation may be flushed there, which moves a float32 result by
# less than the smallest normal number (2^-126). Nothing else: a flush
# cannot excuse a wrong value elsewhere.

SMALLEST_NORMAL32 = np.finfo(np.float32).tiny


def flush_subnormals(x):
    """A float32 array (or scalar) with every subnormal replaced by a zero
    of its sign, as such a device reads and writes it (float_bounds.flush);
    other dtypes, GpuArrays and Python numbers unchanged."""
    if not isinstance(x, (np.ndarray, np.generic)):
        return x
    flushed = float_bounds.flush(x)
    return flushed if isinstance(x, np.ndarray) else flushed[()]


class _FlushingNumPy:
    """NumPy whose asarray and array flush float32 subnormals: a test's
    fn(xp) computed from its operands as a flushing device reads them."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asarray(a, *args, **kw):
        return flush_subnormals(np.asarray(a, *args, **kw))

    @staticmethod
    def array(a, *args, **kw):
        return flush_subnormals(np.array(a, *args, **kw))


FLUSHING_NUMPY = _FlushingNumPy()

_flushes = {}


def driver_flushes_float32():
    """True where the active driver computes float32 on a device that
    flushes subnormals (its describe() says so)."""
    name = gp.driver()
    if name not in _flushes:
        line = next((ln for ln in gp._core.driver_describe().splitlines()
                     if ln.strip().startswith("float32_subnormals:")), "")
        value = line.partition(":")[2].strip()
        _flushes[name] = value.startswith("flushed") and "runs on the host" not in value
    return _flushes[name]


def _elements_differ(g, exp, inputs, ulp, zero_sign):
    """Per element: True where g is not NumPy's `exp` (as assert_same says)."""
    if exp.dtype.kind != "f":
        return np.asarray(g != exp)
    same_nan = np.isnan(g) & np.isnan(exp)
    bad = ~((g == exp) | same_nan)
    if ulp:
        special_input = np.zeros(exp.shape, bool)
        for x in inputs:
            x = np.asarray(x)
            if x.dtype.kind == "f":
                special_input |= np.broadcast_to(~np.isfinite(x), exp.shape)
        bad &= (ulp_distance(g, exp) > ulp) | special_input
    if zero_sign:
        bad |= (g == 0) & (exp == 0) & (np.signbit(g) != np.signbit(exp))
    return np.asarray(bad)


def assert_same(got, expected, *, inputs=(), gpu_array=True, ulp=0, zero_sign=True, flushes=False, flushed=None):
    """gpupy's result equals NumPy's: type (GpuArray), shape, dtype and
    values -- bit for bit (any NaN matches any NaN, -0 differs from +0
    unless zero_sign=False) or, with ulp > 0, within that many ulps, except
    where an input is NaN or infinite: there the result must be NumPy's
    exactly (an ulp bound must not let exp(inf) be the largest float).
    `flushes`: the device flushes float32 subnormals, and an element may
    also be what such a device returns (above); `flushed`: NumPy's result
    for the operands flushed."""
    if gpu_array:
        assert isinstance(got, gp.GpuArray), f"expected a GpuArray, got {type(got).__name__}"
    exp = np.asarray(expected)
    assert got.shape == exp.shape, f"shape {got.shape} != numpy's {exp.shape}"
    assert got.dtype == exp.dtype, f"dtype {got.dtype} != numpy's {exp.dtype}"
    g = np.asarray(got)
    assert g.shape == exp.shape and g.dtype == exp.dtype
    bad = _elements_differ(g, exp, inputs, ulp, zero_sign)
    if flushes and bad.any():
        candidates = [flush_subnormals(exp)]
        if flushed is not None:
            alt = np.asarray(flushed)
            assert alt.shape == exp.shape and alt.dtype == exp.dtype
            candidates += [alt, flush_subnormals(alt)]
        for alt in candidates:
            bad &= _elements_differ(g, np.asarray(alt), inputs, ulp, zero_sign)
        if exp.dtype == np.float32:
            # A subnormal made inside the computation and flushed there
            # changes the result by less than the smallest normal number.
            with np.errstate(all="ignore"):
                bad &= ~(np.abs(g.astype(np.float64) - exp.astype(np.float64)) < SMALLEST_NORMAL32)
    if bad.any():
        pytest.fail(describe_mismatch(g, exp, bad, inputs), pytrace=False)


def max_ulp(got, expected):
    d = ulp_distance(got, expected)
    return int(d.max()) if d.size else 0


# --- the driver fixture -------------------------------------------------------------------------

_available = {}


def driver_unavailable_reason(name):
    """None if the driver initialises here, else why not."""
    if name not in _available:
        previous = gp.driver()
        try:
            gp.use_driver(name)
            _available[name] = None
        except gp.DriverError as exc:
            _available[name] = str(exc).strip().splitlines()[0] if str(exc).strip() else "failed to initialise"
        finally:
            gp.use_driver(previous)
    return _available[name]


class Gpu:
    """The driver a test runs on, plus settings that are undone afterwards."""

    def __init__(self, name):
        self.name = name
        self._options = []

    def option(self, key, value):
        """Sets a driver option for this test only."""
        gp.set_driver_option(key, value)
        self._options.append(key)

    def declares(self, op, dtype):
        """True if this driver's get_method accepts (op, dtype)."""
        return np.dtype(dtype) in declared_tables()[self.name][op]

    def expected_path(self, name, operands):
        return expected_path(self.name, name, operands)

    def assert_same(self, got, expected, **kw):
        """assert_same, allowing what this driver's device may return
        where it flushes float32 subnormals."""
        kw.setdefault("flushes", self.flushes_float32)
        assert_same(got, expected, **kw)

    flush_subnormals = staticmethod(flush_subnormals)

    def numpys_result_flushed(self, np_fn, *operands):
        """assert_same's flushed=: NumPy's np_fn on the operands with their
        float32 subnormals flushed, where this device flushes; else None."""
        if not self.flushes_float32:
            return None
        with np.errstate(all="ignore"):
            return np.asarray(np_fn(*[flush_subnormals(x) for x in operands]))

    def assert_warns_as_numpy(self, got_warnings, np_fn, *operands, ignore=()):
        """gpupy's warnings (warnings_of) are NumPy's for np_fn(*operands),
        but for those that start with a prefix in `ignore`; where this
        device flushes float32 subnormals, each is one NumPy gives for the
        operands as given or as flushed, and what both give is there."""
        def kept(warnings):
            return {w for w in warnings if not w.startswith(tuple(ignore))}
        got_warnings = kept(got_warnings)
        want = kept(self.warnings_of(lambda: np_fn(*operands)))
        if not self.flushes_float32:
            assert sorted(got_warnings) == sorted(want)
            return
        flushed = [flush_subnormals(x) for x in operands]
        also = kept(self.warnings_of(lambda: np_fn(*flushed)))
        assert set(got_warnings) <= want | also, (got_warnings, want, also)
        assert want & also <= set(got_warnings), (got_warnings, want, also)
    flushing_numpy = FLUSHING_NUMPY

    @property
    def flushes_float32(self):
        return driver_flushes_float32()

    max_ulp = staticmethod(max_ulp)

    @staticmethod
    def bytes_of(a, dtype=None):
        """The bytes of `a` (an array, or a buffer's bytes of `dtype`) with
        every NaN written as NumPy's default one: which NaN an arithmetic
        operation returns is the device's choice (IEEE 754 leaves it open;
        x86 keeps the operand's, NVIDIA's GPUs give 0x7fffffff), so bytes
        compared through this are equal where the values are NumPy's, any
        NaN for any NaN (as float_bounds.same_bits)."""
        a = np.array(np.frombuffer(a, dtype) if dtype is not None else a, copy=True)
        if a.dtype.kind in "fc":
            parts = a.reshape(-1).view(a.real.dtype) if a.dtype.kind == "c" else a.reshape(-1)
            parts[np.isnan(parts)] = np.nan
        return a.tobytes()

    @staticmethod
    def warnings_of(fn):
        """The RuntimeWarning messages fn() gives under NumPy's default
        error state (warn for divide, over and invalid), each once, sorted."""
        import warnings
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            with np.errstate(divide="warn", over="warn", invalid="warn", under="ignore"):
                fn()
        return sorted({str(w.message) for w in seen if w.category is RuntimeWarning})

    def _restore(self):
        for key in self._options:
            gp.set_driver_option(key, "default")


def _settings():
    return (gp.driver(), gp.block_size(), gp.cache_bytes(), gp.get_fallback(), gp.host_threshold(), gp.get_placement(),
            gp.eager_threshold())


def _use(name):
    reason = driver_unavailable_reason(name)
    if reason is not None:
        pytest.skip(f"{name} driver unavailable: {reason}")
    saved = _settings()
    gp.use_driver(name)
    gp.set_fallback("raise")
    # Tests run on the driver they name: small work is not diverted to the
    # host engine (tests/test_host_engine.py covers that path).
    gp.set_host_threshold(0)
    gp.set_eager_threshold(0)  # nor computed by NumPy at once (tests/test_eager.py covers that)
    gp.reset_stats()
    g = Gpu(name)
    return g, saved


def _restore(g, saved):
    driver, block, budget, fallback, host, _placement, eager = saved
    g._restore()
    gp.set_host_threshold(host)
    gp.set_eager_threshold(eager)
    gp.set_fallback(fallback)
    gp.set_block_size(block)
    gp.set_cache_bytes(budget)
    gp.use_driver(driver)


@pytest.fixture(scope="session", params=DRIVERS)
def driver_name(request):
    # Session scope makes pytest run all tests of one driver together.
    return request.param


def _using(name):
    """A test's driver, and the settings as they were once it is done."""
    g, saved = _use(name)
    try:
        yield g
    finally:
        _restore(g, saved)


@pytest.fixture
def gpu(driver_name):
    yield from _using(driver_name)


@pytest.fixture
def software():
    yield from _using("software")


@pytest.fixture
def opengl():
    yield from _using("opengl")


@pytest.fixture
def silent_fallback():
    """Lets a test run work that gpupy hands to NumPy, counting it."""
    previous = gp.get_fallback()
    gp.set_fallback("silent")
    try:
        yield
    finally:
        gp.set_fallback(previous)


@pytest.fixture(autouse=True)
def _settings_unchanged(request):
    """Every test of this folder leaves the process-wide settings as it
    found them (tests/drivers talks to driver libraries directly)."""
    if request.node.path.parent != Path(__file__).parent:
        yield
        return
    before = _settings()
    yield
    assert _settings() == before, "a test changed gpupy's settings without restoring them"
