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
if it already is, else by a finder that waits for the import -- so
`import gpupy` never imports pandas.
"""

import functools
import importlib.abc
import importlib.machinery
import sys

import numpy as np

from ._core import GpuArray

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


class GroupingFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when pandas' grouper module is imported, lets
    the regular finders find it and wraps its Grouping once it has run."""

    def find_spec(self, fullname, path, target=None):
        if fullname != GROUPER_MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            teach_grouping(module)

        spec.loader.exec_module = exec_module  # this module's own loader object
        return spec


def install():
    if GROUPER_MODULE in sys.modules:
        teach_grouping(sys.modules[GROUPER_MODULE])
    elif not any(isinstance(f, GroupingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, GroupingFinder())
