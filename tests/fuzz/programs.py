"""Random NumPy programs run side by side on NumPy and gpupy.

A program is drawn step by step (hypothesis's `data` strategy) and run in
lockstep: every step is applied to NumPy's arrays and to gpupy's, and the
two must agree on whether it raises (the same public exception class),
and on the dtype and shape of what it makes. Values are compared when the
program observes an array (at random points, which also forces gpupy to
evaluate part of its lazy state) and at the end.

Values must be bit-identical where NumPy's result is exact: every op of the
op table except the transcendental functions is one IEEE operation, a
comparison or a bit manipulation, and integers wrap the same way. Inexact
results -- transcendental float functions, float sums and means, whose
order of summation differs -- are *terminal*: no later step reads them
(their error would compound into cancellations no bound can describe), and
they are compared with documented bounds (see check_inexact). The same
holds for maximum/minimum, whose sign of zero may legitimately differ.

Memory is compared too. After every step, for every pair of live arrays,
gpupy.shares_memory of gpupy's equals numpy.shares_memory of NumPy's: a
view where NumPy makes a view, a copy where it copies, so that a later
write reaches the same arrays on both sides (the values at the end show a
write that went astray). Some inputs are NumPy arrays on both sides --
plain, strided, memory-mapped files -- which gpupy's functions and
`out=` take as NumPy's do, viewing their memory.
"""

import operator
import os
import tempfile
import warnings

import numpy as np
from hypothesis import strategies as st

import gpupy as gp

DTYPES = tuple(np.dtype(t) for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                                     "uint64", "float16", "float32", "float64"))

EXACT_UNARY = ("negative", "positive", "absolute", "square", "sign", "floor", "ceil", "trunc", "rint", "sqrt",
               "reciprocal", "logical_not", "isnan", "isinf", "isfinite", "signbit", "invert", "fabs", "rad2deg",
               "deg2rad")
EXACT_BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "equal", "not_equal",
                "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
                "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "copysign")
COMPARISONS = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
TRANSCENDENTAL_UNARY = ("exp", "log", "sin", "cos", "tanh", "arctan", "expm1", "log1p", "cbrt", "arcsinh")
TRANSCENDENTAL_BINARY = ("arctan2", "hypot", "logaddexp")
ZERO_SIGN_FREE = ("maximum", "minimum", "fmax", "fmin")
INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "&=": operator.iand, "|=": operator.ior,
           "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift, "//=": operator.ifloordiv}

# A float32 transcendental on the OpenGL driver is within 4 ulps of the
# exact result (docs/accuracy.md) and NumPy's within 2: 8 ulps between them
# leaves room; float64 functions run NumPy's own loops on either driver.
TRANSCENDENTAL_ULP = 8
# float16's: both NumPy and gpupy compute it in float32 and round, so their
# values differ only next to a float16 midpoint, by one step
# (tests/drivers/float_bounds.py, MATH_ULP_FLOAT16).
FLOAT16_ULP = 1


def _astype(x, dtype, copy, order):
    """x.astype for a gpupy array, gpupy.astype's NumPy-side equivalent for
    an ndarray (gpupy's function on NumPy's array)."""
    if isinstance(x, gp.GpuArray):
        return x.astype(dtype, copy=copy, order=order)
    return gp.asarray(x).astype(dtype, copy=copy, order=order)


def public_class(exc):
    """The builtin or numpy.exceptions class an exception is an instance of
    (NumPy's private subclasses, e.g. _UFuncOutputCastingError, are not
    part of its interface)."""
    for cls in type(exc).__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions"):
            return cls
    return Exception


class Mismatch(AssertionError):
    pass


class Slot:
    """One array of the program, as NumPy and gpupy hold it."""

    def __init__(self, ref, got, how, exact=True, zero_sign=True, bound=None):
        self.ref = ref          # numpy.ndarray (or NumPy scalar)
        self.got = got          # gpupy's result
        self.how = how          # the step that made it, for reports
        self.exact = exact      # bit-identical expected; else terminal
        self.zero_sign = zero_sign
        self.bound = bound      # inexact: absolute error allowed per element (array; NaN: not compared) or an ulp count
        # Integers that are a float array's memory: compared as those floats
        # (a NaN's sign and payload are the platform's: x86 makes -NaN of
        # 0/0, a GPU +NaN) and terminal, so no NaN's bits flow onwards.
        self.float_bits = None


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return fn()


# While a Program compares floating-point warnings (Program(warnings=True)):
# the RuntimeWarning messages NumPy gave. gpupy's go to the program's own
# record; at the end they must be among NumPy's (gpupy may warn less -- a
# lazy result is checked only where it is computed -- but never of an
# error NumPy did not meet).
_NUMPY_WARNED = None
_DEFAULT_STATE = {"divide": "warn", "over": "warn", "invalid": "warn", "under": "ignore"}


def _numpy_side(fn):
    if _NUMPY_WARNED is None:
        return _quiet(fn)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with np.errstate(**_DEFAULT_STATE):
            try:
                return fn()
            finally:
                _NUMPY_WARNED.update(str(w.message) for w in seen if w.category is RuntimeWarning)


def _gpupy_side(fn):
    if _NUMPY_WARNED is None:
        return _quiet(fn)
    with np.errstate(**_DEFAULT_STATE):  # (its warnings reach the program's record)
        return fn()


def _run_both(ref_fn, got_fn, any_error=False):
    """(ref result, got result, None) or (None, None, exception class) when
    both raise the same public class (any class with `any_error`);
    Mismatch otherwise."""
    ref_exc = got_exc = None
    ref = got = None
    try:
        ref = _numpy_side(ref_fn)
    except Exception as e:  # noqa: BLE001 - any NumPy error is a behaviour to match
        ref_exc = e
    try:
        got = _gpupy_side(got_fn)
        if ref_exc is not None and isinstance(got, gp.GpuArray):
            _gpupy_side(lambda: np.asarray(got))  # a lazy error shows when evaluated
    except Exception as e:  # noqa: BLE001
        got_exc = e
    if ref_exc is None and got_exc is None:
        return ref, got, None
    if ref_exc is not None and got_exc is not None:
        if any_error or public_class(ref_exc) is public_class(got_exc):
            return None, None, public_class(ref_exc)
        raise Mismatch(f"NumPy raised {type(ref_exc).__name__}: {ref_exc}; gpupy raised "
                       f"{type(got_exc).__name__}: {got_exc}")
    if ref_exc is not None:
        raise Mismatch(f"NumPy raised {type(ref_exc).__name__}: {ref_exc}; gpupy did not")
    raise Mismatch(f"gpupy raised {type(got_exc).__name__}: {got_exc}; NumPy did not") from got_exc


def as_numpy_sees_a_foreign_value(target, key, value):
    """The value NumPy's `target[key] = v` writes when v is an array of
    another library holding `value` (`key` a basic index). One element set
    from a 0-d array: NumPy casts only its own 0-d arrays and converts any
    other object as int() or float() make it a Python scalar -- so 255 into
    int8 raises OverflowError, as the value's .item() does."""
    if not isinstance(value, np.ndarray) or value.ndim != 0:
        return value
    try:
        element = _quiet(lambda: target[key])
    except Exception:  # noqa: BLE001 - a bad key: the step itself raises on both sides
        return value
    return value if isinstance(element, np.ndarray) else value.item()


