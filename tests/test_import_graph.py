"""The Python package's import graph (docs/architecture.md, "The Python
package"): no cycles, and sections import only the base layer.

Every `import` of a gpupy module counts, at module level or inside a
function: a function-local import of another section is a cycle waiting to
happen, and the sections reach each other through the registry instead.
"""

import ast
from pathlib import Path

import pytest

import gpupy

PACKAGE = Path(gpupy.__file__).resolve().parent
if not (PACKAGE / "_registry.py").exists():  # an installed package without sources is not checked here
    PACKAGE = Path(__file__).resolve().parents[1] / "gpupy"

# Modules every other may import; they import only each other (and _core,
# the compiled module, and _version).
BASE = {"_core", "_environment", "_measurement", "_axes", "_primitives", "_version", "_registry", "_convert", "_fallback", "_placement", "_calibration", "_deferral", "_array_api", "_import_hooks"}
# Where the sections are put together.
ASSEMBLY = {"__init__", "__main__"}


def gpupy_imports(source, module):
    """The gpupy modules a module's source imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:  # from . import x / from .x import y
                if node.module:
                    found.add(node.module.split(".")[0])
                else:
                    found.update(alias.name for alias in node.names)
            elif node.level == 0 and node.module and node.module.split(".")[0] == "gpupy":
                parts = node.module.split(".")
                if len(parts) > 1:
                    found.add(parts[1])
                else:
                    found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "gpupy" and len(parts) > 1:
                    found.add(parts[1])
    found.discard(module)
    return found


def package_graph(folder=PACKAGE):
    return {path.stem: gpupy_imports(path.read_text(), path.stem) for path in sorted(folder.glob("*.py"))}


def find_cycle(graph):
    """A cycle of the graph as a list of modules (first repeated last), or None."""
    state = {}

    def visit(node, path):
        state[node] = "active"
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == "active":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def layer_violations(graph):
    found = []
    for module, imports in sorted(graph.items()):
        if module in ASSEMBLY:
            continue
        for imported in sorted(imports - BASE):
            kind = "base module" if module in BASE else "section"
            found.append(f"{module} ({kind}) imports {imported}")
    return found


def test_the_package_has_no_import_cycle():
    graph = package_graph()
    assert len(graph) >= 15
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_sections_import_only_the_base_layer():
    assert layer_violations(package_graph()) == []


def test_the_checks_find_what_they_look_for(tmp_path):
    (tmp_path / "_registry.py").write_text("from . import _core\n")
    (tmp_path / "_shape.py").write_text("from ._registry import implements\n\ndef f():\n    from ._creation import asarray\n")
    (tmp_path / "_creation.py").write_text("import gpupy._shape\n")
    graph = package_graph(tmp_path)
    assert graph["_shape"] == {"_registry", "_creation"}
    assert find_cycle(graph) in (["_creation", "_shape", "_creation"], ["_shape", "_creation", "_shape"])
    assert layer_violations(graph) == ["_creation (section) imports _shape", "_shape (section) imports _creation"]


@pytest.mark.parametrize("source,expected", [
    ("from . import _a, _b", {"_a", "_b"}),
    ("from ._a import x", {"_a"}),
    ("from gpupy import _a", {"_a"}),
    ("from gpupy._a import x", {"_a"}),
    ("import gpupy._a", {"_a"}),
    ("import numpy\nfrom .. import x", set()),
])
def test_imports_are_read_in_every_form(source, expected):
    assert gpupy_imports(source, "_self") == expected


def test_importing_from_a_source_tree_says_what_to_do(tmp_path):
    """`import gpupy` run inside a checkout finds the uncompiled gpupy/
    first: it says so and what to do, instead of a circular-import error."""
    import shutil
    import subprocess
    import sys

    tree = tmp_path / "checkout"
    (tree / "gpupy").mkdir(parents=True)
    for path in PACKAGE.glob("*.py"):
        shutil.copy(path, tree / "gpupy" / path.name)
    (tree / "pyproject.toml").write_text("[project]\nname = 'gpupy'\n")
    proc = subprocess.run([sys.executable, "-c", "import gpupy"], cwd=tree, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode != 0
    assert "source tree" in proc.stderr and "tools/dev_build.sh" in proc.stderr, proc.stderr
    assert "circular import" not in proc.stderr
