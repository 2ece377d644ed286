"""An axis argument as NumPy takes it: one rule and NumPy's errors for every
function of the package that takes an axis (the core's bindings apply the
same rule in C++)."""

import operator

import numpy as np


def normalize_axis(axis, ndim, prefix=None):
    """`axis` in [-ndim, ndim) as an index in [0, ndim): NumPy's TypeError
    for what is not an integer (a float, a string: operator.index's
    message), its AxisError for one out of range (`prefix` as NumPy's
    msg_prefix: "axis1", "source", ...)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, prefix)
    return axis % ndim if ndim else axis
