# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# Tests the importer's op coverage against eager PyTorch: elementwise math
# with broadcasting and scalars, comparisons and selects, reductions with and
# without keepdim, casts, views, slices, concatenation, softmax, layer norm
# without affine parameters, bmm; unsharded and on 2 devices; and the GPT-2
# block in f16 and bf16 (storage; rel <= 1e-2 and 4e-2 as tp-run --verify).
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from models import GPT2_PLAN, GPT2Block  # noqa: E402


class Ops(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.scale = nn.Parameter(torch.rand(16) + 0.5)

    def forward(self, x, y):
        a = torch.sigmoid(x) * F.silu(y) - torch.relu(x) / (1.0 + y.abs())
        b = torch.exp(-x.pow(2)) + torch.log(y * y + 1) - 2.0 * torch.rsqrt(x * x + 1.0)
        c = torch.where(x > y, a, b).masked_fill(x < -1.5, 0.25)
        d = (c - c.mean(dim=-1, keepdim=True)) * self.scale
        e = torch.cat([d[:, :8], -d[:, 8:]], dim=1) + c.sum(0) + c.amax(dim=1, keepdim=True)
        f = F.gelu(self.fc(e)) + (1 - F.softmax(e, dim=-1)) + torch.tanh(e).to(torch.float64).float()
        g = F.layer_norm(f, (16,)) + x.unsqueeze(0).squeeze(0).t().contiguous().t()
        g = g + ((a + b) + (c + d))  # a sum tree, added up as one sum
        h = torch.bmm(g.view(2, 4, 16), g.view(2, 4, 16).transpose(1, 2))
        return g, h.select(0, 1) + x[:4, :4] * (x[:4, 4:8] >= 0).float()


torch.manual_seed(0)
x, y = torch.randn(8, 16), torch.randn(8, 16)
ops = Ops().eval()
for devices, plan in [(1, None), (2, {"fc": tp_mlir.ColwiseParallel()})]:
    prog = tp_mlir.compile(ops, (x, y), mesh=tp_mlir.Mesh({"tp": devices}), plan=plan)
    print("ops on %d:" % devices, prog.verify(x, y))
# CHECK: ops on 1: PASS
# CHECK: ops on 2: PASS

for dtype in (torch.float16, torch.bfloat16):
    block = GPT2Block().eval().to(dtype)
    x = torch.randn(2, 8, 64).to(dtype)
    prog = tp_mlir.compile(block, (x,), mesh=tp_mlir.Mesh({"tp": 4}), plan=GPT2_PLAN)
    out = prog(x)
    print(str(dtype), out.dtype, prog.verify(x))
# CHECK: torch.float16 torch.float16 PASS{{.*}}tolerance 1e-02
# CHECK: torch.bfloat16 torch.bfloat16 PASS{{.*}}tolerance 4e-02
