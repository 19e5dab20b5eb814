"""Donation on arrays (tp.donate; tprt_session_run_arrays), through ctypes: an
SGD step whose weights are donated to its result runs three times, each run's
result fed back as the next run's weights, as a training loop carries them;
the weights fetched at the end are what three steps of w - 0.1 g give. The
handle donated to a run holds nothing after it, and using it again is an error
naming the run that took it; a donated array passed twice in one run is
refused.

usage: donate_arrays.py LIBTPRT PROGRAM.so
"""
import ctypes
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import count, open_program, open_runtime  # noqa: E402


def main():
    rt, message, check = open_runtime(sys.argv[1])
    program, f, session = open_program(rt, check, sys.argv[2], "sgd", "local")
    print("result #0's donor:", rt.tprt_program_donor(program, f, 0),
          "| out of range:", rt.tprt_program_donor(program, f, 1))
    info = rt.tprt_program_arg(program, f, 0)
    n = count(info.contents)
    rng = random.Random(0)
    w0 = [rng.uniform(-1, 1) for _ in range(n)]
    g = [rng.uniform(-1, 1) for _ in range(n)]

    def place(values):
        handle = ctypes.c_void_p()
        check(rt.tprt_array_place(session, info, (ctypes.c_float * n)(*values),
                                  ctypes.byref(handle)), "place")
        return handle

    def run(w, grad):
        out = (ctypes.c_void_p * 1)()
        status = rt.tprt_session_run_arrays(session, program, f,
                                            (ctypes.c_void_p * 2)(w.value, grad.value), 2,
                                            out, 1)
        return status, ctypes.c_void_p(out[0])

    w, grads = place(w0), place(g)
    first = w
    for step in range(3):
        status, new = run(w, grads)
        check(status, "step %d" % step)
        if w.value != first.value:
            rt.tprt_array_free(w)
        w = new
    got = (ctypes.c_float * n)()
    check(rt.tprt_array_fetch(w, got), "fetch")
    want = list(w0)
    for _ in range(3):  # as the program computes it, in f32
        want = [float(ctypes.c_float(a - float(ctypes.c_float(b * ctypes.c_float(0.1).value).value)).value)
                for a, b in zip(want, g)]
    print("weights after 3 steps on donated arrays:",
          "as computed" if max(abs(a - b) for a, b in zip(got, want)) < 1e-6 else "WRONG")
    status, _ = run(first, grads)
    print("the first weights again:", message(status) if status else "NOT REFUSED")
    status, _ = run(w, w)
    print("the same array twice:", message(status) if status else "NOT REFUSED")
    for h in (first, w, grads):
        rt.tprt_array_free(h)
    rt.tprt_session_destroy(session)
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
