"""CUDA graphs on a session's arrays, under the counting fake of CUDA (whose
copies are real): function `cut` of graphs.mlir on 4 `nccl` ranks, its results
checked against its input on every run.

- Run 1 is the warm-up (op by op), run 2 is captured and launched.
- Run 3 finds run 2's result still held: its result goes to a new buffer, so
  the graph is captured again and updated in place (cuGraphExecUpdate).
- Once the results are freed, run 4 writes in run 3's buffers: a replay, with
  no capture, allocation or launch of its own.
- A new input (other addresses) is captured again, and its values come out.

usage: graphs.py LIBTPRT GRAPHS.so   (libcuda.so.1 the fake, first on
LD_LIBRARY_PATH)
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import count, open_program, open_runtime  # noqa: E402

COUNTERS = ("cuStreamBeginCapture", "cuGraphInstantiate", "cuGraphExecUpdate",
            "cuGraphLaunch", "cuMemcpy2DAsync", "cuMemAllocAsync")


def main():
    rt, _, check = open_runtime(sys.argv[1])
    fake = ctypes.CDLL("libcuda.so.1")
    fake.tprtFakeCounter.restype = ctypes.c_longlong
    fake.tprtFakeCounter.argtypes = [ctypes.c_char_p]
    program, function, session = open_program(rt, check, sys.argv[2], "cut", "nccl")
    info = rt.tprt_program_arg(program, function, 0)
    n = count(info.contents)
    rng = random.Random(0)

    def place(values):
        handle = ctypes.c_void_p()
        data = (ctypes.c_float * n)(*values)
        check(rt.tprt_array_place(session, info, data, ctypes.byref(handle)), "place")
        return handle

    before = {name: 0 for name in COUNTERS}

    def run(label, x, want):
        for name in COUNTERS:
            before[name] = fake.tprtFakeCounter(name.encode())
        ins = (ctypes.c_void_p * 1)(x)
        outs = (ctypes.c_void_p * 1)()
        check(rt.tprt_session_run_arrays(session, program, function, ins, 1, outs, 1), label)
        got = (ctypes.c_float * n)()
        check(rt.tprt_array_fetch(ctypes.c_void_p(outs[0]), got), "fetch")
        counts = " ".join("%s %d" % (name, fake.tprtFakeCounter(name.encode()) - before[name])
                          for name in COUNTERS)
        print("%s: %s; result %s" % (label, counts, "as the input" if list(got) == want else "WRONG"))
        return ctypes.c_void_p(outs[0])

    values = [rng.uniform(-1, 1) for _ in range(n)]
    values = list((ctypes.c_float * n)(*values))  # as f32
    x = place(values)
    first = run("warm-up", x, values)
    rt.tprt_array_free(first)
    second = run("second", x, values)
    third = run("third, the second's result held", x, values)
    rt.tprt_array_free(second)
    rt.tprt_array_free(third)
    fourth = run("fourth, results freed", x, values)
    rt.tprt_array_free(fourth)
    fifth = run("fifth", x, values)
    rt.tprt_array_free(fifth)
    other = list((ctypes.c_float * n)(*[v + 1 for v in values]))
    y = place(other)
    sixth = run("a new input", y, other)
    rt.tprt_array_free(sixth)
    rt.tprt_array_free(x)
    rt.tprt_array_free(y)
    rt.tprt_session_destroy(session)
    print("device memory in use after the session: %d bytes" % fake.tprtFakeCounter(b"bytes.live"))
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
