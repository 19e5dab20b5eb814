#!/usr/bin/env python3
"""A session's fixed cost per run, side by side in one run.

A tiny program (one 8-element all_reduce over --ranks local ranks: almost no work) is
run through libtprt's C API from ctypes, three ways, interleaved for --rounds rounds:

  kept     tprt_session_run on one session made once (its world and rank threads
           kept: what a run costs now);
  fresh    tprt_session_create + tprt_session_run + tprt_session_destroy per run
           (a world and threads made and torn down for every run: what each run
           cost before sessions kept their worlds);
  ctypes   a ctypes call of the same arity that does nothing in libtprt
           (tprt_mesh_num_devices): the measuring harness's own cost, to subtract.

Each figure is the median of --runs calls (after --warmup), in microseconds; the
fixed cost of a run is kept - ctypes. The issue's target for it is 20 us on 4 ranks.

usage: bench_session.py [--build build] [--ranks 4] [--runs 2000] [--rounds 3]
                        [--no-collective]
"""

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "Integration", "Inputs"))
from ctypes_run import HostTensor, Mesh, SessionOptions, TensorInfo  # noqa: E402

TINY = """tp.mesh @m ["tp" = {ranks}]
func.func @tiny(%x: tensor<8xf32> {{tp.sharding = #tp.sharding<@m, [{{}}], partial = ["tp"]>}})
    -> (tensor<8xf32> {{tp.sharding = #tp.sharding<@m, [{{}}]>}}) attributes {{tp.spmd = @m}} {{
  %y = tp.all_reduce sum %x over @m ["tp"] : tensor<8xf32>
  return %y : tensor<8xf32>
}}
"""

# The same without the collective: each rank doubles its copy.
LOCAL = """tp.mesh @m ["tp" = {ranks}]
func.func @tiny(%x: tensor<8xf32> {{tp.sharding = #tp.sharding<@m, [{{}}]>}})
    -> (tensor<8xf32> {{tp.sharding = #tp.sharding<@m, [{{}}]>}}) attributes {{tp.spmd = @m}} {{
  %y = arith.addf %x, %x : tensor<8xf32>
  return %y : tensor<8xf32>
}}
"""


def median_us(call, runs, warmup):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        call()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(HERE, "..", "build"))
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--runs", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--no-collective", action="store_true",
                   help="each rank doubles its copy instead of an all_reduce")
    a = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        src, lib = os.path.join(tmp, "tiny.mlir"), os.path.join(tmp, "tiny.so")
        with open(src, "w") as f:
            f.write((LOCAL if a.no_collective else TINY).format(ranks=a.ranks))
        subprocess.run([os.path.join(a.build, "bin", "tp-compile"), src, "-o", lib], check=True)
        rt = ctypes.CDLL(os.path.join(a.build, "lib", "libtprt.so"))
        for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run"):
            getattr(rt, name).restype = ctypes.c_void_p
        rt.tprt_status_message.restype = ctypes.c_char_p
        rt.tprt_program_mesh.restype = ctypes.POINTER(Mesh)
        rt.tprt_program_arg.restype = ctypes.POINTER(TensorInfo)

        def check(status, what):
            if status:
                sys.exit("%s: %s" % (what, rt.tprt_status_message(ctypes.c_void_p(status))))

        program = ctypes.c_void_p()
        check(rt.tprt_program_load(lib.encode(), ctypes.byref(program)), "load")
        mesh = rt.tprt_program_mesh(program, 0)
        x, y = (ctypes.c_float * 8)(*range(8)), (ctypes.c_float * 8)()
        ins = (HostTensor * 1)(HostTensor(0, 1, (ctypes.c_int64 * 8)(8), ctypes.cast(x, ctypes.c_void_p)))
        outs = (HostTensor * 1)(HostTensor(0, 1, (ctypes.c_int64 * 8)(8), ctypes.cast(y, ctypes.c_void_p)))
        options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"local", 0)
        session = ctypes.c_void_p()
        check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")

        def kept():
            check(rt.tprt_session_run(session, program, 0, ins, 1, outs, 1), "run")

        def fresh():
            s = ctypes.c_void_p()
            check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(s)), "session")
            check(rt.tprt_session_run(s, program, 0, ins, 1, outs, 1), "run")
            rt.tprt_session_destroy(s)

        def nothing():
            rt.tprt_mesh_num_devices(mesh)

        best = {"kept": 1e30, "fresh": 1e30, "ctypes": 1e30}
        for _ in range(a.rounds):
            for name, call, runs in (("kept", kept, a.runs), ("fresh", fresh, a.runs // 10),
                                     ("ctypes", nothing, a.runs)):
                best[name] = min(best[name], median_us(call, runs, a.warmup // 10 or 1))
        rt.tprt_session_destroy(session)
        rt.tprt_program_destroy(program)
        # The pending sum is the value on the first member, zeros on the others.
        assert list(y) == [v * (2 if a.no_collective else 1) for v in x], list(y)

    print("tiny program (8 elements, %s) on %d local ranks, %d cores; median us per "
          "call, best of %d rounds:" % ("no collective" if a.no_collective else "all_reduce",
                                        a.ranks, os.cpu_count(), a.rounds))
    print("  run on a kept session:        %8.1f us" % best["kept"])
    print("  session made per run:         %8.1f us" % best["fresh"])
    print("  empty ctypes call (harness):  %8.1f us" % best["ctypes"])
    print("fixed cost of a run: %.1f us (kept - harness), against %.1f us with a world made "
          "per run: %.1fx" % (best["kept"] - best["ctypes"], best["fresh"] - best["ctypes"],
                             (best["fresh"] - best["ctypes"]) /
                             max(best["kept"] - best["ctypes"], 1e-9)))


if __name__ == "__main__":
    main()
