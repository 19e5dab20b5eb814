#!/usr/bin/env python3
"""Compile time against depth, tp-compile against JAX, side by side in one run.

The model is bench/gen_gpt.py's N-layer GPT stack (GPT-2 blocks: layernorm, Q/K/V
projections, scaled softmax attention with an additive [S, S] mask, output projection,
residual, layernorm, tanh-GELU MLP, residual; activations [B*S, E]), split Megatron-style
over --tp devices. tp-mlir: `tp-compile` of gen_gpt.py's model (the annotations propagate
to Megatron's plan), one process per depth, wall time. JAX: the same stack written in
jax.numpy, jit with NamedShardings (Q/K/V and the first MLP weight split by columns over
"tp", the output projection and the second MLP weight by rows, the rest replicated, the
output replicated) on --tp forced host devices
(XLA_FLAGS=--xla_force_host_platform_device_count), `lower(...).compile()` timed in a
fresh process per depth (XLA CPU's whole compile, SPMD partitioner included). Both see
the layers unrolled (no scan), as a traced PyTorch model arrives.

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

# Runs under the JAX interpreter: argv = layers batch seq embed heads tp.
JAX_PROGRAM = r"""
import os, sys, time
L, B, S, E, H, P = map(int, sys.argv[1:7])
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=%d" % P
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as PS
mesh = Mesh(jax.devices()[:P], ("tp",))
T, D, F = B * S, E // H, 4 * E

def layernorm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

def gelu(v):
    return 0.5 * v * (1 + jnp.tanh(0.7978846 * (v + 0.044715 * v ** 3)))

def block(x, mask, p):
    h = layernorm(x, p["ln1_g"], p["ln1_b"])
    q = (h @ p["wq"] + p["bq"]).reshape(B, S, H, D)
    k = (h @ p["wk"] + p["bk"]).reshape(B, S, H, D)
    v = (h @ p["wv"] + p["bv"]).reshape(B, S, H, D)
    s = jnp.einsum("bihd,bjhd->bhij", q, k) / jnp.sqrt(float(D)) + mask
    a = jax.nn.softmax(s, axis=-1)
    c = jnp.einsum("bhij,bjhd->bihd", a, v).reshape(T, E)
    x = x + c @ p["wo"] + p["bo"]
    h = layernorm(x, p["ln2_g"], p["ln2_b"])
    return x + gelu(h @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]

col, row, rep = PS(None, "tp"), PS("tp", None), PS()
spec = {"ln1_g": rep, "ln1_b": rep, "wq": col, "bq": PS("tp"), "wk": col, "bk": PS("tp"),
        "wv": col, "bv": PS("tp"), "wo": row, "bo": rep, "ln2_g": rep, "ln2_b": rep,
        "w1": col, "b1": PS("tp"), "w2": row, "b2": rep}
shape = {"ln1_g": (E,), "ln1_b": (E,), "wq": (E, E), "bq": (E,), "wk": (E, E), "bk": (E,),
         "wv": (E, E), "bv": (E,), "wo": (E, E), "bo": (E,), "ln2_g": (E,), "ln2_b": (E,),
         "w1": (E, F), "b1": (F,), "w2": (F, E), "b2": (E,)}

def model(x, mask, layers):
    for p in layers:
        x = block(x, mask, p)
    return x

def struct(shp, ps):
    return jax.ShapeDtypeStruct(shp, jnp.float32, sharding=NamedSharding(mesh, ps))

args = (struct((T, E), rep), struct((S, S), rep),
        [{n: struct(shape[n], spec[n]) for n in shape} for _ in range(L)])
start = time.perf_counter()
lowered = jax.jit(model, out_shardings=NamedSharding(mesh, rep)).lower(*args)
mid = time.perf_counter()
lowered.compile()
end = time.perf_counter()
print("%.4f %.4f" % (mid - start, end - mid))
"""


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
                    [args.jax_python, "-c", JAX_PROGRAM, str(n), str(args.batch),
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
