#!/usr/bin/env python3
"""Import + compile time of an N-layer GPT-2 (HF-style blocks) from Python,
against tracing alone (make_fx, or torch.export on torch >= 2.1) on the same
module: the importer's own share should stay small.

For each N: trace (PyTorch's own), import (trace + our ATen -> MLIR text;
the difference is the importer's share), tp-opt --tp-spmd on the imported
module (the sharding passes), and tp-compile (the whole compile to a
library) where --compile-layers allows (LLVM dominates there; see issue 14).

usage: /usr/bin/python3 bench/bench_import.py [--layers 1,12,48] [--embed 768]
          [--heads 12] [--batch 4] [--seq 128] [--tp 4] [--compile-layers 1,12]
Run from the checkout with TP_MLIR_BUILD_DIR set (or the tools on PATH).
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Python", "Inputs"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import tp_mlir  # noqa: E402
from tp_mlir import ColwiseParallel, RowwiseParallel, _tools  # noqa: E402
from tp_mlir.compiler import _input_names, import_module  # noqa: E402
from tp_mlir.trace import trace  # noqa: E402
from models import GPT2Block  # noqa: E402


class Stack(nn.Module):
    def __init__(self, layers, embed, heads, seq):
        super().__init__()
        self.h = nn.ModuleList(GPT2Block(embed, heads, seq) for _ in range(layers))

    def forward(self, hidden_states):
        for block in self.h:
            hidden_states = block(hidden_states)
        return hidden_states


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", default="1,12,48")
    ap.add_argument("--compile-layers", default="1,12")
    ap.add_argument("--embed", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--tp", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    plan = {"h.*.attn.c_attn": ColwiseParallel(), "h.*.attn.c_proj": RowwiseParallel(),
            "h.*.mlp.c_fc": ColwiseParallel(), "h.*.mlp.c_proj": RowwiseParallel()}
    mesh = tp_mlir.Mesh({"tp": args.tp})
    compile_layers = {int(n) for n in args.compile_layers.split(",") if n}
    print("GPT-2 stack: embed %d, %d heads, batch %d x seq %d, %d devices; best of %d (s)"
          % (args.embed, args.heads, args.batch, args.seq, args.tp, args.repeat))
    print("%6s %9s %9s %9s %8s %11s %11s" % ("layers", "trace", "import", "importer",
                                            "share", "tp-spmd", "tp-compile"))
    for n in [int(n) for n in args.layers.split(",")]:
        torch.manual_seed(0)
        model = Stack(n, args.embed, args.heads, args.seq).eval()
        x = torch.randn(args.batch, args.seq, args.embed)
        names = _input_names(model, 1)
        t_trace = best(lambda: trace(model, (x,), names), args.repeat)
        holder = {}

        def do_import():
            holder["text"] = import_module(model, (x,), mesh, plan)[0]
        t_import = best(do_import, args.repeat)
        own = max(t_import - t_trace, 0.0)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "model.mlir")
            with open(path, "w") as f:
                f.write(holder["text"])
            t_spmd = best(lambda: subprocess.run(
                [_tools.find_tool("tp-opt"), path, "--tp-spmd", "-o", os.devnull],
                check=True), args.repeat)
            t_compile = float("nan")
            if n in compile_layers:
                t_compile = best(lambda: subprocess.run(
                    [_tools.find_tool("tp-compile"), path, "-o",
                     os.path.join(tmp, "model.so")], check=True), 1)
        print("%6d %9.3f %9.3f %9.3f %7.0f%% %11.3f %11s" % (
            n, t_trace, t_import, own, 100.0 * own / t_import, t_spmd,
            "%.1f" % t_compile if t_compile == t_compile else "-"))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
