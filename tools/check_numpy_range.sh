#!/usr/bin/env bash
# Runs the test suite at both ends of the Python and NumPy range gpupy
# declares (pyproject.toml: requires-python, and numpy in dependencies;
# docs/installing.md): the oldest Python with the oldest NumPy release
# series pip resolves for the declared lower bound, and the newest Python
# with the newest NumPy. Each end gets a fresh virtual environment outside
# the source tree, gpupy built and installed into it by pip (scikit-build-
# core) with NumPy held by a constraint -- `.[test]` at the oldest end,
# `.[test,interop]` at the newest (the interop libraries' last releases for
# Python 3.9 are older than gpupy's integrations support; docs/installing.md)
# -- and the suite run from outside the tree against that installation only.
#
#   tools/check_numpy_range.sh [--keep] [--workdir DIR] [oldest|newest]...
#
#   --keep         keep the work directory (copies, venvs, logs) on success;
#                  it is always kept on failure
#   --workdir DIR  work there instead of a new /tmp/gpupy-numpy-range.XXXXXX
#                  (it must be outside the source tree)
#   oldest|newest  the ends to check (default both)
#   OLDEST_PYTHON=..., NEWEST_PYTHON=...  the interpreters (default the
#                  newest 3.9.x and 3.13.x under /root/.pyenv/versions, as
#                  on the CI machine)
#   PYTEST_ARGS=...  extra arguments for pytest (default none: the whole
#                  suite)
#
# Needs what `pip install .` needs (docs/installing.md), network access to
# PyPI and git (the copy of the tree is its tracked and unignored files).
# Each end runs to its end; the exit status is non-zero if either failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEEP=0
WORK=
ENDS=()
while (($#)); do
  case $1 in
    --keep) KEEP=1 ;;
    --workdir) WORK=$2; shift ;;
    oldest|newest) ENDS+=("$1") ;;
    *) echo "usage: $0 [--keep] [--workdir DIR] [oldest|newest]..." >&2; exit 2 ;;
  esac
  shift
done
((${#ENDS[@]})) || ENDS=(oldest newest)

newest_under() {  # newest_under PATTERN: the highest-versioned interpreter matching it
  local found
  found=$(ls -d $1 2>/dev/null | sort -V | tail -n 1)
  [[ -n $found ]] && echo "$found/bin/python"
}
OLDEST_PYTHON=${OLDEST_PYTHON:-$(newest_under '/root/.pyenv/versions/3.9.*')}
NEWEST_PYTHON=${NEWEST_PYTHON:-$(newest_under '/root/.pyenv/versions/3.13.*')}

# The declared lower bound, "numpy>=2.0", held as the release series "2.0.*":
# pip then resolves that series' newest bug-fix release (2.0.2), the oldest
# NumPy a user of the declared range can be given.
NUMPY_LOWER=$(sed -n 's/^dependencies = .*"numpy>=\([0-9.]*\)".*/\1/p' "$ROOT/pyproject.toml")
[[ -n $NUMPY_LOWER ]] || { echo "check_numpy_range: no numpy>= bound in pyproject.toml's dependencies" >&2; exit 1; }

if [[ -z $WORK ]]; then
  WORK=$(mktemp -d /tmp/gpupy-numpy-range.XXXXXX)
fi
case "$(realpath "$WORK")/" in "$ROOT"/*) echo "check_numpy_range: --workdir must be outside the tree" >&2; exit 2 ;; esac
mkdir -p "$WORK/logs" "$WORK/plugins"
cp "$ROOT/tools/wheel_check/gpupy_installed_only.py" "$WORK/plugins/"

# A copy of the tree (tracked and unignored files): a development build's
# libraries inside gpupy/ must not reach the wheel, and the build directory
# scikit-build-core keeps is the copy's.
SRC=$WORK/src
rm -rf "$SRC" && mkdir -p "$SRC"
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$SRC"

FAILURES=()
START=$SECONDS

check_end() {  # check_end LABEL PYTHON NUMPY-REQUIREMENT EXTRAS
  local label=$1 python=$2 numpy=$3 extras=$4 venv=$WORK/venv-$1 log=$WORK/logs/$1
  local began=$SECONDS
  echo "== $label: $python, $numpy, gpupy[$extras]"
  if [[ -z $python || ! -x $python ]]; then
    echo "   no interpreter for $label (set ${label^^}_PYTHON)"; return 1
  fi
  "$python" -m venv --clear --upgrade-deps "$venv" > "$log-venv.log" 2>&1 || { cat "$log-venv.log"; return 1; }
  echo "$numpy" > "$WORK/constraints-$label.txt"
  echo "   building and installing gpupy (log: $log-install.log)"
  "$venv/bin/pip" install -c "$WORK/constraints-$label.txt" "$SRC[$extras]" > "$log-install.log" 2>&1 \
    || { tail -n 40 "$log-install.log"; return 1; }
  "$venv/bin/python" -c 'import sys, numpy; print("   Python", sys.version.split()[0], "NumPy", numpy.__version__)'
  # From outside the tree, importing gpupy from the venv only (the plugin
  # fails the run otherwise).
  mkdir -p "$WORK/run-$label"
  (cd "$WORK/run-$label" && env PYTHONPATH="$WORK/plugins" GPUPY_CHECK_PREFIX="$venv" PYTHONDONTWRITEBYTECODE=1 \
    "$venv/bin/python" -m pytest -p gpupy_installed_only -p no:cacheprovider -q --tb=short ${PYTEST_ARGS:-} "$SRC/tests") \
    > "$log-tests.log" 2>&1
  local status=$?
  # The failing tests by name, so that a log read elsewhere (CI) says which.
  grep -E '^(FAILED|ERROR) ' "$log-tests.log" | sed 's/^/   /' || true
  tail -n 1 "$log-tests.log" | sed 's/^/   /'
  echo "   $label: $((SECONDS - began)) s"
  return $status
}

for end in "${ENDS[@]}"; do
  case $end in
    oldest) check_end oldest "$OLDEST_PYTHON" "numpy==$NUMPY_LOWER.*" test || FAILURES+=(oldest) ;;
    newest) check_end newest "$NEWEST_PYTHON" "numpy>=$NUMPY_LOWER" test,interop || FAILURES+=(newest) ;;
  esac
done

if ((${#FAILURES[@]})); then
  echo "check_numpy_range: FAILED: ${FAILURES[*]} (logs in $WORK/logs)"
  exit 1
fi
echo "check_numpy_range: OK in $((SECONDS - START)) s"
((KEEP)) || rm -rf "$WORK"
