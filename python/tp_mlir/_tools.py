"""Finds tp-mlir's tools (tp-opt, tp-compile) and the runtime library libtprt.

In order: the build folder named by TP_MLIR_BUILD_DIR (its bin/ and lib/), the
folder beside the installed package (tp_mlir/bin, tp_mlir/lib: where a packager
puts them), then PATH (libtprt next to the tool, in ../lib).
"""
import os
import shutil

from .errors import ToolError

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _candidates(kind):
    build = os.environ.get("TP_MLIR_BUILD_DIR")
    if build:
        yield os.path.join(build, kind), "TP_MLIR_BUILD_DIR=" + build
    yield os.path.join(_PACKAGE_DIR, kind), "the package folder"


def find_tool(name):
    """The path of tool `name` (tp-opt, tp-compile, tp-run)."""
    searched = []
    for folder, where in _candidates("bin"):
        path = os.path.join(folder, name)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        searched.append("%s (%s)" % (folder, where))
    path = shutil.which(name)
    if path:
        return path
    searched.append("PATH")
    raise ToolError(
        "cannot find '%s': looked in %s. Build tp-mlir (scripts/test.sh or "
        "cmake + ninja) and set TP_MLIR_BUILD_DIR to its build folder, or put "
        "its bin/ on PATH" % (name, ", ".join(searched)))


def find_runtime():
    """The path of libtprt.so."""
    searched = []
    for folder, where in _candidates("lib"):
        path = os.path.join(folder, "libtprt.so")
        if os.path.isfile(path):
            return path
        searched.append("%s (%s)" % (folder, where))
    tool = shutil.which("tp-run") or shutil.which("tp-compile")
    if tool:
        folder = os.path.join(os.path.dirname(os.path.realpath(tool)), "..", "lib")
        path = os.path.normpath(os.path.join(folder, "libtprt.so"))
        if os.path.isfile(path):
            return path
        searched.append(os.path.normpath(folder) + " (beside the tools on PATH)")
    else:
        searched.append("PATH (no tp-run or tp-compile there)")
    raise ToolError(
        "cannot find the runtime libtprt.so: looked in %s. Set "
        "TP_MLIR_BUILD_DIR to tp-mlir's build folder" % ", ".join(searched))
