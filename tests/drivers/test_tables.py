"""The op table through every driver, held against golden files.

* tests/golden/abi_tables.txt: the ABI version and the op and dtype tables
  (code, name, arity, flags, fold). Every driver must carry exactly these
  tables. A change to them without a new GPUPY_DRIVER_ABI_VERSION fails here:
  an out-of-tree driver built against the old table would compute something
  else for the same opcode.
* tests/golden/methods_<driver>.txt: every (op, dtype) pair the driver's
  get_method accepts. A snippet or kernel lost from a driver would make the
  core hand that op to NumPy silently; here it is a failure.

After a deliberate change, regenerate with
    python tests/drivers/test_tables.py --regenerate
and review the diff.
"""

import sys
from pathlib import Path

import pytest

from driver_abi import ABI_VERSION, DRIVER_NAMES, api_of, find_driver, tables_of

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
ABI_FILE = GOLDEN / "abi_tables.txt"


def _abi_text(abi, ops, dtypes):
    lines = [f"abi_version {abi}", "# op: code NAME numpy_name arity flags fold"]
    lines += [f"op {code} {name} {numpy_name} {arity} {flags} {fold}" for code, name, numpy_name, arity, flags, fold in ops]
    lines.append("# dtype: code numpy_name itemsize")
    lines += [f"dtype {code} {name} {size}" for code, name, size in dtypes]
    return "\n".join(lines) + "\n"


def _read_abi_golden():
    text = ABI_FILE.read_text()
    abi = int(text.splitlines()[0].split()[1])
    return abi, text


def _methods_text(driver):
    """One line per op: its numpy name and the dtypes get_method accepts."""
    ops, dtypes = tables_of(driver.api)
    leaves = [(0, "load"), (1, "index"), (2, "const")]
    lines = []
    for code, numpy_name in leaves + [(code, numpy_name) for code, _, numpy_name, *_ in ops]:
        accepted = [name for dcode, name, _ in dtypes if driver.get_method(code, dcode)]
        lines.append(f"{numpy_name}: {' '.join(accepted) if accepted else '-'}")
    return "\n".join(lines) + "\n"


def _stored_dtypes(driver):
    _, dtypes = tables_of(driver.api)
    return {name for code, name, _ in dtypes if driver.get_method(0, code)}


def _parse_methods(text):
    out = {}
    for line in text.splitlines():
        op, _, rest = line.partition(": ")
        out[op] = set() if rest.strip() == "-" else set(rest.split())
    return out


def abi_verdict(abi, text, golden_abi, golden_text):
    """None if a driver's tables (`text`, under ABI version `abi`) may be
    accepted against the golden ones, else what to do."""
    if text == golden_text:
        return None
    if abi == golden_abi:
        return ("the op or dtype table changed but GPUPY_DRIVER_ABI_VERSION did not: bump it in "
                "include/gpupy/driver.hpp (and ABI_VERSION in tests/drivers/driver_abi.py), then regenerate "
                "tests/golden with `python tests/drivers/test_tables.py --regenerate`")
    return (f"ABI version {abi} has no golden tables yet (golden: {golden_abi}): regenerate tests/golden with "
            "`python tests/drivers/test_tables.py --regenerate` and review the diff")


@pytest.mark.parametrize("name", DRIVER_NAMES)
def test_driver_carries_the_golden_abi_tables(name):
    path = find_driver(name)
    if path is None:
        pytest.skip(f"libgpupy_driver_{name}.so not found")
    try:
        api = api_of(path)
    except OSError as e:  # a library it needs (libEGL, ...) is missing: nothing is loaded, nothing checked
        pytest.skip(f"cannot load {path.name}: {e}")
    assert api.abi_version == ABI_VERSION, "tests/drivers/driver_abi.py mirrors another ABI version"
    golden_abi, golden_text = _read_abi_golden()
    verdict = abi_verdict(api.abi_version, _abi_text(api.abi_version, *tables_of(api)), golden_abi, golden_text)
    assert verdict is None, verdict


def test_abi_rule_refuses_a_renumbered_op_without_a_new_version():
    golden_abi, golden_text = _read_abi_golden()
    assert abi_verdict(golden_abi, golden_text, golden_abi, golden_text) is None
    renumbered = golden_text.replace(" ADD add ", " SUBTRACT subtract ", 1)
    assert renumbered != golden_text
    assert "bump" in abi_verdict(golden_abi, renumbered, golden_abi, golden_text)
    bumped = renumbered.replace(f"abi_version {golden_abi}", f"abi_version {golden_abi + 1}", 1)
    assert "regenerate" in abi_verdict(golden_abi + 1, bumped, golden_abi, golden_text)


def test_every_driver_accepts_its_golden_methods(driver):
    """get_method of each driver, against tests/golden/methods_<name>.txt.

    A device that cannot store a dtype at all (no fp64 or int64 on some
    GPUs) leaves that dtype out of both sides; everything else must match
    exactly, in both directions."""
    golden_file = GOLDEN / f"methods_{driver.name}.txt"
    golden = _parse_methods(golden_file.read_text())
    got = _parse_methods(_methods_text(driver))
    stored = _stored_dtypes(driver)
    assert set(got) == set(golden), f"ops differ from {golden_file.name}: {set(got) ^ set(golden)}"
    lost, gained = [], []
    for op in golden:
        want = golden[op] & stored
        if got[op] - want:
            gained.append(f"{op}: {' '.join(sorted(got[op] - want))}")
        if want - got[op]:
            lost.append(f"{op}: {' '.join(sorted(want - got[op]))}")
    assert not lost, (f"the {driver.name} driver no longer accepts (op: dtypes) it accepted before; a lost snippet or "
                      f"kernel would send them to NumPy:\n  " + "\n  ".join(lost))
    assert not gained, (f"the {driver.name} driver accepts new (op: dtypes); if intended, regenerate "
                        f"tests/golden:\n  " + "\n  ".join(gained))


def regenerate():
    from driver_abi import Driver

    GOLDEN.mkdir(exist_ok=True)
    software = find_driver("software")
    api = api_of(software)
    ABI_FILE.write_text(_abi_text(api.abi_version, *tables_of(api)))
    print(f"wrote {ABI_FILE}")
    for name in DRIVER_NAMES:
        path = find_driver(name)
        if path is None:
            print(f"{name}: library not found; methods_{name}.txt left as it is")
            continue
        d = Driver(path)
        try:
            (GOLDEN / f"methods_{name}.txt").write_text(_methods_text(d))
            print(f"wrote {GOLDEN / f'methods_{name}.txt'}")
        finally:
            d.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["--regenerate"]:
        regenerate()
    else:
        print(__doc__)
