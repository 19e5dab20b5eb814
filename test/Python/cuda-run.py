# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch, cuda-device
#
# Tests backend="cuda" on a GPU: the GPT-2 block with its Megatron plan, every
# rank on one GPU (the `device` communicator), against eager PyTorch.
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from models import GPT2_PLAN, GPT2Block  # noqa: E402

torch.manual_seed(0)
block = GPT2Block().eval()
x = torch.randn(2, 8, 64)
prog = tp_mlir.compile(block, (x,), mesh=tp_mlir.Mesh({"tp": 4}), plan=GPT2_PLAN,
                       backend="cuda")
print("cuda:", prog.verify(x))
# CHECK: cuda: PASS
