#!/usr/bin/env bash
# Runs a command with parts of the file system hidden from it, for
# tools/check_wheel.sh:
#
#   run_isolated.sh [--hide-dir DIR]... [--block-import DIR]... [--without-gl all|vendor]
#                   -- COMMAND [ARG]...
#
# --hide-dir DIR      DIR appears empty (and read-only).
# --block-import DIR  DIR, a Python package, is replaced by one whose
#                     __init__.py raises ImportError naming DIR. The wheel check
#                     does this to the source tree's gpupy/, so that anything in
#                     the run -- the tests, their subprocesses (with PYTHONPATH
#                     pointing at the tree, say), the examples -- that imports
#                     gpupy from the source tree instead of the installed
#                     package fails loudly.
# --without-gl all    as on a machine where none of the OpenGL stack is
#                     installed: the runtime libraries of libegl1, libopengl0,
#                     libgl1, libglx0, libglvnd0 (libGLdispatch), libglew2.2 and
#                     Mesa's libegl-mesa0, libglx-mesa0, libgbm1, libglapi-mesa
#                     and libgl1-mesa-dri (the dri/ directory) are gone, so the
#                     OpenGL driver fails to load.
# --without-gl vendor only Mesa's EGL/GLX vendor libraries and DRI drivers are
#                     gone: libEGL, libOpenGL and libGLEW still load, but EGL has
#                     no implementation behind it, so the OpenGL driver loads
#                     and then fails to initialise (a machine with the glvnd
#                     dispatchers but no GPU driver).
#
# How it works: COMMAND runs in a private mount namespace (`unshare --mount`,
# which needs root or an unprivileged user namespace); nothing outside it
# changes and its mounts vanish when it exits. A hidden directory gets an
# empty tmpfs mounted over it. To hide libraries, each library directory
# that holds one (found through `ldconfig -p`, LD_LIBRARY_PATH and the usual
# multiarch directories) is bind-mounted elsewhere, and a directory of
# symbolic links to everything in it except the hidden files is bind-mounted
# over it. Every other library, libc and the dynamic loader included, is
# still found at its usual path, while the hidden ones are simply absent:
# dlopen fails with the same "cannot open shared object file" that a
# machine without those packages gives, and EGL finds no vendor library.
set -euo pipefail

die() { echo "run_isolated: $*" >&2; exit 2; }

# Library names hidden by each --without-gl mode (matched against file
# names; "dri" is Mesa's directory of drivers).
GL_ALL_RE='^(lib(EGL|OpenGL|GL|GLX|GLdispatch|GLEW|GLESv1_CM|GLESv2|gbm|glapi)(_[A-Za-z0-9]+)?\.so(\..*)?|dri)$'
GL_VENDOR_RE='^(lib(EGL_mesa|GLX_mesa|GLX_indirect|gbm|glapi)\.so(\..*)?|dri)$'

if [[ "${1:-}" != --in-namespace ]]; then
  command -v unshare > /dev/null || die "unshare (util-linux) is required"
  mnt=$(mktemp -d "${TMPDIR:-/tmp}/gpupy-isolated.XXXXXX")
  rc=0
  if [[ $(id -u) == 0 ]]; then
    unshare --mount --propagation private -- bash "$0" --in-namespace "$mnt" "$@" || rc=$?
  else
    unshare --user --map-root-user --mount --propagation private -- bash "$0" --in-namespace "$mnt" "$@" || rc=$?
  fi
  rmdir "$mnt" 2> /dev/null || true
  exit "$rc"
fi

# --- inside the namespace ---------------------------------------------------
shift
mnt=$1
shift
hide_dirs=()
block_dirs=()
gl_mode=none
while (($#)); do
  case $1 in
    --hide-dir) hide_dirs+=("$(realpath "$2")"); shift 2 ;;
    --block-import) block_dirs+=("$(realpath "$2")"); shift 2 ;;
    --without-gl) gl_mode=$2; shift 2 ;;
    --) shift; break ;;
    *) die "unknown option $1" ;;
  esac
done
(($#)) || die "no command given"
case $gl_mode in
  none) ;;
  all) hide_re=$GL_ALL_RE ;;
  vendor) hide_re=$GL_VENDOR_RE ;;
  *) die "--without-gl takes all or vendor, not '$gl_mode'" ;;
esac

mount -t tmpfs -o mode=0755 gpupy-isolated "$mnt"
n=0

for dir in "${hide_dirs[@]}"; do
  [[ -d $dir ]] || die "no directory $dir"
  n=$((n + 1))
  mkdir "$mnt/empty$n"
  mount --bind "$mnt/empty$n" "$dir"
  mount -o remount,bind,ro "$dir"
done

for dir in "${block_dirs[@]}"; do
  [[ -d $dir ]] || die "no directory $dir"
  n=$((n + 1))
  mkdir "$mnt/blocked$n"
  printf 'raise ImportError(%s)\n' \
    "\"${dir##*/} was imported from $dir, which run_isolated.sh blocks: use the installed package\"" \
    > "$mnt/blocked$n/__init__.py"
  mount --bind "$mnt/blocked$n" "$dir"
  mount -o remount,bind,ro "$dir"
done

if [[ $gl_mode != none ]]; then
  candidates=()
  declare -A listed=()
  while read -r path; do
    listed[${path%/*}]=1
  done < <(ldconfig -p | sed -n 's/^.* => //p')
  candidates+=("${!listed[@]}")
  IFS=: read -r -a ld_dirs <<< "${LD_LIBRARY_PATH:-}"
  candidates+=("${ld_dirs[@]}" /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib)
  declare -A seen=()
  shopt -s nullglob dotglob
  hidden_total=0
  for cand in "${candidates[@]}"; do
    [[ -n $cand && -d $cand ]] || continue
    dir=$(realpath "$cand")
    [[ -z ${seen[$dir]:-} ]] || continue
    seen[$dir]=1
    keep=()
    hidden=0
    for entry in "$dir"/*; do
      if [[ ${entry##*/} =~ $hide_re ]]; then hidden=$((hidden + 1)); else keep+=("${entry##*/}"); fi
    done
    ((hidden)) || continue
    n=$((n + 1))
    mkdir "$mnt/orig$n" "$mnt/farm$n"
    mount --bind "$dir" "$mnt/orig$n"
    links=("${keep[@]/#/$mnt/orig$n/}")
    ((${#links[@]} == 0)) || ln -s -t "$mnt/farm$n" -- "${links[@]}"
    # From here on, programs (mount included) find their libraries through
    # the links.
    mount --bind "$mnt/farm$n" "$dir"
    hidden_total=$((hidden_total + hidden))
  done
  ((hidden_total)) || die "--without-gl $gl_mode: no GL library found to hide; is the OpenGL stack installed?"
fi

exec "$@"
