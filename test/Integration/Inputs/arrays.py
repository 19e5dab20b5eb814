"""Arrays placed on a session's devices (tprt_array_*, tprt_session_run_arrays),
through ctypes as an embedding program uses them:

  runs PROGRAM.so   places every input once, runs three times on the placed
                    arrays, fetches each result and compares it with what
                    tprt_session_run gives on the same global tensors (exactly);
                    feeds a result array back as the next run's input; places
                    from shards and fetches them back; then every misuse: an
                    array of another argument, of another session, freed,
                    freed with its session, counts and nulls.
  replicas PROGRAM.so
                    'disagree' declares its result replicated but device 1's copy
                    differs: fetching the result array says which devices differ.

usage: arrays.py LIBTPRT {runs|replicas} PROGRAM.so
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import (HostTensor, SessionOptions, TensorInfo, count,  # noqa: E402
                        open_runtime)


def main():
    rt, message, check = open_runtime(sys.argv[1])
    mode, path = sys.argv[2], sys.argv[3]
    rt.tprt_array_info.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_array_id.restype = ctypes.c_uint64
    rt.tprt_array_fetch_shard.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
    for name in ("tprt_array_place_shards", "tprt_array_fetch_shard", "tprt_scatter_shard"):
        getattr(rt, name).restype = ctypes.c_void_p

    def refused(status):
        print("refused:", message(status) if status else "NOT REFUSED")

    program = ctypes.c_void_p()
    check(rt.tprt_program_load(path.encode(), ctypes.byref(program)), "load")
    function = ctypes.c_int32(0)
    if mode == "replicas":
        check(rt.tprt_program_find_function(program, b"disagree", ctypes.byref(function)),
              "find")
    f = function.value
    mesh = rt.tprt_program_mesh(program, f)
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"local", 0)

    def new_session():
        s = ctypes.c_void_p()
        check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(s)), "session")
        return s

    session = new_session()
    args = [rt.tprt_program_arg(program, f, i)
            for i in range(rt.tprt_program_num_args(program, f))]
    results = [rt.tprt_program_result(program, f, i)
               for i in range(rt.tprt_program_num_results(program, f))]
    rng = random.Random(0)
    inputs = [(ctypes.c_float * count(a.contents))(
        *[rng.uniform(-1, 1) for _ in range(count(a.contents))]) for a in args]

    def host(info, data):
        t = HostTensor(info.dtype, info.rank)
        for d in range(info.rank):
            t.shape[d] = info.shape[d]
        t.data = ctypes.cast(data, ctypes.c_void_p)
        return t

    def place(s, info, data):
        a = ctypes.c_void_p()
        check(rt.tprt_array_place(s, info, data, ctypes.byref(a)), "place")
        return a

    def fetch(a, info):
        out = (ctypes.c_float * count(info.contents))()
        check(rt.tprt_array_fetch(a, out), "fetch")
        return list(out)

    def run_arrays(s, arrays, n_out=len(results)):
        ins = (ctypes.c_void_p * max(len(arrays), 1))(*arrays)
        outs = (ctypes.c_void_p * max(n_out, 1))()
        status = rt.tprt_session_run_arrays(s, program, f, ins, len(arrays), outs, n_out)
        return status, list(outs)[:n_out]

    placed = [place(session, a, d) for a, d in zip(args, inputs)]

    if mode == "replicas":
        status, outs = run_arrays(session, placed)
        check(status, "run")
        out = (ctypes.c_float * count(results[0].contents))()
        refused(rt.tprt_array_fetch(ctypes.c_void_p(outs[0]), out))
        rt.tprt_session_destroy(session)
        return

    # The reference: global tensors in and out.
    want = [(ctypes.c_float * count(r.contents))() for r in results]
    ins = (HostTensor * len(args))(*[host(a.contents, d) for a, d in zip(args, inputs)])
    outs = (HostTensor * len(results))(*[host(r.contents, d) for r, d in zip(results, want)])
    check(rt.tprt_session_run(session, program, f, ins, len(args), outs, len(results)), "run")

    for attempt in range(3):
        status, got = run_arrays(session, placed)
        check(status, "run on arrays")
        same = all(fetch(ctypes.c_void_p(g), r) == list(w)
                   for g, r, w in zip(got, results, want))
        print("run %d on placed arrays: %s" % (
            attempt, "same as the global run" if same else "DIFFERS from the global run"))
        for g in got:
            rt.tprt_array_free(ctypes.c_void_p(g))
    print("inputs unchanged:", all(fetch(p, a) == list(d) for p, a, d in zip(placed, args, inputs)))

    # A result fed back as an input: the same as placing its fetched values.
    status, got = run_arrays(session, placed)
    check(status, "run")
    first = ctypes.c_void_p(got[0])
    values = fetch(first, results[0])
    status, chained = run_arrays(session, [first] + placed[1:])
    check(status, "chained run")
    again = place(session, args[0], (ctypes.c_float * len(values))(*values))
    status, direct = run_arrays(session, [again] + placed[1:])
    check(status, "run")
    print("a result fed back as input #0: %s" % (
        "same as its values placed" if fetch(ctypes.c_void_p(chained[0]), results[0]) ==
        fetch(ctypes.c_void_p(direct[0]), results[0]) else "DIFFERS"))
    info = rt.tprt_array_info(first).contents
    print("result array: id %s, f32[%d, %d]" % (
        "> 0" if rt.tprt_array_id(first) > 0 else "0", info.shape[0], info.shape[1]))

    # New values written into a placed array (tprt_array_write): the same array
    # now holds them, split as placing them would (w1 is split by columns),
    # and a run reads them.
    w1 = args[1].contents
    doubled = (ctypes.c_float * count(w1))(*[2 * v for v in inputs[1]])
    check(rt.tprt_array_write(placed[1], doubled), "write")
    written = fetch(placed[1], args[1]) == list(doubled)
    status, got = run_arrays(session, placed)
    check(status, "run after write")
    fresh = place(session, args[1], doubled)
    status, direct_w = run_arrays(session, [placed[0], fresh] + placed[2:])
    check(status, "run")
    print("written into placed w1: %s; a run reads it: %s" % (
        written, fetch(ctypes.c_void_p(got[0]), results[0]) ==
        fetch(ctypes.c_void_p(direct_w[0]), results[0])))
    check(rt.tprt_array_write(placed[1], inputs[1]), "write back")
    for a in got + direct_w:
        rt.tprt_array_free(ctypes.c_void_p(a))
    rt.tprt_array_free(fresh)

    # Placed from shards, fetched back by shard.
    w1 = args[1].contents
    ranks = [rt.tprt_session_local_rank(session, k) for k in range(4)]
    local = (ctypes.c_int64 * 8)()
    rt.tprt_shard_shape(mesh, ctypes.byref(w1.sharding), w1.shape, local)
    shard_count = local[0] * local[1]
    shards = []
    for r in ranks:
        buf = (ctypes.c_float * shard_count)()
        check(rt.tprt_scatter_shard(mesh, ctypes.byref(w1.sharding), w1.shape, w1.dtype,
                                    inputs[1], ctypes.c_int64(r), buf), "scatter")
        shards.append(buf)
    from_shards = ctypes.c_void_p()
    check(rt.tprt_array_place_shards(session, args[1],
                                     (ctypes.c_void_p * 4)(*[ctypes.cast(b, ctypes.c_void_p)
                                                             for b in shards]),
                                     4, ctypes.byref(from_shards)), "place shards")
    print("placed from shards, fetched whole:", fetch(from_shards, args[1]) == list(inputs[1]))
    back = (ctypes.c_float * shard_count)()
    check(rt.tprt_array_fetch_shard(from_shards, 2, back), "fetch shard")
    print("rank 2's shard fetched:", list(back) == list(shards[2]))
    refused(rt.tprt_array_fetch_shard(from_shards, 4, back))

    # Misuse.
    refused(run_arrays(session, [placed[1]] + placed[1:])[0])
    resharded = TensorInfo()
    ctypes.pointer(resharded)[0] = args[0].contents
    resharded.sharding.dims[1].count = 1
    resharded.sharding.dims[1].axes[0] = 0
    split_x = place(session, ctypes.pointer(resharded), inputs[0])
    refused(run_arrays(session, [split_x] + placed[1:])[0])
    rt.tprt_array_free(split_x)
    refused(run_arrays(session, placed[:-1])[0])
    refused(run_arrays(session, placed, len(results) + 1)[0])
    other = new_session()
    foreign = place(other, args[0], inputs[0])
    refused(run_arrays(session, [foreign] + placed[1:])[0])
    rt.tprt_array_free(again)
    refused(run_arrays(session, [again] + placed[1:])[0])
    refused(rt.tprt_array_fetch(again, (ctypes.c_float * 1)()))
    refused(rt.tprt_array_write(again, inputs[0]))
    refused(rt.tprt_array_write(placed[0], None))
    rt.tprt_session_destroy(other)
    refused(run_arrays(session, [foreign] + placed[1:])[0])
    refused(rt.tprt_array_fetch(foreign, (ctypes.c_float * count(args[0].contents))()))
    refused(rt.tprt_array_write(foreign, inputs[0]))
    rt.tprt_array_free(foreign)
    bad = TensorInfo()
    ctypes.pointer(bad)[0] = args[1].contents
    bad.shape[1] = 2047
    refused(rt.tprt_array_place(session, ctypes.byref(bad), inputs[1], ctypes.byref(ctypes.c_void_p())))
    refused(rt.tprt_array_place(session, args[1], None, ctypes.byref(ctypes.c_void_p())))
    # Destroyed with live arrays: their memory goes with it, the handles stay.
    rt.tprt_session_destroy(session)
    refused(rt.tprt_array_fetch(placed[0], (ctypes.c_float * count(args[0].contents))()))
    for a in placed + [first, from_shards] + [ctypes.c_void_p(c) for c in chained + direct]:
        rt.tprt_array_free(a)
    rt.tprt_array_free(placed[0])  # again: ignored
    print("every handle freed")
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
