# RUN: env LD_LIBRARY_PATH=%tp_obj_root/fakecuda %PYTHON %s 2>&1 | FileCheck %s
# REQUIRES: torch, fake-cuda, tp-run-cuda
#
# decode.py's loop on 4 GPU ranks (`nccl`), under the counting fake of CUDA
# (nothing is computed: the tokens are not checked here, the calls are). The
# decode step's host code reads its position, an argument (tp-mark-host-reads:
# the importer writes the cache at `pos + i` from the scalar itself), so the
# function runs op by op, and the session says so once. After its first call a
# step uploads its token and position, reads back its position and its logits,
# and nothing else moves: the cache stays on the devices, the constants too.
import ctypes
import os
import sys

import torch

import tp_mlir
from tp_mlir import Mesh

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from decoder import DONATE, Decoder, plan  # noqa: E402

# The runtime's stderr note and these lines, in the order they happen.
sys.stdout.reconfigure(line_buffering=True)
fake = ctypes.CDLL("libcuda.so.1")
fake.tprtFakeCounter.restype = ctypes.c_longlong
fake.tprtFakeCounter.argtypes = [ctypes.c_char_p]

torch.manual_seed(0)
model = Decoder().eval()
batch, prompt_length, length = 2, 5, 16
prompt = torch.randint(0, 64, (batch, prompt_length))
empty = [torch.zeros(batch, 4, length, 8) for _ in range(4)]
options = dict(mesh=Mesh({"tp": 4}), plan=plan(), donate=DONATE, backend="cuda", comm="nccl")
prefill = tp_mlir.compile(model, (prompt, torch.tensor(0), *empty), **options)
decode = tp_mlir.compile(model, (prompt[:, :1], torch.tensor(0), *empty), **options)
print("the decode step's host code reads:",
      [line for line in open(os.path.join(decode.workdir, "model.so"), "rb").read()
       .decode("latin-1").split("\n") if line.startswith("hostread")])
# CHECK: the decode step's host code reads: ['hostread 38']

logits, *cache = prefill(prompt, torch.tensor(0), *empty, keep=(1, 2, 3, 4))
token = logits.argmax(-1)
names = ("bytes.htod", "bytes.dtoh", "cuGraphLaunch")
for step in range(4):
    before = {n: fake.tprtFakeCounter(n.encode()) for n in names}
    logits, *cache = decode(token.view(batch, 1), torch.tensor(prompt_length + step), *cache,
                            keep=(1, 2, 3, 4))
    token = logits.argmax(-1)
    moved = {n: fake.tprtFakeCounter(n.encode()) - before[n] for n in names}
    if step:
        print("step %d: %d bytes up, %d down, %d graph launches" % (
            step, moved["bytes.htod"], moved["bytes.dtoh"], moved["cuGraphLaunch"]))
print("errors:", sum(fake.tprtFakeCounter(("error." + c).encode()) for c in (
    "cuMemcpyDtoHAsync", "cuMemcpyHtoDAsync", "cuLaunchKernel", "cuMemcpy2DAsync",
    "cublasGemmStridedBatchedEx", "ncclAllReduce", "cuMemFreeAsync", "cuMemAllocAsync")))
# CHECK: tprt: CUDA graphs off for 'forward': its host code reads argument #38 ('pos') at every run; its runs launch each op
# Per step and rank: the token (16 bytes) and the position (8) up (the
# program's constant tables were uploaded by its first run: tp-upload-
# constants); the position (8) and the logits (2 x 64 f32, every rank's copy:
# the replicas are compared) down.
# CHECK: step 1: 96 bytes up, 2080 down, 0 graph launches
# CHECK-NEXT: step 2: 96 bytes up, 2080 down, 0 graph launches
# CHECK-NEXT: step 3: 96 bytes up, 2080 down, 0 graph launches
# CHECK-NEXT: errors: 0
# CHECK-NOT: CUDA graphs off
