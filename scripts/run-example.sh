#!/usr/bin/env bash
# The main job: installs what is missing, builds the tools, and takes the example GPT-2 block
# in examples/ (global form: attention and MLP, two weights of each annotated) through the
# whole stack for its 4-device mesh:
#   1. the plan: --tp-spmd propagates the shardings (Megatron's plan: 2 all-reduces) and
#      partitions the program; --tp-report prints shardings, collectives, bytes, memory;
#   2. the run: tp-run compiles it (tp-compile: CPU code + runtime calls), runs it on 4
#      simulated devices (threads) with random inputs, and --verify runs the unsharded model
#      on one device and compares: PASS or FAIL (exit code 1).
#
#   scripts/run-example.sh [examples/<model>.mlir]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TP_BUILD_DIR:-$root/build}
model=${1:-$root/examples/gpt-block.mlir}

"$root/scripts/setup.sh"
mkdir -p "$build"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 1; }
ninja -C "$build" tp-opt tp-compile tp-run >/dev/null

echo "== plan: tp-opt $(basename "$model") --tp-spmd --tp-report =="
"$build/bin/tp-opt" "$model" --tp-spmd --tp-report=output=- -o /dev/null
echo
echo "== run: tp-run $(basename "$model") --random-inputs --verify --profile =="
"$build/bin/tp-run" "$model" --random-inputs --seed 0 --verify --profile
