"""The Python package's import graph (docs/architecture.md, "The Python
package"): its modules in layers -- base, primitives, sections, assembly --
and, within each, in an order; a module imports only modules before it.
So the graph has no cycle, and an upward import (a base module importing a
section, a section importing one after it) fails here.

Every `import` of a gpupy module counts, at module level or inside a
function: a function-local import of a later module is a cycle waiting to
happen.
"""

import ast
from pathlib import Path

import pytest

import gpupy

PACKAGE = Path(gpupy.__file__).resolve().parent
if not (PACKAGE / "_registry.py").exists():  # an installed package without sources is not checked here
    PACKAGE = Path(__file__).resolve().parents[1] / "gpupy"

# The layers, lowest first, each module in an order it may import from:
# every module of the package is in one, and imports only those listed
# before it (_core is the compiled module).
LAYERS = (
    ("base", ("_core", "_version", "_environment", "_registry", "_axes", "_array_api", "_import_hooks",
              "_deferral", "_convert", "_fallback", "_placement", "_measurement", "_calibration")),
    ("primitives", ("_primitives",)),
    ("sections", ("_reductions", "_linalg", "_creation", "_shape", "_inplace", "_indexing_reads", "_sorting",
                  "_indexing_writes", "_ufuncs", "_logic", "_binning", "_methods", "_pandas", "_dask", "_submodules",
                  "_runtime")),
    ("assembly", ("_namespace", "_gpuarray", "__init__", "__main__")),
)
ORDER = [module for _, modules in LAYERS for module in modules]
LAYER_OF = {module: layer for layer, modules in LAYERS for module in modules}


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


def layer_violations(graph, order=ORDER, layer_of=LAYER_OF):
    """Every import of a module not listed before the importer (and every
    module not listed at all), as sentences."""
    found = []
    place = {module: n for n, module in enumerate(order)}
    for module, imports in sorted(graph.items()):
        if module not in place:
            found.append(f"{module} is in no layer")
            continue
        for imported in sorted(imports):
            if imported not in place:
                found.append(f"{module} imports {imported}, which is in no layer")
            elif place[imported] >= place[module]:
                found.append(f"{module} ({layer_of[module]}) imports {imported} ({layer_of[imported]}), "
                             "which is not below it")
    return found


def test_the_package_has_no_import_cycle():
    graph = package_graph()
    assert len(graph) >= 15
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_every_module_imports_only_modules_below_it():
    assert layer_violations(package_graph()) == []


def test_the_layers_name_every_module_once():
    assert len(ORDER) == len(set(ORDER))
    assert set(package_graph()) | {"_core"} == set(ORDER)


def test_the_checks_find_what_they_look_for(tmp_path):
    (tmp_path / "_registry.py").write_text("from . import _core\n")
    (tmp_path / "_shape.py").write_text("from ._registry import implements\n\ndef f():\n    from ._creation import asarray\n")
    (tmp_path / "_creation.py").write_text("import gpupy._shape\n")
    (tmp_path / "_axes.py").write_text("from . import _shape\n")
    (tmp_path / "_stray.py").write_text("")
    graph = package_graph(tmp_path)
    assert graph["_shape"] == {"_registry", "_creation"}
    assert find_cycle(graph) in (["_creation", "_shape", "_creation"], ["_shape", "_creation", "_shape"])
    order = ["_core", "_registry", "_axes", "_creation", "_shape"]
    layer_of = {"_core": "base", "_registry": "base", "_axes": "base", "_creation": "sections", "_shape": "sections"}
    assert layer_violations(graph, order, layer_of) == [
        "_axes (base) imports _shape (sections), which is not below it",
        "_creation (sections) imports _shape (sections), which is not below it",
        "_stray is in no layer",
    ]


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
