"""Hypothesis profiles for the differential fuzzer: "ci" (the default: a
small, derandomised budget, so a failure in CI reproduces) and "long" (the
campaign of docs/testing.md). Select with --hypothesis-profile=NAME."""

import os
import sys
from pathlib import Path

from hypothesis import settings

sys.path.insert(0, str(Path(__file__).resolve().parent))

settings.register_profile("ci", max_examples=25, derandomize=True, print_blob=True)
# GPUPY_FUZZ_EXAMPLES sets the long profile's budget per test (campaign.py).
settings.register_profile("long", max_examples=int(os.environ.get("GPUPY_FUZZ_EXAMPLES", "20000")),
                          derandomize=False, print_blob=True, database=None)
settings.load_profile("ci")
