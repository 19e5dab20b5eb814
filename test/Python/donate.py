# RUN: %PYTHON %s | FileCheck %s
# REQUIRES: torch
#
# donate= gives an input's buffer to an output (tp.donate): a step that updates
# a state (here a decayed running sum of a layer's output) writes the new state
# in the old one's place. A loop that feeds the new state back matches the
# module's own loop; the caller's tensors stay as they were; a donation that
# names no input or an output already taken is refused, and one whose output
# is made by a collective (the state replicated, the layer's output split) is
# refused by tp-compile, naming both.
import torch
import torch.nn as nn

import tp_mlir
from tp_mlir import ColwiseParallel, Mesh, Shard, TpMlirError


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 64)

    def forward(self, state, x):
        y = torch.relu(self.fc(x))
        return state * 0.9 + y, y.sum()


torch.manual_seed(0)
step = Step().eval()
state, x = torch.zeros(8, 64), torch.randn(8, 32)
# The state is split as the layer's output is (fc's columns), so that the new
# state is computed where the old one is, without a collective.
prog = tp_mlir.compile(step, (state, x), mesh=Mesh({"tp": 4}),
                       plan={"fc": ColwiseParallel(), "state": Shard(1)}, donate={"state": 0})
print("tp.donate in the module:", "tp.donate = 0 : i64" in prog.mlir)

ours, theirs = state.clone(), state.clone()
kept = ours.clone()
close = True
for _ in range(3):
    ours, total = prog(ours, x)
    with torch.no_grad():
        theirs, want = step(theirs, x)
    close = close and torch.allclose(ours, theirs, rtol=1e-5, atol=1e-5)
print("3 steps, the state fed back:", "matches eager" if close else "DIFFERS")
print("the caller's first state unchanged:", torch.equal(kept, state))
# CHECK: tp.donate in the module: True
# CHECK-NEXT: 3 steps, the state fed back: matches eager
# CHECK-NEXT: the caller's first state unchanged: True

for bad in ({"nothing": 0}, {"state": -1}):
    try:
        tp_mlir.compile(step, (state, x), donate=bad)
        print("NOT REFUSED")
    except TpMlirError as e:
        print("refused:", e)
# CHECK-NEXT: refused: donate names 'nothing'; the module's inputs are state, x
# CHECK-NEXT: refused: donate: input 'state' is given to output -1; expected the index of an output no other input is donated to

try:
    tp_mlir.compile(step, (state, x), mesh=Mesh({"tp": 4}), plan={"fc": ColwiseParallel()},
                    donate={"state": 0})
    print("NOT REFUSED")
except tp_mlir.CompileError as e:
    print("refused:", str(e).splitlines()[1].split("error: ")[1][:120])
# CHECK-NEXT: refused: 'func.func' op argument #2 is donated to result #0, but the result cannot be written in its buffer
