#!/usr/bin/env python3
"""tp-mlir's --tp-spmd against upstream MLIR 22's shard dialect, side by side in one run.

Both compile the same N-layer stacks (bench/gen_gpt.py --no-attention: layernorm, GELU
MLP, residual; the first MLP weight of each layer split by columns, the output
replicated; upstream's shard dialect cannot run the attention blocks, whose reshapes have
no sharding interface there). Upstream runs its two passes nested, as documented:

  mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation{traversal=
            forward-backward},shard-partition),canonicalize)"

For each N the script prints both wall times (best of --repeat), the pass time per op
after subtracting each tool's parse+print time on the same file, the speed ratio, and the
collectives each program ends with.

Both pipelines end with canonicalize; both verify after every pass unless --no-verify
(tp-mlir's pipeline has 5 passes to upstream's 3, so verification weighs more on it).

usage: bench_upstream.py [--tp-opt build/bin/tp-opt] [--mlir-opt /usr/lib/llvm-22/bin/mlir-opt]
                         [--layers 1,8,64,256] [--repeat 3] [--tp 4] [--no-verify]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM = ("builtin.module(func.func(sharding-propagation{traversal=forward-backward},"
            "shard-partition),canonicalize)")


def best(cmd, repeat):
    t = float("inf")
    out = None
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        t = min(t, time.perf_counter() - start)
        out = proc
    return t, out


def count_ops(text):
    return sum(1 for line in text.splitlines()
               if re.match(r"\s*(%[\w#:, ]+ = )?\"?[a-z_]+\.[a-z_.]+", line))


def collectives(text, dialect):
    names = re.findall(rf"{dialect}\.(all_reduce|all_gather|reduce_scatter|all_to_all|all_slice)", text)
    counts = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tp-opt", default=os.path.join(HERE, "..", "build", "bin", "tp-opt"))
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    ap.add_argument("--layers", default="1,8,64,256")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--no-verify", action="store_true",
                    help="pass --verify-each=false to both tools (time the passes' own "
                         "work, not the verifier runs between them)")
    args = ap.parse_args()
    extra = ["--verify-each=false"] if args.no_verify else []

    print(f"{'N':>4} {'ops':>7} | {'tp-mlir s':>9} {'us/op':>7} | {'upstream s':>10} {'us/op':>7} |"
          f" {'speedup/op':>10} | collectives tp-mlir / upstream")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.layers.split(",")]:
            gen = [sys.executable, os.path.join(HERE, "gen_gpt.py"), "--no-attention",
                   "--layers", str(n), "--tp", str(args.tp)]
            ours = os.path.join(tmp, f"tp{n}.mlir")
            theirs = os.path.join(tmp, f"up{n}.mlir")
            with open(ours, "w") as f:
                subprocess.run(gen, check=True, stdout=f)
            with open(theirs, "w") as f:
                subprocess.run(gen + ["--upstream"], check=True, stdout=f)
            ops = count_ops(open(ours).read())

            base_tp, _ = best([args.tp_opt, ours], args.repeat)
            t_tp, out_tp = best([args.tp_opt, ours, "--tp-spmd"] + extra, args.repeat)
            base_up, _ = best([args.mlir_opt, theirs], args.repeat)
            t_up, out_up = best([args.mlir_opt, theirs, f"--pass-pipeline={UPSTREAM}"] + extra,
                                args.repeat)
            if out_tp.returncode != 0 or out_up.returncode != 0:
                print(f"{n:>4}: failed (tp-mlir rc {out_tp.returncode}, upstream rc "
                      f"{out_up.returncode})\n{out_tp.stderr[-500:]}{out_up.stderr[-500:]}")
                continue
            per_tp = max(t_tp - base_tp, 1e-9) / ops * 1e6
            per_up = max(t_up - base_up, 1e-9) / ops * 1e6
            print(f"{n:>4} {ops:>7} | {t_tp:>9.3f} {per_tp:>7.2f} | {t_up:>10.3f} {per_up:>7.2f} |"
                  f" {per_up / per_tp:>9.1f}x | {collectives(out_tp.stdout, 'tp')} / "
                  f"{collectives(out_up.stdout, 'shard')}")


if __name__ == "__main__":
    main()
