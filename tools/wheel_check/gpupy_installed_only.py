"""pytest plugin for tools/check_wheel.sh: the tests must use the installed gpupy.

Loaded with `-p gpupy_installed_only` and GPUPY_CHECK_PREFIX set to the
virtual environment. Before collection it checks that `import gpupy` would
find the package inside that environment; at the end of the session it
checks every gpupy module the tests imported and every gpupy binary mapped
into the process (the core, and the drivers whether gpupy or the driver
tests' ctypes loaded them). Anything from elsewhere -- the source tree, a
development build -- fails the run, and so does a run in which no gpupy
binary was loaded at all (nothing would have been proven).
"""

import importlib.util
import os
import re
import sys

import pytest

_PREFIX = os.path.realpath(os.environ.get("GPUPY_CHECK_PREFIX", "/nonexistent"))
_BINARY = re.compile(r"^(_core\..*\.so|libgpupy_driver_\w+\.so)$")


def _inside(path):
    return os.path.realpath(path).startswith(_PREFIX + os.sep)


def pytest_report_header(config):
    spec = importlib.util.find_spec("gpupy")
    return f"gpupy under test: {os.path.dirname(spec.origin) if spec else 'NOT FOUND'}"


def pytest_configure(config):
    if "GPUPY_CHECK_PREFIX" not in os.environ:
        raise pytest.UsageError("gpupy_installed_only: set GPUPY_CHECK_PREFIX to the virtual environment")
    spec = importlib.util.find_spec("gpupy")
    if spec is None or not spec.origin or not _inside(spec.origin):
        raise pytest.UsageError(f"gpupy_installed_only: import gpupy would load "
                                f"{spec.origin if spec else 'nothing'}, not the package in {_PREFIX}")


def _mapped_gpupy_binaries():
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(None, 5)
            if len(fields) == 6 and _BINARY.match(os.path.basename(fields[5].strip())):
                paths.add(fields[5].strip())
    return paths


_summary = []


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    problems = []
    modules = {name: getattr(mod, "__file__", None) for name, mod in list(sys.modules.items())
               if name == "gpupy" or name.startswith("gpupy.")}
    problems += [f"module {name} was imported from {path}" for name, path in modules.items()
                 if path and not _inside(path)]
    binaries = _mapped_gpupy_binaries()
    problems += [f"{path} was loaded" for path in binaries if not _inside(path)]
    if not binaries and session.testscollected:
        problems.append("no gpupy binary was loaded: the run proves nothing about the installed package")
    if problems:
        _summary.append(("the tests did not use only the installed gpupy:\n  " + "\n  ".join(problems), True))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        _summary.append((f"{len(modules)} gpupy modules and {len(binaries)} gpupy binaries, all from {_PREFIX}",
                         False))


def pytest_terminal_summary(terminalreporter):
    # Runs after pytest_sessionfinish, in the summary where lines start cleanly.
    for message, bad in _summary:
        terminalreporter.write_line(f"gpupy_installed_only: {message}", red=bad, bold=bad)
