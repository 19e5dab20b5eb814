"""Communicators side by side: all_reduce bandwidth and a block on processes vs threads.

Usage (after a build, with OpenMPI):
    /usr/bin/python3 bench/bench_comm.py [--build build] [--ranks 2,4] [--iterations 10]

1. all_reduce (f32 sum) of 4 KB to 64 MB per rank at 2 and 4 ranks: the `mpi`
   communicator (one rank a process, mpirun over shared memory) against `local`
   (threads of one process) and a memcpy of the same bytes, measured in the same
   run by build/bin/tprt-bench (best of N per rank, slowest rank).
2. The GPT-2-small block (d 768, 12 heads, seq 128, batch 4, f32; bench/gen_gpt.py)
   on 4 ranks: 4 processes under mpirun against 4 threads, best wall time of
   `tp-run --repeat 5` (scatter, run, gather).

The processes share the machine's cores with each other (mpirun --oversubscribe
where there are fewer cores than ranks): on a small machine the figures measure
the communicators' overheads more than any network.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mpirun(np):
    return ["mpirun", "--oversubscribe", "-np", str(np), "--mca", "btl", "self,vader",
            "--mca", "btl_vader_single_copy_mechanism", "none"]


def env():
    e = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def bench(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env(), check=True).stdout
    m = re.search(r"all_reduce f32 sum, \w+, \d+ ranks, [\d.]+ MB per rank: ([\d.]+) ms, "
                  r"([\d.]+) GB/s; memcpy of [\d.]+ MB: ([\d.]+) ms, ([\d.]+) GB/s", out)
    if not m:
        raise RuntimeError("unexpected tprt-bench output: " + out)
    return float(m.group(2)), float(m.group(4))


def best_ms(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env(), check=True).stdout
    m = re.search(r"best of \d+ runs: ([\d.]+) ms wall", out)
    if not m:
        raise RuntimeError("unexpected tp-run output: " + out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--iterations", type=int, default=10)
    args = ap.parse_args()
    tool = os.path.join(args.build, "bin", "tprt-bench")
    sizes = [0.004, 0.064, 1, 16, 64]
    print("all_reduce f32 sum, GB/s of one rank's tensor (slowest rank, best of %d)"
          % args.iterations)
    print("%5s %9s %9s %9s %9s %11s %11s" % ("ranks", "MB/rank", "memcpy", "local",
                                              "mpi", "mpi/local", "mpi/memcpy"))
    for ranks in [int(r) for r in args.ranks.split(",")]:
        for mb in sizes:
            it = str(args.iterations if mb < 16 else max(3, args.iterations // 3))
            local, copy = bench([tool, str(ranks), str(mb), it])
            mpi, _ = bench(mpirun(ranks) + [tool, "--comm", "mpi", str(ranks), str(mb), it])
            print("%5d %9.3f %9.2f %9.2f %9.2f %10.2fx %10.3fx"
                  % (ranks, mb, copy, local, mpi, mpi / local, mpi / copy))
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "gpt2.mlir")
        lib = os.path.join(tmp, "gpt2.so")
        with open(model, "w") as f:
            subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_gpt.py"),
                            "--layers", "1", "--batch", "4", "--seq", "128", "--embed",
                            "768", "--heads", "12", "--tp", "4"], stdout=f, check=True)
        subprocess.run([os.path.join(args.build, "bin", "tp-compile"), model, "-o", lib],
                       check=True)
        tprun = os.path.join(args.build, "bin", "tp-run")
        threads = best_ms([tprun, lib, "--random-inputs", "--repeat", "5"])
        procs = best_ms(mpirun(4) + [tprun, lib, "--random-inputs", "--repeat", "5"])
        print("GPT-2-small block, 4 ranks: threads %.1f ms, processes (mpi) %.1f ms, "
              "processes / threads %.2fx" % (threads, procs, procs / threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
