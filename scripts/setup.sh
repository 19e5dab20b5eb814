#!/usr/bin/env bash
# Installs every Debian package tp-mlir needs to build and test. Idempotent: when everything
# is already installed it says so and does nothing. Needs root (or sudo) only when something
# is missing. Nothing here downloads at build, test or run time; this is the one install step.
set -euo pipefail

PACKAGES=(
  # LLVM/MLIR 22: libMLIR.so, libLLVM.so, mlir-tblgen, FileCheck, lit, not, count, mlir-opt.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # Build.
  cmake ninja-build ccache g++ pkg-config
  # CPU GEMM and multi-process runs.
  libopenblas-dev libdnnl-dev libopenmpi-dev openmpi-bin
  # Automatic planning's integer programmes (COIN-OR CBC).
  coinor-libcbc-dev
  # C++ unit tests.
  googletest libgtest-dev
  # Python side (with /usr/bin/python3).
  python3 python3-numpy python3-torch python3-pip python3-setuptools
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed; nothing to do"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "setup: missing packages (${missing[*]}) and not root; rerun as root" >&2
    exit 2
  fi
fi

echo "setup: installing ${#missing[@]} package(s): ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
