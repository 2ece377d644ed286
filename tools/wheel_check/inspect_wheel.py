"""Checks a gpupy wheel's contents and metadata (and an sdist's) before installing it.

    python inspect_wheel.py --source ROOT WHEEL [--sdist SDIST] [--manylinux]

For tools/check_wheel.sh; needs `packaging` (the build tools' environment
has it). The wheel must hold exactly the package: every gpupy/*.py of the
source tree, one compiled core, both drivers and the .dist-info files --
no stray build products, tests or caches. Its metadata must carry the
name, the version of gpupy/_version.py, a summary, the README, a license,
Requires-Python (which this Python must satisfy), the NumPy requirement and
classifiers. With --manylinux the platform tag must be manylinux and no GL,
EGL, glvnd or GLEW library may be bundled. The sdist must hold what a build
needs. Prints a short listing; exits non-zero with the reasons on failure.
"""

import argparse
import email.parser
import re
import sys
import tarfile
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import Version

# Libraries a user's system must provide, never the wheel (see docs/installing.md).
SYSTEM_GL_LIBRARY = re.compile(
    r"(^|/)lib(EGL|OpenGL|GL|GLX|GLdispatch|GLEW|GLESv1_CM|GLESv2|gbm|glapi|nvidia-\w+)(_\w+)?[-.\w]*\.so(\.|$)")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def source_version(root):
    text = (root / "gpupy" / "_version.py").read_text()
    m = re.search(r"""^__version__\s*=\s*["']([^"']+)["']""", text, re.M)
    if not m:
        sys.exit(f"inspect_wheel: no __version__ in {root / 'gpupy' / '_version.py'}")
    return m.group(1)


