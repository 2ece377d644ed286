"""The layering rules of docs/architecture.md, checked on the sources'
#include lines:

* the core (src/core) includes no Python, NumPy, pybind11, GL or EGL header,
  nothing of the bindings and nothing of the drivers;
* drivers include no Python header and nothing of src/ (they talk to the
  core only through include/gpupy);
* the shared driver code (drivers/common) and the GLSL generator
  (drivers/glsl) include no GL, EGL or GLEW header: a Vulkan or WebGPU driver
  can use them unchanged;
* include/gpupy, what drivers compile against, includes only itself and the
  C/C++ standard library.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
PYTHON = ("Python.h", "pybind11/", "numpy/")
GL = ("GL/", "EGL/", "GLES", "glew")


def sources(folder):
    return [p for p in (ROOT / folder).rglob("*") if p.suffix in (".cpp", ".hpp", ".h", ".def")]


def includes(path):
    return INCLUDE.findall(path.read_text())


def offenders(folder, forbidden):
    found = []
    for path in sources(folder):
        for inc in includes(path):
            if any(inc.startswith(f) or f in inc for f in forbidden):
                found.append(f"{path.relative_to(ROOT)}: #include {inc}")
    return found


def test_every_folder_has_sources():
    for folder in ("src/core", "src/bindings", "drivers/common", "drivers/glsl", "drivers/opengl",
                   "drivers/software", "include/gpupy"):
        assert sources(folder), folder


def test_the_core_includes_no_python_no_gl_no_bindings_no_drivers():
    assert not offenders("src/core", PYTHON + GL + ("bindings/", "drivers/", "glsl_", "interpreter.hpp"))


@pytest.mark.parametrize("driver", ["common", "glsl", "opengl", "software"])
def test_drivers_include_no_python_and_nothing_of_the_core(driver):
    assert not offenders(f"drivers/{driver}", PYTHON + ("core/", "bindings/"))


@pytest.mark.parametrize("folder", ["drivers/common", "drivers/glsl"])
def test_shared_driver_code_includes_no_gl(folder):
    assert not offenders(folder, GL)


def test_the_public_headers_include_only_themselves_and_the_standard_library():
    own = {p.name for p in sources("include/gpupy")}
    for path in sources("include/gpupy"):
        for inc in includes(path):
            name = inc.rsplit("/", 1)[-1]
            standard = "." not in inc or inc.endswith(".h") and "/" not in inc
            assert name in own or standard, f"{path.name}: #include {inc}"


def test_the_rule_finds_an_offender(tmp_path, monkeypatch):
    """The check itself: a GL include in a shared folder is found."""
    fake = tmp_path / "drivers" / "glsl"
    fake.mkdir(parents=True)
    (fake / "bad.cpp").write_text('#include <GL/glew.h>\n#include "glsl_ops.hpp"\n')
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    assert offenders("drivers/glsl", GL) == ["drivers/glsl/bad.cpp: #include GL/glew.h"]
