# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# A Program keeps the module's parameters on the devices after its first call
# (runtime arrays) and places again only what changed: a parameter updated in
# place (its version), one given a new tensor (`p.data = ...`), or everything
# after prog.place(); its inputs are placed for each call. Every call's result
# is the module's own, with the parameters as they are then.
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from tp_mlir import ColwiseParallel, Mesh, RowwiseParallel  # noqa: E402


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 128)
        self.fc2 = nn.Linear(128, 32)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


torch.manual_seed(0)
net = MLP().eval()
x = torch.randn(8, 32)
prog = tp_mlir.compile(net, (x,), mesh=Mesh({"tp": 4}),
                       plan={"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
loaded = prog._loaded


def call(what, inputs=x):
    before = loaded.placements
    got = prog(inputs)
    with torch.no_grad():
        want = net(inputs)
    close = torch.allclose(got, want, rtol=1e-5, atol=1e-5)
    print("%s: placed %d, %s" % (what, loaded.placements - before,
                                 "matches eager" if close else "DIFFERS from eager"))


call("first call")               # 4 parameters and the input
call("second call")              # the input only
call("new input", torch.randn(8, 32))
with torch.no_grad():
    net.fc1.weight.add_(0.5)     # in place: its version changes
call("fc1.weight updated in place")
net.fc2.bias.data = torch.randn(32)
call("fc2.bias given a new tensor")
call("nothing changed")
prog.place()
call("after prog.place()")
# CHECK: first call: placed 5, matches eager
# CHECK-NEXT: second call: placed 1, matches eager
# CHECK-NEXT: new input: placed 1, matches eager
# CHECK-NEXT: fc1.weight updated in place: placed 2, matches eager
# CHECK-NEXT: fc2.bias given a new tensor: placed 2, matches eager
# CHECK-NEXT: nothing changed: placed 1, matches eager
# CHECK-NEXT: after prog.place(): placed 5, matches eager

# benchmark(): the parameters stay placed (they have not changed), the input is
# placed once for the whole loop, and every timed run is on the placed arrays.
before = loaded.placements
figures = prog.benchmark(x, repeat=5, warmup=2)
print("benchmark: placed %d, %d runs on %d devices, best <= median: %s" % (
    loaded.placements - before, figures["runs"], figures["devices"],
    0 < figures["best_ms"] <= figures["median_ms"]))
call("after benchmark")
# CHECK-NEXT: benchmark: placed 1, 5 runs on 4 devices, best <= median: True
# CHECK-NEXT: after benchmark: placed 1, matches eager
