# Shared by scripts/gt4py-suite.sh and scripts/dace-suite.sh (sourced, not run): a third-party test
# suite run with sdfc as DaCe's compiler (pytest plugin sdfc._pytest_dace) or with DaCe's own, every
# cache and build folder in a temporary directory, the counts read from pytest's JUnit report.
#
# The caller sets `name` (the prefix of every message), `root` (sdfc's checkout) and `python`, then
# calls, in order: suite_third_party DIR NEEDED_PATH, suite_compiler, suite_workdir, suite_imports
# MODULES, suite_pytest_options, and after pytest suite_counts and suite_verdict.

# The third-party folder with env.sh and NEEDED_PATH (relative to it), sourced; exits 0 (skipped)
# without it. Sets `third_party`.
suite_third_party() {
  third_party=$1
  if [ ! -e "$third_party/$2" ] || [ ! -f "$third_party/env.sh" ]; then
    echo "$name: SKIPPED: no DaCe/GT4Py sources at $third_party (set SDFC_THIRD_PARTY)"
    exit 0
  fi
  third_party=$(cd "$third_party" && pwd)
  # shellcheck disable=SC1091
  source "$third_party/env.sh"
}

# The compiler from $1 (sdfc or dace): sets `plugin` (pytest's arguments), `sdfc` (absolute) and
# `through` (for messages); exits 2 on another value, 1 when sdfc is asked for and not built.
suite_compiler() {
  compiler=$1
  case "$compiler" in
    sdfc) plugin=(-p sdfc._pytest_dace) ;;
    dace) plugin=() ;;
    *) echo "$name: the compiler must be sdfc or dace, not '$compiler'" >&2; exit 2 ;;
  esac
  sdfc=${SDFC:-$root/build/sdfc}
  if [ "$compiler" = sdfc ] && [ ! -x "$sdfc" ]; then
    echo "$name: FAILED: no sdfc executable at $sdfc (build it, or set SDFC)" >&2
    exit 1
  fi
  if [ "$compiler" = sdfc ]; then sdfc=$(cd "$(dirname "$sdfc")" && pwd)/$(basename "$sdfc"); fi
  through=$sdfc
  [ "$compiler" = dace ] && through="DaCe's own compiler"
  return 0
}

# A temporary directory for every cache and build folder (kept when $1 is 1); sets `work` and the
# environment (sdfc's options from $2, a JSON object, or sdfc's defaults when empty).
suite_workdir() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/sdfc-$name.XXXXXX")
  if [ "$1" = 1 ]; then
    echo "$name: keeping $work"
  else
    # shellcheck disable=SC2064
    trap "rm -rf '$work'" EXIT
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
  if [ -n "$2" ]; then
    export SDFC_DACE_OPTIONS=$2
  else
    unset SDFC_DACE_OPTIONS                   # sdfc's defaults
  fi
}

# Exits 0 (skipped) when `import $1` fails.
suite_imports() {
  local problem
  if ! problem=$("$python" -c "import $1" 2>&1); then
    echo "$name: SKIPPED: DaCe or GT4Py does not import from $third_party (run bash $third_party/setup.sh):"
    echo "$problem" | tail -n 1
    exit 0
  fi
}

# pytest-xdist workers from $1 (empty: 2 where pytest-xdist imports, else 1) and the per-test limit
# $2 where pytest-timeout imports; sets `jobs` and `options`.
suite_pytest_options() {
  jobs=$1
  if [ -z "$jobs" ]; then
    if "$python" -c "import xdist" 2>/dev/null; then jobs=2; else jobs=1; fi
  fi
  options=()
  if [ "$jobs" -gt 1 ]; then options=(-n "$jobs"); fi
  if "$python" -c "import pytest_timeout" 2>/dev/null; then
    options+=(--timeout "$2")
  fi
}

# The counts of JUnit report $1 (pytest's status $2, its time limit $3): sets passed, failed,
# errors, skipped, xfailed; exits 1 when pytest wrote no report.
suite_counts() {
  if [ ! -f "$1" ]; then
    if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
      echo "$name: FAILED: stopped after $3s" >&2
      exit 1
    fi
    echo "$name: FAILED: pytest exited with status $2 and wrote no report" >&2
    exit 1
  fi
  read -r passed failed errors skipped xfailed < <("$python" - "$1" <<'PY'
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
PY
)
}

# Each failed or errored test of JUnit report $1 with the first 40 lines of its message (pytest's
# --tb=line keeps one line, which hides sdfc's diagnostic under "sdfc could not compile ...").
suite_failure_details() {
  "$python" - "$1" <<'PY'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).iter("testcase"):
    for child in case:
        if child.tag in ("failure", "error"):
            text = ((child.get("message") or "") + "\n" + (child.text or "")).strip().splitlines()
            print(f"--- {case.get('classname')}::{case.get('name')} ({child.tag})")
            print("\n".join(text[:40]))
PY
}

# Fails (exit 1) when a test failed or errored (printing each one's message from JUnit report $3),
# fewer than $1 passed, or pytest's status $2 is not 0.
suite_verdict() {
  if [ "$failed" -gt 0 ] || [ "$errors" -gt 0 ]; then
    suite_failure_details "$3" >&2
    echo "$name: FAILED: $((failed + errors)) test(s) failed through $through" >&2
    exit 1
  fi
  if [ "$passed" -lt "$1" ]; then
    echo "$name: FAILED: $passed passed, fewer than $1" >&2
    exit 1
  fi
  if [ "$2" -ne 0 ]; then
    echo "$name: FAILED: pytest exited with status $2" >&2
    exit 1
  fi
  echo "$name: OK"
}
