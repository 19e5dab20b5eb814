# RUN: env LD_LIBRARY_PATH=%tp_obj_root/fakecuda %PYTHON %s | FileCheck %s
# REQUIRES: torch, fake-cuda, tp-run-cuda
#
# On GPU ranks a Program's parameters stay in device memory between calls:
# counted with the fake CUDA driver (runtime/test/fakecuda/, first on
# LD_LIBRARY_PATH: nothing is computed, every upload is counted), the first call
# uploads every parameter and the input, later calls the input alone, and a
# parameter updated in place is uploaded again at the next call, alone with the
# input. No kernel module is loaded after the first call.
import ctypes
import os
import sys

import torch
import torch.nn as nn

import tp_mlir
from tp_mlir import ColwiseParallel, Mesh, RowwiseParallel

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
net = MLP().eval()
x = torch.randn(8, 32)
prog = tp_mlir.compile(net, (x,), mesh=Mesh({"tp": 4}), backend="cuda",
                       plan={"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
params = sum(p.numel() * 4 for p in net.parameters())
print("parameters: %d bytes, input: %d bytes" % (params, x.numel() * 4))


def call(what):
    before = {k: fake.tprtFakeCounter(k.encode())
              for k in ("bytes.htod", "cuModuleLoadData", "error.cuMemcpyHtoDAsync")}
    prog(x)
    after = {k: fake.tprtFakeCounter(k.encode()) - v for k, v in before.items()}
    print("%s: %d bytes uploaded, %d module loads, %d errors" % (
        what, after["bytes.htod"], after["cuModuleLoadData"], after["error.cuMemcpyHtoDAsync"]))


call("first call")
call("second call")
call("third call")
with torch.no_grad():
    net.fc2.weight.mul_(2.0)
call("fc2.weight updated in place")
# CHECK: parameters: 33408 bytes, input: 1024 bytes
# Each of the 4 ranks gets the input (replicated, 1024 bytes each), its quarter
# of fc1's weight and bias and of fc2's weight, and fc2's bias (replicated):
# 4096 + 16896 + 16384 + 4 x 128 bytes. Each rank loads the program's module and
# the `device` communicator's own.
# CHECK-NEXT: first call: 37888 bytes uploaded, 8 module loads, 0 errors
# CHECK-NEXT: second call: 4096 bytes uploaded, 0 module loads, 0 errors
# CHECK-NEXT: third call: 4096 bytes uploaded, 0 module loads, 0 errors
# CHECK-NEXT: fc2.weight updated in place: 20480 bytes uploaded, 0 module loads, 0 errors

# On `nccl` ranks a call on resident arguments runs as a CUDA graph per rank from
# the third call on (the first warms up, the second is captured); graphs=False
# launches each op, every call.
for graphs in (True, False):
    graphed = tp_mlir.compile(net, (x,), mesh=Mesh({"tp": 4}), backend="cuda", comm="nccl",
                              graphs=graphs, plan={"fc1": ColwiseParallel(), "fc2": RowwiseParallel()})
    counts, captures = [], []
    for step in range(4):
        before = [fake.tprtFakeCounter(n) for n in (b"cuGraphLaunch", b"cuStreamBeginCapture")]
        out = graphed(x + step)
        counts.append(fake.tprtFakeCounter(b"cuGraphLaunch") - before[0])
        captures.append(fake.tprtFakeCounter(b"cuStreamBeginCapture") - before[1])
    print("graphs=%s: graph launches per call %s, captures %s" % (graphs, counts, captures))
# Each call's input is written into the array of the call before
# (tprt_array_write): its addresses stay, and the graph replays.
# CHECK-NEXT: graphs=True: graph launches per call [0, 4, 4, 4], captures [0, 4, 0, 0]
# CHECK-NEXT: graphs=False: graph launches per call [0, 0, 0, 0], captures [0, 0, 0, 0]

# benchmark() on GPU ranks also times each run on the devices (CUDA events
# around it on every rank's stream; the fake's events measure no time) and says
# how the last run went: one graph launch per rank.
figures = tp_mlir.compile(
    net, (x,), mesh=Mesh({"tp": 4}), backend="cuda", comm="nccl",
    plan={"fc1": ColwiseParallel(), "fc2": RowwiseParallel()}).benchmark(x, repeat=5, warmup=2)
print("benchmark:", sorted(k for k in figures if k.startswith(("device_", "host", "graph"))),
      "graph launches", figures["graph_launches"], "device ms", figures["device_median_ms"])
# CHECK-NEXT: benchmark: ['device_best_ms', 'device_median_ms', 'graph_launches', 'host_overhead_ms'] graph launches 4 device ms 0.0

# A GPT-2 block as Hugging Face writes it, with its causal mask a bool buffer
# (a constant of i1, a byte each on the device), on 4 NCCL ranks: its constants
# are uploaded by the first call alone, and from the third call on each call
# is one graph launch per rank, uploading only its input (8192 bytes a rank).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from models import GPT2Block  # noqa: E402

block = GPT2Block().eval()
hidden = torch.randn(2, 16, 64)
gpt = tp_mlir.compile(block, (hidden,), mesh=Mesh({"tp": 4}), backend="cuda", comm="nccl",
                      plan={"attn.c_attn": ColwiseParallel(), "attn.c_proj": RowwiseParallel(),
                            "mlp.c_fc": ColwiseParallel(), "mlp.c_proj": RowwiseParallel()})
seen = []
for step in range(4):
    before = [fake.tprtFakeCounter(n) for n in (b"cuGraphLaunch", b"bytes.htod")]
    gpt(hidden)
    seen.append(tuple(fake.tprtFakeCounter(n) - b
                      for n, b in zip((b"cuGraphLaunch", b"bytes.htod"), before)))
print("GPT-2 block, (graph launches, bytes up) per call after the first:", seen[1:])
# CHECK-NEXT: GPT-2 block, (graph launches, bytes up) per call after the first: [(4, 32768), (4, 32768), (4, 32768)]
