"""Placement that runs out of device memory, under the counting fake of CUDA
(TPRT_FAKE_CUDA_MEMORY bounds each fake GPU): the arguments of a CUDA program
are placed on a `device` session one by one until one does not fit; the
refusal names the rank and the call, and the device memory in use afterwards
is what it was before that placement (nothing left behind). The session then
still runs on what was placed, and destroying it frees everything.

usage: place_oom.py LIBTPRT PROGRAM.so   (libcuda.so.1 the fake, first on
LD_LIBRARY_PATH)
"""
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ctypes_run import SessionOptions, count, open_runtime  # noqa: E402


def main():
    rt, message, _ = open_runtime(sys.argv[1])
    fake = ctypes.CDLL("libcuda.so.1")
    fake.tprtFakeCounter.restype = ctypes.c_longlong
    fake.tprtFakeCounter.argtypes = [ctypes.c_char_p]

    program = ctypes.c_void_p()
    assert not rt.tprt_program_load(sys.argv[2].encode(), ctypes.byref(program))
    mesh = rt.tprt_program_mesh(program, 0)
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"device", 0)
    assert not rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session))
    placed = []
    for i in range(rt.tprt_program_num_args(program, 0)):
        info = rt.tprt_program_arg(program, 0, i)
        data = (ctypes.c_float * count(info.contents))()
        live = fake.tprtFakeCounter(b"bytes.live")
        handle = ctypes.c_void_p()
        status = rt.tprt_array_place(session, info, data, ctypes.byref(handle))
        if status:
            print("input #%d refused: %s" % (i, message(status)))
            print("device memory in use after the refusal: %s" % (
                "as before" if fake.tprtFakeCounter(b"bytes.live") == live else "CHANGED"))
            break
        placed.append(handle)
    print("placed before running out: %d" % len(placed))
    for handle in placed:
        rt.tprt_array_free(handle)
    rt.tprt_session_destroy(session)
    print("device memory in use after the session: %d bytes" % fake.tprtFakeCounter(b"bytes.live"))
    rt.tprt_program_destroy(program)


if __name__ == "__main__":
    main()
