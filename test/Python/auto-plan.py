# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# Tests plan="auto": nobody says how anything is split; the planner chooses
# under a memory budget below the replicated parameters (a GPT-2 block of
# width 512: 12.6 MB of parameters; 6 MB per device on 4 devices for the
# forward, 10 MB for the training step, whose activations live at its peak
# take more). The fused
# q|k|v projection is bound in Megatron's [in, 3, out/3] view so that a split
# inside each third is a candidate. Forward and training step (the gradients
# laid out as their parameters) both fit the budget and match eager PyTorch;
# the report names the cost model and each weight's split and runner-up.
# Bad arguments are clean errors.
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import tp_mlir  # noqa: E402
from tp_mlir.errors import TpMlirError  # noqa: E402
from models import GPT2Block  # noqa: E402

torch.manual_seed(0)
x = torch.randn(4, 64, 512)
target = torch.randn(4, 64, 512)
mesh = tp_mlir.Mesh({"tp": 4})


block = GPT2Block(d=512, heads=4, max_positions=64)
block.eval()
prog = tp_mlir.compile(block, (x,), mesh=mesh, plan="auto", memory_per_device="6MB")
print("forward", prog.verify(x))
plan = prog.report()["functions"][0]["plan"]
print("cost model:", plan["cost_model"], "fits:",
      plan["argument_bytes"] + plan["activation_bytes"] <= 6e6)
for w in plan["weights"]:
    print("weight", w["type"], "split:", w["split"], "runner-up:", w["runner_up"]["split"])
# CHECK: forward PASS
# CHECK-NEXT: cost model: h200 fits: True
# CHECK: weight tensor<512x3x512xf32> split: {{.*}} runner-up:
# CHECK: weight tensor<2048x512xf32> split: {{.*}} runner-up:


def loss(output, target):
    return (output * target).sum()


prog = tp_mlir.compile(block, (x,), mesh=mesh, plan="auto", memory_per_device=10e6,
                       backward=True, loss=loss, targets=(target,),
                       grad_inputs=("hidden_states",))
print("training step", prog.verify(x, target))
# CHECK: training step PASS

for kwargs in ({"plan": "automatic"},
               {"plan": None, "memory_per_device": "1GB", "sequence_parallel": True}):
    try:
        tp_mlir.compile(block, (x,), mesh=mesh, **kwargs)
    except TpMlirError as e:
        print("error:", e)
# CHECK: error: plan 'automatic': expected 'auto' or a dict of name patterns to placements
# CHECK: error: tp-compile failed (exit 1):
# CHECK: tp-propagate: memory-per-device applies to auto-plan and search, which are off