def inspect_wheel(path, root, manylinux):
    name, version, _build, tags = parse_wheel_filename(path.name)
    want_version = source_version(root)
    check(str(name) == "gpupy", f"wheel name {name}")
    check(version == Version(want_version), f"wheel version {version} != gpupy/_version.py's {want_version}")
    platforms = {t.platform for t in tags}
    interpreters = {t.interpreter for t in tags}
    check(interpreters == {f"cp{sys.version_info[0]}{sys.version_info[1]}"},
          f"wheel is for {interpreters}, this is CPython {sys.version_info[0]}.{sys.version_info[1]}")
    if manylinux:
        check(all(p.startswith("manylinux_") for p in platforms), f"platform tags {platforms} are not manylinux")

    dist_info = f"gpupy-{version}.dist-info"
    with zipfile.ZipFile(path) as z:
        members = [n for n in z.namelist() if not n.endswith("/")]
        metadata = email.parser.Parser().parsestr(z.read(f"{dist_info}/METADATA").decode())
        wheel_info = email.parser.Parser().parsestr(z.read(f"{dist_info}/WHEEL").decode())
        sizes = {i.filename: i.file_size for i in z.infolist()}

    # Contents: exactly the package.
    source_py = {f"gpupy/{p.relative_to(root / 'gpupy').as_posix()}"
                 for p in (root / "gpupy").rglob("*.py") if "__pycache__" not in p.parts}
    cores = [m for m in members if re.fullmatch(r"gpupy/_core\.cpython-\d+[\w-]*\.so", m)]
    drivers = {f"gpupy/_drivers/libgpupy_driver_{d}.so" for d in ("software", "opengl")}
    meta_files = {f"{dist_info}/{f}" for f in ("METADATA", "WHEEL", "RECORD")}
    check(len(cores) == 1, f"expected one compiled core gpupy/_core.*.so, found {cores}")
    for required in sorted(source_py | drivers | meta_files):
        check(required in members, f"{required} is missing from the wheel")
    allowed = source_py | drivers | set(cores)
    for m in members:
        if m in allowed or (m.startswith(f"{dist_info}/") and not m.endswith(".so")):
            continue
        failures.append(f"unexpected file in the wheel: {m}")
    bundled = [m for m in members if SYSTEM_GL_LIBRARY.search(m)]
    check(not bundled, f"system GL/EGL/GLEW libraries bundled in the wheel: {bundled}")
    check(not any(m.startswith("gpupy.libs/") for m in members) or not manylinux,
          "auditwheel grafted libraries into gpupy.libs/")
    check(set(wheel_info.get_all("Tag") or []) == {str(t) for t in tags},
          f"WHEEL Tag {wheel_info.get_all('Tag')} does not match the file name's {sorted(map(str, tags))}")
    check(wheel_info.get("Root-Is-Purelib", "").strip().lower() == "false", "Root-Is-Purelib should be false")

    # Metadata.
    check(metadata.get("Name") == "gpupy", f"Name: {metadata.get('Name')}")
    check(metadata.get("Version") == want_version, f"Version: {metadata.get('Version')}")
    check(bool(metadata.get("Summary")), "no Summary")
    body = metadata.get_payload() or ""
    check(metadata.get("Description-Content-Type", "").startswith("text/markdown") and "gpupy" in body,
          "the README is not the long description (Description-Content-Type text/markdown)")
    check(bool(metadata.get("License-Expression") or metadata.get("License")), "no License or License-Expression")
    requires_python = metadata.get("Requires-Python")
    if check(bool(requires_python), "no Requires-Python"):
        here = ".".join(map(str, sys.version_info[:3]))
        check(SpecifierSet(requires_python).contains(here), f"Requires-Python {requires_python} excludes {here}")
    requirements = [Requirement(r) for r in metadata.get_all("Requires-Dist") or []]
    numpy = [r for r in requirements if r.name == "numpy" and not r.marker]
    check(numpy and not numpy[0].specifier.contains("1.26.4") and numpy[0].specifier.contains("2.0.0"),
          f"no NumPy >= 2 requirement: {[str(r) for r in requirements]}")
    classifiers = metadata.get_all("Classifier") or []
    check(len(classifiers) >= 3, f"too few classifiers: {classifiers}")
    py_minor = f"Programming Language :: Python :: {sys.version_info[0]}.{sys.version_info[1]}"
    check(py_minor in classifiers, f"no classifier {py_minor!r}")
    try:
        from trove_classifiers import classifiers as known_classifiers
    except ImportError:  # optional: check_wheel.sh installs it
        known_classifiers = None
    if known_classifiers is not None:
        unknown = [c for c in classifiers if c not in known_classifiers]
        check(not unknown, f"classifiers PyPI does not know: {unknown}")

    print(f"{path.name}: {len(members)} files")
    for m in sorted(members):
        print(f"  {sizes[m]:>9}  {m}")
    for key in ("Name", "Version", "Summary", "License-Expression", "License", "Requires-Python"):
        if metadata.get(key):
            print(f"  {key}: {metadata.get(key)}")
    print(f"  Requires-Dist: {', '.join(str(r) for r in requirements)}")
    print(f"  Classifiers: {len(classifiers)}; long description: {len(body)} characters")


def inspect_sdist(path, root):
    version = source_version(root)
    top = f"gpupy-{version}"
    check(path.name == f"{top}.tar.gz", f"sdist name {path.name} != {top}.tar.gz")
    with tarfile.open(path) as t:
        names = {m.name for m in t.getmembers() if m.isfile()}
    for required in ("PKG-INFO", "pyproject.toml", "CMakeLists.txt", "README.md", "LICENSE", "gpupy/__init__.py",
                     "gpupy/_version.py", "include/gpupy/driver.hpp", "include/gpupy/ops.def", "src/core/CMakeLists.txt",
                     "drivers/software/CMakeLists.txt",
                     "drivers/opengl/CMakeLists.txt"):
        check(f"{top}/{required}" in names, f"{required} is missing from the sdist")
    stray = sorted(n for n in names if n.endswith((".so", ".o", ".whl", ".pyc")) or f"{top}/build/" in n)
    check(not stray, f"build products in the sdist: {stray[:10]}")
    print(f"{path.name}: {len(names)} files")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("wheel", type=Path)
    parser.add_argument("--source", type=Path, required=True, help="the source tree the wheel was built from")
    parser.add_argument("--sdist", type=Path)
    parser.add_argument("--manylinux", action="store_true")
    opts = parser.parse_args()
    inspect_wheel(opts.wheel, opts.source, opts.manylinux)
    if opts.sdist:
        inspect_sdist(opts.sdist, opts.source)
    if failures:
        print("\nwheel inspection FAILED:", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
