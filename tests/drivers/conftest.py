"""Fixtures for the driver tests: one initialised driver per available library.

Driver libraries come from $GPUPY_DRIVER_DIR or the installed package's
gpupy/_drivers/; a driver whose library is missing (or that cannot
initialise on this machine) is skipped with the reason.
"""

import pytest

from driver_abi import DRIVER_NAMES, Driver, DriverError, find_driver

_open = {}


def open_driver(name):
    if name not in _open:
        path = find_driver(name)
        if path is None:
            _open[name] = f"libgpupy_driver_{name}.so not found (set GPUPY_DRIVER_DIR or install gpupy)"
        else:
            try:
                _open[name] = Driver(path)
            except DriverError as e:
                _open[name] = str(e)
    d = _open[name]
    if isinstance(d, str):
        pytest.skip(d)
    return d


@pytest.fixture(scope="session", params=DRIVER_NAMES)
def driver(request):
    return open_driver(request.param)


@pytest.fixture(scope="session")
def opengl():
    return open_driver("opengl")


def pytest_sessionfinish(session, exitstatus):
    for d in _open.values():
        if isinstance(d, Driver):
            d.close()
