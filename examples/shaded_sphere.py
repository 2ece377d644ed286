"""Shaded sphere: the NumPy program of the GpuPy thesis (Eitzen 2007,
appendix A.1, by Robert R. Lewis), ported to Python 3.

It is an ordinary NumPy program: the only gpupy-specific line is the import
below, and `--numpy` (or GPUPY_EXAMPLE_NUMPY=1) makes it import NumPy
instead. Both write the same image (thesis figure 3.2).

    PYTHONPATH=. python examples/shaded_sphere.py                # gpupy
    PYTHONPATH=. python examples/shaded_sphere.py --numpy        # NumPy
    PYTHONPATH=. python examples/shaded_sphere.py -o s.png --size 128 128
"""

import argparse
import os

from PIL import Image

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--numpy", action="store_true", help="use NumPy instead of gpupy")
parser.add_argument("-o", "--output", default="shaded_sphere.png", help="PNG file to write")
parser.add_argument("--size", nargs=2, type=int, default=(512, 512), metavar=("W", "H"),
                    help="the thesis's (w, h), default 512 512: the arrays are indexed [x, y] "
                         "and x runs down the image, so the PNG is H pixels wide and W high")
args = parser.parse_args()

if args.numpy or os.environ.get("GPUPY_EXAMPLE_NUMPY", "") not in ("", "0"):
    import numpy as np
else:
    import gpupy as np

# Everything below is plain NumPy.

# parameter settings
(w, h) = tuple(args.size)        # image dimensions
r = 0.4 * min(w, h)              # sphere radius
(vx, vy, vz) = (w / 2, h / 2, w)  # viewer position
(lx, ly, lz) = (-1, 1, 1)        # light direction
bg = (0.0, 0.0, 0.5)             # background color
ka = (0.1, 0.2, 0.3)             # ambient sphere color
kd = (0.2, 0.5, 0.6)             # diffuse sphere color
(cx, cy, cz) = (w / 2, h / 2, 0)  # sphere position

# Start with pixel coordinates.
x = np.fromfunction(lambda x, y: x, (w, h), dtype=np.float32)
y = np.fromfunction(lambda x, y: y, (w, h), dtype=np.float32)
z = 0  # on the image plane

(dx, dy, dz) = (x - vx, y - vy, z - vz)  # viewing direction

# Solve the quadratic equation for each pixel
# (note: no explicit iteration)
a = dx**2 + dy**2 + dz**2
b = 2 * dx * (vx - cx) + 2 * dy * (vy - cy) + 2 * dz * (vz - cz)
c = cx**2 + cy**2 + cz**2 + vx**2 + vy**2 + vz**2 \
    - 2 * (cx * vx + cy * vy + cz * vz) - r**2
disc = b * b - 4 * a * c  # discriminant

# Rays that miss the sphere have disc < 0: their t is NaN, and where() below
# gives them the background colour (NumPy would warn about the sqrt).
with np.errstate(invalid="ignore"):
    t = (-b - np.sqrt(disc)) / (2 * a)  # the ray parameter

# intersection
(ix, iy, iz) = (vx + t * dx, vy + t * dy, vz + t * dz)

# normal to sphere at intersection (guaranteed of unit length)
(nx, ny, nz) = ((ix - cx) / r, (iy - cy) / r, (iz - cz) / r)

# dot product of sphere normal and light normal
# (for diffuse shading)
nDotL = nx * lx + ny * ly + nz * lz

# Where the ray hits the sphere, set to the shaded diffuse
# color, otherwise set to the background color.
channels = [255 *
            np.where(disc > 0,
                     np.where(nDotL > 0, ka_i + nDotL * kd_i, ka_i),
                     bg_i) for (bg_i, ka_i, kd_i) in zip(bg, ka, kd)]

# Convert the array to an image and write it as a PNG file. The arrays
# are indexed [x, y], so each row of the image buffer holds h values.
imgs = [Image.frombuffer("F", (h, w), c, "raw", "F", 0, 1).convert("L")
        for c in channels]
Image.merge("RGB", imgs).save(args.output)
