#!/usr/bin/env bash
# Checks that every C++/CUDA source of the repository is formatted as .clang-format says
# (CONVENTIONS: CI checks formatting). Usage: scripts/check-format.sh [CLANG_FORMAT]
# Fix with: clang-format-14 -i $(git ls-files '*.cpp' '*.h' '*.cu')
set -euo pipefail
cd "$(dirname "$0")/.."
cf=${1:-clang-format-14}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu')
else
  mapfile -t files < <(find analysis bench codegen compiler ir passes runtime samples tests -name '*.cpp' -o -name '*.h' -o -name '*.cu')
fi
if "$cf" --dry-run -Werror "${files[@]}" >/dev/null 2>&1; then
  echo "${#files[@]} files formatted as .clang-format says"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  "$cf" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "not formatted (${#bad[@]} file(s)); run: $cf -i ${bad[*]}"
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
