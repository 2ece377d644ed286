"""Distance map: the program of the GpuPy thesis (Eitzen 2007, appendix A.3,
by Robert R. Lewis), ported to Python 3.

For every pixel p of an nGrid x nGrid grid it computes the distance to the
nearest of nPt random points, d(p) = min_q |p - q|, scales it to [0, 255]
and writes a grey-level image and/or the raw float32 values (thesis 5.2,
figure 5.1).

Options (the thesis's, and -h/--help):
    -e EXPO   distance exponent (default 2: Euclidean; others: Minkowski)
    -g        use gpupy (otherwise NumPy)
    -o FILE   write the image to FILE (PNG)
    -r FILE   write the raw float32 pixel values (255 * scaled distance,
              C order, native byte order) to FILE
    -p N      number of random points (default 8)
    -s SEED   seed of the random points (default 1); runs with the same
              seed use the same points, with gpupy or with NumPy
    -w N      image size in each dimension (default 512)

    PYTHONPATH=. python examples/distance_map.py -g -p 5000 -o gpupy.png
    PYTHONPATH=. python examples/distance_map.py -p 5000 -o numpy.png
"""

import sys
from getopt import GetoptError, getopt

from PIL import Image


# In place of the thesis's random_values module: the "minimal standard"
# multiplicative congruential generator (Park & Miller, with the 48271
# multiplier), so that every run with the same seed, with gpupy or NumPy and
# on any machine, draws the same points.
_MODULUS = 2**31 - 1
_rand_state = 1


def myrandseed(seed):
    """Restarts the generator; any integer is a valid seed."""
    global _rand_state
    _rand_state = seed % _MODULUS or 1  # 0 is the generator's fixed point


def myrandf():
    """The next value, uniform in [0, 1)."""
    global _rand_state
    _rand_state = (_rand_state * 48271) % _MODULUS
    return (_rand_state - 1) / (_MODULUS - 1)


nPt = 8  # default
expo = 2  # default distance exponent (Euclidean)
nGrid = 512  # image size (in each dimension)
useGpupy = False

imgOutput = False
rawOutput = False
img_name = "distmap.png"
raw_name = "distmap.dat"

# -h/--help prints the options above; a wrong one says so, with them.
try:
    (optsvals, args) = getopt(sys.argv[1:], 'e:go:r:p:s:w:h', ['help'])
except GetoptError as err:
    sys.exit(f"distance_map.py: {err}\n{__doc__}")
if any(opt in ('-h', '--help') for opt, _ in optsvals):
    print(__doc__)
    sys.exit(0)
for (opt, val) in optsvals:
    if opt == '-e':
        expo = float(val)
    elif opt == '-g':
        useGpupy = True
    elif opt == '-o':
        img_name = str(val)
        imgOutput = True
    elif opt == '-r':
        raw_name = str(val)
        rawOutput = True
    elif opt == '-p':
        nPt = int(val)
    elif opt == '-s':
        myrandseed(int(val))
    elif opt == '-w':
        nGrid = int(val)

if useGpupy:
    from gpupy import *
    dtype = gpufloat32
else:
    from numpy import *
    dtype = float32

# generate nPt random points within the grid
pt = []
for k in range(nPt):
    x = nGrid * myrandf()
    y = nGrid * myrandf()
    pt.append((x, y))


def dist(p, p0):
    """Returns the distance between two (2D) points: Euclidean for expo 2,
    Minkowski's for other exponents (the thesis left out abs(), which
    odd exponents need)."""
    (x, y), (x0, y0) = p, p0
    return (abs(x - x0)**expo + abs(y - y0)**expo)**(1.0 / expo)


def dist_array(p0):
    """Returns an array whose elements are the distance (in units of
    rows and columns) to a given point (x0, y0)."""
    f = lambda x, y, p0=p0: dist((x, y), p0)
    return fromfunction(f, (nGrid, nGrid), dtype=dtype)


# distMin[i,j] is the distance from pixel (i,j) to the closest 'pt'.
distMin = dist_array(pt[0])
for i in range(1, nPt):
    distMin = minimum(dist_array(pt[i]), distMin)

pxlMin = 0
# Python 3's `from numpy import *` (and gpupy's) binds max to numpy.max
# (gpupy.max, a reduction on the device), where the thesis got Python's.
pxlMax = max(distMin.flat)

# scale and offset distances to lie between 0 and 1
distMinScaled = (distMin - pxlMin) / (pxlMax - pxlMin)

# (gray) pixel values lie between 0 and 255
pxls = 255 * distMinScaled

if imgOutput:
    # The thesis had to hand GpuPy's array over as it was ("bug: GpuPy
    # doesn't correctly handle astype"); gpupy's astype works, so both take
    # the same path.
    imgdata = pxls.astype(float32)

    img = Image.frombuffer("F", (nGrid, nGrid), imgdata,
                           "raw", "F", 0, 1).convert("L")
    img.save(img_name)

if rawOutput:
    with open(raw_name, "wb") as f:
        f.write(pxls.astype(float32))
