#!/usr/bin/env python3
"""Times `tp-opt --tp-fold-reshapes --tp-propagate` on N-layer GPT stacks
(bench/gen_gpt.py) and prints ops per second. The parse/print cost of the same file is
measured in the same run (`tp-opt` with no pass) and subtracted, so the figure is the
passes' own time; each point is the best of --repeat runs.

usage: bench_propagate.py [--tp-opt build/bin/tp-opt] [--layers 1,8,64,256] [--repeat 3]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def best_time(cmd, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def count_ops(tp_opt, path):
    out = subprocess.run([tp_opt, path, "--mlir-print-op-generic"], check=True,
                         capture_output=True, text=True).stdout
    # One op per line that defines results or is a known terminator, in generic form.
    return sum(1 for line in out.splitlines() if '"' in line and ("= \"" in line or line.strip().startswith('"')))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tp-opt", default=os.path.join(HERE, "..", "build", "bin", "tp-opt"))
    ap.add_argument("--layers", default="1,8,64,256")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tp", type=int, default=4)
    args = ap.parse_args()

    print(f"{'layers':>6} {'ops':>8} {'parse+print s':>14} {'passes s':>10} {'ops/s':>12} {'us/op':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.layers.split(",")]:
            path = os.path.join(tmp, f"gpt{n}.mlir")
            with open(path, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"), "--layers", str(n),
                                "--tp", str(args.tp)], check=True, stdout=f)
            ops = count_ops(args.tp_opt, path)
            base = best_time([args.tp_opt, path, "-o", os.devnull], args.repeat)
            full = best_time([args.tp_opt, path, "--tp-fold-reshapes", "--tp-propagate",
                              "-o", os.devnull], args.repeat)
            passes = max(full - base, 1e-9)
            print(f"{n:>6} {ops:>8} {base:>14.3f} {passes:>10.3f} {ops / passes:>12.0f} "
                  f"{passes / ops * 1e6:>8.2f}")


if __name__ == "__main__":
    main()
