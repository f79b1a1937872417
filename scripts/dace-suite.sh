#!/usr/bin/env bash
# DaCe's own frontend tests (tests/numpy, tests/python_frontend of DaCe 2.0.0a6) on the CPU with sdfc
# as DaCe's compiler (pytest plugin sdfc._pytest_dace; DaCe's frontend and loader untouched).
#
#   bash scripts/dace-suite.sh [--all] [PYTEST ARGS...]
#
# Without --all (CI): the files listed in `selection` below, less the known refusals listed in
# `known`; every other test of them must pass (and at least DACE_SUITE_MIN_PASSED, default 390).
# They hold the forms that once gave wrong results or crashed (SymPy's rationals in
# copies_and_views_test, the CSR product with unsigned indices in indirections_test) and a spread of
# the frontend (ufuncs, views, slices, reductions, loops, callbacks, library nodes): about 400 tests,
# 2 minutes on 2 cores. With --all: both suites whole (1,326 tests, about 8 minutes on 2 cores); the
# counts and, for every failure, the first error line of sdfc's message are printed and the script
# exits 0 (the known refusals are listed in docs/status.md); it fails only when pytest wrote no
# report.
# Only the CPU markers run: gpu, mpi, MKL, LAPACK, long and the other hardware and library markers
# of tests not available here are deselected.
#
# DaCe comes from ../shared/third_party (SDFC_THIRD_PARTY overrides); without it the script says it
# is skipped and exits 0. sdfc is build/sdfc (SDFC overrides). DACE_SUITE_COMPILER=dace runs the same
# tests with DaCe's own compiler (the baseline). DACE_SUITE_JOBS: pytest-xdist workers (default 2);
# DACE_SUITE_TEST_TIMEOUT seconds per test (default 900), DACE_SUITE_TIMEOUT for the run (default
# 3600); DACE_SUITE_KEEP=1 keeps the temporary folder (DaCe's and sdfc's caches, the JUnit report).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
name=dace-suite
python=${DACE_SUITE_PYTHON:-/usr/bin/python3}
# shellcheck source=scripts/lib/third-party-suite.sh
source "$root/scripts/lib/third-party-suite.sh"

# Files of DaCe's tests that pass through sdfc (CI's selection), less the tests in `known` below.
selection=(
  tests/numpy/copies_and_views_test.py
  tests/python_frontend/indirections_test.py
  tests/numpy/ufunc_test.py
  tests/numpy/reductions_test.py
  tests/numpy/transpose_test.py
  tests/numpy/slice_test.py
  tests/python_frontend/loops_test.py
  tests/python_frontend/callback_autodetect_test.py
  tests/python_frontend/augassign_wcr_test.py
  tests/numpy/matrix_multiplication_test.py
  tests/numpy/einsum_test.py
  tests/numpy/reshape_test.py
  tests/python_frontend/structures/structure_python_test.py
  tests/python_frontend/lambda_test.py
  tests/numpy/linalg_test.py
)
# Tests of those files that sdfc refuses with an error naming the construct (docs/status.md lists
# why), or that fail with DaCe's own compiler too; deselected in CI's selection.
known=(
  # callbacks returning Python objects (composite dtypes "opaque", "string")
  tests/python_frontend/callback_autodetect_test.py::test_string_callback
  tests/python_frontend/callback_autodetect_test.py::test_unknown_pyobject
  tests/python_frontend/callback_autodetect_test.py::test_pyobject_return
  tests/python_frontend/callback_autodetect_test.py::test_pyobject_return_tuple
  tests/python_frontend/callback_autodetect_test.py::test_custom_generator
  tests/python_frontend/callback_autodetect_test.py::test_custom_generator_with_break
  # views that reinterpret data (another dtype)
  tests/numpy/reshape_test.py::test_reinterpret_smaller tests/numpy/reshape_test.py::test_reinterpret_larger
  # need the opt_einsum package, which is not installed (they fail with DaCe's compiler too)
  tests/numpy/einsum_test.py::test_opteinsum tests/numpy/einsum_test.py::test_opteinsum_sym
)
markers="not gpu and not mpi and not mkl and not lapack and not long and not torch and not onnx and not tensorflow \
and not autodiff and not sve and not fpga and not rtl and not hptt and not scalapack and not papi and not cublas \
and not verilator and not datainstrument and not mlir"

all=0
if [ "${1:-}" = --all ]; then
  all=1
  shift
fi
suite_third_party "${SDFC_THIRD_PARTY:-$root/../shared/third_party}" dace/tests/numpy
suite_compiler "${DACE_SUITE_COMPILER:-sdfc}"
suite_workdir "${DACE_SUITE_KEEP:-0}" ""
suite_imports dace
suite_pytest_options "${DACE_SUITE_JOBS:-}" "${DACE_SUITE_TEST_TIMEOUT:-900}"

if [ "$all" = 1 ]; then
  tests=(tests/numpy tests/python_frontend)
else
  tests=("${selection[@]}")
  for t in "${known[@]}"; do tests+=(--deselect "$t"); done
fi
junit=$work/junit.xml
what="CI's selection (${#selection[@]} files less ${#known[@]} known refusals)"
[ "$all" = 1 ] && what="tests/numpy and tests/python_frontend"
echo "$name: DaCe's $what through $through, ${jobs} job(s), in $work"
start=$(date +%s)
status=0
(cd "$third_party/dace" &&
  timeout -k 30 "${DACE_SUITE_TIMEOUT:-3600}" \
    "$python" -m pytest -p no:cacheprovider "${plugin[@]}" "${options[@]}" -q -rfE --tb=line \
    --junitxml="$junit" -m "$markers" "${tests[@]}" "$@") || status=$?
elapsed=$(($(date +%s) - start))

suite_counts "$junit" "$status" "${DACE_SUITE_TIMEOUT:-3600} (DACE_SUITE_TIMEOUT)"
echo "$name: $passed passed, $failed failed, $errors errors, $skipped skipped, $xfailed xfailed in ${elapsed}s (pytest status $status)"
if [ "$all" = 1 ]; then
  # Every failure with the first line sdfc's (or DaCe's) message gives, for docs/status.md.
  "$python" - "$junit" <<'PY'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).iter("testcase"):
    for child in case:
        if child.tag in ("failure", "error"):
            text = ((child.get("message") or "") + "\n" + (child.text or "")).strip().splitlines()
            # sdfc's own diagnostic (FILE: /pointer: error: ...) where there is one
            errors = [line.strip() for line in text if ": error: " in line]
            first = errors[0] if errors else (text[0] if text else "")
            print(f"{case.get('classname')}::{case.get('name')}: {first[:400]}")
PY
  exit 0
fi
suite_verdict "${DACE_SUITE_MIN_PASSED:-390}" "$status" "$junit"
