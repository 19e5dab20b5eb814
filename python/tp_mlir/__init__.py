"""tp_mlir: import PyTorch modules into tp-mlir, shard them with DTensor-style
plans, compile them and run them SPMD on simulated devices.

    import tp_mlir
    from tp_mlir import ColwiseParallel, RowwiseParallel, Mesh
    prog = tp_mlir.compile(block, (x,), mesh=Mesh({"tp": 4}),
                           plan={"attn.c_attn": ColwiseParallel(),
                                 "attn.c_proj": RowwiseParallel(),
                                 "mlp.c_fc": ColwiseParallel(),
                                 "mlp.c_proj": RowwiseParallel()})
    y = prog(x)                 # runs on 4 simulated devices
    prog.verify(x)              # against the module's own output
    prog.report()               # the plan: collectives, bytes, memory
"""
from ._runtime import DeviceArray
from .compiler import Program, Verification, compile, import_module
from .errors import (CompileError, PlanError, RuntimeError_, TpMlirError, ToolError,
                     UnsupportedOpError)
from .plan import (ColwiseParallel, Mesh, Parallelized, Replicate, RowwiseParallel,
                   SequenceParallel, Shard, parallelize)

__all__ = ["compile", "import_module", "parallelize", "Program", "Verification", "DeviceArray", "Mesh",
           "Shard", "Replicate", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "Parallelized", "TpMlirError", "ToolError", "UnsupportedOpError", "PlanError",
           "CompileError", "RuntimeError_"]
