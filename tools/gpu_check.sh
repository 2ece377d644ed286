#!/usr/bin/env bash
# One command for a machine with a GPU, whose time is short: builds gpupy
# in this tree, says which device it found and what the float probe
# measured there, runs the tests that exercise the device and the
# benchmarks that show how gpupy uses it (benchmarks/gpu.py first: what
# gpupy gets out of the device against what the device itself does), each
# under a time limit, and writes everything it printed into one plain-text
# report to commit.
#
#   tools/gpu_check.sh            # on the GPU: all within 8 minutes; the
#                                 # report goes to docs/gpu/<date>-<device>.txt,
#                                 # benchmarks/gpu.py's CSV and plots to
#                                 # docs/gpu/<date>-<device>/
#   tools/gpu_check.sh --quick    # the same, small, on any OpenGL 4.5
#                                 # (llvmpipe in CI: proves the script works
#                                 # before a GPU is there); the report goes
#                                 # to a temporary file unless --out is given
#   --debs DIR     first unpack the Debian packages in DIR into / (a machine
#                  without the EGL/GLEW development files: libglew2.2
#                  libglew-dev libegl1 libegl-dev libgl1 libgl-dev libglx0
#                  libglx-dev libopengl0 libopengl-dev libglvnd0 libgles2)
#   --out FILE     where the report goes
#   --budget S     seconds for everything (default 480; --quick 1800: a
#                  first build on 2 cores takes minutes)
#
# Every section runs whatever the one before it did (a failed build ends
# the run, as nothing else could work); each is cut at its own limit and at
# what is left of the budget, and the report says which were cut. The exit
# status is 0 only when every section ended well. Tests run under
# pytest-timeout and pytest-xdist where they are installed, so a test that
# hangs in C code is ended with its stack printed rather than holding the
# run; passing tests are not listed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

QUICK=0
DEBS=""
OUT=""
BUDGET=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --debs) DEBS="$2"; shift ;;
    --out) OUT="$2"; shift ;;
    --budget) BUDGET="$2"; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "gpu_check.sh: unknown argument $1 (--help lists them)" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$BUDGET" ] || BUDGET=$([ "$QUICK" = 1 ] && echo 1800 || echo 480)
PYTHON=${PYTHON:-python3}
export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# The cost model of this machine is measured afresh, not taken from an
# earlier build's file.
export GPUPY_CACHE_DIR
GPUPY_CACHE_DIR=$(mktemp -d)

LOG=$(mktemp)
START=$(date +%s)
SUMMARY=()
FAILED=0  # sections that did not end well: the exit status

