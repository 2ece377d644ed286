"""Linear algebra: NumPy's BLAS and LAPACK on the host, or products on the device.

Where the placement (see _placement) says the host -- always on a CPU
device, and by default everywhere until a tiled device kernel is measured
against BLAS on a GPU -- matmul, dot, vdot, inner, tensordot, einsum and
numpy.linalg run NumPy's own functions on the arrays' host values (a lazy
operand is evaluated first) and the result becomes a gpupy array again.

On the device (placement "device"), a product C[..., i, j] =
sum_k A[..., i, k] * B[..., k, j] is one fused expression: A and B are read
through broadcast views of shape (..., n, m, k) (index arithmetic, nothing
copied), multiplied, and folded over k by the chunked reduction; the
(n, m, k) products are never stored. outer and dot with a 0-d operand are
elementwise products and always stay on the device.
"""

import numpy as np

from . import _core
from ._convert import asarray as _gpu
from ._core import GpuArray
from ._fallback import call_numpy
from ._placement import host_function, linear_algebra_on_host, run_on_host
from ._registry import REDUCE_CHUNK as CHUNK
from ._registry import implements


def _product_dtype(a, b):
    return np.dtype(np.matmul.resolve_dtypes((a.dtype, b.dtype, None))[2])


# Outputs per work group of the device's tiled product (its 64 x 64 tile),
# and how many work groups keep a device busy: a product with fewer tiles
# splits k into chunks (folded by a second pass) to have that many.
_TILE_OUTPUTS = 64 * 64
_BUSY_GROUPS = 128


