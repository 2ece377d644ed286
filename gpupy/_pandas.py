"""pandas takes a gpupy array as a group key, as it takes a NumPy array.

pandas decides by type what a groupby key is: its own Series and Index,
an ExtensionArray or an np.ndarray are values to group by, and anything
else is mapped over the index as a function. So `pd.Series(d).groupby(g)`
with `g` a gpupy array raised "'GpuArray' object is not callable" where the
same script with NumPy groups by g's values. No protocol lets another array
type take part in that decision, so gpupy wraps the one place that makes
it, pandas' `Grouping`, to see a gpupy array as its host values (evaluated
first, as `numpy.asarray` gives them). Nothing else of pandas changes.

The wrapper is installed when pandas' groupby module is loaded -- at once
if it already is, else right after its import (_import_hooks) -- so
`import gpupy` never imports pandas.
"""

import functools

import numpy as np

from ._core import GpuArray
from ._import_hooks import after_import

GROUPER_MODULE = "pandas.core.groupby.grouper"


def teach_grouping(module):
    """Wraps `module.Grouping.__init__` so that a gpupy array key is its
    host values; idempotent. False if the module has no such class (a
    pandas whose internals moved: then nothing is wrapped)."""
    grouping = getattr(module, "Grouping", None)
    if grouping is None:
        return False
    original = grouping.__init__
    if getattr(original, "_gpupy_wrapped", False):
        return True

    @functools.wraps(original)
    def __init__(self, index, grouper=None, *args, **kwargs):
        if isinstance(grouper, GpuArray):
            grouper = np.asarray(grouper)
        original(self, index, grouper, *args, **kwargs)

    __init__._gpupy_wrapped = True
    grouping.__init__ = __init__
    return True


def install():
    after_import(GROUPER_MODULE, teach_grouping)
