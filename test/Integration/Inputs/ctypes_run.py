"""Runs compiled programs from Python through ctypes, the way the Python
package will: libtprt opened with RTLD_LOCAL (ctypes' default), MLIR's own C
runner utils (which export memrefCopy and friends) opened globally first, and
two programs loaded side by side. Runs the sharded program and the unsharded
one on the same inputs and compares every element.

usage: ctypes_run.py LIBTPRT SHARDED.so UNSHARDED.so [MLIR_RUNNER_UTILS]
"""
import ctypes
import random
import sys

MAX_MESH_RANK, MAX_TENSOR_RANK = 4, 8


class Axes(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int32), ("axes", ctypes.c_int32 * MAX_MESH_RANK)]


class Sharding(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("dims", Axes * MAX_TENSOR_RANK), ("partial", Axes)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_TENSOR_RANK), ("sharding", Sharding)]


class Mesh(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("sizes", ctypes.c_int64 * MAX_MESH_RANK)]


class HostTensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_TENSOR_RANK), ("data", ctypes.c_void_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("timeout_ms", ctypes.c_int64),
                ("backend", ctypes.c_char_p), ("partial_seed", ctypes.c_uint64)]


def main():
    if len(sys.argv) > 4:
        ctypes.CDLL(sys.argv[4], mode=ctypes.RTLD_GLOBAL)
    rt = ctypes.CDLL(sys.argv[1])  # RTLD_LOCAL
    rt.tprt_status_message.restype = ctypes.c_char_p
    rt.tprt_program_arg.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_result.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_mesh.restype = ctypes.POINTER(Mesh)
    for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run"):
        getattr(rt, name).restype = ctypes.c_void_p

    def check(status, what):
        if status:
            sys.exit("%s: %s" % (what, rt.tprt_status_message(ctypes.c_void_p(status)).decode()))

    def load(path):
        program = ctypes.c_void_p()
        check(rt.tprt_program_load(path.encode(), ctypes.byref(program)), "load " + path)
        return program

    def run(program, inputs):
        mesh = rt.tprt_program_mesh(program, 0)
        session = ctypes.c_void_p()
        options = SessionOptions(ctypes.sizeof(SessionOptions), 0, b"local", 0)
        check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)), "session")
        infos = [rt.tprt_program_result(program, 0, i).contents
                 for i in range(rt.tprt_program_num_results(program, 0))]
        outputs = [(ctypes.c_float * count(info))() for info in infos]
        ins = (HostTensor * len(inputs))(*[tensor(info, data) for info, data in inputs])
        outs = (HostTensor * len(outputs))(*[tensor(info, data) for info, data in zip(infos, outputs)])
        check(rt.tprt_session_run(session, program, 0, ins, len(inputs), outs, len(outputs)), "run")
        rt.tprt_session_destroy(session)
        devices = 1
        for d in range(mesh.contents.rank):
            devices *= mesh.contents.sizes[d]
        return devices, [list(o) for o in outputs]

    sharded, unsharded = load(sys.argv[2]), load(sys.argv[3])
    # Each program's checksum is the FNV-1a sum of the library as linked,
    # which tp-compile appended to it (runtime/src/ProgramFile.h).
    rt.tprt_program_checksum.restype = ctypes.c_uint64
    for program, path in ((sharded, sys.argv[2]), (unsharded, sys.argv[3])):
        with open(path, "rb") as f:
            data = f.read()
        want_sum = 0xcbf29ce484222325
        for byte in data[:-24]:
            want_sum = ((want_sum ^ byte) * 0x100000001b3) & 0xffffffffffffffff
        got_sum = rt.tprt_program_checksum(program)
        print("checksum of %s: %016x, trailer %016x, computed %016x"
              % (path.rsplit("/", 1)[-1], got_sum,
                 int.from_bytes(data[-8:], "little"), want_sum))
    rng = random.Random(0)
    inputs = []
    for i in range(rt.tprt_program_num_args(sharded, 0)):
        info = rt.tprt_program_arg(sharded, 0, i).contents
        assert info.dtype == 0, "f32 programs only"
        inputs.append((info, (ctypes.c_float * count(info))(*[rng.uniform(-1, 1) for _ in range(count(info))])))
    devices, got = run(sharded, inputs)
    _, want = run(unsharded, inputs)
    # Per element, relative to its magnitude, with a floor for values that
    # are near zero by cancellation.
    floor = 1e-3 * max(abs(b) for w in want for b in w)
    worst = max(abs(a - b) / (abs(b) + floor) for g, w in zip(got, want) for a, b in zip(g, w))
    print("ran on %d devices and on 1 through ctypes; worst relative error %.2g: %s"
          % (devices, worst, "PASS" if worst < 1e-3 else "FAIL"))
    sys.exit(0 if worst < 1e-3 else 1)


def open_runtime(path):
    """libtprt through ctypes with the signatures the array scripts call, and
    message(status) ("CODE: text", the status freed) and check(status, what)
    (exits naming `what` on a failure)."""
    rt = ctypes.CDLL(path)
    rt.tprt_status_message.restype = ctypes.c_char_p
    rt.tprt_status_code.restype = ctypes.c_int
    rt.tprt_code_name.restype = ctypes.c_char_p
    rt.tprt_program_arg.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_result.restype = ctypes.POINTER(TensorInfo)
    rt.tprt_program_mesh.restype = ctypes.POINTER(Mesh)
    rt.tprt_session_local_rank.restype = ctypes.c_int64
    rt.tprt_session_local_rank.argtypes = [ctypes.c_void_p, ctypes.c_int64]
    for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run",
                 "tprt_session_run_arrays", "tprt_array_place", "tprt_array_fetch",
                 "tprt_array_write", "tprt_program_find_function"):
        getattr(rt, name).restype = ctypes.c_void_p

    def message(status):
        code = rt.tprt_code_name(rt.tprt_status_code(ctypes.c_void_p(status))).decode()
        text = rt.tprt_status_message(ctypes.c_void_p(status)).decode()
        rt.tprt_status_free(ctypes.c_void_p(status))
        return "%s: %s" % (code, text)

    def check(status, what):
        if status:
            sys.exit("%s: %s" % (what, message(status)))

    return rt, message, check


def open_program(rt, check, path, function, backend):
    """Program `path` loaded, the index of its `function`, and a session of
    `backend` on that function's mesh."""
    program = ctypes.c_void_p()
    check(rt.tprt_program_load(path.encode(), ctypes.byref(program)), "load " + path)
    index = ctypes.c_int32()
    check(rt.tprt_program_find_function(program, function.encode(), ctypes.byref(index)),
          "find " + function)
    mesh = rt.tprt_program_mesh(program, index)
    session = ctypes.c_void_p()
    options = SessionOptions(ctypes.sizeof(SessionOptions), 0, backend.encode(), 0)
    check(rt.tprt_session_create(mesh, ctypes.byref(options), ctypes.byref(session)),
          "session")
    return program, index.value, session


def count(info):
    n = 1
    for d in range(info.rank):
        n *= info.shape[d]
    return n


def tensor(info, data):
    t = HostTensor(info.dtype, info.rank)
    for d in range(info.rank):
        t.shape[d] = info.shape[d]
    t.data = ctypes.cast(data, ctypes.c_void_p)
    return t


if __name__ == "__main__":
    main()
