"""python -m gpupy: show which driver and device gpupy uses."""

import gpupy

gpupy.show_config()
