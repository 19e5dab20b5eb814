#!/usr/bin/env python3
"""Compile time and peak memory against depth: N-layer GPT stacks
(bench/gen_gpt.py) through each stage of the compiler, one process per stage
and depth, so that each stage's peak resident memory is its own.

Stages: `tp-opt --tp-spmd` (the sharding passes), `tp-compile --emit=mlir`
(the passes and the CPU lowering to the LLVM dialect), `tp-compile` (all of
it: LLVM -O3 and the link); the LLVM share is the difference of the last two.
Repeated layers are outlined (compiled once) by default; `flat` is
`tp-compile --outline-layers=false`, one function for the whole stack, as
before, run up to --flat-up-to layers (LLVM is superlinear on it).
The sweep runs to 1,024 layers, far past any model, where a stage superlinear
in the depth shows (ms/layer: tp-compile's time per layer, flat where it is
linear). Prints a table (seconds, MiB), writes it as CSV beside --png, and plots it
where matplotlib is importable (Debian: python3-matplotlib; the plot is
skipped with a note otherwise).

usage: /usr/bin/python3 bench/bench_depth.py [--layers 1,2,4,8,12,24,48,96,256,1024]
           [--embed 768] [--heads 12] [--batch 4] [--seq 128] [--tp 4]
           [--compile-up-to 1024] [--flat-up-to 12] [--png bench-depth.png]
Run after a build; tools from TP_MLIR_BUILD_DIR (default: build/).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def measure(cmd):
    """(wall seconds, peak resident MiB) of one run of `cmd`."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("%s failed (exit %d):\n%s" % (" ".join(cmd), proc.returncode, err[-2000:]))
    return wall, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="1,2,4,8,12,24,48,96,256,1024")
    ap.add_argument("--embed", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--compile-up-to", type=int, default=1024,
                    help="run the LLVM stages only up to this depth")
    ap.add_argument("--flat-up-to", type=int, default=12,
                    help="compile without outlining only up to this depth (minutes beyond)")
    ap.add_argument("--png", default="bench-depth.png")
    args = ap.parse_args()
    build = os.environ.get("TP_MLIR_BUILD_DIR", os.path.join(HERE, "..", "build"))
    tp_opt = os.path.join(build, "bin", "tp-opt")
    tp_compile = os.path.join(build, "bin", "tp-compile")
    rows = []
    print("GPT stack: embed %d, %d heads, batch %d x seq %d, %d devices (s, MiB)"
          % (args.embed, args.heads, args.batch, args.seq, args.tp))
    print("%6s %8s | %8s %8s | %8s %8s | %8s %8s %9s | %8s | %8s %8s" % (
        "layers", "ops", "spmd s", "MiB", "lower s", "MiB", "all s", "MiB", "ms/layer",
        "LLVM s", "flat s", "MiB"))
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(x) for x in args.layers.split(",")]:
            model = os.path.join(tmp, "gpt%d.mlir" % n)
            with open(model, "w") as f:
                subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"), "--layers",
                                str(n), "--embed", str(args.embed), "--heads", str(args.heads),
                                "--batch", str(args.batch), "--seq", str(args.seq),
                                "--tp", str(args.tp)], stdout=f, check=True)
            with open(model) as f:
                ops = sum(1 for line in f if " = " in line and not line.lstrip().startswith("#"))
            spmd = measure([tp_opt, model, "--tp-spmd", "-o", os.devnull])
            lower = full = flat = (float("nan"), float("nan"))
            if n <= args.compile_up_to:
                lower = measure([tp_compile, model, "--emit=mlir", "-o",
                                 os.path.join(tmp, "l.mlir")])
                full = measure([tp_compile, model, "-o", os.path.join(tmp, "m.so")])
            if n <= args.flat_up_to:
                flat = measure([tp_compile, model, "--outline-layers=false", "-o",
                                os.path.join(tmp, "f.so")])
            row = (n, ops, spmd[0], spmd[1], lower[0], lower[1], full[0], full[1],
                   full[0] - lower[0], flat[0], flat[1])
            rows.append(row)
            print("%6d %8d | %8.2f %8.0f | %8.2f %8.0f | %8.2f %8.0f %9.1f | %8.2f | %8.2f %8.0f"
                  % (row[:8] + (full[0] / n * 1e3,) + row[8:]))
            sys.stdout.flush()
    csv = os.path.splitext(args.png)[0] + ".csv"
    with open(csv, "w") as f:
        f.write("layers,ops,spmd_s,spmd_mib,lower_s,lower_mib,compile_s,compile_mib,llvm_s,"
                "flat_s,flat_mib\n")
        for row in rows:
            f.write(",".join("%g" % v for v in row) + "\n")
    print("table: %s" % csv)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: matplotlib is not importable (apt-get install python3-matplotlib)")
        return
    fig, (t_ax, m_ax) = plt.subplots(1, 2, figsize=(11, 4))
    layers = [r[0] for r in rows]
    for index, label in ((2, "--tp-spmd"), (4, "tp-compile --emit=mlir"), (6, "tp-compile"),
                         (8, "LLVM"), (9, "tp-compile, flat (no outlining)")):
        t_ax.plot(layers, [r[index] for r in rows], marker="o", label=label)
    for index, label in ((3, "--tp-spmd"), (5, "tp-compile --emit=mlir"), (7, "tp-compile"),
                         (10, "tp-compile, flat")):
        m_ax.plot(layers, [r[index] for r in rows], marker="o", label=label)
    t_ax.set(xlabel="layers", ylabel="seconds", title="compile time", xscale="log",
             yscale="log")
    m_ax.set(xlabel="layers", ylabel="peak MiB", title="peak resident memory", xscale="log")
    t_ax.legend()
    m_ax.legend()
    fig.tight_layout()
    fig.savefig(args.png)
    print("plot: %s" % args.png)


if __name__ == "__main__":
    main()
