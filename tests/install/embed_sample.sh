#!/usr/bin/env bash
# Installs sdfc from the build tree into a temporary prefix, builds samples/embed against it with
# find_package(sdfc), and runs it on samples/axpy.sdfg. Usage: embed_sample.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/samples/embed" -B "$work/b" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/b" >/dev/null
# The installed runtime headers must be the ones found (not the source tree).
"$work/b/embed" "$src/samples/axpy.sdfg"
"$work/prefix/bin/sdfc" --version
"$work/prefix/bin/sdfc" compile "$src/samples/axpy.sdfg" -o "$work/libaxpy.so" --no-cache
test -s "$work/libaxpy.so"
echo "installed sdfc and the embedding sample work"
