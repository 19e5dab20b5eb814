#!/usr/bin/env bash
# The main job, for now: installs what is missing, builds tp-opt, and runs it on the
# example MLP in examples/ (global form, one weight annotated): tp-opt parses it, verifies
# every sharding against its mesh and tensor types, and prints the verified module.
# Later stages grow this into propagate + partition + compile + run on simulated devices.
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

echo "== tp-opt $(basename "$model") (parsed, verified, printed) =="
"$build/bin/tp-opt" "$model"
