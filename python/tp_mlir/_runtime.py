"""libtprt through ctypes: load a program library, run one of its functions on
the simulated devices of its mesh, numpy arrays in and out.

The runtime is opened with RTLD_LOCAL (ctypes' default): a program library
reaches it through the function table in its rank context, never through the
global symbol scope.
"""
import atexit
import ctypes

import numpy as np

from . import _tools
from .errors import RuntimeError_

MAX_MESH_RANK, MAX_TENSOR_RANK = 4, 8

# tprt_dtype -> (name, numpy storage dtype). bf16 has no numpy dtype: it is
# stored as uint16 (its bits).
DTYPES = {0: ("f32", np.float32), 1: ("f64", np.float64), 2: ("f16", np.float16),
          3: ("bf16", np.uint16), 4: ("i32", np.int32), 5: ("i64", np.int64)}


class _Axes(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int32), ("axes", ctypes.c_int32 * MAX_MESH_RANK)]


class _Sharding(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("dims", _Axes * MAX_TENSOR_RANK),
                ("partial", _Axes)]


class _TensorInfo(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_TENSOR_RANK), ("sharding", _Sharding),
                ("name", ctypes.c_char_p)]


class _Mesh(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("sizes", ctypes.c_int64 * MAX_MESH_RANK)]


class _HostTensor(ctypes.Structure):
    _fields_ = [("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_TENSOR_RANK), ("data", ctypes.c_void_p)]


class _SessionOptions(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("timeout_ms", ctypes.c_int64),
                ("backend", ctypes.c_char_p), ("partial_seed", ctypes.c_uint64),
                ("device_timing", ctypes.c_int32), ("skip_replica_check", ctypes.c_int32),
                ("no_graphs", ctypes.c_int32)]


class _DeviceProfile(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("kernel_launches", ctypes.c_int64),
                ("kernel_seconds", ctypes.c_double), ("gemm_calls", ctypes.c_int64),
                ("gemm_seconds", ctypes.c_double), ("collective_calls", ctypes.c_int64 * 5),
                ("collective_seconds", ctypes.c_double * 5), ("copies", ctypes.c_int64),
                ("copy_seconds", ctypes.c_double), ("run_seconds", ctypes.c_double),
                ("graph_launches", ctypes.c_int64)]


class _Comparison(ctypes.Structure):
    _fields_ = [("elements", ctypes.c_int64), ("bad", ctypes.c_int64),
                ("worst", ctypes.c_int64), ("worst_ratio", ctypes.c_double),
                ("worst_got", ctypes.c_double), ("worst_want", ctypes.c_double),
                ("tolerance", ctypes.c_double), ("floor", ctypes.c_double),
                ("nan_in_both", ctypes.c_int64)]


_lib = None


def library():
    """libtprt, opened once."""
    global _lib
    if _lib is None:
        lib = ctypes.CDLL(_tools.find_runtime())
        lib.tprt_status_message.restype = ctypes.c_char_p
        lib.tprt_status_message.argtypes = [ctypes.c_void_p]
        lib.tprt_status_free.argtypes = [ctypes.c_void_p]
        lib.tprt_status_code.argtypes = [ctypes.c_void_p]
        lib.tprt_session_check.argtypes = [ctypes.c_void_p]
        lib.tprt_session_device_profile.argtypes = [ctypes.c_void_p, ctypes.c_int64,
                                                    ctypes.POINTER(_DeviceProfile)]
        lib.tprt_session_device_profile.restype = ctypes.c_void_p
        lib.tprt_session_check.restype = ctypes.c_void_p
        lib.tprt_status_code.restype = ctypes.c_int
        for name in ("tprt_program_load", "tprt_session_create", "tprt_session_run",
                     "tprt_program_find_function", "tprt_array_place", "tprt_array_fetch",
                     "tprt_session_run_arrays"):
            getattr(lib, name).restype = ctypes.c_void_p
        lib.tprt_array_place.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.POINTER(ctypes.c_void_p)]
        lib.tprt_array_fetch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.tprt_array_write.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        lib.tprt_array_write.restype = ctypes.c_void_p
        lib.tprt_array_free.argtypes = [ctypes.c_void_p]
        lib.tprt_session_run_arrays.argtypes = [
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int32]
        lib.tprt_program_arg.restype = ctypes.POINTER(_TensorInfo)
        lib.tprt_program_result.restype = ctypes.POINTER(_TensorInfo)
        lib.tprt_program_mesh.restype = ctypes.POINTER(_Mesh)
        lib.tprt_program_destroy.argtypes = [ctypes.c_void_p]
        lib.tprt_session_destroy.argtypes = [ctypes.c_void_p]
        lib.tprt_program_target.restype = ctypes.c_char_p
        lib.tprt_tolerance.restype = ctypes.c_double
        lib.tprt_tolerance.argtypes = [ctypes.c_int, ctypes.c_char_p]
        lib.tprt_compare.restype = ctypes.c_void_p
        lib.tprt_compare.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_int64, ctypes.c_double, ctypes.c_char_p,
                                     ctypes.c_double, ctypes.c_double,
                                     ctypes.POINTER(_Comparison)]
        for name in ("tprt_backend_name", "tprt_backend_target", "tprt_target_name",
                     "tprt_target_default_backend"):
            getattr(lib, name).restype = ctypes.c_char_p
        lib.tprt_backend_name.argtypes = [ctypes.c_int32]
        lib.tprt_target_name.argtypes = [ctypes.c_int32]
        for name in ("tprt_backend_target", "tprt_backend_processes",
                     "tprt_target_on_device", "tprt_target_default_backend"):
            getattr(lib, name).argtypes = [ctypes.c_char_p]
        _lib = lib
    return _lib


