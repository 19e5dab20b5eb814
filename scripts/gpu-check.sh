#!/usr/bin/env bash
# The GPU check of the CUDA backend, in two halves (issue 11):
#
#   scripts/gpu-check.sh prepare [BUNDLE]   # here: compile, and pack what the GPU
#                                           # machine needs into BUNDLE
#   scripts/gpu-check.sh run [BUNDLE]       # there: run it all, print the figures
#
# The GPU machine has the NVIDIA driver, CUDA 13 and PyTorch but no MLIR, so
# `prepare` (on the build machine, after the build) compiles every model with
# tp-compile --target cuda and its unsharded CPU reference (--unsharded
# --reference), and copies tp-run, libtprt and the libraries `ldd` names that a
# bare machine may lack (OpenBLAS and its Fortran runtime, OpenMPI's libraries)
# into BUNDLE (default build-gpu-check/, an ignored path; about 20 MiB with the
# CPU GEMM libraries xz-compressed, under the 64 MiB a device run carries). `run` then prints, for the integration models and the GPT-2-small
# block (d 768, 12 heads, seq 128, batch 4) on 1, 2, 4 and 8 ranks sharing the
# GPU: --verify PASS/FAIL against the CPU reference and the best time of 5 runs;
# for the Llama-7B-sized layer (gen_gpt.py --llama: d 4096, 32 heads, MLP 11008, seq 2048, bf16) on
# 1 and 4 ranks: the time and the profile; the attention alone at its shapes
# (bf16, causal, one kernel) against PyTorch's SDPA; device times by kind of op (CUDA
# events: kernels, GEMMs with their TFLOP/s, collectives, copies); and the same
# blocks in PyTorch eager on that GPU with the ceilings (cuBLAS alone on the
# same GEMM shapes, a device-to-device copy's bandwidth; bench/torch_block.py). It stops at the
# first missing piece with a message; it takes a few minutes.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mode=${1:-}
bundle=${2:-$root/build-gpu-check}

gpt_shapes() { # ranks -> the GPT-2-small block
  echo "--layers 1 --batch 4 --seq 128 --embed 768 --heads 12 --tp $1"
}
llama_shapes() {
  echo "--llama --layers 1 --batch 1 --seq 2048 --embed 4096 --heads 32 --mlp 11008 --tp $1"
}

