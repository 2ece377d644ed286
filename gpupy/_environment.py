"""The settings the Python side of gpupy reads from the environment, read
here and nowhere else in the package (docs/architecture.md, "Settings and
counters", lists them all; the core and the drivers read their own in C++).

One parser for each kind of value: a value it does not accept is an error
naming the variable, what it accepts and what it got, worded as the core's
settings parser words its errors ("GPUPY_BLOCK_SIZE must be an integer >=
1, got 'abc'"), never the default in silence. Unset and empty are the
same: the default.

Base layer: imports nothing of gpupy.
"""

import math
import os


def _raw(name):
    """The variable's value, or None where it is unset or empty."""
    value = os.environ.get(name)
    return value if value else None


def is_set(name):
    """Whether the variable has a value (for settings whose presence is what
    matters: one a driver read as it loaded, one the user set for the core)."""
    return _raw(name) is not None


def choice(name, accepted):
    """One of `accepted` (the first where unset), case and surrounding
    spaces aside."""
    raw = _raw(name)
    if raw is None or not raw.strip():
        return accepted[0]
    value = raw.strip().lower()
    if value not in accepted:
        words = ", ".join(f"'{a}'" for a in accepted)
        raise ValueError(f"{name} must be one of {words}, got '{raw}'")
    return value


def number(name, default):
    """A number >= 0 (`default` where unset)."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not value >= 0:  # (NaN too)
        raise ValueError(f"{name} must be a number >= 0, got '{raw}'")
    return value


def text(name):
    """The value as given (a directory), or None where unset."""
    return _raw(name)


def word(name):
    """A name (a driver's), case and surrounding spaces aside; None where
    unset. Which names exist is the core's to say (it loads them)."""
    raw = _raw(name)
    return raw.strip().lower() or None if raw is not None else None
