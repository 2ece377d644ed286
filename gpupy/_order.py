"""NumPy's sort order, one definition for the package: NaN after every
other value (sort, argsort, searchsorted, unique, median's partitions)."""

from . import _core


def nan_last_less(x, y):
    """Elementwise `x < y` in NumPy's sort order: a NaN sorts after every
    number, and two NaNs are equal (GpuArrays or Python numbers)."""
    less = _core.ufunc("less", x, y)
    if not any(isinstance(v, float) or getattr(getattr(v, "dtype", None), "kind", "") in ("f", "c") for v in (x, y)):
        return less  # no NaN can take part
    x_nan, y_nan = _core.ufunc("isnan", x), _core.ufunc("isnan", y)
    return _core.ufunc("logical_or", less, _core.ufunc("logical_and", y_nan, _core.ufunc("logical_not", x_nan)))
