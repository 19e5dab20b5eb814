#!/usr/bin/env python3
"""Which changes of sharding upstream MLIR 22's shard dialect handles.

Every pair of non-partial shardings of a 2-D tensor on a 2x2 grid (upstream has no
partial sums; 11 shardings, 121 pairs) is written for upstream (`shard.shard` to the
source, then `shard.shard ... annotate_for_users` to the target) and run through
`shard-partition`, one process per pair. A pair counts as handled when mlir-opt exits 0
and the resharded value has the target's per-device shape; otherwise the script reports
a crash (signal), an error, or the wrong local shape. tp-mlir's answer for the same pairs
(and the partial ones) is test/Dialect/TP/partition/reshard-table.test, which also checks
the data on simulated devices.

usage: upstream_reshards.py [--mlir-opt /usr/lib/llvm-22/bin/mlir-opt]
"""

import argparse
import itertools
import re
import subprocess
import tempfile

AXES = ["x", "y"]
SIZE = 8


def shardings():
    result = []
    for roles in itertools.product(["none", "d0", "d1"], repeat=2):
        dims = [[], []]
        for axis, role in zip(AXES, roles):
            if role != "none":
                dims[int(role[1])].append(axis)
        result.append(dims)
        for d in range(2):
            if len(dims[d]) == 2:
                swapped = [list(x) for x in dims]
                swapped[d] = list(reversed(dims[d]))
                result.append(swapped)
    return result


def upstream(dims):
    return "[" + ", ".join("[" + ", ".join(str(AXES.index(a)) for a in d) + "]" for d in dims) + "]"


def tp(dims):
    return "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]"


def local_shape(dims):
    return [SIZE // (2 ** len(d)) for d in dims]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    args = ap.parse_args()
    handled, failures = 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for src, dst in itertools.product(shardings(), repeat=2):
            t = f"tensor<{SIZE}x{SIZE}xf32>"
            text = f"""shard.grid @grid(shape = 2x2)
func.func @r(%a: {t}) -> {t} {{
  %s1 = shard.sharding @grid split_axes = {upstream(src)} : !shard.sharding
  %0 = shard.shard %a to %s1 : {t}
  %s2 = shard.sharding @grid split_axes = {upstream(dst)} : !shard.sharding
  %1 = shard.shard %0 to %s2 annotate_for_users : {t}
  return %1 : {t}
}}
"""
            path = f"{tmp}/pair.mlir"
            with open(path, "w") as f:
                f.write(text)
            proc = subprocess.run([args.mlir_opt, path, "--pass-pipeline=builtin.module("
                                   "func.func(shard-partition))"], capture_output=True, text=True)
            case = f"{tp(src)} -> {tp(dst)}"
            if proc.returncode < 0 or proc.returncode > 128:
                failures.append(f"{case}: crash (signal {-proc.returncode if proc.returncode < 0 else proc.returncode - 128})")
                continue
            if proc.returncode != 0:
                first = proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else "error"
                failures.append(f"{case}: error: {first[:120]}")
                continue
            m = re.search(r"-> tensor<(\d+)x(\d+)xf32>", proc.stdout)
            want = local_shape(dst)
            got = [int(m.group(1)), int(m.group(2))] if m else None
            if got != want:
                failures.append(f"{case}: wrong local shape {got}, expected {want}")
                continue
            handled += 1
    total = handled + len(failures)
    for f in failures:
        print(f"FAILS  {f}")
    print(f"upstream shard-partition: {handled} of {total} reshards handled, "
          f"{len(failures)} failed")


if __name__ == "__main__":
    main()
