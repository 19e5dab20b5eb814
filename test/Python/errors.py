# RUN: rm -rf %t && mkdir -p %t
# RUN: %PYTHON %s %t | FileCheck %s
# REQUIRES: torch
#
# Tests bad input from Python: an op the importer does not cover (the ATen op,
# the graph node and the module path, and a reproducer tp-opt parses), inputs
# of the wrong shape, dtype or count, a module that returns no tensor, and
# missing tools; each a Python exception with a clear message, never a crash.
import os
import subprocess
import sys

import torch
import torch.nn as nn

import tp_mlir
from tp_mlir import ToolError, TpMlirError, UnsupportedOpError


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.cumsum(self.fc(x), dim=1)


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(torch.tanh(x))


x = torch.randn(4, 8)
try:
    tp_mlir.compile(Outer().eval(), (x,), workdir=sys.argv[1])
except UnsupportedOpError as e:
    print("unsupported:", str(e).splitlines()[0])
    print("fields:", e.op, e.node, e.module_path)
    r = subprocess.run([os.path.join(os.environ["TP_MLIR_BUILD_DIR"], "bin", "tp-opt"),
                        e.reproducer], capture_output=True, text=True)
    print("reproducer parses:", r.returncode == 0, "tanh" in r.stdout, "linalg.matmul" in r.stdout)
# CHECK: unsupported: unsupported ATen op 'aten.cumsum.default' at graph node 'cumsum' in module 'inner'
# CHECK: fields: aten.cumsum.default cumsum inner
# CHECK: reproducer parses: True True True

mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8)).eval()
prog = tp_mlir.compile(mlp, (x,), mesh=tp_mlir.Mesh({"tp": 2}),
                       plan={"0": tp_mlir.ColwiseParallel(), "2": tp_mlir.RowwiseParallel()})
for bad in [(torch.randn(3, 8),), (torch.randn(4, 8, dtype=torch.float64),), (x, x), ()]:
    try:
        prog(*bad)
        print("error: accepted")
    except TpMlirError as e:
        print("bad input:", e)
# CHECK: bad input: input 'input' is float32[3, 8]; the program takes f32[4, 8]
# CHECK: bad input: input 'input' is float64[4, 8]; the program takes f32[4, 8]
# CHECK: bad input: the program takes 1 inputs (input); got 2
# CHECK: bad input: the program takes 1 inputs (input); got 0

# The parameters reach the runtime under their names (the manifest's).
print("names:", [spec.name for spec in prog._loaded.args])
# CHECK: names: ['0.weight', '0.bias', '2.weight', '2.bias', 'input']


class NoTensor(nn.Module):
    def forward(self, x):
        return 3


try:
    tp_mlir.compile(NoTensor(), (x,))
except TpMlirError as e:
    print("no tensor:", str(e).splitlines()[0])
# CHECK: no tensor: the module returns 3, which is not a tensor; the program's results are tensors

os.environ["TP_MLIR_BUILD_DIR"] = "/nonexistent"
os.environ["PATH"] = "/usr/bin:/bin"
try:
    tp_mlir.compile(mlp, (x,))
except ToolError as e:
    print("no tools:", e)
# CHECK: no tools: cannot find 'tp-compile': looked in /nonexistent/bin (TP_MLIR_BUILD_DIR=/nonexistent), {{.*}}tp_mlir/bin (the package folder), PATH. Build tp-mlir
