#!/usr/bin/env python3
"""Compile time against depth, tp-compile against JAX, side by side in one run.

The model is bench/gen_gpt.py's N-layer GPT stack (GPT-2 blocks: layernorm, Q/K/V
projections, scaled softmax attention with an additive [S, S] mask, output projection,
residual, layernorm, tanh-GELU MLP, residual; activations [B*S, E]), split Megatron-style
over --tp devices. tp-mlir: `tp-compile` of gen_gpt.py's model (the annotations propagate
to Megatron's plan), one process per depth, wall time. JAX: the same stack in jax.numpy
(bench/jax_gpt.py: jit with Megatron's NamedShardings on --tp forced host devices),
`lower(...).compile()` timed in a fresh process per depth (XLA CPU's whole compile, SPMD
partitioner included). Both see the layers unrolled (no scan), as a traced PyTorch model
arrives.

JAX comes from PyPI in a virtual environment of its own (never the build's or tests'):
    python3 -m venv /work/venv-jax && /work/venv-jax/bin/pip install jax
usage: /usr/bin/python3 bench/bench_jax.py [--jax-python /work/venv-jax/bin/python]
           [--layers 1,2,4,8,12,24,48,96] [--embed 768] [--heads 12] [--batch 4]
           [--seq 128] [--tp 4] [--repeat 1]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

JAX_GPT = os.path.join(HERE, "jax_gpt.py")


def wall(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jax-python", default="/work/venv-jax/bin/python")
    ap.add_argument("--layers", default="1,2,4,8,12,24,48,96")
    ap.add_argument("--embed", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=1, help="best of this many runs each")
    args = ap.parse_args()
    if not os.path.exists(args.jax_python):
        sys.exit("no JAX interpreter at %s (see this script's docstring)" % args.jax_python)
    build = os.environ.get("TP_MLIR_BUILD_DIR", os.path.join(HERE, "..", "build"))
    tp_compile = os.path.join(build, "bin", "tp-compile")
    jax_version = subprocess.run([args.jax_python, "-c", "import jax; print(jax.__version__)"],
                                 check=True, capture_output=True, text=True).stdout.strip()
    print("GPT stack: embed %d, %d heads, batch %d x seq %d, %d devices; JAX %s (XLA CPU); "
          "best of %d, seconds" % (args.embed, args.heads, args.batch, args.seq, args.tp,
                                   jax_version, args.repeat))
    print("%6s | %10s | %10s %10s %10s | %8s" % (
        "layers", "tp-compile", "JAX lower", "compile", "total", "ratio"))
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.layers.split(",")]:
            model = os.path.join(tmp, "gpt%d.mlir" % n)
            with open(model, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"), "--layers",
                                str(n), "--embed", str(args.embed), "--heads", str(args.heads),
                                "--batch", str(args.batch), "--seq", str(args.seq),
                                "--tp", str(args.tp)], stdout=f, check=True)
            ours = min(wall([tp_compile, model, "-o", os.path.join(tmp, "m.so")])
                       for _ in range(args.repeat))
            best = None
            for _ in range(args.repeat):
                out = subprocess.run(
                    [args.jax_python, JAX_GPT, "compile", str(n), str(args.batch),
                     str(args.seq), str(args.embed), str(args.heads), str(args.tp)],
                    check=True, capture_output=True, text=True).stdout.split()
                lower, compile_ = float(out[-2]), float(out[-1])
                if best is None or lower + compile_ < sum(best):
                    best = (lower, compile_)
            total = sum(best)
            print("%6d | %10.2f | %10.2f %10.2f %10.2f | %7.2fx" % (
                n, ours, best[0], best[1], total, ours / total))
            sys.stdout.flush()
    print("ratio: tp-compile's time over JAX's lower + compile (below 1: tp-compile faster)")


if __name__ == "__main__":
    main()
