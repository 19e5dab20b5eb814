"""Compiles a small MLP with a Megatron plan on 2 devices and verifies it."""
import torch
import torch.nn as nn

import tp_mlir

print("package:", tp_mlir.__file__)
torch.manual_seed(0)
mlp = nn.Sequential(nn.Linear(16, 64), nn.Tanh(), nn.Linear(64, 16)).eval()
x = torch.randn(8, 16)
prog = tp_mlir.compile(mlp, (x,), mesh=tp_mlir.Mesh({"tp": 2}),
                       plan={"0": tp_mlir.ColwiseParallel(), "2": tp_mlir.RowwiseParallel()})
print(prog.verify(x))
