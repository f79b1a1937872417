#!/usr/bin/env bash
# Builds sdfc and runs every test (the README's test command). Uses ./build.
# The DaCe corpus is found through SDFC_CORPUS (default: ../shared/corpus); tests that need it
# say they are skipped when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSDFC_FUZZ=ON -DSDFC_BUILD_BENCH=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$jobs" --timeout 900