def cast_is_defined(values, dtype):
    """Whether NumPy's cast of `values` to `dtype` has defined results: a
    float that is NaN, infinite or out of an integer type's range converts
    to whatever the CPU's conversion instruction makes (NumPy warns
    "invalid value encountered in cast" and its SIMD and scalar loops
    differ), so programs do not make such casts."""
    values, dtype = np.asarray(values), np.dtype(dtype)
    if values.dtype.kind != "f" or dtype.kind not in "iu":
        return True
    info = np.iinfo(dtype)
    with np.errstate(all="ignore"):
        t = np.trunc(values.astype(np.float64))
        return bool(np.all(np.isfinite(t) & (t >= info.min) & (t < float(info.max) + 1.0)))


def ordered_bits(x):
    x = np.asarray(x)
    if x.dtype == np.float64:
        b = x.view(np.int64).astype(object)
        return np.where(x.view(np.int64) < 0, -(b & 0x7FFFFFFFFFFFFFFF), b)
    if x.dtype == np.float16:
        b = x.view(np.int16).astype(np.int64)
        return np.where(b < 0, -(b & 0x7FFF), b)
    b = x.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(b < 0, -(b & 0x7FFFFFFF), b)


def check_same(slot, what=""):
    """gpupy's value of the slot equals NumPy's (exact slots bit for bit)."""
    with np.errstate(all="ignore"):  # inf - inf in the distances of masked-out elements
        _compare(slot, what)


def _compare(slot, what):
    ref = np.asarray(slot.ref)
    got_obj = slot.got
    try:
        got = _gpupy_side(lambda: np.asarray(got_obj))
    except Exception as e:  # noqa: BLE001
        raise Mismatch(f"{what}{slot.how}: evaluating gpupy's result raised {type(e).__name__}: {e}") from e
    if got.shape != ref.shape:
        raise Mismatch(f"{what}{slot.how}: shape {got.shape}, NumPy {ref.shape}")
    if got.dtype != ref.dtype:
        raise Mismatch(f"{what}{slot.how}: dtype {got.dtype}, NumPy {ref.dtype}")
    if slot.float_bits is not None:
        ref, got = ref.view(slot.float_bits), got.view(slot.float_bits)
    if ref.dtype.kind != "f":
        bad = got != ref
    else:
        nan_g, nan_r = np.isnan(got), np.isnan(ref)
        bad = nan_g != nan_r
        both = ~nan_g & ~nan_r
        if slot.exact:
            bad |= both & (got != ref)
            if slot.zero_sign:
                bad |= both & (got == 0) & (ref == 0) & (np.signbit(got) != np.signbit(ref))
        else:
            bad |= both & (np.isinf(got) != np.isinf(ref))
            finite = both & np.isfinite(got) & np.isfinite(ref)
            bad |= both & np.isinf(ref) & (got != ref)
            if isinstance(slot.bound, int):
                dist = np.abs(ordered_bits(got) - ordered_bits(ref))
                limit = min(slot.bound, FLOAT16_ULP) if ref.dtype == np.float16 else slot.bound
                bad |= finite & (dist > limit)
            else:
                bad |= finite & ~(np.abs(got.astype(np.float64) - ref.astype(np.float64)) <= slot.bound)
                # A NaN bound: the order of the operations decides between
                # a number, +-inf and NaN (a partial sum may overflow);
                # NumPy's own answer changes with the layout.
                bad &= ~np.isnan(np.broadcast_to(slot.bound, bad.shape))
    bad = np.asarray(bad)
    if bad.any():
        idx = tuple(np.argwhere(bad)[0]) if bad.ndim else ()
        raise Mismatch(f"{what}{slot.how}: {int(bad.sum())} of {bad.size} elements differ; first at {idx}: "
                       f"gpupy {got[idx]!r}, NumPy {ref[idx]!r}")


# --- drawing -----------------------------------------------------------------------------------------

def draw_shape(data, max_dims=5, max_side=4):
    nd = data.draw(st.integers(0, max_dims), label="ndim")
    return tuple(data.draw(st.integers(0, max_side), label="side") for _ in range(nd))


def draw_values(data, dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    if n > 256:
        # Too many to draw one by one (hypothesis cannot draw lists of
        # thousands; pads make arrays that large): from a drawn seed, the
        # same kinds of values.
        return _seeded_values(data.draw(st.integers(0, 2**32 - 1), label="values seed"), dtype, shape)
    if dtype.kind == "b":
        vals = data.draw(st.lists(st.booleans(), min_size=n, max_size=n), label="values")
        return np.array(vals, dtype=dtype).reshape(shape)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = st.integers(-5 if dtype.kind == "i" else 0, 8)
        edge = st.sampled_from([info.min, info.max, info.min + 1, info.max - 1, 0, 1])
        vals = data.draw(st.lists(st.one_of(small, small, edge), min_size=n, max_size=n), label="values")
        return np.array(vals, dtype=dtype).reshape(shape)
    special = st.sampled_from([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1e-40, 3e38, 1e300])
    ordinary = st.floats(-100, 100, allow_nan=False, width=dtype.itemsize * 8)
    vals = data.draw(st.lists(st.one_of(ordinary, ordinary, ordinary, special), min_size=n, max_size=n),
                     label="values")
    with np.errstate(all="ignore"):
        return np.array(vals, dtype=np.float64).astype(dtype).reshape(shape)


def _seeded_values(seed, dtype, shape):
    rng = np.random.default_rng(seed)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        small = rng.integers(-5 if dtype.kind == "i" else 0, 9, shape)
        edge = rng.choice(np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], dtype=dtype), shape)
        return np.where(rng.random(shape) < 0.67, small.astype(dtype), edge)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, 1e-40, 3e38, 1e300])
    with np.errstate(all="ignore"):
        values = np.where(rng.random(shape) < 0.75, rng.uniform(-100, 100, shape), rng.choice(special, shape))
        return values.astype(dtype)


def draw_index(data, shape):
    """A basic index: integers, slices (any step), None, Ellipsis."""
    key = []
    ellipsis = False
    for n in shape:
        kind = data.draw(st.sampled_from(["slice", "slice", "int", "all", "none", "ellipsis"]), label="index kind")
        if kind == "int" and n > 0:
            key.append(data.draw(st.integers(-n, n - 1), label="int index"))
        elif kind == "slice":
            start = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)), label="start")
            stop = data.draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)), label="stop")
            step = data.draw(st.sampled_from([None, 1, 2, -1, -2, 3]), label="step")
            key.append(slice(start, stop, step))
        elif kind == "none":
            key.append(None)
            key.append(slice(None))
        elif kind == "ellipsis" and not ellipsis:
            ellipsis = True
            key.append(Ellipsis)
            break
        else:
            key.append(slice(None))
    return tuple(key)