class Target:
    """A target of this build (tprt_targets.def): its name, whether its ranks
    keep tensors on a device, its default communicator, and its
    communicators that run in this process."""

    def __init__(self, name, on_device, default_backend, backends):
        self.name = name
        self.on_device = on_device
        self.default_backend = default_backend
        self.backends = backends


def targets():
    """{name: Target} for every target the runtime knows, in its order."""
    lib = library()
    backends = [lib.tprt_backend_name(i).decode() for i in range(lib.tprt_num_backends())]
    out = {}
    for i in range(lib.tprt_num_targets()):
        name = lib.tprt_target_name(i)
        in_process = [b for b in backends
                      if lib.tprt_backend_target(b.encode()) == name and
                      lib.tprt_backend_processes(b.encode()) == 0]
        out[name.decode()] = Target(name.decode(), lib.tprt_target_on_device(name) == 1,
                                    lib.tprt_target_default_backend(name).decode(),
                                    in_process)
    return out


def backend_target(backend):
    """The target whose programs communicator `backend` runs, or None for a
    backend this build does not have."""
    name = library().tprt_backend_target(backend.encode())
    return name.decode() if name is not None else None


def tolerance(code, precision="highest"):
    """The runtime's relative tolerance of a result of tprt_dtype `code`
    (tprt_tolerance: the one tp-run --verify uses)."""
    return library().tprt_tolerance(code, precision.encode())


def compare(got, want, rtol, floor=0.0):
    """tprt_compare of two float64 arrays of one shape, with relative
    tolerance `rtol` (0: exact) and magnitude floor at least `floor`: the
    worst |got - want| / allowance, and the number of elements over it."""
    got = np.ascontiguousarray(got, dtype=np.float64)
    want = np.ascontiguousarray(want, dtype=np.float64)
    out = _Comparison()
    f64 = 1
    _check(library().tprt_compare(f64, got.ctypes.data, want.ctypes.data, got.size,
                                  rtol, None, floor, 0.0, ctypes.byref(out)),
           "tprt_compare")
    return out.worst_ratio, out.bad


