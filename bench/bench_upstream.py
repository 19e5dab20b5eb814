#!/usr/bin/env python3
"""tp-mlir's --tp-spmd against upstream MLIR 22's shard dialect, side by side in one run.

Both compile the same N-layer stacks (bench/gen_gpt.py --no-attention: layernorm, GELU
MLP, residual; the first MLP weight of each layer split by columns, the output
replicated; upstream's shard dialect cannot run the attention blocks, whose reshapes have
no sharding interface there). Upstream runs its two passes nested, as documented:

  mlir-opt --pass-pipeline="builtin.module(func.func(sharding-propagation{traversal=
            forward-backward},shard-partition),canonicalize)"

Two measures, per N:

- wall time of the passes, from each tool's --mlir-timing report (best of --repeat):
  start-up, parsing and printing are left out. "sharding" is tp-mlir's fold-reshapes,
  propagate, partition and optimize-collectives against upstream's sharding-propagation
  and shard-partition; "+canon" adds each pipeline's canonicalize (which works on
  different programs: tp-mlir's is already clean).
- with --callgrind, instructions executed inside mlir::PassManager::run (valgrind
  callgrind, deterministic; slow at large N): the same two comparisons, in instructions
  per op (tp-mlir's "+canon" is --tp-spmd as users run it).

"search" is the annotated path's search's share of tp-mlir's passes (1 - their time with
--tp-spmd=search=false over their time at the defaults).

Then the ratio (upstream / tp-mlir, per op: higher is better for tp-mlir), the whole
process's wall time of each (start-up, parsing, the passes, printing; best of --repeat;
the ratio tp-mlir / upstream: lower is better for tp-mlir) and the collectives each
program ends with. Both verify after every pass unless --no-verify.

Then, at the largest N, where each whole process goes: start-up and exit, parsing, the
passes, printing and the rest (--mlir-timing of a run with every verifier run off:
parsing's, the pass manager's and the printer's), and the verifier runs (the difference
between the two processes' best wall times), with the pass time at which tp-mlir's whole
process would be 0.5x upstream's: what the rest of the process leaves the passes.

usage: bench_upstream.py [--tp-opt build/bin/tp-opt] [--mlir-opt /usr/lib/llvm-22/bin/mlir-opt]
                         [--layers 1,8,64,256] [--repeat 3] [--tp 4] [--no-verify]
                         [--callgrind] [--no-breakdown]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
UPSTREAM_PASSES = ("func.func(sharding-propagation{traversal=forward-backward},"
                   "shard-partition)")
TP_PASSES = "tp-fold-reshapes,tp-propagate,tp-partition,tp-optimize-collectives"
TP_SHARDING = {"FoldReshapesPass", "PropagatePass", "PartitionPass",
               "OptimizeCollectivesPass"}
UPSTREAM_SHARDING = {"ShardingPropagation", "Partition"}
NOT_PASSES = {"root", "Parser", "Output", "Rest", "Total"}
# Every verifier run off: after parsing, after each pass, before printing.
NO_VERIFIER = ["--mlir-very-unsafe-disable-verifier-on-parsing", "--verify-each=false",
               "--mlir-print-assume-verified"]


def pipeline(passes, canonicalize):
    return f"--pass-pipeline=builtin.module({passes}{',canonicalize' if canonicalize else ''})"


def pass_times(cmd, repeat, skip=NOT_PASSES):
    """Seconds per pass name from --mlir-timing, each the best of `repeat` runs (this
    machine's wall times vary by up to 2x between runs); the last run's output."""
    best = {}
    proc = None
    for _ in range(repeat):
        proc = subprocess.run(cmd + ["--mlir-timing", "--mlir-timing-display=list"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return None, proc
        times = {}
        for line in proc.stderr.splitlines():
            m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(.+?)\s*$", line)
            # Nested pipelines ("'func.func' Pipeline", and in the list display
            # "Pipeline Collection : ['func.func']") hold the passes listed
            # after them: counting them too would count those twice.
            if m and m.group(2) not in skip and not m.group(2).endswith(
                    "Pipeline") and not m.group(2).startswith("Pipeline Collection"):
                times[m.group(2)] = times.get(m.group(2), 0.0) + float(m.group(1))
        for name, t in times.items():
            best[name] = min(best.get(name, t), t)
    return best, proc


def breakdown(cmd, repeat):
    """Where one whole process goes, in seconds: each stage from --mlir-timing with every
    verifier run off, start-up and exit (that process's wall time less its timed total),
    and the verifier runs (the default process's wall time less that one's)."""
    quiet = cmd + NO_VERIFIER
    times, _ = pass_times(quiet, repeat, skip={"root", "Total"})
    if times is None:
        return None
    stages = {"parse": times.pop("Parser", 0.0), "print": times.pop("Output", 0.0),
              "rest": times.pop("Rest", 0.0)}
    stages["passes"] = sum(times.values())
    unverified = process_time(quiet, repeat)
    stages["start-up, exit"] = max(0.0, unverified - sum(stages.values()))
    stages["verifier runs"] = max(0.0, process_time(cmd, repeat) - unverified)
    return stages


def pass_instructions(cmd):
    """Instructions executed inside mlir::PassManager::run (callgrind)."""
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                           "--toggle-collect=mlir::PassManager::run(*"] + cmd,
                          capture_output=True, text=True)
    m = re.search(r"refs:\s+([0-9,]+)", proc.stderr)
    return int(m.group(1).replace(",", "")) if m else None


def process_time(cmd, repeat):
    """Best wall time of `repeat` whole runs of `cmd` (start-up, parsing, the passes,
    printing to /dev/null)."""
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd + ["-o", os.devnull], check=True, capture_output=True)
        wall = time.perf_counter() - start
        best = wall if best is None else min(best, wall)
    return best


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
    ap.add_argument("--callgrind", action="store_true",
                    help="also count instructions inside the pass manager (valgrind)")
    ap.add_argument("--no-breakdown", action="store_true",
                    help="leave out where each whole process goes at the largest N")
    args = ap.parse_args()
    extra = ["--verify-each=false"] if args.no_verify else []
    if args.callgrind and not shutil.which("valgrind"):
        sys.exit("--callgrind needs valgrind (apt-get install valgrind)")

    print("pass wall time per op (us), from --mlir-timing, best of", args.repeat)
    print(f"{'N':>4} {'ops':>7} | {'tp-mlir':>8} {'upstream':>8} {'ratio':>6} |"
          f" {'tp+canon':>8} {'up+canon':>8} {'ratio':>6} | {'process s':>9} {'upstream':>8}"
          f" {'ratio':>6} | {'search':>6} | collectives tp-mlir / upstream")
    files = []
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
            files.append((n, ops, ours, theirs))

            t_tp, out_tp = pass_times([args.tp_opt, ours, "--tp-spmd"] + extra, args.repeat)
            t_up, out_up = pass_times([args.mlir_opt, theirs, pipeline(UPSTREAM_PASSES, True)]
                                      + extra, args.repeat)
            if t_tp is None or t_up is None:
                print(f"{n:>4}: failed (tp-mlir rc {out_tp.returncode}, upstream rc "
                      f"{out_up.returncode})\n{out_tp.stderr[-500:]}{out_up.stderr[-500:]}")
                continue
            tp_sharding = sum(v for k, v in t_tp.items() if k in TP_SHARDING)
            up_sharding = sum(v for k, v in t_up.items() if k in UPSTREAM_SHARDING)
            tp_all, up_all = sum(t_tp.values()), sum(t_up.values())
            us = lambda t: t / ops * 1e6
            p_tp = process_time([args.tp_opt, ours, "--tp-spmd"] + extra, args.repeat)
            p_up = process_time([args.mlir_opt, theirs, pipeline(UPSTREAM_PASSES, True)]
                                + extra, args.repeat)
            # The annotated path's search: its share of --tp-spmd's passes (what
            # search=false saves of them).
            t_fixed, _ = pass_times([args.tp_opt, ours, "--tp-spmd=search=false"] + extra,
                                    args.repeat)
            share = (1 - sum(t_fixed.values()) / tp_all) if t_fixed else float("nan")
            print(f"{n:>4} {ops:>7} | {us(tp_sharding):>8.2f} {us(up_sharding):>8.2f}"
                  f" {up_sharding / tp_sharding:>5.1f}x | {us(tp_all):>8.2f} {us(up_all):>8.2f}"
                  f" {up_all / tp_all:>5.1f}x | {p_tp:>9.3f} {p_up:>8.3f} {p_tp / p_up:>5.2f}x |"
                  f" {share * 100:>5.0f}% |"
                  f" {collectives(out_tp.stdout, 'tp')} / "
                  f"{collectives(out_up.stdout, 'shard')}")

        if files and not args.no_breakdown and not args.no_verify:
            n, ops, ours, theirs = max(files)
            tp = breakdown([args.tp_opt, ours, "--tp-spmd"], args.repeat)
            up = breakdown([args.mlir_opt, theirs, pipeline(UPSTREAM_PASSES, True)],
                           args.repeat)
            if tp and up:
                names = ["start-up, exit", "parse", "passes", "print", "rest",
                         "verifier runs"]
                print(f"\nwhere the whole process goes at N = {n} (s; stages from "
                      "--mlir-timing with every verifier run off, best of", args.repeat,
                      "each)")
                print(f"{'':>9} |" + "".join(f" {name:>14}" for name in names) +
                      f" {'total':>7}")
                for label, row in (("tp-mlir", tp), ("upstream", up)):
                    print(f"{label:>9} |" + "".join(f" {row[k]:>14.3f}" for k in names) +
                          f" {sum(row.values()):>7.3f}")
                # What the rest of tp-mlir's process leaves its passes for 0.5x.
                budget = 0.5 * sum(up.values()) - (sum(tp.values()) - tp["passes"])
                print(f"whole process <= 0.5x upstream needs tp-mlir's passes in <= "
                      f"{budget:.3f} s ({up['passes'] / budget:.1f}x upstream's "
                      f"{up['passes']:.3f} s) where they take {tp['passes']:.3f} s "
                      f"({up['passes'] / tp['passes']:.1f}x)" if budget > 0 else
                      "whole process <= 0.5x upstream: out of reach even with free passes")

        if not args.callgrind:
            return
        print("\ninstructions per op inside the pass manager (callgrind)")
        print(f"{'N':>4} {'ops':>7} | {'tp-mlir':>8} {'upstream':>8} {'ratio':>6} |"
              f" {'tp+canon':>8} {'up+canon':>8} {'ratio':>6}")
        for n, ops, ours, theirs in files:
            row = []
            for canonicalize in (False, True):
                # With canonicalize: --tp-spmd itself (its canonicalize is one sweep).
                tp_cmd = [args.tp_opt, ours,
                          "--tp-spmd" if canonicalize else pipeline(TP_PASSES, False),
                          "-o", os.devnull] + extra
                up_cmd = [args.mlir_opt, theirs, pipeline(UPSTREAM_PASSES, canonicalize),
                          "-o", os.devnull] + extra
                a, b = pass_instructions(tp_cmd), pass_instructions(up_cmd)
                row += [a / ops, b / ops, b / a] if a and b else [0, 0, 0]
            print(f"{n:>4} {ops:>7} | {row[0]:>8.0f} {row[1]:>8.0f} {row[2]:>5.1f}x |"
                  f" {row[3]:>8.0f} {row[4]:>8.0f} {row[5]:>5.1f}x")


if __name__ == "__main__":
    main()
