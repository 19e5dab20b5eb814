"""Runs a compiled program on shards the caller holds (tprt_session_run_shards)
through ctypes, the way an embedding program keeps its weights placed: every
input cut once into each device's shard (tprt_scatter_shard), three runs on
the same shards, each rank's result shards gathered (tprt_gather_shards).
Checks that every run gives exactly what tprt_session_run gives on the global
tensors, that the shards are left unchanged, and that bad shards (a count, a
shape, a missing buffer) are refused with a message naming them.

usage: run_shards.py LIBTPRT PROGRAM.so
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import HostTensor, Mesh, SessionOptions, TensorInfo, count  # noqa: E402


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.tprt_status_message.restype = ctypes.c_char_p
    rt.tprt_program_arg.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_result.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_mesh.restype = ctypes.POINTER(Mesh)
    rt.tprt_session_num_local_ranks.restype = ctypes.c_int64
    rt.tprt_session_local_rank.restype = ctypes.c_int64
    rt.tprt_session_local_rank.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run",
                 "tprt_session_run_shards", "tprt_scatter_shard", "tprt_gather_shards"):
        getattr(rt, name).restype = ctypes.c_void_p

    def message(status):
        text = rt.tprt_status_message(ctypes.c_void_p(status)).decode()
        rt.tprt_status_free(ctypes.c_void_p(status))
        return text

    def check(status, what):
        if status:
            sys.exit("%s: %s" % (what, message(status)))

    program = ctypes.c_void_p()
    check(rt.tprt_program_load(sys.argv[2].encode(), ctypes.byref(program)), "load")
    mesh = rt.tprt_program_mesh(program, 0)
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"local", 0)
    check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")
    ranks = [rt.tprt_session_local_rank(session, k)
             for k in range(rt.tprt_session_num_local_ranks(session))]
    print("local ranks:", ranks, "out of range:", rt.tprt_session_local_rank(session, len(ranks)))

    def host(info, shape, data):
        t = HostTensor(info.dtype, info.rank)
        for d in range(info.rank):
            t.shape[d] = shape[d]
        t.data = ctypes.cast(data, ctypes.c_void_p) if data is not None else None
        return t

    def shard_shape(info):
        local = (ctypes.c_int64 * 8)()
        rt.tprt_shard_shape(mesh, ctypes.byref(info.sharding), info.shape, local)
        return list(local)[:info.rank]

    def elements(shape):
        n = 1
        for s in shape:
            n *= s
        return n

    args = [rt.tprt_program_arg(program, 0, i).contents
            for i in range(rt.tprt_program_num_args(program, 0))]
    results = [rt.tprt_program_result(program, 0, i).contents
               for i in range(rt.tprt_program_num_results(program, 0))]
    rng = random.Random(0)
    inputs = [(ctypes.c_float * count(a))(*[rng.uniform(-1, 1) for _ in range(count(a))])
              for a in args]

    # The reference: global tensors in, global tensors out.
    want = [(ctypes.c_float * count(r))() for r in results]
    ins = (HostTensor * len(args))(*[host(a, a.shape, d) for a, d in zip(args, inputs)])
    outs = (HostTensor * len(results))(*[host(r, r.shape, d) for r, d in zip(results, want)])
    check(rt.tprt_session_run(session, program, 0, ins, len(args), outs, len(results)), "run")

    # Every local rank's shards, cut once.
    in_shards, out_shards = [], []
    for rank in ranks:
        for a, d in zip(args, inputs):
            buf = (ctypes.c_float * elements(shard_shape(a)))()
            check(rt.tprt_scatter_shard(mesh, ctypes.byref(a.sharding), a.shape, a.dtype, d,
                                        ctypes.c_int64(rank), buf), "scatter")
            in_shards.append((a, buf))
        for r in results:
            out_shards.append((r, (ctypes.c_float * elements(shard_shape(r)))()))
    cut = [list(buf) for _, buf in in_shards]
    sin = (HostTensor * len(in_shards))(*[host(a, shard_shape(a), b) for a, b in in_shards])
    sout = (HostTensor * len(out_shards))(*[host(r, shard_shape(r), b) for r, b in out_shards])

    for attempt in range(3):
        for _, buf in out_shards:
            ctypes.memset(buf, 0x7f, ctypes.sizeof(buf))  # results are written whole
        check(rt.tprt_session_run_shards(session, program, 0, sin, len(in_shards), sout,
                                         len(out_shards)), "run_shards")
        for i, r in enumerate(results):
            got = (ctypes.c_float * count(r))()
            shards = (ctypes.c_void_p * len(ranks))(
                *[ctypes.cast(out_shards[k * len(results) + i][1], ctypes.c_void_p)
                  for k in range(len(ranks))])
            check(rt.tprt_gather_shards(mesh, ctypes.byref(r.sharding), r.shape, r.dtype, shards,
                                        got), "gather")
            same = list(got) == list(want[i])
            print("run %d result #%d: %s" % (attempt, i, "same as the global run" if same
                                              else "DIFFERS from the global run"))
    print("input shards unchanged:", [list(buf) for _, buf in in_shards] == cut)

    # Refusals.
    def refused(inputs_, n_in, outputs_, n_out):
        status = rt.tprt_session_run_shards(session, program, 0, inputs_, n_in, outputs_, n_out)
        print("refused:", message(status) if status else "NOT REFUSED")

    refused(sin, len(in_shards) - 1, sout, len(out_shards))
    refused(sin, len(in_shards), sout, len(out_shards) + 1)
    wrong = (HostTensor * len(in_shards))(*sin)
    wrong[len(args) + 1] = host(args[1], args[1].shape, in_shards[len(args) + 1][1])
    refused(wrong, len(in_shards), sout, len(out_shards))
    missing = (HostTensor * len(out_shards))(*sout)
    missing[len(out_shards) - 1] = host(results[-1], shard_shape(results[-1]), None)
    refused(sin, len(in_shards), missing, len(out_shards))
    refused(None, len(in_shards), sout, len(out_shards))
    status = rt.tprt_session_run(session, program, 0, ins, len(args), None, len(results))
    print("run refused:", message(status) if status else "NOT REFUSED")
    rt.tprt_session_destroy(session)
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
