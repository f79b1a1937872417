#!/usr/bin/env bash
# Makes .gpu-py/ (git-ignored): GT4Py and DaCe from ../shared/third_party and the pure-Python
# packages they need that the GPU machine lacks (copied from this machine's Debian packages), with
# an env.sh like the third-party folder's. Carry it to the GPU machine (device tool: carry
# [".gpu-py"]) for scripts/gpu-check.sh gt4py. About 25 MB.
#
#   bash scripts/gpu-py-bundle.sh
set -euo pipefail
cd "$(dirname "$0")/.."
third_party=${SDFC_THIRD_PARTY:-$PWD/../shared/third_party}
bundle=$PWD/.gpu-py
dist=/usr/lib/python3/dist-packages
# What GT4Py and DaCe import that the GPU machine (Ubuntu 24.04, Python 3.12, numpy 2, CuPy,
# PyTorch) does not have; pure Python (cytoolz is not: GT4Py falls back to toolz). networkx: the
# machine's 3.6 leaves the start node out of immediate_dominators, which DaCe 2.0.0a6's control-flow
# analysis indexes (KeyError: SDFGState (lambda_entry) in GT4Py's own transformations).
packages=(astunparse ply dill ordered_set deepdiff lark mako frozendict boltons cachetools cached_property faker unidecode
  dateutil networkx)

rm -rf "$bundle"
mkdir -p "$bundle/gt4py" "$bundle/dace" "$bundle/site"
cp -r "$third_party/gt4py/src" "$third_party/gt4py/tests" "$third_party/gt4py/pyproject.toml" "$bundle/gt4py/"
rm -rf "$bundle/gt4py/tests/cartesian_tests" "$bundle/gt4py/tests/storage_tests" "$bundle/gt4py/tests/eve_tests"
cp -r "$third_party/dace/dace" "$bundle/dace/"
cp -r "$third_party/pydeps" "$bundle/"
# The GPU machine has its own (newer) ml_dtypes and typing_extensions, which its JAX needs.
rm -rf "$bundle/pydeps/ml_dtypes" "$bundle/pydeps/typing_extensions.py"
for p in "${packages[@]}"; do
  found=("$dist/$p" "$dist/$p".py)
  copied=0
  for f in "${found[@]}"; do
    if [ -e "$f" ]; then cp -r "$f" "$bundle/site/"; copied=1; fi
  done
  [ "$copied" = 1 ] || { echo "gpu-py-bundle: $p not found in $dist (apt-get install python3-${p//_/-})" >&2; exit 1; }
done
# Debian's deepdiff (GT4Py's eve imports it) predates numpy 2, which the GPU machine has: its two
# aliases that numpy 2 removed become the types they stood for.
sed -i 's/np\.float_$/np.float64/; s/np\.complex_$/np.complex128/' "$bundle/site/deepdiff/helper.py"
find "$bundle" -name __pycache__ -type d -prune -exec rm -rf {} +
cat > "$bundle/env.sh" <<'ENV'
# source this file: GT4Py, DaCe and the packages of the bundle on PYTHONPATH (scripts/gpu-py-bundle.sh).
_tp="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONPATH="$_tp/gt4py/src:$_tp/dace:$_tp/pydeps:$_tp/site${PYTHONPATH:+:$PYTHONPATH}"
export GT4PY_BUILD_JOBS_MODE=${GT4PY_BUILD_JOBS_MODE:-serial}
unset _tp
ENV
du -sh "$bundle"
