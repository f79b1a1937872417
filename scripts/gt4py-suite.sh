#!/usr/bin/env bash
# GT4Py's field-view tests on DaCe's CPU backend with sdfc as DaCe's compiler (pytest plugin
# sdfc._pytest_dace): the selection GT4Py's own CI runs for DaCe, 398 tests (with DaCe's own
# compiler 380 pass, 7 skip, 11 xfail).
#
#   bash scripts/gt4py-suite.sh [PYTEST ARGS...]
#
# DaCe and GT4Py come from ../shared/third_party (SDFC_THIRD_PARTY overrides); without that folder,
# or when DaCe or GT4Py do not import there, the suite says it is skipped and exits 0. sdfc is
# build/sdfc (SDFC overrides). Every cache and build folder (DaCe's, GT4Py's, sdfc's, pytest's
# temporaries) is a temporary directory, removed afterwards (kept with GT4PY_SUITE_KEEP=1); nothing
# is written into the third-party folder. Prints the counts; exits non-zero when a test fails or
# errors, or fewer than GT4PY_SUITE_MIN_PASSED (default 380) pass.
# GT4PY_SUITE_BACKEND: GT4Py's backend to select (default run_dace_cpu; run_dace_gpu on the GPU
# machine, with the bundle of scripts/gpu-py-bundle.sh as SDFC_THIRD_PARTY); GT4PY_SUITE_PYTHON: the
# interpreter (default /usr/bin/python3). GT4PY_SUITE_COMPILER=dace runs the same selection with
# DaCe's own compiler (the baseline: its counts and wall time; sdfc is then not needed).
# GT4PY_SUITE_SDFC_OPTIONS: sdfc's options for the whole run
# as a JSON object (sdfc.dace.enable's keywords, e.g. {"gpu_streams": 4}; default sdfc's defaults). GT4PY_SUITE_JOBS: pytest-xdist workers (default 2 when pytest-xdist imports, else serial;
# 0 or 1: serial in the test process). Limits, so a hang cannot eat CI's time: GT4PY_SUITE_TEST_TIMEOUT
# seconds per test (default 900, through pytest-timeout where it is installed) and
# GT4PY_SUITE_TIMEOUT seconds for the whole run (default 3600).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${GT4PY_SUITE_PYTHON:-/usr/bin/python3}
backend=${GT4PY_SUITE_BACKEND:-run_dace_cpu}
third_party=${SDFC_THIRD_PARTY:-$root/../shared/third_party}
min_passed=${GT4PY_SUITE_MIN_PASSED:-380}

if [ ! -d "$third_party/gt4py/tests" ] || [ ! -f "$third_party/env.sh" ]; then
  echo "gt4py-suite: SKIPPED: no DaCe/GT4Py sources at $third_party (set SDFC_THIRD_PARTY)"
  exit 0
fi
third_party=$(cd "$third_party" && pwd)
# shellcheck disable=SC1091
source "$third_party/env.sh"

compiler=${GT4PY_SUITE_COMPILER:-sdfc}
case "$compiler" in
  sdfc) plugin=(-p sdfc._pytest_dace) ;;
  dace) plugin=() ;;
  *) echo "gt4py-suite: GT4PY_SUITE_COMPILER must be sdfc or dace, not '$compiler'" >&2; exit 2 ;;
esac
sdfc=${SDFC:-$root/build/sdfc}
if [ "$compiler" = sdfc ] && [ ! -x "$sdfc" ]; then
  echo "gt4py-suite: FAILED: no sdfc executable at $sdfc (build it, or set SDFC)" >&2
  exit 1
fi
if [ "$compiler" = sdfc ]; then sdfc=$(cd "$(dirname "$sdfc")" && pwd)/$(basename "$sdfc"); fi

work=$(mktemp -d "${TMPDIR:-/tmp}/sdfc-gt4py-suite.XXXXXX")
if [ "${GT4PY_SUITE_KEEP:-0}" = 1 ]; then
  echo "gt4py-suite: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work/tmp"