# A GPU's EGL vendor file where glvnd's default folders have none (a
# driver mounted under /usr/local, as containers do).
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && ! ls /usr/share/glvnd/egl_vendor.d/*.json \
     /etc/glvnd/egl_vendor.d/*.json >/dev/null 2>&1; then
  vendor=$(ls /usr/local/*/share/glvnd/egl_vendor.d/*.json /usr/local/share/glvnd/egl_vendor.d/*.json 2>/dev/null | head -n 1)
  [ -n "$vendor" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$vendor"
fi

left() { echo $(( BUDGET - ($(date +%s) - START) )); }

# The device's renderer as a file name (lower case, dashes), from gpupy's
# OpenGL driver.
device_slug() {
  GPUPY_DRIVER=opengl $PYTHON -c "import gpupy; print(gpupy._runtime.config()['device'].get('renderer', 'unknown'))" 2>/dev/null \
    | tr 'A-Z' 'a-z' | sed -E 's/[^a-z0-9]+/-/g; s/^-+|-+$//g' | cut -c1-40
}

# section NAME LIMIT COMMAND: runs COMMAND (a bash string) for at most LIMIT
# seconds and what is left of the budget, its output into the log.
section() {
  local name=$1 limit=$2 cmd=$3 remaining t0 rc
  remaining=$(left)
  [ "$remaining" -lt "$limit" ] && limit=$remaining
  {
    echo
    echo "=== $name (limit ${limit} s)"
    echo "\$ $cmd"
  } | tee -a "$LOG"
  if [ "$limit" -le 5 ]; then
    echo "skipped: the budget is spent" | tee -a "$LOG"
    SUMMARY+=("$(printf '%-28s %s' "$name" "skipped (budget spent)")")
    FAILED=$(( FAILED + 1 ))
    return 1
  fi
  t0=$(date +%s)
  timeout -k 10 "$limit" bash -c "$cmd" 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  local took=$(( $(date +%s) - t0 )) status
  case $rc in
    0) status="ok" ;;
    124|137) status="cut at ${limit} s" ;;
    *) status="exit $rc" ;;
  esac
  [ "$rc" = 0 ] || FAILED=$(( FAILED + 1 ))
  echo "--- $name: $status, ${took} s" | tee -a "$LOG"
  SUMMARY+=("$(printf '%-28s %-16s %5s s' "$name" "$status" "$took")")
  return "$rc"
}

{
  echo "gpupy GPU check ($([ "$QUICK" = 1 ] && echo quick || echo full)), $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "host: $(uname -srm), $(nproc) cores, $($PYTHON -c 'import platform; print("Python", platform.python_version())')"
  echo "numpy: $($PYTHON -c 'import numpy; print(numpy.__version__)' 2>&1)"
} | tee -a "$LOG"

if [ -n "$DEBS" ]; then
  section "unpack packages" 60 "for f in '$DEBS'/*.deb; do dpkg -x \"\$f\" /; done && ldconfig"
fi
section "build" $([ "$QUICK" = 1 ] && echo 1200 || echo 120) "bash tools/dev_build.sh" || {
  echo "the build failed: nothing else can run" | tee -a "$LOG"
  BUILD_FAILED=1
}

if [ -z "${BUILD_FAILED:-}" ]; then
  section "device" 60 "command -v nvidia-smi >/dev/null && nvidia-smi -L; GPUPY_DRIVER=opengl $PYTHON -m gpupy --json"

  # The tests that exercise the device: all but those of the software
  # driver (on a GPU), or the accuracy and conformance files (--quick).
  plugins=""
  $PYTHON -c "import xdist" 2>/dev/null && plugins="$plugins -n $([ "$QUICK" = 1 ] && echo 2 || echo auto)"
  # pytest-benchmark, where installed, turns xdist's presence into an error.
  $PYTHON -c "import pytest_benchmark" 2>/dev/null && plugins="$plugins -p no:benchmark"
  if $PYTHON -c "import pytest_timeout" 2>/dev/null; then
    plugins="$plugins --timeout 120 --timeout-method thread"
    $PYTHON -m pytest --help 2>/dev/null | grep -q -- --session-timeout && \
      plugins="$plugins --session-timeout $(( $([ "$QUICK" = 1 ] && echo 400 || echo 150) - 20 ))"
  fi
  if [ "$QUICK" = 1 ]; then
    tests="tests/test_accuracy.py tests/test_float_behaviour.py tests/test_special_values.py tests/test_seed_workloads.py tests/test_placement_model.py"
  else
    tests="tests"
  fi
  section "tests" $([ "$QUICK" = 1 ] && echo 400 || echo 135) \
    "set -o pipefail; $PYTHON -m pytest $tests -k 'not software' -p no:cacheprovider -rfE -v $plugins 2>&1 | grep -v -E ' PASSED|^tests/[^ ]*::[^ ]* \$'"

  # benchmarks/gpu.py: its sections' own limits add up to under its
  # section's; its CSV and plots go beside the report (--quick: a folder
  # removed at the end).
  if [ "$QUICK" = 1 ]; then
    BENCH_DIR=$(mktemp -d)
    section "GPU benchmark" 150 "$PYTHON benchmarks/gpu.py --quick --limit-seconds 35 --csv '$BENCH_DIR' --plot '$BENCH_DIR'"
  else
    BENCH_DIR="docs/gpu/$(date -u +%Y-%m-%d)-$(device_slug)"
    section "GPU benchmark" 200 "$PYTHON benchmarks/gpu.py --limit-seconds 45 --csv '$BENCH_DIR' --plot '$BENCH_DIR'"
  fi

  # The driver's own upload, readback, compile and dispatch times, under
  # the core (drivers/opengl/bench): what a transfer costs on this device.
  section "driver transfers" 60 \
    "cmake --build build/dev --target gpupy_opengl_bench >/dev/null && build/dev/drivers/opengl/gpupy_opengl_bench gpupy/_drivers/libgpupy_driver_opengl.so"

  if [ "$QUICK" = 1 ]; then
    section "seed workloads" 120 "$PYTHON benchmarks/seeds.py --quick --reps 1 --only life,gauss5x5,saxpy,motion,matmul"
    section "seeds, device forced" 120 \
      "$PYTHON benchmarks/seeds.py --quick --reps 1 --only life,gauss5x5,matmul --placement device --native"
    section "distance map" 120 "$PYTHON benchmarks/run.py --suite distmap --grids 128 --points 10,100 --reps 1 --drivers opengl"
    section "results stay" 120 "$PYTHON benchmarks/resident.py --n 512 --steps 5"
    section "programs" 120 "$PYTHON benchmarks/programs.py --reps 1 --only life,floyd_warshall"
  else
    # (sized, with the tests' and the GPU benchmark's, to fit 8 minutes
    # after a build of about half a minute -- an H200's machine used 4 of
    # them in all on 2026-11-28; the GPU benchmark measures forced
    # placement, the distance map and Life against hand-written shaders
    # too, so these are the ones cut short first)
    section "seed workloads" 55 "$PYTHON benchmarks/seeds.py --reps 3"
    section "seeds, device forced" 30 \
      "$PYTHON benchmarks/seeds.py --reps 3 --only life,gauss5x5,motion,saxpy,matmul --placement device --native"
    section "distance map" 25 "$PYTHON benchmarks/run.py --suite distmap --grids 512,2048 --points 100,1000 --reps 3 --drivers opengl"
    section "results stay" 15 "$PYTHON benchmarks/resident.py --n 1024 --steps 20"
    section "programs" 30 "$PYTHON benchmarks/programs.py --reps 3"
  fi
fi

{
  echo
  echo "=== summary ($(( $(date +%s) - START )) s of a ${BUDGET} s budget)"
  printf '%s\n' "${SUMMARY[@]}"
} | tee -a "$LOG"

if [ -z "$OUT" ]; then
  if [ "$QUICK" = 1 ]; then
    OUT=$(mktemp --suffix=.txt)
  else
    device=$(device_slug)
    OUT="docs/gpu/$(date -u +%Y-%m-%d)-${device:-unknown}.txt"
  fi
fi
mkdir -p "$(dirname "$OUT")"
cp "$LOG" "$OUT"
rm -f "$LOG"
rm -rf "$GPUPY_CACHE_DIR"
[ "$QUICK" = 1 ] && [ -n "${BENCH_DIR:-}" ] && rm -rf "$BENCH_DIR"
echo "report: $OUT"
[ "$FAILED" = 0 ]
