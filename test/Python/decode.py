# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# A decode loop, end to end: a GPT-2-style model over a KV cache generates
# tokens greedily on 4 ranks, Megatron-split over "tp" (q, k, v and the first
# MLP layer by columns, the output projections by rows), with the cache split by
# heads as the attention is. Two programs of one module: a prefill that reads
# the prompt (5 tokens at positions 0..4) and a decode step (1 token at a
# position given at run time, a 0-d int64 input). The cache stays on the devices
# between calls (keep=: DeviceArrays, which the decode step takes where they are)
# and each step writes its position in place (donate=). The tokens must be the
# module's own greedy decoding, token for token.
import os
import sys

import torch

import tp_mlir
from tp_mlir import DeviceArray, Mesh

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
from decoder import DONATE, Decoder, plan  # noqa: E402


torch.manual_seed(0)
model = Decoder().eval()
batch, prompt_length, steps, length = 2, 5, 8, 16
prompt = torch.randint(0, 64, (batch, prompt_length))
empty = [torch.zeros(batch, 4, length, 8) for _ in range(4)]

# The module's own greedy decoding, in eager PyTorch.
with torch.no_grad():
    logits, *want_cache = model(prompt, torch.tensor(0), *empty)
    want = [logits.argmax(-1)]
    for step in range(steps - 1):
        logits, *want_cache = model(want[-1].view(batch, 1),
                                    torch.tensor(prompt_length + step), *want_cache)
        want.append(logits.argmax(-1))
want = torch.stack(want, 1)

mesh = Mesh({"tp": 4})
prefill = tp_mlir.compile(model, (prompt, torch.tensor(0), *empty), mesh=mesh, plan=plan(),
                          donate=DONATE)
decode = tp_mlir.compile(model, (prompt[:, :1], torch.tensor(0), *empty), mesh=mesh,
                         plan=plan(), donate=DONATE)
print("decode step: cache inserts at a run-time position:",
      decode.mlir.count("tensor.insert_slice"), "; all_reduces per layer:",
      sum(decode.report()["functions"][0]["totals"].get(k, {}).get("count", 0)
          for k in ("all_reduce",)) // 2)
# CHECK: decode step: cache inserts at a run-time position: 4 ; all_reduces per layer: 2

logits, *cache = prefill(prompt, torch.tensor(0), *empty, keep=(1, 2, 3, 4))
print("the cache stays on the devices:", all(isinstance(c, DeviceArray) for c in cache), cache[0])
# CHECK-NEXT: the cache stays on the devices: True DeviceArray(f32[2, 4, 16, 8])
got = [logits.argmax(-1)]
for step in range(steps - 1):
    if step == 1:
        placed = decode._loaded.placements
    before = cache
    logits, *cache = decode(got[-1].view(batch, 1), torch.tensor(prompt_length + step), *cache,
                            keep=(1, 2, 3, 4))
    if step == 0:
        try:
            decode(got[-1].view(batch, 1), torch.tensor(0), *before, keep=(1, 2, 3, 4))
            print("a donated cache was taken again")
        except tp_mlir.RuntimeError_ as e:
            print("a donated cache is refused again:", "was donated" in str(e))
    got.append(logits.argmax(-1))
got = torch.stack(got, 1)
# After its first call (the parameters placed), a step places its token and its
# position alone: the cache is never uploaded.
print("arrays placed per decode step:", (decode._loaded.placements - placed) // (steps - 2))
print("%d tokens for each of %d prompts on 4 ranks: %s" % (
    steps, batch, "the module's greedy decoding" if torch.equal(got, want) else
    "DIFFER: %s against %s" % (got.tolist(), want.tolist())))
# CHECK-NEXT: a donated cache is refused again: True
# CHECK-NEXT: arrays placed per decode step: 2
# CHECK-NEXT: 8 tokens for each of 2 prompts on 4 ranks: the module's greedy decoding

# The cache as the module left it: fetched once, at the end.
worst = max(float((torch.from_numpy(c.numpy()) - w).abs().max()) for c, w in zip(cache, want_cache))
print("the cache fetched at the end: the module's", "(PASS)" if worst < 1e-4 else "FAIL %g" % worst)
# CHECK-NEXT: the cache fetched at the end: the module's (PASS)

# A position past the cache is the run's error, naming the offset and its
# bounds (tp-check-slice-offsets), not a write outside the cache.
try:
    decode(got[:, -1].view(batch, 1), torch.tensor(length), *cache, keep=(1, 2, 3, 4))
    print("a position out of bounds ran")
except tp_mlir.RuntimeError_ as e:
    print("position %d:" % length, str(e).split(": ", 2)[-1].split(" (")[0],
          "...", str(e).split(") ")[-1])
# CHECK-NEXT: position 16: the offset of a slice along dimension 2 ... is 16, out of bounds: expected 0 to 15
