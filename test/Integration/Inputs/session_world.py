"""A session keeps its world: the rank threads, communicators and (on a GPU)
streams, handles and kernels are made once, when the session is, and every
run reuses them. Through ctypes, the way an embedding program drives tprt:

  reuse PROGRAM.so     runs the program's first function 20 times on one
                       session: the process's threads are counted (Linux:
                       /proc/self/task) after the session is made and after
                       every run, each run gives the same results, and each
                       run's collective statistics are its own (not summed
                       over the runs).
  stuck PROGRAM.so     runs function 'stuck' (one rank never returns) with
                       a 300 ms timeout: the run fails naming the rank, and
                       every later run is refused with that cause; the
                       session is then destroyed with the rank still stuck.

usage: session_world.py LIBTPRT {reuse|stuck} PROGRAM.so
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import HostTensor, SessionOptions, count, open_runtime  # noqa: E402


class CommStats(ctypes.Structure):
    _fields_ = [("calls", ctypes.c_int64 * 5), ("bytes", ctypes.c_int64 * 5),
                ("seconds", ctypes.c_double * 5)]


def threads():
    return len(os.listdir("/proc/self/task"))


def main():
    rt, message, check = open_runtime(sys.argv[1])
    mode, path = sys.argv[2], sys.argv[3]
    rt.tprt_mesh_num_devices.restype = ctypes.c_int64
    rt.tprt_session_stats.restype = ctypes.c_void_p
    rt.tprt_session_stats.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                      ctypes.POINTER(CommStats),
                                      ctypes.POINTER(ctypes.c_double)]

    program = ctypes.c_void_p()
    check(rt.tprt_program_load(path.encode(), ctypes.byref(program)), "load")
    function = ctypes.c_int32(0)
    if mode == "stuck":
        check(rt.tprt_program_find_function(program, b"stuck", ctypes.byref(function)), "find")
    f = function.value
    mesh = rt.tprt_program_mesh(program, f)
    ranks = rt.tprt_mesh_num_devices(mesh)
    before = threads()
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 300 if mode == "stuck" else 0,
                             b"local", 0)
    check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")
    made = threads()
    print("session of %d ranks: %d thread(s) started" % (ranks, made - before))

    def host(info, data):
        t = HostTensor(info.dtype, info.rank)
        for d in range(info.rank):
            t.shape[d] = info.shape[d]
        t.data = ctypes.cast(data, ctypes.c_void_p)
        return t

    args = [rt.tprt_program_arg(program, f, i).contents
            for i in range(rt.tprt_program_num_args(program, f))]
    results = [rt.tprt_program_result(program, f, i).contents
               for i in range(rt.tprt_program_num_results(program, f))]
    rng = random.Random(0)
    inputs = [(ctypes.c_float * count(a))(*[rng.uniform(-1, 1) for _ in range(count(a))])
              for a in args]
    outputs = [(ctypes.c_float * count(r))() for r in results]
    ins = (HostTensor * len(args))(*[host(a, d) for a, d in zip(args, inputs)])
    outs = (HostTensor * len(results))(*[host(r, d) for r, d in zip(results, outputs)])

    def run():
        return rt.tprt_session_run(session, program, f, ins, len(args), outs, len(results))

    if mode == "reuse":
        first, counts, same, own_stats = None, set(), True, True
        for attempt in range(20):
            check(run(), "run %d" % attempt)
            counts.add(threads())
            got = [list(o) for o in outputs]
            first = first or got
            same = same and got == first
            stats = CommStats()
            check(rt.tprt_session_stats(session, 0, ctypes.byref(stats), None), "stats")
            calls = list(stats.calls)
            if attempt == 0:
                first_calls = calls
            own_stats = own_stats and calls == first_calls
        print("threads during 20 runs:", sorted(c - made for c in counts), "more than after "
              "the session was made")
        print("collective calls of rank 0 per run:", first_calls, "every run its own:",
              own_stats)
        print("results of every run the same:", same)
    else:
        print("run:", message(run()))
        print("again:", message(run()))
    rt.tprt_session_destroy(session)
    print("threads left after destroy:", threads() - before)


if __name__ == "__main__":
    main()
