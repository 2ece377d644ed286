"""Small device building blocks that several sections compose: NumPy's
sort order (NaN after every other value: sort, argsort, searchsorted,
median's partitions) and reading elements at computed positions. Imported
directly, not looked up by name: each is one definition for the package."""

from . import _core


def nan_last_less(x, y):
    """Elementwise `x < y` in NumPy's sort order: a NaN sorts after every
    number, and two NaNs are equal (GpuArrays or Python numbers)."""
    less = _core.ufunc("less", x, y)
    if not any(isinstance(v, float) or getattr(getattr(v, "dtype", None), "kind", "") in ("f", "c") for v in (x, y)):
        return less  # no NaN can take part
    x_nan, y_nan = _core.ufunc("isnan", x), _core.ufunc("isnan", y)
    return _core.ufunc("logical_or", less, _core.ufunc("logical_and", y_nan, _core.ufunc("logical_not", x_nan)))


def read_at(x, positions):
    """The elements of a 1-D GpuArray x at `positions` (an int64 GpuArray,
    all inside x): one gather on the device, through x's own view."""
    offset, _, (stride,) = x._view
    return _core.gather(x, positions * stride + offset if (stride, offset) != (1, 0) else positions)
