#!/usr/bin/env bash
# Writes the IR files that the one-pass FileCheck tests (tests/passes/opt_<pass>.check) start from:
# each test program after the passes before the one under test, with the options it is checked
# under. The files are committed, so that a pass's test keeps its input when an earlier pass
# changes; run this again (and review the checks) when the IR file's format changes.
#
#   tests/passes/ir/make_inputs.sh [SDFC]      (default build/sdfc)
set -euo pipefail
cd "$(dirname "$0")"
sdfc=${1:-../../../build/sdfc}
passes=$("$sdfc" opt --list | awk 'NF && $1 != "decides:" {print $1}')

# name  input (relative to tests/passes)  pass under test  options
while read -r name input pass opts; do
  [ -z "$name" ] && continue
  before=()
  for p in $passes; do
    [ "$p" = "$pass" ] && break
    before+=("$p")
  done
  if [ "${#before[@]}" -eq 0 ]; then
    echo "$name: $pass is the first pass; its test reads the DaCe file" >&2
    continue
  fi
  list=$(IFS=,; echo "${before[*]}")
  # shellcheck disable=SC2086
  "$sdfc" opt "../$input" --passes="$list" $opts -o "$name.sdfg"
  echo "$name.sdfg: $input after ${before[-1]} ($opts)"
done <<'LIST'
fold_views                fold_views.sdfg                          fold-views
normalize                 normalize_whole_memlet.sdfg              normalize
fuse_maps                 fuse_maps.sdfg                           fuse-maps            --fuse-maps
transient_lifetimes       transient_lifetimes_loop_sized_gpu.sdfg  transient-lifetimes  --target cuda --gpu-streams 2
stream_assignment         stream_assignment_forkjoin.sdfg          stream-assignment    --target cuda --gpu-streams 2
legalize                  legalize_accepts.sdfg                    legalize
translate_python          ../codegen/cpu/dace_spmv_uint32.sdfg     translate-python
lower_wcr                 lower_wcr_gpu_thread_private.sdfg        lower-wcr            --target cuda
outline_kernels           outline_kernels_unit_stride.sdfg         outline-kernels      --target cuda --declared-transient-layouts
synchronization           synchronization_chain.sdfg               synchronization      --target cuda --gpu-streams 4
pool_legality             ../codegen/cuda/transients_pool.sdfg     pool-legality        --target cuda --transients pool --gpu-streams 2
workspace_layout          stream_assignment_forkjoin.sdfg          workspace-layout     --target cuda --gpu-streams 2
place_allocations         ../codegen/cuda/transients_pool.sdfg     place-allocations    --target cuda --transients pool
external_sync             stream_assignment_forkjoin.sdfg          external-sync        --target cuda --gpu-streams 2
gpu_graph                 gpu_graph_segments.sdfg                  gpu-graph            --target cuda --gpu-streams 2 --gpu-graph
host_environment          host_environment.sdfg                    host-environment
LIST