prepare() {
  local build=${TP_BUILD_DIR:-$root/build}
  local compile=$build/bin/tp-compile
  [ -x "$compile" ] || { echo "gpu-check: no $compile; build first" >&2; exit 2; }
  rm -rf "$bundle" && mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/models" "$bundle/src"
  local m=$bundle/src
  cp "$root/examples/mlp.mlir" "$root/examples/gpt-block.mlir" \
     "$root/test/Dialect/TP/propagate/attention.mlir" \
     "$root/test/Dialect/TP/propagate/llama.mlir" "$m/"
  /usr/bin/python3 "$root/bench/gen_gpt.py" --layers 2 --tp 4 --bert > "$m/bert.mlir"
  for n in 1 2 4 8; do
    /usr/bin/python3 "$root/bench/gen_gpt.py" $(gpt_shapes $n) > "$m/gpt2-tp$n.mlir"
    sed 's/f32/bf16/g' "$m/gpt2-tp$n.mlir" > "$m/gpt2-bf16-tp$n.mlir"
  done
  for n in 1 4; do
    /usr/bin/python3 "$root/bench/gen_gpt.py" $(llama_shapes $n) | sed 's/f32/bf16/g' \
      > "$m/llama7b-bf16-tp$n.mlir"
  done
  # The attention alone (test/Integration/Inputs/causal-attention.mlir: scores,
  # causal mask from the indices, softmax, weighted sum; one kernel) in bf16 on
  # one rank: at a small shape (verified; the tensor-core kernel's first run on
  # a GPU) and at the Llama-7B layer's (32 heads of 128, 2048 tokens; timed
  # against PyTorch's SDPA in torch_block.py).
  local causal=$root/test/Integration/Inputs/causal-attention.mlir
  sed 's/f32/bf16/g; s/0xFF800000/0xFF80/' "$causal" |
    sed -e ':a' -e 's/x24x/x32x/;ta' | sed -e ':b' -e 's/x40x/x80x/;tb' > "$m/attention-small-bf16.mlir"
  sed 's/f32/bf16/g; s/0xFF800000/0xFF80/; s/"tp" = 2/"tp" = 1/; s/2x40x4x24x/1x2048x32x128x/g;
       s/2x4x40x40x/1x32x2048x2048x/g; s/2x4x40x/1x32x2048x/g; s/0\.2041241/0.0883883/' \
    "$causal" > "$m/attention-llama7b-bf16.mlir"
  for src in "$m"/*.mlir; do
    local name
    name=$(basename "$src" .mlir)
    "$compile" "$src" --target cuda -o "$bundle/models/$name.so" ||
      { echo "gpu-check: $name does not compile for cuda" >&2; exit 1; }
    # The 7B-sized layer is too big for the CPU reference: timed, not verified.
    case $name in llama7b-*|attention-llama7b-*) continue ;; esac
    "$compile" "$src" --unsharded --reference -o "$bundle/models/$name-ref.so" ||
      { echo "gpu-check: $name's reference does not compile" >&2; exit 1; }
  done
  # Bad input on the GPU: a program for another architecture (sm_100 on an H200).
  "$compile" "$m/mlp.mlir" --target cuda --gpu-arch sm_100 -o "$bundle/models/bad-arch-sm100.bin" ||
    { echo "gpu-check: the sm_100 program does not compile" >&2; exit 1; }
  cp "$build/bin/tp-run" "$bundle/bin/"
  cp -L "$build/lib/libtprt.so" "$bundle/lib/"
  # What a bare machine may lack (OpenBLAS and its Fortran runtime, OpenMPI's
  # libraries, which libtprt links for its mpi backend); the C and C++ runtimes
  # are everywhere.
  ldd "$build/lib/libtprt.so" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*|libdl.so*|libpthread*|librt.so*) ;;
      *) cp -L "$lib" "$bundle/lib/" ;;
    esac
  done
  # The CPU GEMM libraries (oneDNN, OpenBLAS: about 75 MiB, which libtprt
  # links but a CUDA run never calls) travel xz-compressed (about 11 MiB), so
  # that the bundle stays under the 64 MiB a device run carries; `run`
  # unpacks them with Python's lzma.
  for lib in "$bundle"/lib/libdnnl.so* "$bundle"/lib/libopenblas.so*; do
    [ -f "$lib" ] && xz -T0 -6 "$lib"
  done
  cp "$root/bench/torch_block.py" "$bundle/"
  cp "$0" "$bundle/gpu-check.sh"
  echo "gpu-check: bundle in $bundle ($(du -sh "$bundle" | cut -f1)); on the GPU machine:"
  echo "  bash $bundle/gpu-check.sh run $bundle"
}

run() {
  [ -x "$bundle/bin/tp-run" ] || { echo "gpu-check: no bundle at $bundle (prepare first)" >&2; exit 2; }
  for packed in "$bundle"/lib/*.xz; do
    [ -f "$packed" ] || continue
    python3 -c "import lzma, shutil, sys
with lzma.open(sys.argv[1]) as src, open(sys.argv[2], 'wb') as dst:
    shutil.copyfileobj(src, dst)" "$packed" "${packed%.xz}" ||
      { echo "gpu-check: cannot unpack $packed" >&2; exit 2; }
  done
  export LD_LIBRARY_PATH=$bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  local tprun=$bundle/bin/tp-run models=$bundle/models failures=0
  if ! python3 -c "import ctypes; ctypes.CDLL('libcuda.so.1')" 2>/dev/null; then
    echo "gpu-check: no CUDA driver found (libcuda.so.1); run this on the GPU machine" >&2
    exit 2
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  echo "== correctness and time: --backend cuda --verify (every rank on GPU 0)"
  printf "%-22s %-6s %s\n" model ranks result
  for so in "$models"/*.so; do
    local name
    name=$(basename "$so" .so)
    case $name in *-ref|llama7b-*|attention-llama7b-*) continue ;; esac
    local out
    out=$("$tprun" "$so" --backend cuda --random-inputs --verify \
            --reference "$models/$name-ref.so" --repeat 5 2>&1)
    local rc=$?
    local ranks verdict best
    ranks=$(echo "$out" | sed -n "s/^ran '.*' on \([0-9]*\) device.*/\1/p" | head -1)
    verdict=$(echo "$out" | grep -o "PASS\|FAIL" | sort -u | tr '\n' ' ')
    best=$(echo "$out" | grep -i "best" | head -1)
    printf "%-22s %-6s rc=%d %s %s\n" "$name" "${ranks:-?}" "$rc" "${verdict:-}" "$best"
    if [ $rc -ne 0 ]; then
      failures=$((failures + 1))
      echo "$out" | tail -5 | sed 's/^/    /'
    fi
  done
  echo "== bad input: a program compiled for sm_100 (expected: exit 2, the rank, cuModuleLoadData)"
  cp "$models/bad-arch-sm100.bin" "$bundle/bad-arch.so"
  local bad
  bad=$("$tprun" "$bundle/bad-arch.so" --backend cuda --random-inputs --timeout-ms 20000 2>&1)
  local badrc=$?
  echo "$bad" | tail -2 | sed 's/^/    /'
  if [ $badrc -ne 2 ] || ! echo "$bad" | grep -q "cuModuleLoadData"; then
    echo "    UNEXPECTED (rc=$badrc)"
    failures=$((failures + 1))
  fi
  rm -f "$bundle/bad-arch.so"
  echo "== steady state (arguments placed once, warm-up, 20 runs) and device time by kind of op"
  echo "   (CUDA events; 'the run': device time of the last run and the host's overhead beside it)"
  echo "   (one rank: runs replay a CUDA graph; --no-graphs: each op launched; 4 ranks on the"
  echo "   'device' communicator launch each op)"
  for name in gpt2-tp1 gpt2-bf16-tp1 gpt2-tp4; do
    "$tprun" "$models/$name.so" --backend cuda --random-inputs --repeat 20 \
      --profile 2>&1 | sed -n '/^best of/p;/^device time/,$p' | sed "s/^/$name: /"
  done
  "$tprun" "$models/gpt2-tp1.so" --backend cuda --random-inputs --repeat 20 --no-graphs \
    --profile 2>&1 | sed -n '/^best of/p;/^device time/,$p' | sed "s/^/gpt2-tp1 --no-graphs: /"
  echo "== Llama-7B-sized layer, bf16: time and profile"
  for n in 1 4; do
    "$tprun" "$models/llama7b-bf16-tp$n.so" --backend cuda --random-inputs \
      --repeat 3 --profile 2>&1 | sed "s/^/tp$n: /"
  done
  echo "== attention alone, bf16, Llama-7B layer's shapes (1 x 32 heads x 2048 x 128, causal): one kernel"
  "$tprun" "$models/attention-llama7b-bf16.so" --backend cuda --random-inputs \
    --repeat 20 --profile 2>&1 | sed -n '/^best of/p;/^device time/,$p' | sed "s/^/attention: /"
  # nccl-mpi: one GPU a process under mpirun (NCCL refuses two ranks of one
  # communicator on one GPU): needs OpenMPI on the machine and 2 GPUs.
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if command -v mpirun >/dev/null && [ "$gpus" -ge 2 ]; then
    echo "== nccl-mpi: GPT-2-small block on 2 processes, one GPU each"
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -np 2 \
      -x LD_LIBRARY_PATH "$tprun" "$models/gpt2-tp2.so" --backend cuda --random-inputs \
      --verify --reference "$models/gpt2-tp2-ref.so" 2>&1 | tail -3 ||
      failures=$((failures + 1))
  else
    echo "== nccl-mpi skipped: needs mpirun and 2 GPUs (mpirun: $(command -v mpirun || echo none), GPUs: $gpus)"
  fi
  echo "== PyTorch eager on the same GPU (GPT-2-small block, Llama-7B-sized layer),"
  echo "   and the ceilings: cuBLAS alone on the blocks' GEMM shapes, d2d copy bandwidth"
  python3 "$bundle/torch_block.py" 2>&1 || echo "(PyTorch comparison failed)"
  echo "gpu-check: $failures failing model run(s)"
  [ $failures -eq 0 ]
}

case $mode in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: scripts/gpu-check.sh {prepare|run} [BUNDLE]" >&2; exit 2 ;;
esac
