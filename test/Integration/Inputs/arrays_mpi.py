"""Arrays on a world spread over processes (the `mpi` backend, one rank a
process), through ctypes under mpirun: every process places the same global
inputs (each keeps its own rank's shard), runs on the placed arrays three
times, and fetches each result (every process calls the fetch; each gets the
global result); rank 0 compares them with what tprt_session_run gives on the
same global tensors, and every process frees its handles.

usage: mpirun -np N python3 arrays_mpi.py LIBTPRT PROGRAM.so
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import HostTensor, SessionOptions, count, open_runtime  # noqa: E402


def main():
    rt, _, check = open_runtime(sys.argv[1])

    program = ctypes.c_void_p()
    check(rt.tprt_program_load(sys.argv[2].encode(), ctypes.byref(program)), "load")
    mesh = rt.tprt_program_mesh(program, 0)
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"mpi", 0)
    check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")
    me = rt.tprt_session_local_rank(session, 0)
    args = [rt.tprt_program_arg(program, 0, i) for i in range(rt.tprt_program_num_args(program, 0))]
    results = [rt.tprt_program_result(program, 0, i)
               for i in range(rt.tprt_program_num_results(program, 0))]
    rng = random.Random(0)  # the same inputs in every process
    inputs = [(ctypes.c_float * count(a.contents))(
        *[rng.uniform(-1, 1) for _ in range(count(a.contents))]) for a in args]

    def host(info, data):
        t = HostTensor(info.dtype, info.rank)
        for d in range(info.rank):
            t.shape[d] = info.shape[d]
        t.data = ctypes.cast(data, ctypes.c_void_p)
        return t

    want = [(ctypes.c_float * count(r.contents))() for r in results]
    ins = (HostTensor * len(args))(*[host(a.contents, d) for a, d in zip(args, inputs)])
    outs = (HostTensor * len(results))(*[host(r.contents, d) for r, d in zip(results, want)])
    check(rt.tprt_session_run(session, program, 0, ins, len(args), outs, len(results)), "run")

    placed = []
    for a, d in zip(args, inputs):
        h = ctypes.c_void_p()
        check(rt.tprt_array_place(session, a, d, ctypes.byref(h)), "place")
        placed.append(h)
    same = True
    for attempt in range(3):
        got = (ctypes.c_void_p * len(results))()
        check(rt.tprt_session_run_arrays(session, program, 0,
                                         (ctypes.c_void_p * len(placed))(*[p.value for p in placed]),
                                         len(placed), got, len(results)), "run on arrays")
        for i, r in enumerate(results):
            out = (ctypes.c_float * count(r.contents))()
            check(rt.tprt_array_fetch(ctypes.c_void_p(got[i]), out), "fetch")
            if me == 0:
                same = same and list(out) == list(want[i])
            rt.tprt_array_free(ctypes.c_void_p(got[i]))
    for h in placed:
        rt.tprt_array_free(h)
    if me == 0:
        print("rank 0: 3 runs on placed arrays over processes: %s" % (
            "same as the global run" if same else "DIFFERS from the global run"))
    rt.tprt_session_destroy(session)
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
