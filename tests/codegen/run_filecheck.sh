#!/usr/bin/env bash
# Runs one generated-code regression test (LLVM FileCheck style).
#
#   run_filecheck.sh <sdfc-binary> <FileCheck> <input.sdfg> <check-file> [extra sdfc args...]
#
# Compiles <input.sdfg> with `sdfc compile <input> --emit-source <tmpdir> [args]` (no -o: no C++
# compiler runs) and checks the generated <tmpdir>/<program>.cpp against <check-file> with FileCheck.
#
# Directives in the leading comment lines of the check file (before the first CHECK line):
#   // ARGS: <args...>    extra arguments for sdfc compile (split on whitespace)
#   // EXPECT-ERROR       sdfc compile must fail with exit code 1; FileCheck then reads its stderr
#   // STDOUT             FileCheck reads sdfc's standard output (the IR that --print-after=PASS
#                         prints), not the generated source
#   // OPT                run `sdfc opt <input> [args]` instead of sdfc compile (one pass on an IR
#                         file, --passes=PASS --print-after=PASS in ARGS); FileCheck reads its
#                         standard output (or, with EXPECT-ERROR, its stderr)
#
# Exit status: FileCheck's status, or 1 (with a message) when sdfc does not behave as expected,
# 2 on usage errors.
set -u

if [ "$#" -lt 4 ]; then
  echo "usage: $0 <sdfc-binary> <FileCheck> <input.sdfg> <check-file> [extra sdfc args...]" >&2
  exit 2
fi
sdfc=$1
filecheck=$2
input=$3
check=$4
shift 4
extra=("$@")

for f in "$input" "$check"; do
  if [ ! -f "$f" ]; then
    echo "run_filecheck.sh: no such file: $f" >&2
    exit 2
  fi
done
if [ ! -x "$sdfc" ]; then
  echo "run_filecheck.sh: sdfc binary not found or not executable: $sdfc" >&2
  exit 2
fi

# Leading directives.
expect_error=0
check_stdout=0
opt=0
while IFS= read -r line || [ -n "$line" ]; do
  case "$line" in
    "// ARGS:"*)
      read -r -a words <<<"${line#// ARGS:}"
      extra+=("${words[@]}")
      ;;
    "// EXPECT-ERROR"*) expect_error=1 ;;
    "// STDOUT"*) check_stdout=1 ;;
    "// OPT"*) opt=1 ;;
    *CHECK*) break ;;
    "//"* | "") ;;
    *) break ;;
  esac
done <"$check"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/sdfc-filecheck.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

out="$tmp/out"
mkdir "$out"
if [ "$opt" = 1 ]; then
  check_stdout=1
  echo "+ $sdfc opt $input ${extra[*]}" >&2
  "$sdfc" opt "$input" "${extra[@]}" >"$tmp/stdout" 2>"$tmp/stderr"
else
  echo "+ $sdfc compile $input --emit-source $out ${extra[*]}" >&2
  "$sdfc" compile "$input" --emit-source "$out" "${extra[@]}" >"$tmp/stdout" 2>"$tmp/stderr"
fi
rc=$?

if [ "$expect_error" = 1 ]; then
  if [ "$rc" -ne 1 ]; then
    echo "run_filecheck.sh: expected sdfc to fail with exit code 1, but it exited with $rc" >&2
    echo "--- sdfc stderr:" >&2
    cat "$tmp/stderr" >&2
    exit 1
  fi
  echo "--- sdfc stderr (checked):" >&2
  cat "$tmp/stderr" >&2
  "$filecheck" "$check" --input-file "$tmp/stderr"
  exit $?
fi

if [ "$rc" -ne 0 ]; then
  echo "run_filecheck.sh: sdfc failed with exit code $rc" >&2
  echo "--- sdfc stderr:" >&2
  cat "$tmp/stderr" >&2
  exit 1
fi

if [ "$check_stdout" = 1 ]; then
  "$filecheck" "$check" --input-file "$tmp/stdout"
  exit $?
fi

shopt -s nullglob
# One source, or a split CUDA program's two (codegen/Frame.h): its device source (.cu) first, then
# its host source (.cpp), checked as one text.
sources=("$out"/*.cu "$out"/*.cpp "$out"/*.hip)
if [ "${#sources[@]}" -lt 1 ] || [ "${#sources[@]}" -gt 2 ]; then
  echo "run_filecheck.sh: expected one source (or a .cu and a .cpp) in the --emit-source folder, found ${#sources[@]}:" >&2
  ls -l "$out" >&2
  exit 1
fi
cat "${sources[@]}" > "$tmp/sources"
"$filecheck" "$check" --input-file "$tmp/sources"
exit $?
