#!/usr/bin/env bash
# The whole GPU check, for the lent GPU machine (device tool):
#
#   scripts/gpu-check.sh [PHASE...]      PHASE: build tests streams graph delayed sanitizer python mpi bench
#                                        (default: all)
#
#   build      configure and build sdfc without the Clang-based parts, with the GPU tests and benchmark
#              (SDFC_GPU_BUILD_TARGETS="sdfc_exe sdfc_e2e_tests bench_gpu": only those)
#   tests      every GPU end-to-end test: each corpus GPU program in every memory mode and with several
#              streams, the seed reproducer (pageable and pinned), the workspace checks (8 shards at once)
#   streams    the caller's-stream tests (tests/gpu), plainly and with a 200 us spin before each launch,
#              and the halo-exchange sample
#   graph      graph mode (--gpu-graph): replay, update, re-capture in every mode and stream setting,
#              plainly and with a 200 us spin before each launch
#   delayed    race exposure: every program with several streams, the seed, and the BLAS library nodes
#              (pure and cuBLAS calls, several streams), with the spin delays
#   sanitizer  sdfc run of every corpus GPU program, plain and under compute-sanitizer memcheck (also
#              with --fuse-maps --gpu-streams 2)
#   python     the Python package's tests (CuPy, PyTorch) and its call-overhead benchmark
#   mpi        the MPI halo-exchange sample with 2 ranks on the GPU (and on the CPU)
#   gt4py      GT4Py through sdfc with CuPy: sdfc.gt4py's tests (streams 0/1/4 on a busy external CuPy
#              stream, POOL with 4 streams) and GT4Py's field-view tests on its GPU backend
#              (run_dace_gpu) with sdfc as DaCe's compiler; needs .gpu-py (scripts/gpu-py-bundle.sh,
#              carried); not in the default list. GT4PY_SUITE_SDFC_OPTIONS (a JSON object, e.g.
#              {"gpu_streams": 4}) runs the suite with those sdfc options
#   dace       DaCe's own compiler against sdfc on the corpus (bench/gpu_vs_dace.py): every case as one GPU
#              SDFG with device arguments, compiled by both (8 at once), checked against each other and timed
#              per call at the large size (largest argument about 2**24 elements) and the corpus's small size
#              (one run, so that each program is compiled once), through fast_call as GT4Py calls and through
#              __call__ (the py columns), with the roofline fractions; then the
#              compile times of the corpus's GPU programs (bench/compile_time.py --target cuda --cold 1, with
#              the nvcc one-kernel baseline); then the same comparison on NPBench-like kernels through DaCe's
#              frontend (bench/npbench_cases.py, made into .bench-sdfgs/npbench unless carried). Needs .gpu-py;
#              not in the default list. About 9 minutes
#   layouts    the kernel-layout GPU tests (GT4Py's Laplacian in every order and pitch, its neighbour reduction
#              with the arguments in every order, the transient following them), the GT4Py corpus programs' GPU
#              tests, bench/experiments/elementwise_1d.cu (points per thread of 1D kernels) and
#              bench/experiments/complex_functions.cu (NumPy's complex functions in kernels against the host),
#              bench/experiments/lap3d_fold.cu (the C-order Laplacian's kernel folded and unfolded, 4 sizes),
#              bench/experiments/wcr_rows.cu (write-conflicted column and total sums: atomics per point, per
#              thread's rows, per warp, per block)
#   bench      the GPU benchmark (alone on the GPU; SDFC_GPU_BENCH_SECTIONS=2,6 runs only those sections)
#
# Each phase runs under its own time limit so that one device call (10 minutes) always returns its
# logs. Logs go to gpu-logs/ and, when $OUT is set, come back as $OUT/gpu-logs.tar.gz plus
# $OUT/summary.txt (the device tool returns at most 8 files). The corpus is taken from $SDFC_CORPUS
# or ./.corpus.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=$PWD/gpu-logs
mkdir -p "$logs"
summary=$logs/summary.txt
export SDFC_CORPUS=${SDFC_CORPUS:-$PWD/.corpus}
export SDFC_CACHE_DIR=$PWD/build-gpu/cache
export PATH=/usr/local/cuda/bin:$PATH
bin=$PWD/build-gpu
jobs=$(nproc)

