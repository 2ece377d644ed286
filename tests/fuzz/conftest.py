"""Hypothesis profiles for the differential fuzzer: "ci" (the default: a
small, derandomised budget, so a failure in CI reproduces) and "long" (the
campaign of docs/testing.md). Select with --hypothesis-profile=NAME."""

import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

settings.register_profile("ci", max_examples=25, derandomize=True, print_blob=True)
settings.register_profile("long", max_examples=20000, derandomize=False, print_blob=True)
settings.load_profile("ci")