def draw_mask(data, shape):
    """A boolean array of `shape`: drawn element by element when small, else
    from a drawn seed and density (hypothesis cannot draw lists of
    thousands; pads make arrays that large)."""
    size = int(np.prod(shape))
    if size <= 256:
        bits = data.draw(st.lists(st.booleans(), min_size=size, max_size=size), label="mask")
        return np.array(bits, dtype=bool).reshape(shape)
    seed = data.draw(st.integers(0, 2**32 - 1), label="mask seed")
    density = data.draw(st.sampled_from([0.0, 0.1, 0.5, 1.0]), label="mask density")
    return np.random.default_rng(seed).random(shape) < density


def draw_fancy_index(data, shape):
    """A boolean mask over the leading dimensions, or an index with one or
    two integer arrays (maybe out of range, the second broadcasting against
    the first) and slices."""
    if not shape:
        return None
    if data.draw(st.integers(0, 3), label="fancy kind") == 0:  # a boolean mask over the leading dims
        lead = data.draw(st.integers(1, len(shape)), label="mask dims")
        return (draw_mask(data, shape[:lead]),)
    axis = data.draw(st.integers(0, len(shape) - 1), label="fancy axis")
    n = shape[axis]
    idx = data.draw(st.lists(st.integers(-n - 1, n), min_size=0, max_size=5), label="fancy indices")
    key = [slice(None)] * len(shape)
    key[axis] = np.array(idx, dtype=np.intp)
    if len(shape) > 1 and data.draw(st.booleans(), label="second index array"):
        other = data.draw(st.sampled_from([d for d in range(len(shape)) if d != axis]), label="second axis")
        m = shape[other]
        column = data.draw(st.booleans(), label="as a column")  # (k, 1) against (len,): a 2-d result
        count = data.draw(st.integers(1, 3), label="second count") if column else max(len(idx), 1)
        second = data.draw(st.lists(st.integers(-m - 1, m), min_size=count, max_size=count), label="second indices")
        key[other] = np.array(second, dtype=np.int32).reshape((-1, 1) if column else (-1,))
    return tuple(key)


