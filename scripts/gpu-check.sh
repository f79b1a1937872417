#!/usr/bin/env bash
# The whole GPU check in one go, for the lent GPU machine (device tool): build sdfc without the
# Clang-based parts, run the GPU test matrix (every corpus GPU program in every memory mode, the
# seed reproducer, pageable and pinned), a compute-sanitizer pass, and sdfc run on each program.
# Logs go to $OUT (default ./gpu-logs). The corpus is taken from $SDFC_CORPUS or ./.corpus.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-gpu-logs}
mkdir -p "$out"
export SDFC_CORPUS=${SDFC_CORPUS:-$PWD/.corpus}
export SDFC_CACHE_DIR=$PWD/build-gpu/cache
export PATH=/usr/local/cuda/bin:$PATH
{
  echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1; nvcc --version | tail -2
  g++ --version | head -1; cmake --version | head -1
} > "$out/machine.txt" 2>&1
cmake -S . -B build-gpu -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSDFC_WITH_CLANG=OFF -DSDFC_FUZZ=OFF -DSDFC_BUILD_BENCH=ON -DSDFC_GPU_BENCH=ON -DSDFC_GPU_TESTS=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
  > "$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
cmake --build build-gpu -j "$(nproc)" > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
echo "build ok"
SDFC_GPU_MODES=1 ./build-gpu/tests/sdfc_e2e_tests --gtest_filter='*Gpu*' > "$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/gpu_tests.log" | head -20
grep -E "Failure" -A4 "$out/gpu_tests.log" | head -40
# The caller's stream: ordering in every stream mode, stream changes between calls, bad streams.
./build-gpu/tests/sdfc_gpu_stream_tests > "$out/gpu_stream_tests.log" 2>&1
echo "stream tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) |NOTE" "$out/gpu_stream_tests.log" | head -20
SDFC_GPU_DELAY_US=200 ./build-gpu/tests/sdfc_gpu_stream_tests > "$out/gpu_stream_tests_delayed.log" 2>&1
echo "delayed stream tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/gpu_stream_tests_delayed.log" | head -20
# Race exposure: every stream mode again with a spin kernel of 200 us before each launch, so that a
# missing event shows as a wrong result.
SDFC_GPU_MODES=1 SDFC_GPU_DELAY_US=200 ./build-gpu/tests/sdfc_e2e_tests --gtest_filter='*SeveralStreams*:GpuSeed*' \
  > "$out/gpu_tests_delayed.log" 2>&1
echo "delayed stream tests rc=$?"; grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$out/gpu_tests_delayed.log" | head -20
# compute-sanitizer (memcheck) over sdfc run of every corpus GPU program
: > "$out/sanitizer.log"
for f in "$SDFC_CORPUS"/*/program_gpu*.sdfg; do
  c=$(dirname "$f")
  n=$(basename "$c")_$(basename "$f" .sdfg)
  ./build-gpu/sdfc run "$f" --target cuda --inputs "$c/inputs.json" --output "$out/run_$n.json" > /dev/null 2> "$out/run_$n.err"
  echo "run $n rc=$?" >> "$out/runs.txt"
  compute-sanitizer --tool memcheck --error-exitcode 9 ./build-gpu/sdfc run "$f" --target cuda --inputs "$c/inputs.json" \
    > /dev/null 2>> "$out/sanitizer.log"
  echo "memcheck $n rc=$?" >> "$out/sanitizer_summary.txt"
done
cat "$out/runs.txt" "$out/sanitizer_summary.txt"
# GPU benchmarks
./build-gpu/bench/bench_gpu > "$out/bench_gpu.txt" 2>&1
echo "bench rc=$?"; cat "$out/bench_gpu.txt"
