#!/usr/bin/env python3
"""Feeds tp-opt every truncation of a file and seeded random garblings of it, and checks
that tp-opt never crashes or hangs: each input either verifies (exit 0) or gets a
diagnostic with a location (`file:line:col: error:`) and exit code 1.

usage: robustness.py TP_OPT INPUT.mlir WORKDIR [--step N] [--garbles N] [--seed S]
                     [--pass-args "--tp-spmd ..."]
"""

import argparse
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

# Characters that matter to MLIR's and the tp dialect's grammar.
NOISE = list('{}[]<>()@"%#=,:-.!^ 0123456789xfi') + ["tp", "#tp.sharding", "@world", "\n"]


def variants(text, step, garbles, seed):
    for cut in range(0, len(text), step):
        yield f"truncated at byte {cut}", text[:cut]
    rng = random.Random(seed)
    for n in range(garbles):
        chars = list(text)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(len(chars))
            action = rng.random()
            if action < 0.4:
                chars[pos] = rng.choice(NOISE)
            elif action < 0.7:
                del chars[pos]
            else:
                chars.insert(pos, rng.choice(NOISE))
        yield f"garbling #{n}", "".join(chars)


def check(tp_opt, path, label, extra):
    try:
        proc = subprocess.run([tp_opt, path] + extra, capture_output=True, text=True,
                              timeout=60)
    except subprocess.TimeoutExpired:
        return f"{label}: tp-opt hung (no exit within 60 s)"
    if proc.returncode == 0:
        return None
    if proc.returncode != 1:
        return f"{label}: exit code {proc.returncode} (a crash?)\n{proc.stderr[-2000:]}"
    # Parse errors point into the variant; a pass may also report at an op
    # whose location it built.
    where = re.escape(path) + r":\d+:\d+"
    if extra:
        where = "(" + where + r"|loc\(.*\)|<unknown>)"
    located = re.compile(where + r": error: ")
    if not located.search(proc.stderr):
        return f"{label}: exit 1 without a located error\n{proc.stderr[-2000:]}"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tp_opt")
    parser.add_argument("input")
    parser.add_argument("workdir")
    parser.add_argument("--step", type=int, default=7)
    parser.add_argument("--garbles", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pass-args", default="",
                        help="passes to run on every variant that parses")
    args = parser.parse_args()

    text = open(args.input).read()
    os.makedirs(args.workdir, exist_ok=True)
    jobs = []
    for index, (label, content) in enumerate(
            variants(text, args.step, args.garbles, args.seed)):
        path = os.path.join(args.workdir, f"variant{index}.mlir")
        with open(path, "w") as f:
            f.write(content)
        jobs.append((path, label))

    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        extra = args.pass_args.split()
        problems = [p for p in pool.map(lambda j: check(args.tp_opt, *j, extra), jobs) if p]
    for problem in problems:
        print(problem)
    print(f"{len(jobs)} variants, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
