"""The Array API standard's view of gpupy: its device, the namespace-info
object, and the version it implements.

gpupy has one device, "gpu": where an array's blocks are computed is the
placement's business (gpupy.set_placement), not the array's, so every
array is on it, and `to_device` of it is the array itself. NumPy's device
name "cpu" is taken for it too, so that a NumPy script passing
`device="cpu"` keeps working under `import gpupy as np`. Anything else is
NumPy's ValueError.

Base layer: imports nothing of gpupy.
"""

import numpy as np

API_VERSION = "2023.12"
SUPPORTED_VERSIONS = ("2021.12", "2022.12", "2023.12")

DEVICE = "gpu"
_NAMES = (DEVICE, "cpu")


def check_device(device):
    """ValueError unless `device` names gpupy's device (or is None)."""
    if device is not None and not (isinstance(device, str) and device in _NAMES):
        raise ValueError(f"Device not understood. gpupy has one device, {DEVICE!r} (NumPy's 'cpu' names it too), "
                         f"got {device!r}")


def check_api_version(api_version):
    if api_version is not None and api_version not in SUPPORTED_VERSIONS:
        raise ValueError(f"Version {api_version!r} of the Array API standard is not supported by gpupy "
                         f"(supported: {', '.join(SUPPORTED_VERSIONS)})")


class ArrayNamespaceInfo:
    """What `gpupy.__array_namespace_info__()` answers (Array API 2023.12)."""

    __module__ = "gpupy"

    def capabilities(self):
        # Boolean masks and nonzero/unique have sizes that depend on values,
        # which gpupy computes (a count read back from the device).
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        return DEVICE

    def devices(self):
        return [DEVICE]

    def default_dtypes(self, *, device=None):
        check_device(device)
        # complex128 is NumPy's: complex values are computed by NumPy (a fallback).
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        """The dtypes gpupy arrays hold (complex values are NumPy arrays)."""
        check_device(device)
        groups = {
            "bool": ["bool"],
            "signed integer": ["int8", "int16", "int32", "int64"],
            "unsigned integer": ["uint8", "uint16", "uint32", "uint64"],
            "real floating": ["float32", "float64"],
            "complex floating": [],
        }
        groups["integral"] = groups["signed integer"] + groups["unsigned integer"]
        groups["numeric"] = groups["integral"] + groups["real floating"]
        if kind is None:
            names = groups["bool"] + groups["numeric"]
        else:
            names = []
            for k in (kind,) if isinstance(kind, str) else kind:
                if k not in groups:
                    raise ValueError(f"unsupported kind: {k!r}")
                names += [n for n in groups[k] if n not in names]
        return {n: np.dtype(n) for n in names}


def array_namespace_info():
    return ArrayNamespaceInfo()


def device_of(array):
    """GpuArray.device: every gpupy array is on gpupy's one device."""
    return DEVICE


def to_device(array, device, /, *, stream=None):
    check_device(device)
    if stream is not None:
        raise ValueError("gpupy has no streams: stream must be None")
    return array


def dlpack_device(array):
    """(kDLCPU, 0): a DLPack export is of the host copy of the values."""
    return (1, 0)


def dlpack(array, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of the array's bytes in host memory (evaluated
    first): a writable export, as the buffer protocol's (a consumer's write
    reaches the array). A read-only array (a scalar result, a broadcast
    view) gives a consumer that cannot be told so (DLPack before 1.0) a copy
    of its own, unless it forbids one."""
    if stream is not None and stream != -1:
        raise BufferError("gpupy exports host memory, which takes no stream")
    host = np.asarray(array)
    old_consumer = max_version is None or tuple(max_version) < (1, 0)
    if copy is None and old_consumer and not host.flags.writeable:
        copy = True
    kwargs = {name: value for name, value in (("copy", copy), ("dl_device", dl_device), ("max_version", max_version))
              if value is not None}
    if kwargs and not _numpy_export_takes_keywords():
        # NumPy 2.0's export takes stream= alone: the copy is made here, and
        # the consumer's hints are what that export gives anyway (a DLPack
        # 0.x capsule, which a consumer asking for 1.0 must take, of CPU memory).
        if kwargs.pop("copy", False):
            host = host.copy()
        kwargs.pop("max_version", None)
        if kwargs.get("dl_device") is not None and tuple(kwargs["dl_device"]) == dlpack_device(array):
            del kwargs["dl_device"]
    return host.__dlpack__(**kwargs)


def _numpy_export_takes_keywords():
    """Whether this NumPy's ndarray.__dlpack__ takes copy=, dl_device= and
    max_version= (NumPy 2.1 added them); asked once, of an empty array."""
    if _numpy_export_takes_keywords.answer is None:
        try:
            np.empty(0).__dlpack__(copy=None)
            _numpy_export_takes_keywords.answer = True
        except TypeError:
            _numpy_export_takes_keywords.answer = False
    return _numpy_export_takes_keywords.answer


_numpy_export_takes_keywords.answer = None

