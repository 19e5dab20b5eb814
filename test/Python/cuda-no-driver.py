# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch, cuda
# UNSUPPORTED: cuda-device
#
# Tests backend="cuda" on a machine without the NVIDIA driver: the module
# compiles for the GPU (tp-compile --target cuda), and running it is a clean
# RuntimeError_ naming the missing driver; mismatched backend and
# communicator are refused before compiling.
import torch
import torch.nn as nn

import tp_mlir

mlp = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 16)).eval()
x = torch.randn(8, 16)
prog = tp_mlir.compile(mlp, (x,), mesh=tp_mlir.Mesh({"tp": 2}), backend="cuda",
                       plan={"0": tp_mlir.ColwiseParallel(), "2": tp_mlir.RowwiseParallel()})
print("target:", prog._loaded.target)
try:
    prog(x)
except tp_mlir.RuntimeError_ as e:
    print("run:", e)
for kw in [dict(backend="tpu"), dict(backend="cuda", comm="local"), dict(comm="nccl")]:
    try:
        tp_mlir.compile(mlp, (x,), **kw)
    except tp_mlir.TpMlirError as e:
        print("refused:", e)
# CHECK: target: cuda
# CHECK: run: creating a session: no CUDA driver found
# CHECK: refused: backend 'tpu': expected one of 'cpu', 'cuda'
# CHECK: refused: comm 'local' does not run cuda programs; expected 'device' or 'nccl'
# CHECK: refused: comm 'nccl' does not run cpu programs; expected 'local'
