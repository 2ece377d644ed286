"""GpuArray, put together: what the class consists of, in the order it is
assembled (`assemble`, called once by gpupy's __init__ after the sections
are imported).

1. The C++ class (src/bindings/py_array.cpp): the view of an array (owner,
   offset, shape, strides), dtype, copy and astype, basic indexing, the
   operators as generic Python-level methods.
2. The Python-level methods and protocols (`_methods.ArrayMethods`: the
   reductions, reshape, printing, flags, NumPy's and the Array API's
   protocols, ...), copied onto the class.
3. NumPy's advanced indexing: the handlers the C++ indexing hands the keys
   it does not take (index arrays, masks) to (`_methods`, reading and
   writing through _indexing_reads and _indexing_writes).
4. What a scalar result says its `__class__` is (`numbers.Integral`,
   `numbers.Real`), for libraries that tell scalars from arrays so.
5. The C slots of the operators and of indexing, and a C
   `__array_ufunc__` for its plain call: after step 2, since setting
   dunder attributes there derived generic slot wrappers that these
   replace; the C `__array_ufunc__` keeps step 2's for every other call.
6. C methods for `a.sum()`, `a.prod()`, `a.max()`, `a.min()`, `a.all()`, `a.any()` called without
   arguments (src/bindings/py_reduce_methods.cpp), each keeping step 2's
   method for every other call: after step 2 for the same reason.
"""

from . import _core, _methods
from ._core import GpuArray
from ._registry import REDUCE_CHUNK


def assemble():
    """Steps 2 to 6 above, in order (step 1 is the compiled module's)."""
    for name, value in _methods.python_methods().items():
        setattr(GpuArray, name, value)
    _core._set_advanced_indexing(_methods.advanced_getitem, _methods.advanced_setitem)
    _core._set_scalar_classes(_methods.IntegerScalar, _methods.RealScalar)
    _core._install_slots()
    _core._install_reduce_methods(REDUCE_CHUNK)
