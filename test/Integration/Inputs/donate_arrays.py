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
from ctypes_run import Mesh, SessionOptions, TensorInfo, count  # noqa: E402


def main():
    rt = ctypes.CDLL(sys.argv[1])
    rt.tprt_status_message.restype = ctypes.c_char_p
    rt.tprt_status_code.restype = ctypes.c_int
    rt.tprt_code_name.restype = ctypes.c_char_p
    rt.tprt_program_arg.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_mesh.restype = ctypes.POINTER(Mesh)
    for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run_arrays",
                 "tprt_array_place", "tprt_array_fetch", "tprt_program_find_function"):
        getattr(rt, name).restype = ctypes.c_void_p

    def message(status):
        code = rt.tprt_code_name(rt.tprt_status_code(ctypes.c_void_p(status))).decode()
        text = rt.tprt_status_message(ctypes.c_void_p(status)).decode()
        rt.tprt_status_free(ctypes.c_void_p(status))
        return "%s: %s" % (code, text)

    def check(status, what):
        if status:
            sys.exit("%s: %s" % (what, message(status)))

    program = ctypes.c_void_p()
    check(rt.tprt_program_load(sys.argv[2].encode(), ctypes.byref(program)), "load")
    function = ctypes.c_int32()
    check(rt.tprt_program_find_function(program, b"sgd", ctypes.byref(function)), "find")
    f = function.value
    print("result #0's donor:", rt.tprt_program_donor(program, f, 0),
          "| out of range:", rt.tprt_program_donor(program, f, 1))
    mesh = rt.tprt_program_mesh(program, f)
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"local", 0)
    check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")
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
