#!/usr/bin/env bash
# The main job, for now: installs what is missing, builds tp-opt, and compiles the example
# MLP in examples/ (global form, one weight annotated) for its 4-device mesh: --tp-spmd
# propagates the shardings (Megatron's plan), partitions the program into what each device
# runs, and --tp-report prints the plan (shardings, collectives and their bytes, memory).
# The next stage runs the result on simulated devices.
#
#   scripts/run-example.sh [examples/<model>.mlir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TP_BUILD_DIR:-$root/build}
model=${1:-$root/examples/mlp.mlir}

"$root/scripts/setup.sh"
mkdir -p "$build"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 1; }
ninja -C "$build" tp-opt >/dev/null

echo "== per-device program: tp-opt $(basename "$model") --tp-spmd =="
"$build/bin/tp-opt" "$model" --tp-spmd --tp-report=output=-