export SDFC=$sdfc
export PYTHONPATH=$root/python:$PYTHONPATH
export PYTHONDONTWRITEBYTECODE=1            # no __pycache__ in the third-party tree
export TMPDIR=$work/tmp                     # pytest's tmp_path, GT4Py's session cache, sdfc's temporaries
export DACE_CONFIG=$work/dace.conf          # not ~/.dace.conf
export DACE_default_build_folder=$work/dacecache
export GT4PY_BUILD_CACHE_DIR=$work/gt4py-cache
export SDFC_CACHE_DIR=$work/sdfc-cache
if [ -n "${GT4PY_SUITE_SDFC_OPTIONS:-}" ]; then
  export SDFC_DACE_OPTIONS=$GT4PY_SUITE_SDFC_OPTIONS
else
  unset SDFC_DACE_OPTIONS                   # sdfc's defaults
fi

if ! problem=$("$python" -c "import dace, gt4py.next" 2>&1); then
  echo "gt4py-suite: SKIPPED: DaCe or GT4Py does not import from $third_party (run bash $third_party/setup.sh):"
  echo "$problem" | tail -n 1
  exit 0
fi

jobs=${GT4PY_SUITE_JOBS:-}
if [ -z "$jobs" ]; then
  if "$python" -c "import xdist" 2>/dev/null; then jobs=2; else jobs=1; fi
fi
options=()
if [ "$jobs" -gt 1 ]; then options=(-n "$jobs"); fi
if "$python" -c "import pytest_timeout" 2>/dev/null; then
  options+=(--timeout "${GT4PY_SUITE_TEST_TIMEOUT:-900}")
fi

junit=$work/junit.xml
through=$sdfc
[ "$compiler" = dace ] && through="DaCe's own compiler"
echo "gt4py-suite: GT4Py's field-view tests ($backend) through $through, ${jobs} job(s), in $work"
start=$(date +%s)
status=0
(cd "$third_party/gt4py" &&
  timeout -k 30 "${GT4PY_SUITE_TIMEOUT:-3600}" \
    "$python" -m pytest -p no:cacheprovider "${plugin[@]}" "${options[@]}" -q -rfE --tb=line \
    --junitxml="$junit" -k "$backend and not noopt" \
    tests/next_tests/integration_tests/feature_tests/ffront_tests \
    tests/next_tests/integration_tests/multi_feature_tests/ffront_tests "$@") || status=$?
elapsed=$(($(date +%s) - start))

if [ ! -f "$junit" ]; then
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "gt4py-suite: FAILED: stopped after ${GT4PY_SUITE_TIMEOUT:-3600}s (GT4PY_SUITE_TIMEOUT)" >&2
    exit 1
  fi
  echo "gt4py-suite: FAILED: pytest exited with status $status and wrote no report" >&2
  exit 1
fi
# passed failed errors skipped xfailed
read -r passed failed errors skipped xfailed < <("$python" - "$junit" <<'EOF'
import sys, xml.etree.ElementTree as ET
counts = dict(passed=0, failed=0, errors=0, skipped=0, xfailed=0)
for case in ET.parse(sys.argv[1]).iter("testcase"):
    kinds = [child.tag for child in case]
    if "failure" in kinds:
        counts["failed"] += 1
    elif "error" in kinds:
        counts["errors"] += 1
    elif "skipped" in kinds:
        skip = case.find("skipped")
        counts["xfailed" if skip.get("type") == "pytest.xfail" else "skipped"] += 1
    else:
        counts["passed"] += 1
print(*counts.values())
EOF
)
echo "gt4py-suite: $passed passed, $failed failed, $errors errors, $skipped skipped, $xfailed xfailed in ${elapsed}s (pytest status $status)"
if [ "$failed" -gt 0 ] || [ "$errors" -gt 0 ]; then
  echo "gt4py-suite: FAILED: $((failed + errors)) test(s) failed through $through" >&2
  exit 1
fi
if [ "$passed" -lt "$min_passed" ]; then
  echo "gt4py-suite: FAILED: $passed passed, fewer than $min_passed" >&2
  exit 1
fi
if [ "$status" -ne 0 ]; then
  echo "gt4py-suite: FAILED: pytest exited with status $status" >&2
  exit 1
fi
echo "gt4py-suite: OK"
