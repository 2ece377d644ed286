"""docs/ecosystem.md's table of what runs where is what gpupy does
(tools/function_table.py makes it from gpupy's namespace)."""

import importlib.util
import re
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("function_table", ROOT / "tools" / "function_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page_rows(text):
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| \*\*(.+?)\*\*: .*? \| (\d+) \| (.*) \|$", line)
        if m:
            rows[m.group(1)] = re.findall(r"`([^`]+)`", m.group(3))
    return rows


def test_the_page_says_what_gpupy_does():
    tool = _tool()
    page = (ROOT / "docs" / "ecosystem.md").read_text()
    if f"(NumPy {np.__version__})" in page:
        assert tool.replaced(page, tool.render()) == page, "run python tools/function_table.py --write"
        return
    # Another NumPy has other functions: what the page says gpupy computes, it still does.
    now = tool.classify()
    for kind in ("device ufunc", "gpupy"):
        listed = set(_page_rows(page)[kind])
        present = {n for names in now.values() for n in names}
        assert listed & present <= set(now[kind]), sorted((listed & present) - set(now[kind]))
