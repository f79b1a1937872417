#!/usr/bin/env bash
# Installs sdfc's build and test dependencies from Debian's package registry.
# Idempotent: does nothing (and prints nothing) when everything is already there.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config zlib1g-dev
  libfmt-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  llvm-14-tools clang-14 clang-format-14 libclang-rt-14-dev
  llvm-14-dev libclang-cpp14-dev libclang-14-dev libclang-common-14-dev
  graphviz
  python3 python3-numpy python3-pytest hipcc
  libblas-dev
  libopenmpi-dev openmpi-bin
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
