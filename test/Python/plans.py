# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# Tests plans: what each style means for nn.Linear ([out, in]), HF's Conv1D
# ([in, out]) and nn.Embedding; wildcards; explicit Shard/Replicate per
# parameter; a 2-D mesh with DTensor-style placement lists; and the plan
# errors (an entry that matches nothing, a split that does not divide, a style
# on a layer it does not apply to, a missing dimension or axis), each naming
# the entry.
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from models import GPT2Block  # noqa: E402
from tp_mlir import (ColwiseParallel, Mesh, PlanError, Replicate,  # noqa: E402
                     RowwiseParallel, Shard)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(32, 16)
        self.fc1 = nn.Linear(16, 64)
        self.fc2 = nn.Linear(64, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, ids):
        h = self.embed(ids)
        return self.norm(h + self.fc2(torch.relu(self.fc1(h))))


net = Net().eval()
mesh = Mesh({"tp": 4})
p = tp_mlir.parallelize(net, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel(),
                                    "embed": RowwiseParallel()})
for name, axes in sorted(p.shardings().items()):
    print("style:", name, axes)
# CHECK: style: embed.weight {'tp': 0}
# CHECK: style: fc1.bias {'tp': 0}
# CHECK: style: fc1.weight {'tp': 0}
# CHECK: style: fc2.weight {'tp': 1}

gpt = GPT2Block()
p = tp_mlir.parallelize(gpt, mesh, {"*.c_fc": ColwiseParallel(), "*.c_proj": RowwiseParallel()})
for name, axes in sorted(p.shardings().items()):
    print("conv1d:", name, axes)
# Conv1D stores [in, out]: column-parallel splits dim 1, row-parallel dim 0.
# CHECK: conv1d: attn.c_proj.weight {'tp': 0}
# CHECK: conv1d: mlp.c_fc.bias {'tp': 0}
# CHECK: conv1d: mlp.c_fc.weight {'tp': 1}
# CHECK: conv1d: mlp.c_proj.weight {'tp': 0}

# The vocab-parallel embedding and the MLP, run and verified, with the
# parallelized module as compile's input.
ids = torch.randint(0, 32, (2, 8))
prog = tp_mlir.compile(tp_mlir.parallelize(
    net, mesh, {"fc1": ColwiseParallel(), "fc2": RowwiseParallel(), "embed": RowwiseParallel()}),
    (ids,))
print("net:", prog.verify(ids))
# CHECK: net: PASS

# Explicit placements, and a 2-D mesh: batch split over dp, Megatron over tp.
mesh2 = Mesh({"dp": 2, "tp": 4})
x = torch.randn(4, 16)
mlp = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 16)).eval()
prog = tp_mlir.compile(mlp, (x,), mesh=mesh2,
                       plan={"0.weight": Shard(0), "0.bias": Shard(0), "2.weight": Shard(1),
                             "input": [Shard(0), Replicate()]})
print("2-D:", prog.verify(x), [c["kind"] + str(c["axes"]) for c in
                               prog.report()["functions"][0]["collectives"]])
# CHECK: 2-D: PASS{{.*}}on 8 devices ["all_reduce['tp']"]

for plan, mesh_ in [({"fc3": ColwiseParallel()}, mesh),
                    ({"fc*.weight": Shard(2)}, mesh),
                    ({"norm": ColwiseParallel()}, mesh),
                    ({"fc1": ColwiseParallel()}, Mesh({"tp": 3})),
                    ({"fc1": ColwiseParallel(axis="dp")}, mesh),
                    ({"fc1.weight": [Shard(0)]}, mesh2)]:
    try:
        tp_mlir.parallelize(net, mesh_, plan)
        print("error: accepted", plan)
    except PlanError as e:
        print("PlanError:", e)
# CHECK: PlanError: plan entry 'fc3' (ColwiseParallel()) matches no submodule of Net
# CHECK: PlanError: plan entry 'fc*.weight': Shard(2) of 'fc1.weight' of shape [64, 16]: no such dimension
# CHECK: PlanError: plan entry 'norm': ColwiseParallel() applies to nn.Linear, nn.Embedding and Conv1D layers; 'norm' is a LayerNorm
# CHECK: PlanError: plan entry 'fc1': dimension 0 of 'fc1.weight' (size 64) does not divide over 3 devices (mesh axis 'tp' of size 3)
# CHECK: PlanError: plan entry 'fc1': ColwiseParallel() names axis 'dp', which mesh Mesh({'tp': 4}) does not have
# CHECK: PlanError: plan entry 'fc1.weight': 1 placements for a mesh of 2 axes Mesh({'dp': 2, 'tp': 4})