class Program:
    """Draws and runs one program; `log` says what ran (for reports)."""

    def __init__(self, data, max_steps=12, signed_zeros=True, warnings=False):
        self.data = data
        # Build everything in NumPy's default error state and compare the
        # floating-point warnings (see _NUMPY_WARNED).
        self.warnings = warnings
        # False where the driver does not promise the sign of a zero result
        # (docs/accuracy.md: GLSL compilers fold an addend they prove to be
        # +0.0, so 0.0 + -0.0 can come out -0.0 on OpenGL).
        self.signed_zeros = signed_zeros
        self.slots = []
        self.log = []
        self.max_steps = max_steps
        # ufunc steps made so far (name, operands, comparison): `again`
        # builds one anew on the same arrays, which later steps may have
        # written (hash-consing must not hand back the old result).
        self.made = []
        # Live exports (np.asarray of a slot: the buffer protocol), written
        # through at later steps: (NumPy's, gpupy's, slot index).
        self.exports = []
        # Files behind memory-mapped inputs, removed when the program ends.
        self.files = []

    # -- helpers
    def draw(self, strategy, label):
        return self.data.draw(strategy, label=label)

    def usable(self):
        return [i for i, s in enumerate(self.slots)
                if s.exact and s.float_bits is None and isinstance(s.ref, np.ndarray)]

    def pick(self, label, pred=lambda s: True):
        choices = [i for i in self.usable() if pred(self.slots[i])]
        if not choices:
            return None
        return self.slots[self.draw(st.sampled_from(choices), label)]

    def add(self, ref, got, how, **kw):
        if not self.signed_zeros:
            kw["zero_sign"] = False
        if got is not None and ref is not None:
            if np.shape(got) != np.shape(ref):
                raise Mismatch(f"{how}: shape {np.shape(got)}, NumPy {np.shape(ref)}")
            if isinstance(ref, np.ndarray) and got.dtype != ref.dtype:
                raise Mismatch(f"{how}: dtype {got.dtype}, NumPy {ref.dtype}")
        self.slots.append(Slot(ref, got, how, **kw))

    def step(self, how, ref_fn, got_fn, any_error=False, **kw):
        self.log.append(how)
        ref, got, raised = _run_both(ref_fn, got_fn, any_error)
        if raised is None and ref is not None:
            if isinstance(ref, np.ndarray):
                self.add(ref, got, how, **kw)
            elif np.ndim(ref) == 0:
                # NumPy made a scalar (gpupy a scalar or a 0-d array): later
                # steps use it as a fresh 0-d array on both sides, since a
                # scalar cannot be written in place.
                if isinstance(got, gp.GpuArray) and got.ndim != 0:
                    raise Mismatch(f"{how}: gpupy made shape {got.shape}, NumPy a scalar")
                self.add(np.array(ref), gp.array(got), how, **kw)
        return raised

    # -- steps
    def create(self):
        dtype = self.draw(st.sampled_from(DTYPES), "dtype")
        shape = draw_shape(self.data)
        h = draw_values(self.data, dtype, shape)
        how = f"x{len(self.slots)} = asarray({dtype}, shape {shape})"
        self.log.append(how)
        self.add(h.copy(), gp.asarray(h), how)

    def view(self):
        s = self.pick("view of")
        if s is None:
            return
        kind = self.draw(st.sampled_from(["index", "transpose", "reshape", "flip", "broadcast", "swapaxes"]),
                         "view kind")
        i = self.slots.index(s)
        if kind == "index":
            key = draw_index(self.data, s.ref.shape)
            self.step(f"x{len(self.slots)} = x{i}[{key}]", lambda: s.ref[key], lambda: s.got[key])
        elif kind == "transpose":
            perm = self.draw(st.permutations(range(s.ref.ndim)), "perm")
            self.step(f"x{len(self.slots)} = x{i}.transpose({perm})", lambda: s.ref.transpose(perm),
                      lambda: s.got.transpose(perm))
        elif kind == "reshape":
            self.reshaped(s)
        elif kind == "flip":
            self.step(f"x{len(self.slots)} = flip(x{i})", lambda: np.flip(s.ref), lambda: gp.flip(s.got))
        elif kind == "broadcast":
            shape = (self.draw(st.integers(1, 3), "broadcast lead"),) + s.ref.shape
            self.step(f"x{len(self.slots)} = broadcast_to(x{i}, {shape})", lambda: np.broadcast_to(s.ref, shape),
                      lambda: gp.broadcast_to(s.got, shape))
        elif kind == "swapaxes" and s.ref.ndim >= 2:
            self.step(f"x{len(self.slots)} = x{i}.swapaxes(0, -1)", lambda: s.ref.swapaxes(0, -1),
                      lambda: s.got.swapaxes(0, -1))

    def fancy(self):
        s = self.pick("fancy of")
        if s is None:
            return
        key = draw_fancy_index(self.data, s.ref.shape)
        if key is None:
            return
        i = self.slots.index(s)
        self.step(f"x{len(self.slots)} = x{i}[{key}]", lambda: s.ref[key], lambda: s.got[key])

    def _operand(self, label):
        """A pool array, or a Python / NumPy scalar."""
        kind = self.draw(st.sampled_from(["array", "array", "array", "pyint", "pyfloat", "npscalar"]), label)
        if kind == "array":
            s = self.pick(label)
            if s is not None:
                return s.ref, s.got, f"x{self.slots.index(s)}"
        if kind == "pyfloat":
            v = self.draw(st.sampled_from([0.5, -2.0, 3.0, 0.0, -0.0, np.inf, np.nan]), "py float")
            return v, v, repr(v)
        if kind == "npscalar":
            dt = self.draw(st.sampled_from(DTYPES), "scalar dtype")
            raw = self.draw(st.integers(-3, 5), "scalar value")
            v = _quiet(lambda: np.array(raw).astype(dt)[()])
            return v, v, f"{dt}({v})"
        v = self.draw(st.sampled_from([0, 1, 2, -1, 3, 7, 255, -129, 2 ** 31, 2 ** 63]), "py int")
        return v, v, repr(v)

    def ufunc(self):
        family = self.draw(st.sampled_from(["exact1", "exact2", "exact2", "trans1", "trans2", "minmax"]), "ufunc kind")
        names = {"exact1": EXACT_UNARY, "exact2": EXACT_BINARY, "trans1": TRANSCENDENTAL_UNARY,
                 "trans2": TRANSCENDENTAL_BINARY, "minmax": ZERO_SIGN_FREE}[family]
        name = self.draw(st.sampled_from(names), "ufunc")
        nin = getattr(np, name).nin
        ops = [self._operand(f"operand {k}") for k in range(nin)]
        refs = [o[0] for o in ops]
        gots = [o[1] for o in ops]
        how = f"x{len(self.slots)} = {name}({', '.join(o[2] for o in ops)})"
        exact = family.startswith("exact")
        kw = dict(exact=exact, zero_sign=family != "minmax")
        if family == "minmax":
            kw["exact"] = False
            kw["bound"] = 0
        if family.startswith("trans"):
            kw["bound"] = TRANSCENDENTAL_ULP
        use_out = self.draw(st.booleans(), "with out=") and family.startswith("exact")
        if use_out:
            out = self.pick("out", lambda s: s.ref.flags.writeable)
            if out is not None:
                j = self.slots.index(out)
                how = f"{name}({', '.join(o[2] for o in ops)}, out=x{j})"
                masked = {}
                # NumPy 2.4 crashes (SIGSEGV) comparing integers with a
                # Python int out of their range (-1 and uint8, 300 and int8)
                # when given where=: not drawn.
                numpy_fails = name in COMPARISONS and any(type(r) is int for r in refs)
                # NumPy 2.4 also writes into masked-out elements when out overlaps
                # an operand and needs a cast (np.equal(a, a, out=flip(a),
                # where=False) changes a int8 `a`): not drawn either.
                numpy_fails = numpy_fails or any(
                    isinstance(r, np.ndarray) and np.shares_memory(r, out.ref) for r in refs)
                if not numpy_fails and self.draw(st.booleans(), "with where="):
                    mask = draw_mask(self.data, out.ref.shape)
                    masked = {"ref": {"where": mask}, "got": {"where": gp.asarray(mask)}}
                    how = how[:-1] + f", where={mask.astype(int).tolist()})"
                raised = self.step(how, lambda: getattr(np, name)(*refs, out=out.ref, **masked.get("ref", {})),
                                   lambda: getattr(gp, name)(*gots, out=out.got, **masked.get("got", {})))
                if raised is None:
                    self.slots.pop()  # the result is x{j} itself
                return
        if family.startswith("exact") and self.draw(st.booleans(), "with dtype="):
            # NumPy's loop for that dtype (operands cast to it), or its error.
            dt = self.draw(st.sampled_from(DTYPES), "loop dtype")
            how = how[:-1] + f", dtype={np.dtype(dt).name})"
            self.step(how, lambda: getattr(np, name)(*refs, dtype=dt), lambda: getattr(gp, name)(*gots, dtype=dt), **kw)
            return
        raised = self.step(how, lambda: getattr(np, name)(*refs), lambda: getattr(gp, name)(*gots), **kw)
        if raised is None:
            self.made.append((name, ops, kw, self.slots[-1] if self.slots else None))

    def again(self):
        if not self.made:
            return
        name, ops, kw, _ = self.made[self.draw(st.integers(0, len(self.made) - 1), "again")]
        refs = [o[0] for o in ops]
        gots = [o[1] for o in ops]
        how = f"x{len(self.slots)} = {name}({', '.join(o[2] for o in ops)}) again"
        self.step(how, lambda: getattr(np, name)(*refs), lambda: getattr(gp, name)(*gots), **kw)

    def rebuild(self):
        """An earlier result is evaluated, one element of an operand it was
        made from is written, and the same expression is built again: it
        must see the new value (not the earlier, hash-consed result)."""
        candidates = [m for m in self.made if m[3] is not None and
                      any(isinstance(o[0], np.ndarray) and o[0].size and o[0].flags.writeable for o in m[1])]
        if not candidates:
            return
        name, ops, kw, result = candidates[self.draw(st.integers(0, len(candidates) - 1), "rebuilt")]
        self.log.append(f"observe {result.how.split(' =')[0]}")
        check_same(result, "observed: ")
        ref_t, got_t, text = next(o for o in ops if isinstance(o[0], np.ndarray) and o[0].size and o[0].flags.writeable)
        at = np.unravel_index(self.draw(st.integers(0, ref_t.size - 1), "written at"), ref_t.shape)
        source = np.unravel_index(self.draw(st.integers(0, ref_t.size - 1), "value from"), ref_t.shape)
        value = ref_t[source].item()
        self.log.append(f"{text}[{at}] = {value!r}")
        ref_t[at] = value
        got_t[at] = value
        refs = [o[0] for o in ops]
        gots = [o[1] for o in ops]
        how = f"x{len(self.slots)} = {name}({', '.join(o[2] for o in ops)}) rebuilt"
        self.step(how, lambda: getattr(np, name)(*refs), lambda: getattr(gp, name)(*gots), **kw)

    def inplace(self):
        target = self.pick("in-place target", lambda s: s.ref.flags.writeable)
        if target is None:
            return
        sym = self.draw(st.sampled_from(sorted(INPLACE)), "in-place op")
        ref_v, got_v, text = self._operand("in-place value")
        j = self.slots.index(target)
        fn = INPLACE[sym]
        self.step(f"x{j} {sym} {text}", lambda: fn(target.ref, ref_v), lambda: fn(target.got, got_v))
        if self.slots and self.slots[-1].ref is target.ref:
            self.slots.pop()

    def setitem(self):
        target = self.pick("setitem target", lambda s: s.ref.flags.writeable)
        if target is None:
            return
        fancy = self.draw(st.booleans(), "fancy setitem")
        key = draw_fancy_index(self.data, target.ref.shape) if fancy else draw_index(self.data, target.ref.shape)
        if key is None:
            return
        ref_v, got_v, text = self._operand("assigned value")
        if isinstance(ref_v, np.ndarray) and not cast_is_defined(ref_v, target.ref.dtype):
            return
        j = self.slots.index(target)

        def do(arr, v):
            arr[key] = v

        # NumPy converts a value of another array type into an integer
        # element with int() (a TypeError for many elements) where it says
        # ValueError of its own arrays: which class is NumPy's, not gpupy's.
        foreign = isinstance(target.got, np.ndarray) and isinstance(got_v, gp.GpuArray)
        if foreign and not fancy:
            ref_v = as_numpy_sees_a_foreign_value(target.ref, key, ref_v)
        self.step(f"x{j}[{key}] = {text}", lambda: do(target.ref, ref_v), lambda: do(target.got, got_v),
                  any_error=foreign)

    def reduce(self):
        s = self.pick("reduced")
        if s is None:
            return
        name = self.draw(st.sampled_from(["sum", "max", "min", "argmax", "argmin", "any", "all", "prod", "mean",
                                          "cumsum", "cumprod", "add.reduce", "multiply.reduce", "add.accumulate",
                                          "multiply.accumulate", "maximum.accumulate"]), "reduction")
        axis = self.draw(st.one_of(st.none(), st.integers(-max(s.ref.ndim, 1), max(s.ref.ndim, 1) - 1)), "axis")
        scan = name.startswith("cum") or name.endswith(".accumulate")
        keep = self.draw(st.booleans(), "keepdims") and not scan
        i = self.slots.index(s)
        kwargs = {"axis": axis}
        if keep:
            kwargs["keepdims"] = True
        how = f"x{len(self.slots)} = {name}(x{i}, **{kwargs})"
        floating = s.ref.dtype.kind == "f" or name == "mean"
        if name in ("prod", "cumprod", "multiply.reduce", "multiply.accumulate") and s.ref.dtype.kind == "f":
            return  # partial products overflow at different points in another order
        # (ufunc.reduce/accumulate of add are a sum and a cumsum: the same bound)
        as_sum = {"add.reduce": "sum", "add.accumulate": "cumsum"}.get(name, name)
        exact = not (floating and as_sum in ("sum", "mean", "cumsum"))
        # The maximum or minimum of +0.0 and -0.0 is either: NumPy's own
        # answer follows the order its SIMD loop meets them in. As for the
        # maximum and minimum ufuncs (ZERO_SIGN_FREE), such a result is
        # compared but for its zero's sign, and no later step reads it.
        kw = {"exact": False, "bound": 0} if floating and name in ("max", "min", "maximum.accumulate") else {}
        if not exact:
            try:
                kw = dict(exact=False, bound=_sum_bound(as_sum, s.ref, axis, keep))
            except Exception:  # noqa: BLE001 - a bad axis: the step itself raises on both sides
                kw = dict(exact=False, bound=0.0)

        def call(xp, x):
            fn = xp
            for part in name.split("."):
                fn = getattr(fn, part)
            return fn(x, **kwargs)

        self.step(how, lambda: call(np, s.ref), lambda: call(gp, s.got), **kw)

    def misc(self):
        kind = self.draw(st.sampled_from(["where", "astype", "concatenate", "copy", "stack", "roll", "pad", "divmod",
                                          "modf", "putmask", "put", "einsum", "round"]), "misc kind")
        a = self.pick("misc operand")
        if a is None:
            return
        i = self.slots.index(a)
        if kind == "where":
            c = self.pick("condition")
            ref_y, got_y, text = self._operand("where value")
            ci = self.slots.index(c)
            self.step(f"x{len(self.slots)} = where(x{ci}, x{i}, {text})",
                      lambda: np.where(c.ref, a.ref, ref_y), lambda: gp.where(c.got, a.got, got_y))
        elif kind == "astype":
            dt = self.draw(st.sampled_from(DTYPES), "astype dtype")
            if not cast_is_defined(a.ref, dt):
                return
            self.step(f"x{len(self.slots)} = x{i}.astype({dt})", lambda: a.ref.astype(dt), lambda: a.got.astype(dt))
        elif kind in ("concatenate", "stack"):
            b = self.pick("second operand")
            j = self.slots.index(b)
            axis = self.draw(st.integers(-1, 1), "join axis")
            self.step(f"x{len(self.slots)} = {kind}([x{i}, x{j}], axis={axis})",
                      lambda: getattr(np, kind)([a.ref, b.ref], axis=axis),
                      lambda: getattr(gp, kind)([a.got, b.got], axis=axis))
        elif kind == "roll":
            shift = self.draw(st.integers(-7, 7), "roll shift")
            axis = self.draw(st.one_of(st.none(), st.integers(-2, 1)), "roll axis")
            self.step(f"x{len(self.slots)} = roll(x{i}, {shift}, axis={axis})",
                      lambda: np.roll(a.ref, shift, axis=axis), lambda: gp.roll(a.got, shift, axis=axis))
        elif kind == "pad":
            mode = self.draw(st.sampled_from(["constant", "edge", "wrap", "reflect", "symmetric"]), "pad mode")
            width = self.draw(st.one_of(st.integers(0, 5), st.tuples(st.integers(0, 5), st.integers(0, 5))),
                              "pad width")
            self.step(f"x{len(self.slots)} = pad(x{i}, {width}, mode={mode!r})",
                      lambda: np.pad(a.ref, width, mode=mode), lambda: gp.pad(a.got, width, mode=mode))
        elif kind in ("divmod", "modf"):
            self.pair(kind, a)
        elif kind in ("putmask", "put"):
            self.put_values(kind, a)
        elif kind == "einsum":
            self.einsum(a)
        elif kind == "round":
            decimals = self.draw(st.integers(-3, 3), "decimals")
            # Exact on a device with exact division; GLSL allows 2.5 ulps in
            # the final division by 10**decimals (docs/accuracy.md).
            kw = {} if a.ref.dtype.kind != "f" else {"exact": False, "bound": 3}
            self.step(f"x{len(self.slots)} = round(x{i}, {decimals})",
                      lambda: np.round(a.ref, decimals), lambda: gp.round(a.got, decimals), **kw)
        else:
            self.step(f"x{len(self.slots)} = x{i}.copy()", lambda: a.ref.copy(), lambda: a.got.copy())

    def pair(self, kind, a):
        """divmod(a, y) or modf(a): two results of one call (evaluated in
        one pass), each a slot."""
        i = self.slots.index(a)
        if kind == "divmod":
            if a.ref.dtype == np.bool_ or a.ref.dtype.kind == "c":
                return
            ref_y, got_y, text = self._operand("divisor")
            how = f"x{len(self.slots)}, x{len(self.slots) + 1} = divmod(x{i}, {text})"
            ref_fn, got_fn = (lambda: divmod(a.ref, ref_y)), (lambda: divmod(a.got, got_y))
        else:
            if a.ref.dtype == np.bool_:
                return
            how = f"x{len(self.slots)}, x{len(self.slots) + 1} = modf(x{i})"
            ref_fn, got_fn = (lambda: np.modf(a.ref)), (lambda: gp.modf(a.got))
        self.log.append(how)
        ref, got, raised = _run_both(ref_fn, got_fn)
        if raised is not None or not isinstance(ref, tuple):
            return
        for r, g in zip(ref, got):
            if isinstance(r, np.ndarray):
                self.add(r, g, how)
            else:
                self.add(np.array(r), gp.array(g), how)

    def put_values(self, kind, a):
        """putmask(a, a > c, values) or put(a, positions, values): values
        repeated into positions, written in place."""
        if not a.ref.flags.writeable or a.ref.dtype.kind == "c":
            return
        i = self.slots.index(a)
        values = draw_values(self.data, a.ref.dtype, (self.draw(st.integers(0, 5), "value count"),))
        if kind == "putmask":
            m = draw_mask(self.data, a.ref.shape)
            how = f"putmask(x{i}, {m.tolist()}, {values.tolist()})"
            ref_fn = lambda: np.putmask(a.ref, m, values)  # noqa: E731
            got_fn = lambda: gp.putmask(a.got, gp.asarray(m), gp.asarray(values))  # noqa: E731
        else:
            mode = self.draw(st.sampled_from(["raise", "wrap", "clip"]), "put mode")
            positions = self.draw(st.lists(st.integers(-2 * a.ref.size - 1, 2 * a.ref.size + 1), max_size=6),
                                  "put positions")
            how = f"put(x{i}, {positions}, {values.tolist()}, mode={mode!r})"
            ref_fn = lambda: np.put(a.ref, positions, values, mode=mode)  # noqa: E731
            got_fn = lambda: gp.put(a.got, gp.asarray(np.array(positions, np.int64)), gp.asarray(values), mode=mode)  # noqa: E731
        self.log.append(how)
        _run_both(ref_fn, got_fn)

    def einsum(self, a):
        """A contraction of a with another operand over their last and first
        dimensions (a matrix product on the device when placed there)."""
        b = self.pick("einsum operand", lambda s: s.ref.ndim >= 1)
        if a.ref.ndim < 1 or b is None or a.ref.dtype.kind != "f" or b.ref.dtype.kind != "f":
            return
        i, j = self.slots.index(a), self.slots.index(b)
        left, right = "abcd"[:a.ref.ndim], "wxyz"[:b.ref.ndim]
        right = left[-1] + right[1:]
        subscripts = f"{left},{right}"
        k = a.ref.shape[-1]
        self.step(f"x{len(self.slots)} = einsum({subscripts!r}, x{i}, x{j})",
                  lambda: np.einsum(subscripts, a.ref, b.ref), lambda: gp.einsum(subscripts, a.got, b.got),
                  exact=False, bound=_product_bound(a.ref, b.ref, k))

    def export(self):
        """np.asarray of an array (its buffer export: the array's own bytes)
        written through, now or at a later step while the export is alive;
        expressions built meanwhile must keep the values they were built from."""
        if self.exports and self.draw(st.booleans(), "write a live export"):
            ref_h, got_h, i = self.exports[self.draw(st.integers(0, len(self.exports) - 1), "live export")]
        else:
            a = self.pick("exported", lambda s: s.ref.flags.writeable and s.got.flags.writeable and s.ref.size > 0)
            if a is None:
                return
            i = self.slots.index(a)
            ref_h, got_h = np.asarray(a.ref), np.asarray(a.got)
            self.exports.append((ref_h, got_h, i))
            self.log.append(f"x{len(self.slots)} = np.asarray(x{i})")
            self.add(ref_h, got_h, f"np.asarray(x{i})")
        where = np.unravel_index(self.draw(st.integers(0, ref_h.size - 1), "export position"), ref_h.shape)
        value = draw_values(self.data, ref_h.dtype, ())[()]
        self.log.append(f"np.asarray(x{i})[{tuple(int(w) for w in where)}] = {value!r}")
        ref_h[where] = value
        got_h[where] = value

    def reshaped(self, s):
        """A reshape, ravel, flatten or squeeze of `s`, as a method or a
        function: a view exactly where NumPy's is one."""
        i = self.slots.index(s)
        n = s.ref.size
        kind = self.draw(st.sampled_from(["reshape", "reshape", "ravel", "flatten", "squeeze", "expand_dims"]),
                         "reshape kind")
        order = self.draw(st.sampled_from(["C", "C", "F", "A", "K"]), "order")
        function = self.draw(st.booleans(), "as a function")
        if kind == "reshape":
            divisors = [d for d in range(1, n + 1) if n % d == 0] or [1]
            d = self.draw(st.sampled_from(divisors), "reshape rows")
            shape = self.draw(st.sampled_from([(d, -1), (-1,), (1, d, -1), (d, -1, 1)]), "reshape shape") if n \
                else (0, 3)
            order = "C" if order == "K" else order
            args, how = (shape,), f"reshape({shape}, order={order!r})"
            kwargs = {"order": order}
        elif kind in ("ravel", "flatten"):
            args, kwargs, how = (), {"order": order}, f"{kind}(order={order!r})"
            function = function and kind == "ravel"
        elif kind == "squeeze":
            args, kwargs, how = (), {}, "squeeze()"
        else:
            axis = self.draw(st.integers(-s.ref.ndim - 1, s.ref.ndim), "expand axis")
            args, kwargs, how = (axis,), {}, f"expand_dims({axis})"
            function = True
        if function:
            self.step(f"x{len(self.slots)} = {kind}(x{i}, {how.split('(', 1)[1]}",
                      lambda: getattr(np, kind)(s.ref, *args, **kwargs),
                      lambda: getattr(gp, kind)(s.got, *args, **kwargs))
        else:
            self.step(f"x{len(self.slots)} = x{i}.{how}", lambda: getattr(s.ref, kind)(*args, **kwargs),
                      lambda: getattr(s.got, kind)(*args, **kwargs))

    def numpy_input(self):
        """A NumPy array on both sides (an input of another library): plain,
        a strided view of a larger one, or a memory-mapped file."""
        dtype = self.draw(st.sampled_from(DTYPES), "dtype")
        shape = draw_shape(self.data, max_dims=3)
        h = draw_values(self.data, dtype, shape)
        kind = self.draw(st.sampled_from(["plain", "strided", "transposed", "memmap"]), "numpy input kind")
        how = f"x{len(self.slots)} = numpy {kind} ({dtype}, shape {shape})"
        self.log.append(how)
        if kind == "memmap" and h.size and h.ndim:
            pair = []
            for _ in range(2):
                fd, name = tempfile.mkstemp(suffix=".dat")
                os.close(fd)
                self.files.append(name)
                m = np.memmap(name, dtype=dtype, mode="w+", shape=shape)
                m[...] = h
                pair.append(m)
            self.add(pair[0], pair[1], how)
            return
        if kind == "strided" and h.ndim:
            # every other element of a larger array, the rest of it garbage
            big = np.repeat(h, 2, axis=-1)
            self.add(big.copy()[..., ::2], big.copy()[..., ::2], how)
            return
        if kind == "transposed":
            self.add(h.T.copy().T, h.T.copy().T, how)
            return
        self.add(h.copy(), h.copy(), how)

    def convert(self):
        """asarray, array and astype of an array (gpupy's or NumPy's): the
        array itself, a view of its memory or a copy, as NumPy decides."""
        s = self.pick("converted")
        if s is None:
            return
        i = self.slots.index(s)
        kind = self.draw(st.sampled_from(["asarray", "asarray", "array", "astype", "ascontiguousarray", "copy"]),
                         "conversion")
        same = self.draw(st.booleans(), "same dtype")
        dt = s.ref.dtype if same else self.draw(st.sampled_from(DTYPES), "converted dtype")
        if not cast_is_defined(s.ref, dt):
            return
        if kind == "asarray":
            kw = {} if same and self.draw(st.booleans(), "no dtype") else {"dtype": dt}
            self.step(f"x{len(self.slots)} = asarray(x{i}, **{kw})", lambda: np.asarray(s.ref, **kw),
                      lambda: gp.asarray(s.got, **kw))
        elif kind == "array":
            copy = self.draw(st.sampled_from([True, None, False]), "copy")
            self.step(f"x{len(self.slots)} = array(x{i}, dtype={dt}, copy={copy})",
                      lambda: np.array(s.ref, dtype=dt, copy=copy), lambda: gp.array(s.got, dtype=dt, copy=copy))
        elif kind == "astype":
            copy = self.draw(st.booleans(), "copy")
            order = self.draw(st.sampled_from(["K", "C", "F", "A"]), "order")
            self.step(f"x{len(self.slots)} = astype(x{i}, {dt}, copy={copy}, order={order!r})",
                      lambda: s.ref.astype(dt, copy=copy, order=order), lambda: _astype(s.got, dt, copy, order))
        elif kind == "ascontiguousarray":
            self.step(f"x{len(self.slots)} = ascontiguousarray(x{i})", lambda: np.ascontiguousarray(s.ref),
                      lambda: gp.ascontiguousarray(s.got))
        else:
            order = self.draw(st.sampled_from(["K", "C", "F", "A"]), "order")
            self.step(f"x{len(self.slots)} = copy(x{i}, order={order!r})", lambda: np.copy(s.ref, order=order),
                      lambda: gp.copy(s.got, order=order))

    def copyto(self):
        """copyto(dst, src): src broadcast into dst (leading length-1
        dimensions of src dropped), cast as `casting` allows."""
        dst = self.pick("copyto target", lambda s: s.ref.flags.writeable)
        if dst is None:
            return
        j = self.slots.index(dst)
        if self.draw(st.booleans(), "scalar source"):
            ref_v, got_v, text = self._operand("copyto value")
        else:
            shape = dst.ref.shape[self.draw(st.integers(0, dst.ref.ndim), "kept dims"):]
            shape = (1,) * self.draw(st.integers(0, 2), "leading ones") + shape
            dt = self.draw(st.sampled_from(DTYPES), "source dtype")
            ref_v = draw_values(self.data, dt, shape)
            got_v = gp.asarray(ref_v.copy()) if self.draw(st.booleans(), "gpupy source") else ref_v.copy()
            text = f"<{dt} {shape}>"
        casting = self.draw(st.sampled_from(["same_kind", "unsafe"]), "casting")
        if casting == "unsafe" and not isinstance(ref_v, int) and not cast_is_defined(ref_v, dst.ref.dtype):
            return
        self.step(f"copyto(x{j}, {text}, casting={casting!r})",
                  lambda: np.copyto(dst.ref, ref_v, casting=casting), lambda: gp.copyto(dst.got, got_v, casting=casting))

    def reinterpret(self):
        """x.view(dtype) of another dtype of the same size: the same memory
        read as other bits (a view, writes either way seen)."""
        s = self.pick("reinterpreted", lambda s: s.ref.ndim > 0)
        if s is None:
            return
        i = self.slots.index(s)
        same_size = [d for d in DTYPES if d.itemsize == s.ref.dtype.itemsize and d != s.ref.dtype and d.kind != "b"
                     and s.ref.dtype.kind != "b"]
        if not same_size:
            return
        dt = self.draw(st.sampled_from(same_size), "view dtype")
        # Reinterpreted integers may be NaNs of any payload (compared as NaN).
        made = len(self.slots)
        self.step(f"x{made} = x{i}.view({dt})", lambda: s.ref.view(dt), lambda: s.got.view(dt))
        if len(self.slots) > made and (dt.kind == "f") != (s.ref.dtype.kind == "f"):
            floats = dt if dt.kind == "f" else s.ref.dtype
            memory = self.slots[made].ref
            for other in self.slots:
                if (isinstance(other.ref, np.ndarray) and other.ref.dtype.kind in "iu"
                        and np.shares_memory(other.ref, memory)):
                    other.float_bits = floats

    def bad_input(self):
        """A call NumPy refuses or answers at an edge -- negative sizes,
        infinite lengths, strings, read-only outputs, bad axes: the same
        exception class at the same statement, or the same result."""
        s = self.pick("bad input operand")
        if s is None:
            return
        i = self.slots.index(s)
        n = self.draw(st.integers(-3, 3), "count")
        bad = self.draw(st.sampled_from(["tile", "repeat", "full", "reshape", "arange", "clip", "read-only out",
                                         "axis", "squeeze", "expand_dims", "swapaxes", "concatenate", "astype"]),
                        "bad input")
        nd = s.ref.ndim
        bound = self.draw(st.sampled_from([float("inf"), float("-inf"), float("nan"), 1e30, 3.5, -2.0]),
                          "arange bound")
        calls = {
            "tile": (lambda m, x: m.tile(x, (2, n)), f"tile(x{i}, (2, {n}))"),
            "repeat": (lambda m, x: m.repeat(x, n), f"repeat(x{i}, {n})"),
            "full": (lambda m, x: m.full((n, 2), x.flat[0] if x.size else 0, dtype=x.dtype), f"full(({n}, 2), x{i}[0])"),
            "reshape": (lambda m, x: m.reshape(x, (n, -1)), f"reshape(x{i}, ({n}, -1))"),
            "arange": (lambda m, x: m.arange(bound), f"arange({bound})"),
            "clip": (lambda m, x: m.clip(x, "a", 2), f"clip(x{i}, 'a', 2)"),
            "read-only out": (lambda m, x: m.negative(x, out=m.broadcast_to(m.zeros(x.shape[-1:], x.dtype), x.shape)),
                              f"negative(x{i}, out=broadcast_to(...))"),
            "axis": (lambda m, x: m.sum(x, axis=nd + n % 3), f"sum(x{i}, axis={nd + n % 3})"),
            "squeeze": (lambda m, x: m.squeeze(x, axis=n % max(nd, 1) if nd else 0), f"squeeze(x{i}, axis={n})"),
            "expand_dims": (lambda m, x: m.expand_dims(x, nd + 2 + abs(n)), f"expand_dims(x{i}, {nd + 2 + abs(n)})"),
            "swapaxes": (lambda m, x: m.swapaxes(x, 0, nd + abs(n)), f"swapaxes(x{i}, 0, {nd + abs(n)})"),
            "concatenate": (lambda m, x: m.concatenate([x, m.zeros((1,) * (nd + 1), x.dtype)]),
                            f"concatenate([x{i}, zeros({(1,) * (nd + 1)})])"),
            "astype": (lambda m, x: x.astype("no such dtype"), f"x{i}.astype('no such dtype')"),
        }
        fn, how = calls[bad]
        kw = {"exact": False, "bound": 0} if bad == "clip" and s.ref.dtype.kind == "f" else {}
        self.step(f"x{len(self.slots)} = {how}", lambda: fn(np, s.ref), lambda: fn(gp, s.got), **kw)

    def check_memory(self):
        """Every pair of live arrays shares memory in gpupy's program exactly
        where it does in NumPy's; every array has NumPy's shape and dtype."""
        live = [(k, s) for k, s in enumerate(self.slots) if isinstance(s.ref, np.ndarray)]
        for k, s in live:
            if np.shape(s.got) != s.ref.shape or s.got.dtype != s.ref.dtype:
                raise Mismatch(f"x{k} ({s.how}): shape {np.shape(s.got)} {s.got.dtype}, NumPy {s.ref.shape} "
                               f"{s.ref.dtype}")
        for a in range(len(live)):
            i, si = live[a]
            for b in range(a + 1, len(live)):
                j, sj = live[b]
                want = bool(np.shares_memory(si.ref, sj.ref))
                got = bool(gp.shares_memory(si.got, sj.got))
                if want != got:
                    raise Mismatch(f"x{i} ({si.how}) and x{j} ({sj.how}): NumPy's "
                                   f"{'share' if want else 'do not share'} memory, gpupy's "
                                   f"{'do' if got else 'do not'}")

    def observe(self):
        if not self.slots:
            return
        k = self.draw(st.integers(0, len(self.slots) - 1), "observed")
        self.log.append(f"observe x{k}")
        check_same(self.slots[k], "observed: ")

    # -- the program
    def run(self):
        if not self.warnings:
            return self._run()
        global _NUMPY_WARNED
        _NUMPY_WARNED = set()
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                self._run()
            numpy_warned = _NUMPY_WARNED
        finally:
            _NUMPY_WARNED = None
        gpupy_warned = {str(w.message) for w in seen if w.category is RuntimeWarning}
        if not gpupy_warned <= numpy_warned:
            raise Mismatch(f"gpupy warned {sorted(gpupy_warned - numpy_warned)}; NumPy did not "
                           f"(NumPy's: {sorted(numpy_warned)})")

    def _run(self):
        n_inputs = self.draw(st.integers(1, 3), "inputs")
        for _ in range(n_inputs):
            self.create()
        steps = self.draw(st.integers(1, self.max_steps), "steps")
        actions = [self.view, self.view, self.fancy, self.ufunc, self.ufunc, self.ufunc, self.inplace, self.setitem,
                   self.reduce, self.reduce, self.misc, self.observe, self.create, self.again, self.rebuild,
                   self.export, self.numpy_input, self.convert, self.convert, self.copyto, self.reshape_any,
                   self.reinterpret, self.bad_input]
        try:
            for _ in range(steps):
                action = self.draw(st.sampled_from(actions), "action")
                action()
                self.check_memory()
            for k, slot in enumerate(self.slots):
                check_same(slot, f"final x{k}: ")
        finally:
            self.close()

    def reshape_any(self):
        s = self.pick("reshaped")
        if s is not None:
            self.reshaped(s)

    def close(self):
        """Drops the memory maps and removes their files."""
        for slot in self.slots:
            if isinstance(slot.ref, np.memmap) or isinstance(slot.got, np.memmap):
                slot.ref = slot.got = None
        self.slots.clear()
        self.exports.clear()
        for name in self.files:
            try:
                os.remove(name)
            except OSError:
                pass
        self.files.clear()

    def report(self):
        return "\n".join(self.log)


