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
name=gt4py-suite
python=${GT4PY_SUITE_PYTHON:-/usr/bin/python3}
backend=${GT4PY_SUITE_BACKEND:-run_dace_cpu}
min_passed=${GT4PY_SUITE_MIN_PASSED:-380}
# shellcheck source=scripts/lib/third-party-suite.sh
source "$root/scripts/lib/third-party-suite.sh"

suite_third_party "${SDFC_THIRD_PARTY:-$root/../shared/third_party}" gt4py/tests
suite_compiler "${GT4PY_SUITE_COMPILER:-sdfc}"
suite_workdir "${GT4PY_SUITE_KEEP:-0}" "${GT4PY_SUITE_SDFC_OPTIONS:-}"
suite_imports "dace, gt4py.next"
suite_pytest_options "${GT4PY_SUITE_JOBS:-}" "${GT4PY_SUITE_TEST_TIMEOUT:-900}"

junit=$work/junit.xml
echo "$name: GT4Py's field-view tests ($backend) through $through, ${jobs} job(s), in $work"
start=$(date +%s)
status=0
(cd "$third_party/gt4py" &&
  timeout -k 30 "${GT4PY_SUITE_TIMEOUT:-3600}" \
    "$python" -m pytest -p no:cacheprovider "${plugin[@]}" "${options[@]}" -q -rfE --tb=line \
    --junitxml="$junit" -k "$backend and not noopt" \
    tests/next_tests/integration_tests/feature_tests/ffront_tests \
    tests/next_tests/integration_tests/multi_feature_tests/ffront_tests "$@") || status=$?
elapsed=$(($(date +%s) - start))

suite_counts "$junit" "$status" "${GT4PY_SUITE_TIMEOUT:-3600} (GT4PY_SUITE_TIMEOUT)"
echo "$name: $passed passed, $failed failed, $errors errors, $skipped skipped, $xfailed xfailed in ${elapsed}s (pytest status $status)"
suite_verdict "$min_passed" "$status" "$junit"
