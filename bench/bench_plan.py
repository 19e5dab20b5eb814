#!/usr/bin/env python3
"""Automatic planning: how long it takes, and how close its model is.

1. Planning time against depth: N-layer GPT stacks (bench/gen_gpt.py, the
   annotations removed) through `tp-opt --tp-propagate="auto-plan ..."`, one
   process each (parse and print included), best of --repeat, beside
   `--tp-propagate` on the annotated stack (the greedy propagation) for
   scale. The budget is --budget-fraction of what one device holds running
   the model replicated (arguments and the activations live at the peak).
2. Modelled against measured step time on the CPU backend: this machine is
   measured (`tprt-bench --calibrate`, --tp ranks), each model is planned
   with that file, its modelled step (compute + communication, from
   --tp-report format=json) is set beside tp-run's best wall time of the
   ranks' programs (--profile's slowest rank), and the ratio printed.

usage: /usr/bin/python3 bench/bench_plan.py [--layers 1,2,4,8,16,32,48,96]
           [--embed 768] [--heads 12] [--batch 4] [--seq 128] [--tp 4]
           [--repeat 3] [--budget-fraction 0.35] [--no-measure]
Run after a build; tools from TP_MLIR_BUILD_DIR (default: build/).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STRIP = re.compile(r" \{tp\.sharding = #tp\.sharding<@world, \[[^]]*\]>\}")


def gen(args, layers, extra=()):
    out = subprocess.run([sys.executable, os.path.join(HERE, "gen_gpt.py"), "--layers",
                          str(layers), "--embed", str(args.embed), "--heads", str(args.heads),
                          "--batch", str(args.batch), "--seq", str(args.seq), "--tp",
                          str(args.tp), *extra], check=True, capture_output=True, text=True)
    return out.stdout


def replicated_bytes(tools, path, tmp):
    """Bytes one device holds running the model replicated: the arguments and
    the tensors live at the peak (--tp-report's peak_live_bytes)."""
    report = os.path.join(tmp, "replicated.json")
    subprocess.run([tools["tp-opt"], path, "--tp-spmd=search=false",
                    f"--tp-report=format=json output={report}", "-o", os.devnull], check=True)
    doc = json.load(open(report))
    fn = doc["functions"][0] if "functions" in doc else doc
    return fn["memory"]["peak_live_bytes"]


def best_time(cmd, repeat):
    best = None
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t = time.perf_counter() - start
        best = t if best is None else min(best, t)
    return best


def planning(args, tools, tmp):
    print(f"planning time (GPT-2 width: embed {args.embed}, {args.heads} heads, batch "
          f"{args.batch} x seq {args.seq}, tp {args.tp}; budget {args.budget_fraction} of the "
          f"replicated model's memory; best of {args.repeat}, whole process)")
    print("auto-plan: --tp-spmd as tp-compile runs it (fold-reshapes, plan, partition; no "
          "runner-ups); explained: --tp-propagate with each weight's runner-up (for --tp-report)")
    print(f"{'layers':>7} {'ops':>7} {'auto-plan s':>12} {'explained s':>12} "
          f"{'propagate s':>12} {'ratio':>6}")
    rows = []
    for layers in args.layers:
        annotated = gen(args, layers)
        bare = STRIP.sub("", annotated)
        a, b = os.path.join(tmp, f"a{layers}.mlir"), os.path.join(tmp, f"b{layers}.mlir")
        open(a, "w").write(annotated)
        open(b, "w").write(bare)
        budget = int(replicated_bytes(tools, b, tmp) * args.budget_fraction)
        plan = best_time([tools["tp-opt"], b,
                          f"--tp-spmd=auto-plan memory-per-device={budget} explain=false",
                          "-o", os.devnull], args.repeat)
        explained = best_time([tools["tp-opt"], b,
                               f"--tp-propagate=auto-plan memory-per-device={budget}",
                               "-o", os.devnull], args.repeat)
        greedy = best_time([tools["tp-opt"], a, "--tp-propagate", "-o", os.devnull],
                           args.repeat)
        ops = annotated.count(" = ")
        rows.append((layers, ops, plan, explained, greedy))
        print(f"{layers:>7} {ops:>7} {plan:>12.3f} {explained:>12.3f} {greedy:>12.3f} "
              f"{plan / greedy:>6.2f}")
    return rows


def modelled_vs_measured(args, tools, tmp):
    machine = os.path.join(tmp, "machine.json")
    out = subprocess.run([tools["tprt-bench"], "--calibrate", machine, "--ranks",
                          str(args.tp)], check=True, capture_output=True, text=True).stdout
    print("\n" + out.strip())
    cases = [("gpt 1 layer, budget 0.35x", gen(args, 1), 0.35),
             ("gpt 1 layer, budget 1.5x", gen(args, 1), 1.5),
             ("gpt 2 layers, budget 0.35x", gen(args, 2), 0.35)]
    print(f"\n{'model':<28} {'modelled ms':>12} {'measured ms':>12} {'measured/modelled':>18}")
    for name, text, fraction in cases:
        path = os.path.join(tmp, "m.mlir")
        open(path, "w").write(STRIP.sub("", text))
        budget = int(replicated_bytes(tools, path, tmp) * fraction)
        report = os.path.join(tmp, "report.json")
        subprocess.run([tools["tp-opt"], path,
                        f"--tp-spmd=auto-plan memory-per-device={budget} cost-model={machine}",
                        f"--tp-report=format=json output={report}", "-o", os.devnull],
                       check=True)
        doc = json.load(open(report))
        fn = doc["functions"][0] if "functions" in doc else doc
        plan = fn["plan"]
        modelled = (plan["compute_seconds"] + plan["communication_seconds"]) * 1e3
        run = subprocess.run([tools["tp-run"], path, "--random-inputs", "--repeat", "10",
                              "--profile", "--auto-plan", "--memory-per-device", str(budget),
                              "--cost-model", machine], check=True, capture_output=True,
                             text=True).stdout
        m = re.search(r"slowest rank ([0-9.]+) ms", run) or \
            re.search(r"best of \d+ runs: ([0-9.]+) ms wall", run)
        measured = float(m.group(1))
        print(f"{name:<28} {modelled:>12.2f} {measured:>12.2f} {measured / modelled:>18.2f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", default="1,2,4,8,16,32,48,96")
    p.add_argument("--embed", type=int, default=768)
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--tp", type=int, default=4)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--budget-fraction", type=float, default=0.35)
    p.add_argument("--no-measure", action="store_true")
    args = p.parse_args()
    args.layers = [int(x) for x in args.layers.split(",")]
    build = os.environ.get("TP_MLIR_BUILD_DIR", os.path.join(HERE, "..", "build"))
    tools = {t: os.path.join(build, "bin", t) for t in ("tp-opt", "tp-run", "tprt-bench")}
    with tempfile.TemporaryDirectory() as tmp:
        planning(args, tools, tmp)
        if not args.no_measure:
            modelled_vs_measured(args, tools, tmp)


if __name__ == "__main__":
    main()