def _check(status, what):
    if status:
        lib = library()
        message = lib.tprt_status_message(status).decode(errors="replace")
        lib.tprt_status_free(status)
        raise RuntimeError_("%s: %s" % (what, message))


_TPRT_INVALID_ARGUMENT = 1


def _broke_session(status, session):
    """Whether a run's failure left its session unable to run: not a refusal
    of its inputs (a wrong shape, a donated array passed again), which runs
    nothing; a failure inside the ranks (an offset out of bounds) does."""
    if not status:
        return False
    lib = library()
    if lib.tprt_status_code(status) != _TPRT_INVALID_ARGUMENT:
        return True
    broken = lib.tprt_session_check(session)
    if broken:
        lib.tprt_status_free(broken)
    return bool(broken)


class TensorSpec:
    """What the manifest says of one argument or result."""

    def __init__(self, info):
        self.dtype, self.np_dtype = DTYPES[info.dtype]
        self.code = info.dtype
        self.shape = tuple(info.shape[d] for d in range(info.rank))
        self.name = (info.name or b"").decode()

    def __repr__(self):
        return "%s%s%s" % (self.name + ": " if self.name else "", self.dtype,
                           list(self.shape))


class _Session:
    """A tprt session shared by every program of one mesh and set of session
    options, so that the arrays one program's run leaves on the devices feed
    another's (a prefill program's KV cache, the decode step's). Made on the
    first run that asks for it, kept until a run on it fails (its world is
    then aborted: the next run makes another) or the process exits."""

    def __init__(self, handle):
        self.handle = handle
        self.alive = True


_shared = {}


def _shared_session(mesh, key):
    sizes = tuple(mesh.contents.sizes[d] for d in range(mesh.contents.rank))
    session = _shared.get((sizes, key))
    if session is None:
        backend, partial_seed, timeout_ms, graphs = key[:4]
        timing = len(key) > 4 and key[4]
        options = _SessionOptions(ctypes.sizeof(_SessionOptions), timeout_ms,
                                  backend.encode(), partial_seed, 1 if timing else 0, 0,
                                  0 if graphs else 1)
        handle = ctypes.c_void_p()
        _check(library().tprt_session_create(mesh, ctypes.byref(options),
                                             ctypes.byref(handle)), "creating a session")
        session = _shared[(sizes, key)] = _Session(handle)
    return session


def _drop_shared(session):
    """Destroys a session whose world failed (its arrays' memory with it)."""
    for k in [k for k, v in _shared.items() if v is session]:
        del _shared[k]
    if session.alive:
        session.alive = False
        library().tprt_session_destroy(session.handle)


@atexit.register
def _destroy_sessions():
    for session in list(_shared.values()):
        _drop_shared(session)


class DeviceArray:
    """A program's result kept on its session's devices (a runtime array):
    what `Program(..., keep=...)` returns, passed to a later call of any
    program of the same mesh and backend without moving through the host, as
    jax.Array is. `numpy()` fetches it. A donated one (`donate=`) is the
    result's after the call that took it, and holds nothing."""

    def __init__(self, handle, spec, session):
        self._handle, self._session = handle, session
        self.shape, self.dtype, self._np_dtype = spec.shape, spec.dtype, spec.np_dtype

    def numpy(self):
        if not self._session.alive:
            raise RuntimeError_("this array's session failed; its memory is gone")
        out = np.empty(self.shape, self._np_dtype)
        _check(library().tprt_array_fetch(self._handle, out.ctypes.data_as(ctypes.c_void_p)),
               "fetching an array")
        return out

    def __repr__(self):
        return "DeviceArray(%s%s)" % (self.dtype, list(self.shape))

    def __del__(self):
        if _lib is not None and self._session.alive and self._handle:
            _lib.tprt_array_free(self._handle)
        self._handle = None


