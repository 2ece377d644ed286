#!/usr/bin/env bash
# Builds the core and the drivers in build/dev and places them inside the
# source package, so `PYTHONPATH=. python ...` runs the working tree without
# `pip install` (for development; users install with pip).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/dev -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" > build-dev-configure.log 2>&1 \
  || { cat build-dev-configure.log; exit 1; }
rm -f build-dev-configure.log
cmake --build build/dev -j"$(nproc)"
# `install` writes a new file and renames it into place: a process that has
# the old library mapped keeps it (cp would rewrite it under that process).
mkdir -p gpupy/_drivers
install -m 755 build/dev/_core*.so gpupy/
install -m 755 build/dev/drivers/software/libgpupy_driver_software.so gpupy/_drivers/
if [ -f build/dev/drivers/opengl/libgpupy_driver_opengl.so ]; then
  install -m 755 build/dev/drivers/opengl/libgpupy_driver_opengl.so gpupy/_drivers/
fi
