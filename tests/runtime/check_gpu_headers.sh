#!/usr/bin/env bash
# Compiles tests/runtime/gpu_runtime_check.cu (which includes sdfc/program.h and sdfc/gpu.h) with
# nvcc (CUDA, sm_90) and with hipcc (HIP, gfx90a). No GPU is needed. A compiler that is absent is
# skipped (and said so); any compile failure makes the script exit non-zero.
#   NVCC   path of nvcc  (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   HIPCC  path of hipcc (default: hipcc on PATH, else /usr/bin/hipcc)
#   RUN_NVCC_PROGRAM=1  also link the test with nvcc and run it (reports "no GPU device found"
#                       on a machine without a GPU; exercises the runtime on one with a GPU)
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/tests/runtime/gpu_runtime_check.cu"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
status=0
compiled=0

run() {
  echo "+ $*"
  "$@" || { echo "FAILED: $*"; status=1; return 1; }
}

nvcc="${NVCC:-$(command -v nvcc || true)}"
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc
if [ -n "$nvcc" ] && [ -x "$nvcc" ]; then
  run "$nvcc" -arch=sm_90 -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Wextra -I "$root/runtime/include" \
    -c "$src" -o "$work/check_cuda.o" && compiled=$((compiled + 1))
  if [ "${RUN_NVCC_PROGRAM:-0}" = 1 ]; then
    run "$nvcc" -arch=sm_90 -std=c++17 -DSDFC_GPU_CHECK_MAIN -I "$root/runtime/include" "$src" -o "$work/check_cuda" &&
      run "$work/check_cuda"
  fi
else
  echo "SKIP: nvcc not found (set NVCC)"
fi

hipcc="${HIPCC:-$(command -v hipcc || true)}"
[ -z "$hipcc" ] && [ -x /usr/bin/hipcc ] && hipcc=/usr/bin/hipcc
if [ -n "$hipcc" ] && [ -x "$hipcc" ]; then
  # HIP compiles the same source as HIP (-x hip); copied to a .hip.cpp name for clarity.
  cp "$src" "$work/gpu_runtime_check.hip.cpp"
  run "$hipcc" --offload-arch=gfx90a -std=c++17 -x hip -Wall -Wextra -Werror -I "$root/runtime/include" \
    -c "$work/gpu_runtime_check.hip.cpp" -o "$work/check_hip.o" && compiled=$((compiled + 1))
else
  echo "SKIP: hipcc not found (set HIPCC; Debian: apt-get install hipcc)"
fi

if [ $status != 0 ]; then
  echo "FAIL: GPU runtime headers"
elif [ $compiled = 0 ]; then
  echo "SKIP: no GPU compiler found, nothing compiled"
else
  echo "OK: GPU runtime headers compile ($compiled compiler(s))"
fi
exit $status
