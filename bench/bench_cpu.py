#!/usr/bin/env python3
"""CPU execution, side by side in one run (run with /usr/bin/python3: Debian's torch 1.13).

1. A GPT-2 block (bench/gen_gpt.py, --layers 1) compiled by tp-compile for one device and
   run by tp-run (best of --repeat), against PyTorch's eager CPU run of the same block
   (same shapes and ops: layernorm, Q/K/V/O projections, scaled masked softmax attention,
   layernorm, tanh-GELU MLP, residuals), with torch's default intra-op threads and with 1.
2. The same block split over --tp devices (threads of the local communicator): wall time
   and the ranks' times in the program added up (tp-run's "took ... together": wall time
   per rank, so with more ranks than cores it counts a rank waiting for a core or a peer),
   against the 1-device run.
3. With --jax-python: JAX's jit of the same block (bench/jax_gpt.py; XLA CPU, inputs
   placed on the devices once, results left there) on 1 and on --tp forced host devices,
   best of --repeat. tp-mlir is measured that way too: tp-run --repeat places the
   arguments once (arrays) and times the runs alone, and --shards-in-place runs on shards
   the caller cut once (tprt_session_run_shards).
4. The local communicator's all_reduce against a memcpy of the same bytes (tprt-bench).
5. The CPU GEMM libraries side by side (tprt_cpu_gemm_library): the 1- and --tp-device blocks
   with TPRT_CPU_GEMM=onednn, =openblas as the environment pins it (OPENBLAS_CORETYPE, as
   tests and CI run), and =openblas with OPENBLAS_CORETYPE unset: that last one, a
   measurement only, is the one place this project unsets it (Debian 12's OpenBLAS 0.3.21
   computes wrong results on some AVX-512 processors; its result is checked here against
   the run on global inputs, as every tp-run --repeat does). Sections 1 to 3 run the
   runtime's default library.

Every figure is the best of --repeat runs, and the whole comparison is repeated --rounds
times, interleaved (tp-mlir, PyTorch, JAX, tp-mlir, ...), keeping each one's best: this
machine's speed drifts between minutes.

usage: bench_cpu.py [--build build] [--batch 4] [--seq 128] [--embed 768] [--heads 12]
                    [--tp 4] [--repeat 10] [--rounds 3]
                    [--jax-python /work/venv-jax/bin/python] [--no-libraries]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def tp_run(build, model, repeat, tp, in_place=False, env=None):
    out = subprocess.run([os.path.join(build, "bin", "tp-run"), model, "--random-inputs",
                          "--repeat", str(repeat), "--profile"] +
                         (["--shards-in-place"] if in_place else []),
                         check=True, capture_output=True, text=True, env=env).stdout
    m = re.search(r"best of \d+ runs: ([0-9.]+) ms wall .*took ([0-9.]+) ms together", out)
    if "PASS" not in out:
        sys.exit("tp-run's placed run differs from its run on global inputs:\n" + out)
    return float(m.group(1)), float(m.group(2)), out


# Section 5's libraries: (name, changes to the environment; None removes a variable).
LIBRARIES = [("oneDNN", {"TPRT_CPU_GEMM": "onednn"}),
             ("OpenBLAS, pinned as run", {"TPRT_CPU_GEMM": "openblas"}),
             ("OpenBLAS, OPENBLAS_CORETYPE unset", {"TPRT_CPU_GEMM": "openblas",
                                                    "OPENBLAS_CORETYPE": None})]


def library_env(changes):
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def gemm_ms(out):
    m = re.search(r"gemm +\d+ calls +[0-9.]+ GFLOP +([0-9.]+) ms", out)
    return float(m.group(1)) if m else float("nan")


def torch_block(B, S, E, H, repeat, threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    T, F, D = B * S, 4 * E, E // H
    x = torch.rand(T, E) * 2 - 1
    mask = torch.triu(torch.full((S, S), -1e9), 1)
    p = {n: torch.rand(*s) * 0.1 for n, s in [
        ("g1", (E,)), ("b1n", (E,)), ("wq", (E, E)), ("bq", (E,)), ("wk", (E, E)),
        ("bk", (E,)), ("wv", (E, E)), ("bv", (E,)), ("wo", (E, E)), ("bo", (E,)),
        ("g2", (E,)), ("b2n", (E,)), ("w1", (E, F)), ("b1", (F,)), ("w2", (F, E)),
        ("b2", (E,))]}

    def block(x):
        h = torch.nn.functional.layer_norm(x, (E,), p["g1"], p["b1n"], 1e-5)
        q = (h @ p["wq"] + p["bq"]).view(B, S, H, D).transpose(1, 2)
        k = (h @ p["wk"] + p["bk"]).view(B, S, H, D).transpose(1, 2)
        v = (h @ p["wv"] + p["bv"]).view(B, S, H, D).transpose(1, 2)
        s = torch.softmax(q @ k.transpose(-1, -2) * (D ** -0.5) + mask, dim=-1)
        c = (s @ v).transpose(1, 2).reshape(T, E)
        r1 = x + c @ p["wo"] + p["bo"]
        h2 = torch.nn.functional.layer_norm(r1, (E,), p["g2"], p["b2n"], 1e-5)
        g = torch.nn.functional.gelu(h2 @ p["w1"] + p["b1"], approximate="tanh")
        return r1 + g @ p["w2"] + p["b2"]

    with torch.no_grad():
        block(x)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            block(x)
            best = min(best, time.perf_counter() - start)
    return best * 1e3


def jax_block(jax_python, B, S, E, H, devices, repeat):
    out = subprocess.run([jax_python, os.path.join(HERE, "jax_gpt.py"), "run", "1", str(B),
                          str(S), str(E), str(H), str(devices), str(repeat)],
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[-1]) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--embed", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jax-python", help="a Python with JAX (its own venv) to compare with")
    ap.add_argument("--no-libraries", action="store_true",
                    help="skip section 5 (the CPU GEMM libraries side by side)")
    args = ap.parse_args()
    B, S, E, H = args.batch, args.seq, args.embed, args.heads
    if args.jax_python and not os.path.exists(args.jax_python):
        sys.exit("no JAX interpreter at %s (see bench_jax.py's docstring)" % args.jax_python)
    print(f"GPT-2 block: batch {B}, seq {S}, embed {E}, heads {H} (f32); "
          f"{os.cpu_count()} CPU cores; best of {args.repeat} runs x {args.rounds} rounds")
    best = {}

    def keep(key, value):
        if key not in best or value[0] < best[key][0]:
            best[key] = value

    with tempfile.TemporaryDirectory() as tmp:
        libs = {}
        for tp in (1, args.tp):
            model = os.path.join(tmp, f"gpt{tp}.mlir")
            with open(model, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"), "--layers", "1",
                                "--batch", str(B), "--seq", str(S), "--embed", str(E),
                                "--heads", str(H), "--tp", str(tp)], check=True, stdout=f)
            libs[tp] = os.path.join(tmp, f"gpt{tp}.so")
            subprocess.run([os.path.join(args.build, "bin", "tp-compile"), model, "-o",
                            libs[tp]], check=True)
        for _ in range(args.rounds):
            for tp in (1, args.tp):
                keep(("tp-mlir", tp), tp_run(args.build, libs[tp], args.repeat, tp))
                keep(("in place", tp), tp_run(args.build, libs[tp], args.repeat, tp, True))
            keep(("torch", os.cpu_count()),
                 (torch_block(B, S, E, H, args.repeat, os.cpu_count()),))
            keep(("torch", 1), (torch_block(B, S, E, H, args.repeat, 1),))
            if args.jax_python:
                for tp in (1, args.tp):
                    keep(("jax", tp), (jax_block(args.jax_python, B, S, E, H, tp, args.repeat),))
            if not args.no_libraries:
                for name, changes in LIBRARIES:
                    for tp in (1, args.tp):
                        keep(("library", name, tp),
                             tp_run(args.build, libs[tp], args.repeat, tp,
                                    env=library_env(changes)))
    wall1, prog1, _ = best[("tp-mlir", 1)]
    torch_default, torch_one = best[("torch", os.cpu_count())][0], best[("torch", 1)][0]
    torch_best = min(torch_default, torch_one)
    print(f"1 device:  tp-mlir {wall1:8.2f} ms wall (arguments placed once: run only), "
          f"{prog1:8.2f} ms "
          f"in the program | PyTorch eager {torch_default:8.2f} ms ({os.cpu_count()} "
          f"threads), {torch_one:8.2f} ms (1 intra-op thread; OpenBLAS keeps its own) | "
          f"tp-mlir wall / PyTorch's best: {wall1 / torch_best:.2f}x")
    place1 = best[("in place", 1)][0]
    print(f"1 device:  tp-mlir {place1:8.2f} ms wall with shards in place (run only)")
    if args.jax_python:
        jax1 = best[("jax", 1)][0]
        print(f"1 device:  JAX jit {jax1:8.2f} ms | tp-mlir wall / JAX: {wall1 / jax1:.2f}x, "
              f"in place / JAX: {place1 / jax1:.2f}x")
    wallN, progN, outN = best[("tp-mlir", args.tp)]
    print(f"{args.tp} devices: tp-mlir {wallN:8.2f} ms wall, {progN:8.2f} ms in the program "
          f"over all ranks (each rank's wall time, added up) vs {prog1:.2f} ms on 1 device "
          f"({progN / prog1:.2f}x)")
    placeN = best[("in place", args.tp)][0]
    print(f"{args.tp} devices: tp-mlir {placeN:8.2f} ms wall with shards in place (run only)")
    if args.jax_python:
        jaxN = best[("jax", args.tp)][0]
        print(f"{args.tp} devices: JAX jit {jaxN:8.2f} ms on {args.tp} forced host devices | "
              f"tp-mlir wall / JAX: {wallN / jaxN:.2f}x, in place / JAX: {placeN / jaxN:.2f}x")
    for line in outN.splitlines():
        if "calls" in line or "other ops" in line:
            print(f"  {args.tp} devices, {line.strip()}")
    _, _, out1 = best[("tp-mlir", 1)]
    for line in out1.splitlines():
        if "calls" in line or "other ops" in line:
            print(f"  1 device, {line.strip()}")
    if not args.no_libraries:
        core = os.environ.get("OPENBLAS_CORETYPE", "unset")
        print(f"CPU GEMM libraries (OPENBLAS_CORETYPE={core} as run), best wall ms "
              f"(ms in GEMMs, all ranks together):")
        for name, _ in LIBRARIES:
            cells = []
            for tp in (1, args.tp):
                wall, _, out = best[("library", name, tp)]
                cells.append(f"{tp} device(s) {wall:8.2f} ({gemm_ms(out):8.2f})")
            print(f"  {name:36s} " + " | ".join(cells))
    bench = os.path.join(args.build, "bin", "tprt-bench")
    for ranks in sorted({2, args.tp}):
        print(subprocess.run([bench, str(ranks), "16", "10"], check=True, capture_output=True,
                             text=True).stdout.strip())


if __name__ == "__main__":
    main()
