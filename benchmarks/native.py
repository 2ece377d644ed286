"""The C++ and hand-written GLSL versions of the distance map.

Their sources (benchmarks/native/*.cpp) are compiled with g++ at run time
into a cache directory (GPUPY_BENCH_CACHE, else ~/.cache/gpupy-benchmarks),
keyed by a hash of source, flags and compiler, so a second run reuses them;
they are loaded with ctypes and timed from Python like everything else.
"""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NATIVE = os.path.join(HERE, "native")

# -fno-math-errno: gpupy's own build uses it, and without it GCC wraps every
# sqrt in a scalar errno check and the loop does not vectorise. No
# -march=native by default (--native adds a separately reported build).
CPU_FLAGS = ["-O3", "-fno-math-errno"]
GL_LIBS = ["-lEGL", "-lOpenGL"]


class BuildError(RuntimeError):
    pass


def cache_dir():
    d = os.environ.get("GPUPY_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "gpupy-benchmarks")
    os.makedirs(d, exist_ok=True)
    return d


def compiler_version(cxx="g++"):
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=True).stdout
        return out.splitlines()[0].strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def build(source_name, flags, libs=(), cxx="g++"):
    """Compiles native/<source_name> into a shared library; returns its path."""
    cxx_path = shutil.which(cxx)
    if cxx_path is None:
        raise BuildError(f"{cxx} not found")
    src = os.path.join(NATIVE, source_name)
    with open(src, "rb") as f:
        text = f.read()
    key = hashlib.sha256(text + repr((list(flags), list(libs), compiler_version(cxx))).encode()).hexdigest()[:16]
    out = os.path.join(cache_dir(), f"{os.path.splitext(source_name)[0]}-{key}.so")
    if os.path.exists(out):
        return out
    cmd = [cxx_path, *flags, "-std=c++17", "-shared", "-fPIC", src, "-o", None, *libs]
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        tmp_out = os.path.join(tmp, "lib.so")
        cmd[cmd.index(None)] = tmp_out
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise BuildError(f"{' '.join(cmd)} failed:\n{r.stderr.strip()}")
        os.replace(tmp_out, out)
    return out


def _float_ptr(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def _points32(points):
    px = np.ascontiguousarray([p[0] for p in points], dtype=np.float32)
    py = np.ascontiguousarray([p[1] for p in points], dtype=np.float32)
    return px, py


class CpuDistanceMap:
    """distmap_cpu.cpp built with `flags` (e.g. + -fopenmp)."""

    def __init__(self, flags=CPU_FLAGS):
        self.flags = list(flags)
        self.path = build("distmap_cpu.cpp", self.flags)
        self.lib = ctypes.CDLL(self.path)
        self.lib.distmap.restype = None
        self.lib.distmap.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float), ctypes.c_int]
        self.threads = self.lib.distmap_threads()

    def run(self, n, points):
        """The whole program: point arrays, distance map, max, scaling."""
        px, py = _points32(points)
        out = np.empty((n, n), dtype=np.float32)
        self.lib.distmap(_float_ptr(out), n, _float_ptr(px), _float_ptr(py), len(points))
        return out


