"""The exceptions tp_mlir raises."""


class TpMlirError(Exception):
    """Base of every tp_mlir error."""


class ToolError(TpMlirError):
    """A tool or the runtime library is missing."""


class UnsupportedOpError(TpMlirError):
    """The importer met an ATen op (or a form of one) it does not cover.

    `op` is the ATen op, `node` the graph node, `module_path` the submodule
    that called it, `reproducer` the file with what was imported so far (run
    `tp-opt FILE` on it)."""

    def __init__(self, message, op=None, node=None, module_path=None, reproducer=None):
        super().__init__(message)
        self.op, self.node, self.module_path, self.reproducer = op, node, module_path, reproducer


class PlanError(TpMlirError):
    """A plan entry matches nothing, names a bad placement, or does not divide."""


class CompileError(TpMlirError):
    """tp-opt or tp-compile refused the imported module; `reproducer` is the
    command line that shows it again."""

    def __init__(self, message, reproducer=None):
        super().__init__(message)
        self.reproducer = reproducer


class RuntimeError_(TpMlirError):
    """The runtime refused the inputs or failed a run (its status message)."""
