# -*- Python -*- lit configuration for the tp-mlir regression tests.

import os

import lit.formats
from lit.llvm import llvm_config

config.name = "tp-mlir"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test", ".py"]
config.excludes = ["CMakeLists.txt", "Inputs", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tp_obj_root, "test")

# Every FileCheck variable is local to its CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "-enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
# `lit --param tp_run=<path>` runs the tests with another tp-run: scripts/sanitize.sh passes
# one built with ASan+UBSan or TSan (it finds tp-compile beside itself, so that folder
# has a link to this build's).
tp_run = lit_config.params.get("tp_run")
tools = ["tp-opt", "tp-compile", "mlir-tblgen", "tp-fuzz-parse", "tp-fuzz-spmd",
         "tp-fuzz-lower-cpu", "tp-fuzz-manifest", "tp-fuzz-npy", "tprt-bench"]
if tp_run:
    config.substitutions.append((r"(?<![-./\w])tp-run(?![-\w])", tp_run))
else:
    tools.append("tp-run")
llvm_config.add_tool_substitutions(tools, [config.tp_tools_dir, config.llvm_tools_dir])

config.substitutions.append(("%tp_src_root", config.tp_src_root))
config.substitutions.append(("%tp_obj_root", config.tp_obj_root))

# The tp-run under test was built with CUDA (a sanitized one, --param tp_run=..., is
# not: scripts/sanitize.sh also passes --param tp_run_has_cuda=0).
if config.tp_has_cuda and lit_config.params.get("tp_run_has_cuda", "1") != "0":
    config.available_features.add("tp-run-cuda")

# MPI (the mpi backend; mpirun -np N tp-run): %mpirun runs as root too, oversubscribed,
# over shared memory; under AddressSanitizer OpenMPI's own leaks are not reported.
if config.tp_has_mpi and config.tp_mpiexec:
    config.available_features.add("mpi")
    asan = os.environ.get("ASAN_OPTIONS", "")
    config.substitutions.append(("%mpirun", " ".join([
        "env", "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
        "ASAN_OPTIONS=" + (asan + ":" if asan else "") + "detect_leaks=0",
        config.tp_mpiexec, "--oversubscribe", "--mca", "btl", "self,vader",
        "--mca", "btl_vader_single_copy_mechanism", "none"])))
    # Two hosts as network namespaces (root): mpi-hosts.test, or a note saying why not.
    import subprocess
    probe = subprocess.run([os.path.join(config.tp_src_root, "scripts", "mpi-hosts.sh"),
                            "check"], capture_output=True, text=True)
    if probe.returncode == 0:
        config.available_features.add("netns")
    else:
        lit_config.note("mpi-hosts.test skipped: " + probe.stdout.strip())

if config.tp_has_cuda:
    config.available_features.add("cuda")
    # The toolkit (ptxas, libdevice) for gpu-module-to-binary.
    config.substitutions.append(("%cuda_root", config.tp_cuda_root))
    # The counting fake of the driver, cuBLAS and NCCL (runtime/test/fakecuda/):
    # `%fake_cuda tp-run ...` runs a CUDA program on host memory and writes the
    # census of its calls to $TPRT_FAKE_CUDA_CENSUS.
    config.available_features.add("fake-cuda")
    config.substitutions.append(
        ("%fake_cuda", "env LD_LIBRARY_PATH=%s/fakecuda" % config.tp_obj_root))
    # A machine with the NVIDIA driver (and so, usually, a GPU): the tests that
    # run CUDA programs; the others check the clean refusal without one.
    try:
        import ctypes
        cuda = ctypes.CDLL("libcuda.so.1")
        config.available_features.add("cuda-device")
        # Four GPUs or more: the `nccl` communicator's tests (rank r on GPU r).
        count = ctypes.c_int(0)
        if cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 \
                and count.value >= 4:
            config.available_features.add("cuda-4-gpus")
    except OSError:
        pass

# %sanitizer_preload: where this build is sanitized (scripts/sanitize.sh), a process
# that is not (python, the embedding example) loads the sanitized libtprt only with
# the sanitizer's runtime preloaded; its own leaks are not the project's.
preload = ""
sanitize = getattr(config, "tp_sanitize", "")
if "address" in sanitize or "thread" in sanitize:
    import subprocess
    runtime = "libasan.so" if "address" in sanitize else "libtsan.so"
    path = subprocess.run(["cc", "-print-file-name=" + runtime], capture_output=True,
                          text=True).stdout.strip()
    preload = ("env LD_PRELOAD=%s ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0"
               % path)
config.substitutions.append(("%sanitizer_preload", preload))

# %PYTHON: Debian's Python (its torch and numpy), with the tp_mlir package from
# this checkout and the tools and libtprt of this build. Feature `torch` where
# that Python has torch.
import subprocess
python_env = "env PYTHONPATH=%s TP_MLIR_BUILD_DIR=%s" % (
    os.path.join(config.tp_src_root, "python"), config.tp_obj_root)
config.substitutions.append(("%PYTHON", "%s %s /usr/bin/python3" % (preload, python_env)))
# Not in a sanitized build: PyTorch throws C++ exceptions inside its own
# libraries, which ASan's preloaded __cxa_throw interceptor aborts on
# (CHECK failed in asan_interceptors.cpp); the sanitized libtprt is exercised
# from Python by Integration/ctypes.test instead.
if subprocess.run(["/usr/bin/python3", "-c", "import torch, numpy"],
                  capture_output=True).returncode == 0 and not preload:
    config.available_features.add("torch")