class GlslDistanceMap:
    """distmap_glsl.cpp: its own EGL context and compute shader."""

    MODES = {"loop": 0, "unrolled": 1, "unrolled-nanmin": 2}

    def __init__(self):
        self.path = build("distmap_glsl.cpp", ["-O2"], GL_LIBS)
        self.lib = ctypes.CDLL(self.path)
        c_err = ctypes.c_char_p
        self.lib.hg_init.argtypes = [c_err, ctypes.c_int]
        self.lib.hg_describe.restype = ctypes.c_char_p
        self.lib.hg_prepare.argtypes = [ctypes.c_int] * 4 + [c_err, ctypes.c_int]
        self.lib.hg_run.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_float), c_err, ctypes.c_int]
        self.lib.hg_ew_prepare.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float),
                                           ctypes.c_int, ctypes.c_int, c_err, ctypes.c_int]
        self.lib.hg_ew_run.argtypes = [ctypes.POINTER(ctypes.c_float), c_err, ctypes.c_int]
        self._err = ctypes.create_string_buffer(8192)
        self._check(self.lib.hg_init(self._err, len(self._err)), "init")
        self.renderer = self.lib.hg_describe().decode()

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"hand-written GLSL {what}: {self._err.value.decode(errors='replace')}")

    def prepare(self, n, mode, chunk, local=8):
        self._check(self.lib.hg_prepare(n, self.MODES[mode], chunk, local, self._err, len(self._err)), "prepare")

    def ew_prepare(self, a, b, layout):
        """Uploads a, b (float32) for 2*a + 3*b in layout "ssbo" or "texture"."""
        self._ew_a = np.ascontiguousarray(a, dtype=np.float32)
        self._ew_b = np.ascontiguousarray(b, dtype=np.float32)
        self._check(self.lib.hg_ew_prepare(_float_ptr(self._ew_a), _float_ptr(self._ew_b), self._ew_a.size,
                                           {"ssbo": 0, "texture": 1}[layout], self._err, len(self._err)), "ew_prepare")

    def ew_run(self):
        out = np.empty(self._ew_a.size, dtype=np.float32)
        self._check(self.lib.hg_ew_run(_float_ptr(out), self._err, len(self._err)), "ew_run")
        return out

    def _seconds(self, fn, what, *args):
        """Calls fn(*args, &seconds, err, len); returns the seconds."""
        seconds = ctypes.c_double()
        fn.argtypes = [ctypes.c_int] * len(args) + [ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_int]
        self._check(fn(*args, ctypes.byref(seconds), self._err, len(self._err)), what)
        return seconds.value

    def ew_time(self, reps):
        """Seconds for `reps` dispatches of the prepared 2*a + 3*b in a row,
        its result left on the device (timed in C++ up to glFinish)."""
        return self._seconds(self.lib.hg_ew_time, "ew_time", reps)

    def copy_prepare(self, nbytes):
        """Two device buffers of `nbytes` for copy_time."""
        self.lib.hg_copy_prepare.argtypes = [ctypes.c_longlong, ctypes.c_char_p, ctypes.c_int]
        self._check(self.lib.hg_copy_prepare(nbytes, self._err, len(self._err)), "copy_prepare")

    def copy_time(self, reps):
        """Seconds for `reps` device-to-device copies of the prepared buffer
        (glCopyNamedBufferSubData; each moves 2 x nbytes: read and write)."""
        return self._seconds(self.lib.hg_copy_time, "copy_time", reps)

    def peak_gflops(self, chains=8, steps=256, min_seconds=0.05, max_groups=65535 * 1024):
        """The device's float32 arithmetic peak as measured by a kernel of
        `chains` independent vec4 fma chains of `steps` steps per invocation
        (distmap_glsl.cpp's hg_peak_*): the number of work groups (of 256)
        grows until one dispatch takes `min_seconds`; returns (GFLOP/s,
        seconds, flops, work groups) of the best of three dispatches there."""
        per_invocation = ctypes.c_double()
        self.lib.hg_peak_prepare.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                             ctypes.c_char_p, ctypes.c_int]
        self._check(self.lib.hg_peak_prepare(chains, steps, ctypes.byref(per_invocation), self._err,
                                             len(self._err)), "peak_prepare")
        self.lib.hg_peak_time.argtypes = [ctypes.c_longlong, ctypes.POINTER(ctypes.c_double),
                                          ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_int]

        def dispatch(groups):
            seconds, invocations = ctypes.c_double(), ctypes.c_double()
            self._check(self.lib.hg_peak_time(groups, ctypes.byref(seconds), ctypes.byref(invocations),
                                              self._err, len(self._err)), "peak_time")
            return seconds.value, invocations.value * per_invocation.value

        dispatch(1)  # the JIT
        groups = 1
        seconds, _ = dispatch(groups)
        while seconds < min_seconds and groups < max_groups:
            # (at most 16x at a time: a dispatch timed near zero says little)
            groups = min(max_groups, groups * max(2, min(16, int(1.5 * min_seconds / max(seconds, 1e-9)))))
            seconds, _ = dispatch(groups)
        seconds, flops = min(dispatch(groups) for _ in range(3))
        return flops / seconds / 1e9, seconds, flops, groups

    STENCILS = {"life": (0, np.uint8), "gauss5x5": (1, np.float32)}

    def stencil_prepare(self, kind, n, steps=1):
        """Compiles the hand-written stencil `kind` ("life", "gauss5x5")
        for n x n images (Life: `steps` generations)."""
        code, dtype = self.STENCILS[kind]
        self.lib.hg_stencil_prepare.argtypes = [ctypes.c_int] * 3 + [ctypes.c_char_p, ctypes.c_int]
        self.lib.hg_stencil_run.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self._stencil = (n, dtype)
        self._check(self.lib.hg_stencil_prepare(code, n, steps, self._err, len(self._err)), "stencil_prepare")

    def stencil_run(self, image):
        """Uploads `image`, runs the passes, returns the result read back."""
        n, dtype = self._stencil
        src = np.ascontiguousarray(image, dtype=dtype)
        out = np.empty((n, n), dtype=dtype)
        self._check(self.lib.hg_stencil_run(src.ctypes.data, out.ctypes.data, self._err, len(self._err)),
                    "stencil_run")
        return out

    def matmul_configs(self):
        """The names of the hand-written product's configurations
        (distmap_glsl.cpp's kMatmulConfigs), in order."""
        self.lib.hg_matmul_config_name.restype = ctypes.c_char_p
        self.lib.hg_matmul_config_name.argtypes = [ctypes.c_int]
        return [self.lib.hg_matmul_config_name(i).decode() for i in range(self.lib.hg_matmul_configs())]

    def matmul_default_config(self):
        """The name of the configuration matmul_prepare compiles by default
        (the fastest measured on llvmpipe)."""
        return self.matmul_configs()[self.lib.hg_matmul_default()]

    def matmul_prepare(self, n, config=None):
        """Compiles the hand-written product for n x n float32 matrices in
        configuration `config` (a name from matmul_configs(); None: the
        fastest measured on llvmpipe) and allocates its storage. Its name
        is then in self.matmul_config."""
        names = self.matmul_configs()
        if config is None:
            index = self.lib.hg_matmul_default()
        elif config in names:
            index = names.index(config)
        else:
            raise ValueError(f"no hand-written matmul configuration {config!r}; known: {', '.join(names)}")
        self.lib.hg_matmul_configure.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.hg_matmul_prepare.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.lib.hg_matmul_run.argtypes = [ctypes.POINTER(ctypes.c_float)] * 3 + [ctypes.c_char_p, ctypes.c_int]
        self._check(self.lib.hg_matmul_configure(index, self._err, len(self._err)), "matmul_configure")
        self._check(self.lib.hg_matmul_prepare(n, self._err, len(self._err)), "matmul_prepare")
        self._matmul_n = n
        self.matmul_config = names[index]

    def matmul_run(self, a, b):
        """A @ B as gpupy's runs are timed: uploads both, one dispatch,
        reads the product back (an n x n float32 array)."""
        n = self._matmul_n
        a32 = np.ascontiguousarray(a, dtype=np.float32)
        b32 = np.ascontiguousarray(b, dtype=np.float32)
        if a32.shape != (n, n) or b32.shape != (n, n):
            raise ValueError(f"matmul_run: prepared for {n}x{n}, got {a32.shape} and {b32.shape}")
        out = np.empty((n, n), dtype=np.float32)
        self._check(self.lib.hg_matmul_run(_float_ptr(a32), _float_ptr(b32), _float_ptr(out),
                                           self._err, len(self._err)), "matmul_run")
        return out

    def matmul_time(self, reps):
        """Seconds for `reps` products in a row over the inputs the last
        matmul_run uploaded, the product left on the device (timed in C++
        up to glFinish)."""
        return self._seconds(self.lib.hg_matmul_time, "matmul_time", reps)

    def run(self, n, points):
        px, py = _points32(points)
        out = np.empty((n, n), dtype=np.float32)
        self._check(self.lib.hg_run(_float_ptr(px), _float_ptr(py), len(points), _float_ptr(out),
                                    self._err, len(self._err)), "run")
        return out