def _product_chunk(batch, n, m, k):
    """The length of the runs of k summed in one pass: all of k where the
    outputs alone keep the device busy, else runs of at least CHUNK."""
    tiles = max(1, int(np.prod(batch, dtype=np.int64)) * -(-n * m // _TILE_OUTPUTS))
    chunks = min(-(-_BUSY_GROUPS // tiles), -(-k // CHUNK))
    return max(CHUNK, -(-k // max(chunks, 1)))


def _contract_last(a, b_t, dtype):
    """sum_k a[..., i, k] * b_t[..., j, k] over broadcast batch dims."""
    n, m, k = a.shape[-2], b_t.shape[-2], a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b_t.shape[:-2])
    chunk = _product_chunk(batch, n, m, k)
    av = a.reshape(a.shape[:-2] + (n, 1, k))._broadcast_to(batch + (n, m, k))
    bv = b_t.reshape(b_t.shape[:-2] + (1, m, k))._broadcast_to(batch + (n, m, k))
    if av.dtype != dtype:
        av = av.astype(dtype)
    if bv.dtype != dtype:
        bv = bv.astype(dtype)
    if dtype == np.bool_:
        return _core.reduce(_core.ufunc("logical_and", av, bv), "logical_or", [len(batch) + 2], dtype, chunk)
    # (NumPy's products warn as "matmul" or "dot", from BLAS's flags; the
    # device's product checks neither its products nor its sums.)
    return _core.reduce(_core.ufunc("multiply", av, bv), "add", [len(batch) + 2], dtype, chunk, checked=False)


@implements(np.matmul)
def matmul(a, b, /, out=None, **kwargs):
    if out is None and not kwargs:
        done = _core.host_product(a, b, False)  # two arrays, BLAS on the host: without the path below
        if done is not None:
            return done
    if linear_algebra_on_host():
        if out is None and not kwargs:
            return run_on_host("matmul", np.matmul, (a, b), kwargs)  # `a @ b` in a loop: no dict built
        return run_on_host("matmul", np.matmul, (a, b), dict(kwargs, **({} if out is None else {"out": out})))
    a, b = _gpu(a), _gpu(b)
    if kwargs or not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
        return call_numpy("matmul", (a, b), dict(out=out, **kwargs), reason="gpupy does not handle its arguments or dtypes on the device")
    for i, x in enumerate((a, b)):
        if x.ndim == 0:
            raise ValueError(f"matmul: Input operand {i} does not have enough dimensions (has 0, gufunc core "
                             "with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    a2 = a.reshape(1, -1) if a.ndim == 1 else a
    b2 = b.reshape(-1, 1) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(n?,k),(k,m?)->(n?,m?) (size {b2.shape[-2]} is different from {a2.shape[-1]})")
    dtype = _product_dtype(a, b)
    result = _contract_last(a2, b2.swapaxes(-1, -2), dtype)
    if a.ndim == 1:
        result = result.reshape(result.shape[:-2] + result.shape[-1:])
    if b.ndim == 1:
        result = result.reshape(result.shape[:-1])
    if out is not None:
        out[...] = result
        return out
    return result


@implements(np.dot)
def dot(a, b, out=None):
    if out is None:
        done = _core.host_product(a, b, True)
        if done is not None:
            return done
    if out is None and linear_algebra_on_host() and type(a) is GpuArray and type(b) is GpuArray and a.ndim and b.ndim:
        return run_on_host("dot", np.dot, (a, b), {})  # a loop's dot of two slices: no conversions first
    a, b = _gpu(a), _gpu(b)
    if not (isinstance(a, GpuArray) and isinstance(b, GpuArray)):
        return call_numpy("dot", (a, b), dict(out=out), reason="gpupy does not handle these dtypes on the device")
    if a.ndim == 0 or b.ndim == 0:
        result = _core.ufunc("multiply", a, b)
    elif linear_algebra_on_host():
        return run_on_host("dot", np.dot, (a, b), {} if out is None else {"out": out})
    elif b.ndim == 1:
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[0]} (dim 0)")
        result = matmul(a, b)
    elif a.ndim <= 2 and b.ndim == 2:
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[0]} (dim 0)")
        result = matmul(a, b)
    else:
        if a.shape[-1] != b.shape[-2]:
            raise ValueError(f"shapes {a.shape} and {b.shape} not aligned: {a.shape[-1]} (dim {a.ndim - 1}) != "
                             f"{b.shape[-2]} (dim {b.ndim - 2})")
        result = tensordot(a, b, axes=([-1], [-2]))
    if out is not None:
        out[...] = result
        return out
    return result


@implements(np.vdot)
def vdot(a, b):
    if linear_algebra_on_host():
        return run_on_host("vdot", np.vdot, (a, b), {})
    a, b = _gpu(a), _gpu(b)
    if a.size != b.size:
        raise ValueError("cannot reshape array of size %d into shape (%d,)" % (b.size, a.size))
    return matmul(a.reshape(-1), b.reshape(-1))


@implements(np.inner)
def inner(a, b):
    a, b = _gpu(a), _gpu(b)
    if a.ndim == 0 or b.ndim == 0:
        return _core.ufunc("multiply", a, b)
    if linear_algebra_on_host():
        return run_on_host("inner", np.inner, (a, b), {})
    if a.shape[-1] != b.shape[-1]:
        raise ValueError("shapes %s and %s not aligned: %d (dim %d) != %d (dim %d)"
                         % (a.shape, b.shape, a.shape[-1], a.ndim - 1, b.shape[-1], b.ndim - 1))
    return tensordot(a, b, axes=([-1], [-1]))


@implements(np.outer)
def outer(a, b, out=None):
    a, b = _gpu(a).reshape(-1), _gpu(b).reshape(-1)
    result = _core.ufunc("multiply", a.reshape(-1, 1), b.reshape(1, -1))
    if out is not None:
        out[...] = result
        return out
    return result


@implements(np.tensordot)
def tensordot(a, b, axes=2):
    if linear_algebra_on_host():
        return run_on_host("tensordot", np.tensordot, (a, b), {"axes": axes})
    a, b = _gpu(a), _gpu(b)
    if np.ndim(axes) == 0:
        n = int(axes)
        axes_a = list(range(a.ndim - n, a.ndim))
        axes_b = list(range(n))
    else:
        axes_a, axes_b = axes
        axes_a = [axes_a] if np.ndim(axes_a) == 0 else list(axes_a)
        axes_b = [axes_b] if np.ndim(axes_b) == 0 else list(axes_b)
    if len(axes_a) != len(axes_b):
        raise ValueError("shape-mismatch for sum")
    axes_a = [ax % a.ndim if a.ndim else ax for ax in axes_a]
    axes_b = [ax % b.ndim if b.ndim else ax for ax in axes_b]
    for x, y in zip(axes_a, axes_b):
        if a.shape[x] != b.shape[y]:
            raise ValueError("shape-mismatch for sum")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = int(np.prod([a.shape[i] for i in axes_a]))
    # Explicit sizes: -1 is ambiguous when k is 0.
    at = a.transpose(free_a + axes_a).reshape(int(np.prod([a.shape[i] for i in free_a])), k)
    bt = b.transpose(axes_b + free_b).reshape(k, int(np.prod([b.shape[i] for i in free_b])))
    result = matmul(at, bt)
    return result.reshape(tuple(a.shape[i] for i in free_a) + tuple(b.shape[i] for i in free_b))


@implements(np.einsum)
def einsum(*operands, **kwargs):
    """numpy.einsum: on the host with NumPy's BLAS-backed contractions, or,
    placed on the device, a contraction of one or two float operands
    lowered to a sum or a matrix product (_einsum_on_device); the forms it
    does not lower (repeated labels, three operands, other dtypes, out=)
    are NumPy's."""
    if not linear_algebra_on_host() and set(kwargs) <= {"optimize"}:
        done = _einsum_on_device(operands)
        if done is not None:
            return done
    return run_on_host("einsum", np.einsum, operands, kwargs)


def _einsum_labels(subscripts, operands):
    """(input label strings, output label string) with every "..." replaced
    by letters of its own, or None for a form not lowered here. Sizes are
    checked by the caller."""
    if not isinstance(subscripts, str) or len(operands) not in (1, 2):
        return None
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands) or any(t.count("...") > 1 or "." in t.replace("...", "") for t in terms):
        return None
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    broadcast = max((x.ndim - len(t) + 3 for t, x in zip(terms, operands) if "..." in t), default=0)
    ellipsis = "".join(spare[:broadcast])
    labels = []
    for t, x in zip(terms, operands):
        if "..." in t:
            k = x.ndim - len(t) + 3
            if k < 0:
                return None
            t = t.replace("...", ellipsis[broadcast - k:])
        if len(t) != x.ndim or not t.isalpha() or len(set(t)) != len(t):
            return None  # a repeated label (a diagonal, a trace): NumPy's
        labels.append(t)
    if not arrow:
        every = "".join(labels)
        output = ellipsis + "".join(sorted(c for c in every if every.count(c) == 1 and c not in ellipsis))
    elif "..." in output:
        output = output.replace("...", ellipsis)
    elif ellipsis:
        return None
    if (output and not output.isalpha()) or len(set(output)) != len(output) or set(output) - set("".join(labels)):
        return None
    return labels, output


def _einsum_on_device(operands):
    """einsum of one or two float gpupy-convertible operands as device work:
    labels summed away first, then the two operands as (batch, rows, k) and
    (batch, k, columns) matrices, one matmul, and the result's labels put in
    order by a view. None where this does not apply (NumPy's error, if any,
    then comes from NumPy)."""
    subscripts, arrays = operands[0], [_gpu(x) for x in operands[1:]]
    if not all(isinstance(x, GpuArray) and x.dtype.kind == "f" for x in arrays):
        return None
    parsed = _einsum_labels(subscripts, arrays)
    if parsed is None:
        return None
    labels, output = parsed
    size = {}
    for t, x in zip(labels, arrays):
        for c, n in zip(t, x.shape):
            if size.get(c, 1) != 1 and n not in (1, size[c]):
                return None  # a mismatch: NumPy's ValueError
            if n != 1 or c not in size:
                size[c] = n
    dtype = np.result_type(*[x.dtype for x in arrays])
    # Labels neither in the output nor in the other operand: summed first.
    summed = []
    for i, (t, x) in enumerate(zip(labels, arrays)):
        others = "".join(labels[:i] + labels[i + 1:])
        alone = [d for d, c in enumerate(t) if c not in output and c not in others]
        if alone:
            x = x.sum(axis=tuple(alone), dtype=dtype)
            t = "".join(c for d, c in enumerate(t) if d not in alone)
        summed.append((t, x.astype(dtype, copy=False)))
    if len(summed) == 1:
        t, x = summed[0]
        return x.transpose([t.index(c) for c in output]) if output else x
    (ta, a), (tb, b) = summed
    batch = [c for c in output if c in ta and c in tb]
    rows = [c for c in output if c in ta and c not in tb]
    cols = [c for c in output if c in tb and c not in ta]
    inner = [c for c in ta if c in tb and c not in output]

    def arranged(t, x, first, second):
        # batch dims as they are (broadcast by matmul), then two groups
        # each merged into one dimension
        x = x.transpose([t.index(c) for c in batch + first + second])
        lead = x.shape[:len(batch)]
        return x.reshape(lead + (int(np.prod([size[c] for c in first], dtype=np.int64)),
                                 int(np.prod([size[c] for c in second], dtype=np.int64))))

    product = matmul(arranged(ta, a, rows, inner), arranged(tb, b, inner, cols))
    have = batch + rows + cols
    product = product.reshape(product.shape[:len(batch)] + tuple(size[c] for c in rows + cols))
    return product.transpose([have.index(c) for c in output])


def _lapack(name, func):
    def on_host(*args, **kwargs):
        return run_on_host(f"linalg.{name}", func, args, kwargs)

    on_host.__name__ = on_host.__qualname__ = name
    on_host.__doc__ = func.__doc__
    on_host.__module__ = __name__.rpartition(".")[0] + ".linalg"  # pickles as gpupy.linalg.<name>
    on_host.__wrapped__ = func
    return on_host


# numpy.linalg: NumPy's LAPACK on the host values (no device version).
for _name in np.linalg.__all__:
    _func = getattr(np.linalg, _name)
    if callable(_func) and not isinstance(_func, type):
        implements(_func)(_lapack(_name, _func))
del _name, _func

# polyfit (a least-squares solve: LAPACK, as numpy.linalg), correlate and
# convolve (a dot product per output position, in NumPy's C loop): NumPy's
# own on the host values, counted as host placements, as the products and
# numpy.linalg are where the placement puts them on the host.
for _func in (np.polyfit, np.correlate, np.convolve):
    implements(_func)(host_function(_func.__name__, _func))
del _func

# Names gpupy exports from this module (as NumPy functions of the same name).
PUBLIC = (
    "matmul",
    "dot",
    "vdot",
    "inner",
    "outer",
    "tensordot",
    "einsum",
)