class LoadedProgram:
    """One function of a program library, loaded, and the sessions that run
    it: one per mesh and set of session options (_Session), shared with the
    other programs of that mesh. Arguments given with a key (`run(keys=...)`)
    stay placed on the session's devices between runs (runtime arrays) for as
    long as their key does not change; a DeviceArray argument is read where
    it is."""

    def __init__(self, path, function):
        lib = library()
        self._handle = ctypes.c_void_p()
        _check(lib.tprt_program_load(path.encode(), ctypes.byref(self._handle)),
               "loading " + path)
        index = ctypes.c_int32()
        _check(lib.tprt_program_find_function(self._handle, function.encode(),
                                              ctypes.byref(index)), path)
        self._function = index.value
        self.args = [TensorSpec(lib.tprt_program_arg(self._handle, self._function, i).contents)
                     for i in range(lib.tprt_program_num_args(self._handle, self._function))]
        self.results = [TensorSpec(lib.tprt_program_result(self._handle, self._function, i).contents)
                        for i in range(lib.tprt_program_num_results(self._handle, self._function))]
        self._mesh = lib.tprt_program_mesh(self._handle, self._function)
        self.target = lib.tprt_program_target(self._handle).decode()
        self._sessions = {}
        # (session options, argument index) -> (key, array handle)
        self._resident = {}
        # (session options, argument index) -> the array an unkeyed input is
        # written into at each call (tprt_array_write): its device addresses
        # stay, so that a CUDA graph of the call replays.
        self._inputs = {}
        # Arguments donated to a result: their arrays are the results' after
        # a run, so they are placed anew.
        self._donated = set()
        for r in range(lib.tprt_program_num_results(self._handle, self._function)):
            donor = lib.tprt_program_donor(self._handle, self._function, r)
            if donor >= 0:
                self._donated.add(donor)
        # Arguments placed on the devices so far (resident or not).
        self.placements = 0
        self.num_devices = 1
        for d in range(self._mesh.contents.rank):
            self.num_devices *= self._mesh.contents.sizes[d]

    def _session(self, key):
        """The session handle of options `key`, shared (_Session)."""
        session = _shared_session(self._mesh, key)
        self._sessions[key] = session
        return session.handle

    def _drop_session(self, key):
        """Destroys a session whose run failed (its arrays' memory with it)
        and forgets the resident arguments placed on it."""
        for (skey, i) in [k for k in self._resident if k[0] == key]:
            self._resident.pop((skey, i))
        for (skey, i) in [k for k in self._inputs if k[0] == key]:
            self._inputs.pop((skey, i))
        session = self._sessions.pop(key, None)
        if session is not None:
            _drop_shared(session)

    def place(self):
        """Forgets every resident argument: the next run places them all
        again."""
        lib = library()
        for key in list(self._resident):
            lib.tprt_array_free(self._resident.pop(key)[1])
        for key in list(self._inputs):
            lib.tprt_array_free(self._inputs.pop(key))

    def run(self, arrays, backend="local", partial_seed=0, timeout_ms=0, keys=None,
            keep=(), graphs=True):
        """Runs the function on every device of its mesh; `arrays` are numpy
        arrays in the manifest's dtypes (bf16 as uint16 bits).

        With `keys` (one per argument, None for none), each argument with a
        key is placed on the devices once and kept there: a later run that
        gives the same key reuses it without reading its array, which may then
        be a callable returning it, called only when it must be placed. The
        other arguments are placed for this run alone. The results whose
        indices are in `keep` stay on the devices: DeviceArrays. `graphs`:
        on GPU ranks, runs on placed arrays replay CUDA graphs
        (tprt_session_options.no_graphs when false)."""
        if keys is not None:
            return self._run_placed(arrays, keys, (backend, partial_seed, timeout_ms, graphs),
                                    keep)
        lib = library()
        inputs = [np.require(a, requirements="C") for a in arrays]
        outputs = [np.empty(spec.shape, spec.np_dtype) for spec in self.results]
        ins = (_HostTensor * max(len(inputs), 1))()
        for i, (spec, array) in enumerate(zip(self.args, inputs)):
            ins[i] = _host_tensor(spec.code if array.dtype == spec.np_dtype else -1, array)
        outs = (_HostTensor * max(len(outputs), 1))()
        for i, (spec, array) in enumerate(zip(self.results, outputs)):
            outs[i] = _host_tensor(spec.code, array)
        key = (backend, partial_seed, timeout_ms, graphs)
        session = self._session(key)
        status = lib.tprt_session_run(session, self._handle, self._function, ins,
                                      len(inputs), outs, len(outputs))
        if _broke_session(status, session):
            # A failed run leaves its session unable to run again.
            self._drop_session(key)
        _check(status, "running")
        return outputs

    def _checked(self, index, array, doing):
        """`array` as a C-contiguous numpy array of argument `index`'s dtype
        and shape, or a RuntimeError_ saying what it is instead."""
        spec = self.args[index]
        array = np.require(array, requirements="C")
        if array.dtype != spec.np_dtype or tuple(array.shape) != spec.shape:
            raise RuntimeError_("%s input #%d%s: it is %s%s; the program expects %s%s" % (
                doing, index, " ('%s')" % spec.name if spec.name else "", array.dtype,
                list(array.shape), spec.dtype, list(spec.shape)))
        self.placements += 1
        return array

    def _place(self, session, index, array):
        lib = library()
        array = self._checked(index, array, "placing")
        handle = ctypes.c_void_p()
        _check(lib.tprt_array_place(session, lib.tprt_program_arg(self._handle, self._function,
                                                                  index),
                                    array.ctypes.data_as(ctypes.c_void_p),
                                    ctypes.byref(handle)),
               "placing input #%d" % index)
        return handle

    def _write(self, index, handle, array):
        array = self._checked(index, array, "writing")
        _check(library().tprt_array_write(handle, array.ctypes.data_as(ctypes.c_void_p)),
               "writing input #%d" % index)

    def benchmark(self, arrays, keys, repeat, warmup, backend="local", graphs=True):
        """Times runs on arrays placed once: the keyed arguments resident as
        for run(), the others placed once for the whole loop; `warmup` runs,
        then `repeat` timed runs whose results stay on the devices (freed,
        never fetched). On GPU ranks each run is also timed on the devices
        (CUDA events around it on every rank's stream: the slowest rank's),
        on a session of its own with device timing. Returns (seconds to
        place, [seconds per run], [device seconds per run] or None, graph
        launches of the last run)."""
        import time
        lib = library()
        gpu = targets()[self.target].on_device
        # On GPU ranks a session that times every run (its parameters placed
        # on it again); on the CPU the calls' own.
        skey = (backend, 0, 0, graphs, True) if gpu else (backend, 0, 0, graphs)
        session = self._session(skey)
        handles, temporary = [], []
        try:
            start = time.perf_counter()
            self._place_arguments(session, skey, arrays, keys, handles, temporary)
            placed = time.perf_counter() - start
            ins = (ctypes.c_void_p * max(len(handles), 1))(*[h.value for h in handles])
            outs = (ctypes.c_void_p * max(len(self.results), 1))()
            times, device, graph_launches = [], [], 0
            for run in range(warmup + repeat):
                start = time.perf_counter()
                status = lib.tprt_session_run_arrays(session, self._handle, self._function,
                                                     ins, len(handles), outs,
                                                     len(self.results))
                seconds = time.perf_counter() - start
                if _broke_session(status, session):
                    temporary = []  # freed with the session
                    self._drop_session(skey)
                _check(status, "running")
                for i in range(len(self.results)):
                    lib.tprt_array_free(ctypes.c_void_p(outs[i]))
                if run >= warmup:
                    times.append(seconds)
                    if gpu:
                        device_seconds, graph_launches = 0.0, 0
                        for rank in range(self.num_devices):
                            profile = _DeviceProfile()
                            profile.struct_size = ctypes.sizeof(_DeviceProfile)
                            _check(lib.tprt_session_device_profile(
                                session, rank, ctypes.byref(profile)), "device profile")
                            device_seconds = max(device_seconds, profile.run_seconds)
                            graph_launches += profile.graph_launches
                        device.append(device_seconds)
            return placed, times, (device if gpu else None), graph_launches
        finally:
            for handle in temporary:
                lib.tprt_array_free(handle)

    def _place_arguments(self, session, skey, arrays, keys, handles, temporary):
        """Appends each argument's array handle to `handles`: a keyed one
        resident under the same key is reused; another keyed one is placed
        and kept (its previous value freed); an unkeyed one is placed for
        this run alone, and also appended to `temporary`."""
        lib = library()
        current = self._sessions[skey]
        for i, (array, key) in enumerate(zip(arrays, keys)):
            if isinstance(array, DeviceArray):
                if array._session is not current or not array._handle:
                    raise RuntimeError_(
                        "input #%d is a DeviceArray of another session (another mesh or "
                        "backend, or a session that failed)" % i)
                handles.append(array._handle)
                continue
            kept = self._resident.get((skey, i))
            if key is not None and kept is not None and kept[0] == key:
                handles.append(kept[1])
                continue
            if key is None and i not in self._donated:
                # Written into the array of the last call, or placed once.
                data = array() if callable(array) else array
                reused = self._inputs.get((skey, i))
                if reused is not None:
                    self._write(i, reused, data)
                else:
                    reused = self._inputs[(skey, i)] = self._place(session, i, data)
                handles.append(reused)
                continue
            handle = self._place(session, i, array() if callable(array) else array)
            if key is None:
                temporary.append(handle)
            else:
                if kept is not None:
                    lib.tprt_array_free(kept[1])
                self._resident[(skey, i)] = (key, handle)
            handles.append(handle)

    def _run_placed(self, arrays, keys, skey, keep=()):
        lib = library()
        session = self._session(skey)
        shared = self._sessions[skey]
        handles, temporary, results = [], [], []
        try:
            self._place_arguments(session, skey, arrays, keys, handles, temporary)
            ins = (ctypes.c_void_p * max(len(handles), 1))(*[h.value for h in handles])
            outs = (ctypes.c_void_p * max(len(self.results), 1))()
            status = lib.tprt_session_run_arrays(session, self._handle, self._function, ins,
                                                 len(handles), outs, len(self.results))
            if _broke_session(status, session):
                temporary = []  # freed with the session
                self._drop_session(skey)
            _check(status, "running")
            results = [ctypes.c_void_p(outs[i]) for i in range(len(self.results))]
            outputs = []
            for index, (spec, handle) in enumerate(zip(self.results, results)):
                if index in keep:
                    outputs.append(DeviceArray(handle, spec, shared))
                    results[index] = None
                    continue
                out = np.empty(spec.shape, spec.np_dtype)
                _check(lib.tprt_array_fetch(handle, out.ctypes.data_as(ctypes.c_void_p)),
                       "fetching a result")
                outputs.append(out)
            return outputs
        finally:
            for handle in temporary + results:
                if handle is not None:
                    lib.tprt_array_free(handle)

    def __del__(self):
        if _lib is None:
            return
        held = [(k, v[1]) for k, v in getattr(self, "_resident", {}).items()]
        held += list(getattr(self, "_inputs", {}).items())
        for (skey, _), handle in held:
            session = getattr(self, "_sessions", {}).get(skey)
            if session is not None and session.alive:
                _lib.tprt_array_free(handle)
        self._resident = {}
        self._inputs = {}
        # The sessions are shared (_Session): they stay.
        self._sessions = {}
        if getattr(self, "_handle", None):
            _lib.tprt_program_destroy(self._handle)
            self._handle = None


def _host_tensor(code, array):
    t = _HostTensor(code, array.ndim)
    for d, size in enumerate(array.shape[:MAX_TENSOR_RANK]):
        t.shape[d] = size
    t.data = array.ctypes.data_as(ctypes.c_void_p)
    return t