def _product_bound(a, b, k):
    """What a contraction of k products summed in another order (and maybe
    fused) may differ by: (k + 2) u of the largest sum of |terms|, with
    margin; infinite inputs are not compared by value (any order decides)."""
    with np.errstate(all="ignore"):
        dtype = np.result_type(a.dtype, b.dtype)
        info = np.finfo(dtype)
        magnitude = float(np.max(np.abs(a), initial=0.0)) * float(np.max(np.abs(b), initial=0.0)) * max(k, 1)
        if not (np.isfinite(a).all() and np.isfinite(b).all()) or magnitude > float(info.max) / 4:
            return float("nan")  # a partial sum may overflow in one order and not in another
        return 2 * (k + 2) * float(info.eps) * magnitude + float(info.tiny)


def _sum_bound(name, x, axis, keep):
    """What a float sum, mean or cumsum in another order may differ by:
    each of the n - 1 additions rounds by at most half an ulp of a partial
    sum, and every partial sum is at most the sum of |x| in magnitude, so
    |error| <= (n - 1) * eps * sum(|x|) (eps of the result's dtype), plus
    NumPy's own error of the same form; doubled for both. Where the sum of
    the finite |x| exceeds the dtype's largest value, a partial sum may
    overflow in one order and not in another (-inf + 3e38 + 3e38 is -inf
    one way and NaN the other in float32): no bound (inf), the element is
    not compared. Infinite inputs alone decide the same way in any order."""
    with np.errstate(all="ignore"):
        out = getattr(np, name)(x, axis=axis, **({"keepdims": True} if keep else {}))
        dt = np.asarray(out).dtype
        eps = np.finfo(dt).eps if dt.kind == "f" else np.finfo(np.float64).eps
        a = np.abs(np.asarray(x, dtype=np.float64 if dt.kind != "f" else dt)).astype(np.float64)
        finite = np.where(np.isfinite(a), a, 0.0)
        if name == "cumsum":
            flat = a.reshape(-1) if axis is None else a
            flat_finite = finite.reshape(-1) if axis is None else finite
            total = np.cumsum(flat, axis=0 if axis is None else axis)
            reach = np.cumsum(flat_finite, axis=0 if axis is None else axis)
            n = (flat.shape[0] if axis is None else a.shape[axis]) if a.size else 1
        else:
            total = np.sum(a, axis=axis, keepdims=keep)
            reach = np.sum(finite, axis=axis, keepdims=keep)
            n = a.size if axis is None else (a.shape[axis] if a.ndim else 1)
            if name == "mean":
                total = total / max(n, 1)
        big = np.finfo(dt if dt.kind == "f" else np.float64).max
        bound = 4.0 * max(n, 1) * eps * total + np.finfo(dt if dt.kind == "f" else np.float64).tiny
        return np.where(reach > big, np.nan, bound)