say() { echo "$*" | tee -a "$summary"; }
finish() {
  if [[ -n "${OUT:-}" ]]; then
    cp "$summary" "$OUT/summary.txt" 2>/dev/null
    tar -czf "$OUT/gpu-logs.tar.gz" -C "$PWD" gpu-logs 2>/dev/null
  fi
}
trap finish EXIT

# gtest results of LOG files: the pass/fail lines and the first failures.
results() {
  grep -hE "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED  \]" "$@" | sort | uniq -c | head -40 | tee -a "$summary"
  grep -hE "Failure|error:" -A4 "$@" | head -40 | tee -a "$summary"
  return 0
}

# Run the e2e tests matching FILTER in SHARDS processes at once (nvcc dominates), ENV applied.
sharded() {
  local name=$1 filter=$2 shards=$3 limit=$4; shift 4
  local i
  for ((i = 0; i < shards; ++i)); do
    env "$@" GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
      timeout "$limit" "$bin/tests/sdfc_e2e_tests" --gtest_filter="$filter" > "$logs/${name}_$i.log" 2>&1 &
  done
  local rc=0
  for ((i = 0; i < shards; ++i)); do wait -n || rc=1; done
  say "$name: rc=$rc"
  results "$logs/${name}"_*.log
}

phase_build() {
  {
    echo "== machine"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
    nvcc --version | tail -2; g++ --version | head -1; cmake --version | head -1
  } > "$logs/machine.txt" 2>&1
  cmake -S . -B build-gpu -G "Unix Makefiles" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSDFC_WITH_CLANG=OFF \
    -DSDFC_FUZZ=OFF -DSDFC_BUILD_BENCH=ON -DSDFC_GPU_BENCH=ON -DSDFC_GPU_TESTS=ON \
    -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc > "$logs/configure.log" 2>&1 ||
    { say "configure FAILED"; tail -30 "$logs/configure.log" | tee -a "$summary"; return 1; }
  # SDFC_GPU_BUILD_TARGETS (e.g. "sdfc_exe sdfc_e2e_tests bench_gpu") builds only those
  local targets=()
  for t in ${SDFC_GPU_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
  timeout 400 cmake --build build-gpu -j "$jobs" "${targets[@]}" > "$logs/build.log" 2>&1 ||
    { say "build FAILED"; grep -E "error" "$logs/build.log" | head -30 | tee -a "$summary"; return 1; }
  say "build ok"
}

phase_layouts() {
  # Kernel layouts chosen by the strides at the call (GT4Py's Laplacian in C, GT4Py, Fortran and
  # padded orders), the GT4Py corpus programs in every mode, and the 1D elementwise experiment.
  sharded layouts 'GpuLayouts.*:Corpus/GpuCorpus.ReproducesDaCeOnTheGpu/*:Corpus/GpuCorpus.*/gt4py*' 8 300
  nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/elementwise_1d.cu -o "$bin/elementwise_1d" > "$logs/ew.log" 2>&1 &&
    timeout 120 "$bin/elementwise_1d" >> "$logs/ew.log" 2>&1
  say "experiment elementwise_1d: rc=$?"; tail -30 "$logs/ew.log" | tee -a "$summary"
  nvcc -O2 -std=c++17 -arch=sm_90 -I runtime/include bench/experiments/complex_functions.cu -o "$bin/complex_functions" \
    > "$logs/complex_functions.log" 2>&1 && timeout 60 "$bin/complex_functions" >> "$logs/complex_functions.log" 2>&1
  say "complex functions in kernels against the host (bench/experiments/complex_functions.cu): rc=$?"
  grep -E "TOO LARGE|differ|FAILED|all within" "$logs/complex_functions.log" | tee -a "$summary"
  nvcc -O3 -std=c++17 -arch=sm_90 -I runtime/include bench/experiments/lap3d_fold.cu -o "$bin/lap3d_fold" \
    > "$logs/lap3d_fold.log" 2>&1 && timeout 120 "$bin/lap3d_fold" 512 512 80 512 512 64 384 384 90 1024 1024 40 \
    >> "$logs/lap3d_fold.log" 2>&1
  say "C-order Laplacian folded and unfolded (bench/experiments/lap3d_fold.cu): rc=$?"
  grep -E "^[0-9]|^D2D|^\|" "$logs/lap3d_fold.log" | tee -a "$summary"
  nvcc -O3 -std=c++17 -arch=sm_90 bench/experiments/wcr_rows.cu -o "$bin/wcr_rows" > "$logs/wcr_rows.log" 2>&1 &&
    timeout 120 "$bin/wcr_rows" >> "$logs/wcr_rows.log" 2>&1
  say "write-conflicted sums over rows (bench/experiments/wcr_rows.cu): rc=$?"; tail -16 "$logs/wcr_rows.log" | tee -a "$summary"
}

phase_tests() {
  sharded gpu_tests '*Gpu*' 8 420 SDFC_GPU_MODES=1
}

# Compiles every corpus GPU program with --gpu-streams 0, 1, 2 and 4 on all cores, as the stream
# tests compile them (one after another): the phase must run alone on a cold cache too, where the
# tests' own compiles did not fit its time limit. The CLI and the library share the build cache
# (the key hashes the generated sources and flags).
warm_stream_programs() {
  local out=$bin/warm
  mkdir -p "$out"
  find "$SDFC_CORPUS" -name 'program_gpu*.sdfg' ! -name '*handbuilt*' | sort | while read -r f; do
    for s in 0 1 2 4; do echo "$f $s"; done
  done | xargs -P "$jobs" -n 2 sh -c 'timeout 240 "$0" compile "$2" --target cuda --gpu-streams "$3" \
      -o "$1/$(basename "$(dirname "$2")")_$(basename "$2" .sdfg)_$3.so" > /dev/null 2>&1 || true' "$bin/sdfc" "$out"
}

phase_streams() {
  local t0=$SECONDS
  warm_stream_programs
  say "stream tests: programs compiled on $jobs cores in $((SECONDS - t0)) s"
  timeout 300 "$bin/tests/sdfc_gpu_stream_tests" > "$logs/stream_tests.log" 2>&1
  local rc=$?
  say "stream tests: rc=$rc"; results "$logs/stream_tests.log"
  if ((rc > 128)); then  # a crash: where (cuda-gdb debugs host code too; there is no gdb there)
    timeout 120 cuda-gdb -batch -ex run -ex bt -ex "info threads" --args "$bin/tests/sdfc_gpu_stream_tests" \
      > "$logs/stream_tests_crash.log" 2>&1
    grep -E "^#|signal|SIG" "$logs/stream_tests_crash.log" | head -30 | tee -a "$summary"
  fi
  SDFC_GPU_DELAY_US=200 timeout 60 "$bin/tests/sdfc_gpu_stream_tests" > "$logs/stream_tests_delayed.log" 2>&1
  say "stream tests, 200 us delays: rc=$?"; results "$logs/stream_tests_delayed.log"
  timeout 60 "$bin/tests/sample_halo_overlap" > "$logs/halo.log" 2>&1
  say "halo sample: rc=$?"; tail -5 "$logs/halo.log" | tee -a "$summary"
}

phase_graph() {
  timeout 360 "$bin/tests/sdfc_gpu_graph_tests" > "$logs/graph_tests.log" 2>&1
  say "graph tests: rc=$?"; results "$logs/graph_tests.log"
  SDFC_GPU_DELAY_US=200 timeout 200 "$bin/tests/sdfc_gpu_graph_tests" > "$logs/graph_tests_delayed.log" 2>&1
  say "graph tests, 200 us delays: rc=$?"; results "$logs/graph_tests_delayed.log"
}

phase_delayed() {
  sharded gpu_delayed '*SeveralStreams*:GpuSeed*:GpuKernels.LinearAlgebra*' 8 200 SDFC_GPU_MODES=1 SDFC_GPU_DELAY_US=200
}

# sdfc run of one corpus GPU program, then the same under memcheck.
run_one() {
  local f=$1 c n
  c=$(dirname "$f")
  n=$(basename "$c")_$(basename "$f" .sdfg)
  "$bin/sdfc" run "$f" --target cuda --inputs "$c/inputs.json" --output "$logs/run_$n.json" > /dev/null 2> "$logs/run_$n.err"
  echo "run $n rc=$?"
  compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/sdfc" run "$f" --target cuda --inputs "$c/inputs.json" \
    > /dev/null 2> "$logs/memcheck_$n.log"
  echo "memcheck $n rc=$?"
  compute-sanitizer --tool memcheck --error-exitcode 9 "$bin/sdfc" run "$f" --target cuda --fuse-maps --gpu-streams 2 \
    --inputs "$c/inputs.json" > /dev/null 2> "$logs/memcheck_fused_$n.log"
  echo "memcheck --fuse-maps --gpu-streams 2 $n rc=$?"
}
export -f run_one
export bin logs

phase_sanitizer() {
  ls "$SDFC_CORPUS"/*/program_gpu*.sdfg | timeout 300 xargs -P 6 -I{} bash -c 'run_one {}' > "$logs/runs.txt" 2>&1
  say "sdfc run + memcheck: rc=$?"; sort "$logs/runs.txt" | tee -a "$summary"
}

phase_bench() {
  timeout 200 "$bin/bench/bench_gpu" > "$logs/bench_gpu.txt" 2>&1
  say "bench: rc=$?"; tee -a "$summary" < "$logs/bench_gpu.txt"
}

phase_python() {
  # The Python package (python/) with CuPy and PyTorch: CPU tests, then GPU tests; and the DaCe layout.
  SDFC="$bin/sdfc" timeout 400 python3 -m pytest -q -rs python/tests > "$logs/python.log" 2>&1
  say "python package: rc=$?"; tail -25 "$logs/python.log" | tee -a "$summary"
  SDFC="$bin/sdfc" timeout 120 python3 bench/python_call_overhead.py > "$logs/python_bench.log" 2>&1
  say "python call overhead: rc=$?"; tail -8 "$logs/python_bench.log" | tee -a "$summary"
}

phase_mpi() {
  # The MPI halo sample, 2 ranks sharing the GPU (and the CPU build for comparison).
  local mpi=(mpirun --oversubscribe --allow-run-as-root -np 2)
  timeout 200 "${mpi[@]}" "$bin/tests/sample_mpi_halo_gpu" > "$logs/mpi_gpu.log" 2>&1
  say "mpi halo (gpu): rc=$?"; tail -5 "$logs/mpi_gpu.log" | tee -a "$summary"
  timeout 100 "${mpi[@]}" "$bin/tests/sample_mpi_halo" > "$logs/mpi_cpu.log" 2>&1
  say "mpi halo (cpu): rc=$?"; tail -5 "$logs/mpi_cpu.log" | tee -a "$summary"
}

phase_gt4py() {
  [[ -f .gpu-py/env.sh ]] || { say "gt4py: no .gpu-py (make it with scripts/gpu-py-bundle.sh and carry it): skipped"; return 0; }
  (source .gpu-py/env.sh && PYTHONPATH=$PWD/python:$PYTHONPATH SDFC="$bin/sdfc" timeout 240 \
    python3 -m pytest -q -rs -p no:cacheprovider python/tests/test_gt4py_backend.py) > "$logs/gt4py_backend.log" 2>&1
  say "sdfc.gt4py tests: rc=$?"; tail -12 "$logs/gt4py_backend.log" | tee -a "$summary"
  SDFC_THIRD_PARTY=$PWD/.gpu-py SDFC="$bin/sdfc" GT4PY_SUITE_PYTHON=python3 GT4PY_SUITE_BACKEND=run_dace_gpu \
    GT4PY_SUITE_JOBS=${GT4PY_SUITE_JOBS:-8} GT4PY_SUITE_MIN_PASSED=0 GT4PY_SUITE_TIMEOUT=${GT4PY_SUITE_TIMEOUT:-330} \
    bash scripts/gt4py-suite.sh --max-worker-restart=200 > "$logs/gt4py_suite.log" 2>&1
  say "GT4Py suite (run_dace_gpu) through sdfc, options ${GT4PY_SUITE_SDFC_OPTIONS:-(defaults)}: rc=$?"; grep -E "^sdfc is DaCe|^gt4py-suite|^FAILED|^ERROR" "$logs/gt4py_suite.log" | head -40 | tee -a "$summary"
}

phase_dace() {
  if [[ ! -f .gpu-py/env.sh ]]; then
    say "dace: no .gpu-py (make it with scripts/gpu-py-bundle.sh and carry it): skipped"
    return 0
  fi
  (source .gpu-py/env.sh && PYTHONPATH=$PWD/python:$PYTHONPATH SDFC="$bin/sdfc" PYTHONUNBUFFERED=1 timeout 420 \
    python3 bench/gpu_vs_dace.py --corpus "$SDFC_CORPUS" --size large,small --jobs 8 --timeout 60 \
    --json "$logs/gpu_vs_dace.json") > "$logs/gpu_vs_dace.log" 2>&1
  say "DaCe against sdfc on the GPU (bench/gpu_vs_dace.py --size large,small): rc=$?"
  sed -n '/^device-to-device\|^program /,$p' "$logs/gpu_vs_dace.log" | tail -90 | tee -a "$summary"
  grep -E "^  ran .*(FAILED|MISMATCH)" "$logs/gpu_vs_dace.log" | head -20 | tee -a "$summary"
  # NPBench-like kernels through DaCe's frontend (made here when not carried in .bench-sdfgs/npbench)
  (source .gpu-py/env.sh && { [[ -d .bench-sdfgs/npbench ]] || python3 bench/npbench_cases.py .bench-sdfgs/npbench; } &&
    PYTHONPATH=$PWD/python:$PYTHONPATH SDFC="$bin/sdfc" PYTHONUNBUFFERED=1 timeout 300 \
    python3 bench/gpu_vs_dace.py --corpus "$PWD/.bench-sdfgs/npbench" --size large,small --jobs 8 --timeout 60 \
    --json "$logs/gpu_vs_dace_npbench.json") > "$logs/gpu_vs_dace_npbench.log" 2>&1
  say "DaCe against sdfc on NPBench-like kernels (bench/npbench_cases.py): rc=$?"
  sed -n '/^device-to-device\|^program /,$p' "$logs/gpu_vs_dace_npbench.log" | tail -40 | tee -a "$summary"
  (source .gpu-py/env.sh && PYTHONPATH=$PWD/python:$PYTHONPATH SDFC="$bin/sdfc" PYTHONUNBUFFERED=1 timeout 200 \
    python3 bench/compile_time.py --target cuda --corpus "$SDFC_CORPUS" --cold 1 --limit "${SDFC_DACE_COMPILE_LIMIT:-0}" \
    --json "$logs/compile_time_cuda.json") > "$logs/compile_time_cuda.log" 2>&1
  say "compile times, CUDA (bench/compile_time.py --target cuda --cold 1): rc=$?"
  tail -16 "$logs/compile_time_cuda.log" | tee -a "$summary"
}

phases=("$@")
[[ ${#phases[@]} -eq 0 ]] && phases=(build tests streams graph delayed sanitizer python mpi bench)
for p in "${phases[@]}"; do
  start=$SECONDS
  say "== $p"
  "phase_$p" || { say "$p failed: stopping"; exit 1; }
  say "== $p took $((SECONDS - start)) s"
done
