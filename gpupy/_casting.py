"""NumPy's casting rule for a ufunc's output, with NumPy's words for a cast
it refuses. The bindings check every `out=` of the device's ufuncs in C++
(src/bindings/py_ops.cpp, check_output_cast); this is the same check for
what Python writes as a ufunc's output (`a @= b`), in the same words, which
tests/test_namespace.py holds to the bindings'.

Base layer: imports nothing of gpupy.
"""

import numpy as np


def check_output_cast(ufunc_name, result_dtype, out_dtype):
    """NumPy's TypeError where a result of `result_dtype` may not be written
    into an output of `out_dtype` under the 'same_kind' rule (the rule of
    every ufunc's output, and of the in-place operators)."""
    if not np.can_cast(result_dtype, out_dtype, casting="same_kind"):
        raise TypeError(f"Cannot cast ufunc '{ufunc_name}' output from {np.dtype(result_dtype)!r} to "
                        f"{np.dtype(out_dtype)!r} with casting rule 'same_kind'")
