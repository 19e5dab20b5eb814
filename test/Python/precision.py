# RUN: env LD_LIBRARY_PATH=%tp_obj_root/fakecuda %PYTHON %s | FileCheck %s
# REQUIRES: torch, fake-cuda, tp-run-cuda
#
# precision= on compile (tp-compile --matmul-precision, PyTorch's
# set_float32_matmul_precision): GPU ranks follow it in cuBLAS's compute type
# (counted by the fake cuBLAS, first on LD_LIBRARY_PATH), CPU ranks compute
# IEEE f32 and verify() passes at the precision's tolerance; an unknown name is
# an error naming the choices.
import ctypes

import torch
import torch.nn as nn

import tp_mlir
from tp_mlir import ColwiseParallel, Mesh, RowwiseParallel, TpMlirError

fake = ctypes.CDLL("libcuda.so.1")  # the library libtprt opened: the fake
fake.tprtFakeCounter.restype = ctypes.c_longlong
fake.tprtFakeCounter.argtypes = [ctypes.c_char_p]


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 128)
        self.fc2 = nn.Linear(128, 32)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
model = MLP()
x = torch.randn(8, 32)
plan = {"fc1": ColwiseParallel(), "fc2": RowwiseParallel()}

for precision in ("highest", "high", "medium"):
    prog = tp_mlir.compile(model, (x,), mesh=Mesh({"tp": 2}), plan=plan, precision=precision)
    result = prog.verify(x)
    print("cpu %s: %s, tolerance %.0e" % (precision, "PASS" if result else "FAIL", result.rtol))
# CHECK: cpu highest: PASS, tolerance 1e-05
# CHECK: cpu high: PASS, tolerance 5e-03
# CHECK: cpu medium: PASS, tolerance 4e-02

for precision, compute in (("highest", b"gemm.compute.32F"),
                           ("high", b"gemm.compute.32F_FAST_TF32"),
                           ("medium", b"gemm.compute.32F_FAST_16BF")):
    prog = tp_mlir.compile(model, (x,), mesh=Mesh({"tp": 2}), plan=plan, backend="cuda",
                           precision=precision)
    before = fake.tprtFakeCounter(compute)
    prog(x)
    print("cuda %s: %d GEMMs compute %s" % (
        precision, fake.tprtFakeCounter(compute) - before, compute.decode().split(".")[-1]))
# CHECK: cuda highest: 4 GEMMs compute 32F
# CHECK: cuda high: 4 GEMMs compute 32F_FAST_TF32
# CHECK: cuda medium: 4 GEMMs compute 32F_FAST_16BF

try:
    tp_mlir.compile(model, (x,), mesh=Mesh({"tp": 2}), plan=plan, precision="fast")
except TpMlirError as e:
    print("error:", e)
# CHECK: error: precision 'fast': expected one of 'highest', 'high', 'medium'
