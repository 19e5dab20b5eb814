"""compile(): trace, import, plan, tp-compile, load; Program: call, report,
verify."""
import inspect
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import weakref

import numpy as np

from . import _runtime, _tools
from .errors import CompileError, TpMlirError, UnsupportedOpError
from .importer import Importer
from .plan import Mesh, resolve
from .trace import trace, with_aliases

#: How f32 GEMMs may compute (compile(precision=...)). verify() gives an f32
#: result at each the runtime's tolerance (tprt_tolerance), as tp-run
#: --verify does.
MATMUL_PRECISIONS = ("highest", "high", "medium")

_VIEW_OPS = ("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
             "aten._reshape_alias.default", "aten.add.Tensor")


def _target(node):
    from .importer import _target_name
    return _target_name(node.target) if node.op == "call_function" else node.op


def _fused_split(weight_node):
    """The number of equal parts the output of the layer whose weight is
    `weight_node` is split into along its features (a fused QKV projection
    cut into q, k and v), or 1."""
    frontier = [weight_node]
    for _ in range(3):  # weight -> (t) -> mm/addmm
        nxt = []
        for n in frontier:
            for u in n.users:
                if _target(u) in ("aten.t.default", "aten.permute.default",
                                  "aten.transpose.int"):
                    nxt.append(u)
                elif _target(u) in ("aten.addmm.default", "aten.mm.default"):
                    return _split_parts(u)
        frontier = nxt
    return 1


def _feature_dim(weight_node):
    """The dimension of a layer's parameter that runs over its output
    features: a bias's only one, a weight's last (x @ W, Conv1D) unless it is
    transposed on its way to the product (nn.Linear's [out, in]: the first)."""
    shape = weight_node.meta["val"].shape
    if len(shape) == 1:
        return 0
    for u in weight_node.users:
        if _target(u) in ("aten.t.default", "aten.permute.default", "aten.transpose.int"):
            return 0
    return len(shape) - 1


def _split_parts(node):
    for _ in range(4):
        users = list(node.users)
        if len(users) != 1:
            return 1
        u = users[0]
        name = _target(u)
        if name in ("aten.split.Tensor", "aten.split_with_sizes.default"):
            features = node.meta["val"].shape[-1]
            dim = u.args[2] if len(u.args) > 2 else u.kwargs.get("dim", 0)
            if dim not in (-1, len(node.meta["val"].shape) - 1):
                return 1
            sizes = u.args[1]
            if isinstance(sizes, int):
                if features % sizes:
                    return 1
                return features // sizes
            return len(sizes) if len(set(sizes)) == 1 else 1
        if name not in _VIEW_OPS:
            return 1
        node = u
    return 1


class Program:
    """A compiled, sharded module: call it with the module's inputs (numpy
    arrays or torch tensors) to run it on the mesh's simulated devices."""

    def __init__(self, module, mlir, workdir, library, args, results_meta, mesh, backend,
                 compile_flags):
        self.module = module
        self.mlir = mlir
        self.workdir = workdir
        self.mesh = mesh
        self.backend = backend
        self._library_path = library
        self._args = args              # [(kind, name, ir_shape)]
        self._compile_flags = compile_flags
        self._loaded = _runtime.LoadedProgram(library, "forward")
        self._results_meta = results_meta

    @property
    def model_path(self):
        return os.path.join(self.workdir, "model.mlir")

    def _bind(self, inputs, keys=None):
        """The program's arguments: the user's inputs, checked and converted,
        and the module's parameters and buffers. With `keys` (a list it
        fills, one per argument), each parameter comes as a callable that
        converts it and its key names its current value (the tensor, its
        storage and its version, which an in-place update bumps), so that a
        resident copy is placed again only when the key changes."""
        import torch
        params = dict(self.module.named_parameters())
        params.update(dict(self.module.named_buffers()))
        user = [i for i, a in enumerate(self._args) if a[0] == "input"]
        if len(inputs) != len(user):
            raise TpMlirError("the program takes %d inputs (%s); got %d" % (
                len(user), ", ".join(self._args[i][1] for i in user), len(inputs)))
        given = iter(inputs)
        arrays = []
        for (kind, name, shape), spec in zip(self._args, self._loaded.args):
            if kind == "input":
                x = next(given)
                if isinstance(x, _runtime.DeviceArray):
                    # Already on the devices: read where it is.
                    if x.shape != spec.shape or x.dtype != spec.dtype:
                        raise TpMlirError("input '%s' is %s%s; the program takes %s%s" % (
                            name, x.dtype, list(x.shape), spec.dtype, list(spec.shape)))
                    if keys is None:
                        raise TpMlirError("input '%s' is a DeviceArray, which this call "
                                          "cannot take" % name)
                    keys.append(None)
                    arrays.append(x)
                    continue
                if isinstance(x, torch.Tensor):
                    x = _to_numpy(x)
                x = np.asarray(x)
                if spec.dtype == "bf16" and x.dtype != np.uint16:
                    x = _to_numpy(torch.from_numpy(np.ascontiguousarray(x, np.float32))
                                  .to(torch.bfloat16))
                if x.shape != spec.shape or x.dtype != spec.np_dtype:
                    raise TpMlirError("input '%s' is %s%s; the program takes %s%s" % (
                        name, x.dtype, list(x.shape), spec.dtype, list(spec.shape)))
            else:
                tensor = params[name]
                if keys is not None:
                    keys.append((name, id(tensor), tensor.data_ptr(), tensor._version))
                    arrays.append(lambda t=tensor, s=shape: _to_numpy(t.detach().reshape(s)))
                    continue
                x = _to_numpy(tensor.detach().reshape(shape))
            if keys is not None:
                keys.append(None)
            arrays.append(x)
        return arrays

    def place(self):
        """Places the module's parameters on the devices again at the next
        call. Not needed after an in-place update (`p.add_(...)`, an
        optimizer's step), a new tensor bound to a parameter (`p.data = ...`)
        or a replaced parameter: each call compares every parameter with the
        one it placed (tensor, storage, version) and places those that
        changed; needed only where a parameter's memory was written behind
        torch's back (numpy on `p.numpy()`, ctypes)."""
        self._loaded.place()

    def __call__(self, *inputs, keep=()):
        """Runs the program on `inputs` (torch tensors, numpy arrays, or
        DeviceArrays a call of a program of the same mesh kept). The
        parameters stay on the devices between calls (runtime arrays); the
        other inputs are placed for each call. The results whose indices are
        in `keep` stay on the devices too, as DeviceArrays (a decode loop's
        KV cache: `donate=` then updates it in place); the others come back
        as torch tensors (numpy arrays when no input is a tensor)."""
        import torch
        keys = []
        arrays = self._bind(inputs, keys)
        outputs = self._loaded.run(arrays, backend=getattr(self, "comm", "local"), keys=keys,
                                   keep=set(keep), graphs=getattr(self, "graphs", True))
        torch_in = any(isinstance(x, torch.Tensor) for x in inputs)
        converted = []
        # A viewed parameter's gradient comes back in the parameter's shape.
        shapes = {"grad." + k: tuple(v.shape) for k, v in self.module.named_parameters()}
        for out, spec in zip(outputs, self._loaded.results):
            if isinstance(out, _runtime.DeviceArray):
                converted.append(out)
                continue
            if spec.name in shapes and out.shape != shapes[spec.name]:
                out = out.reshape(shapes[spec.name])
            if spec.dtype == "bf16":
                t = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
                converted.append(t if torch_in else t.float().numpy())
            else:
                converted.append(torch.from_numpy(out) if torch_in else out)
        return converted[0] if len(converted) == 1 else tuple(converted)

    def benchmark(self, *inputs, repeat=20, warmup=3):
        """Times the program as a loop runs it: the parameters and these
        inputs placed on the devices once, `warmup` runs, then `repeat` runs
        on the placed arrays, each timed on the host from the call to its
        return (the results stay on the devices; a GPU run returns once its
        stream has run). Returns a dict: best_ms, median_ms, mean_ms, runs,
        place_ms (the placement), devices; on GPU ranks also device_best_ms
        and device_median_ms (CUDA events around each run on every rank's
        stream, the slowest rank's), host_overhead_ms (the median wall time
        beyond the median device time) and graph_launches (of the last run:
        one per rank when it replayed a CUDA graph)."""
        keys = []
        arrays = self._bind(inputs, keys)
        placed, times, device, graphs = self._loaded.benchmark(
            arrays, keys, repeat, warmup, backend=getattr(self, "comm", "local"),
            graphs=getattr(self, "graphs", True))
        median = sorted(times)[len(times) // 2]
        result = {"best_ms": min(times) * 1e3, "median_ms": median * 1e3,
                  "mean_ms": sum(times) / len(times) * 1e3, "runs": len(times),
                  "place_ms": placed * 1e3, "devices": self._loaded.num_devices}
        if device is not None:
            # As PyTorch times a step: CUDA events around it on the device;
            # what the host adds is the wall time beyond it.
            device_median = sorted(device)[len(device) // 2]
            result.update({"device_best_ms": min(device) * 1e3,
                           "device_median_ms": device_median * 1e3,
                           "host_overhead_ms": max(0.0, median - device_median) * 1e3,
                           "graph_launches": graphs})
        return result

    def report(self):
        """The plan report (`tp-opt --tp-spmd --tp-report=format=json`) as a dict."""
        path = os.path.join(self.workdir, "report.json")
        # tp-compile's --tp-spmd options, as the pipeline's.
        options = [flag[2:] for flag in self._compile_flags
                   if flag in ("--sequence-parallel", "--auto-plan") or
                   flag.startswith(("--memory-per-device=", "--cost-model="))]
        flags = ["--tp-spmd" + ("=" + " ".join(options) if options else ""),
                 "--tp-report=format=json output=%s" % path]
        _run([_tools.find_tool("tp-opt"), self.model_path] + flags + ["-o", os.devnull], "tp-opt")
        with open(path) as f:
            return json.load(f)

    def _reference(self, module, args):
        """The module's own results: its output, or for a training step the
        loss and the gradients from eager autograd."""
        import torch
        if not getattr(self, "backward", False):
            return module(*args)
        trainable = [p for p in module.parameters() if p.requires_grad]
        split = len(args) - self.num_targets
        names = [a[1] for a in self._args if a[0] == "input"]
        args = list(args)
        wanted = [names.index(n) for n in self.grad_inputs]
        for i in wanted:
            args[i] = args[i].detach().clone().requires_grad_()
        with torch.enable_grad():
            value = _loss_of(module(*args[:split]), self.loss, args[split:])
            grads = torch.autograd.grad(value, trainable + [args[i] for i in wanted])
            return [value.detach()] + [g.detach() for g in grads]

    def verify(self, *inputs, rtol=None):
        """Runs the program and the module's own eager forward on `inputs` and
        compares every element of every result as `tp-run --verify` does:
        |got - want| <= rtol * max(|want|, rms(want)), relative to each
        element's magnitude with the result's RMS as the floor (rtol 1e-5 for
        f32, 5e-3 at precision "high", 4e-2 at "medium"; 1e-2 for f16, 4e-2
        for bf16); a training step's gradients take
        the largest gradient RMS as their common floor. Returns a
        Verification (truthy when it passed)."""
        import torch
        got = self(*[torch.as_tensor(x) if not isinstance(x, torch.Tensor) else x for x in inputs])
        got = got if isinstance(got, tuple) else (got,)
        reference = "eager"
        with torch.no_grad():
            args = [torch.as_tensor(x) for x in inputs]
            try:
                want = self._reference(self.module, args)
            except RuntimeError as e:
                narrow = (torch.float16, torch.bfloat16)
                tensors = list(self.module.parameters()) + list(self.module.buffers()) + args
                if not any(t.dtype in narrow for t in tensors):
                    raise
                # CPU PyTorch lacks some f16 kernels (layer norm): the
                # reference of a half-precision module is then a float32
                # copy of it.
                import copy
                module = copy.deepcopy(self.module).float()
                want = self._reference(
                    module, [a.float() if a.is_floating_point() else a for a in args])
                reference = "eager float32 (%s)" % str(e).replace('"', "")
        want = _flatten(want)
        if len(want) != len(got):
            raise TpMlirError("the module returned %d tensors, the program %d"
                              % (len(want), len(got)))
        worst, tolerance = 0.0, 0.0
        # A training step's gradients share one scale: a gradient that is zero
        # by symmetry (a key projection's bias under softmax) comes out as the
        # rounding noise of terms of that scale, so their floor is the largest
        # gradient RMS; a forward result's floor is its own RMS.
        rms = [float(w.detach().double().pow(2).mean().sqrt()) if w.numel() else 0.0
               for w in want]
        shared = max(rms[1:], default=0.0) if getattr(self, "backward", False) else 0.0
        for index, (g, w, spec) in enumerate(zip(got, want, self._loaded.results)):
            # The runtime's tolerance and check (tprt_tolerance, tprt_compare),
            # as tp-run --verify's: one implementation.
            tol = rtol if rtol is not None else _runtime.tolerance(
                spec.code, getattr(self, "precision", "highest"))
            tolerance = max(tolerance, tol)
            g, w = g.double(), w.detach().double()
            if tuple(g.shape) != tuple(w.shape):
                raise TpMlirError("result shapes differ: program %s, module %s"
                                  % (list(g.shape), list(w.shape)))
            if not w.numel():
                continue
            floor = max(rms[index], shared if index > 0 else 0.0)
            ratio, bad = _runtime.compare(g.numpy(), w.numpy(), tol, floor)
            # An exact comparison (integers) that failed: an error of 1 ulp
            # of the tolerance's scale, so that it reads as failed.
            worst = max(worst, ratio * tol if tol > 0 else (0.0 if not bad else 1.0))
        return Verification(worst, tolerance, self._loaded.num_devices, reference)


class Verification:
    def __init__(self, worst, rtol, devices, reference="eager"):
        self.max_rel_error, self.rtol, self.devices = worst, rtol, devices
        self.reference = reference
        self.passed = worst <= rtol

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return ("%s: worst relative error %.3g (tolerance %.0e, floor: the RMS) on %d devices"
                "%s" % ("PASS" if self.passed else "FAIL", self.max_rel_error, self.rtol,
                        self.devices, "" if self.reference == "eager" else
                        "; reference: " + self.reference))


def _flatten(x):
    import torch
    if isinstance(x, torch.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        out = []
        for y in x:
            out += _flatten(y)
        return out
    if isinstance(x, dict):
        out = []
        for y in x.values():
            out += _flatten(y)
        return out
    raise TpMlirError("the module returned a %s; expected tensors" % type(x).__name__)


def _to_numpy(t):
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    return t.numpy()


def _run(cmd, what):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError("%s failed (exit %d):\n%s\nreproduce with: %s" % (
            what, proc.returncode, proc.stderr.strip(), " ".join(shlex.quote(c) for c in cmd)),
            reproducer=" ".join(shlex.quote(c) for c in cmd))
    return proc.stdout


def _input_names(module, count):
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [p.name for p in params[:count]]
    except (TypeError, ValueError):
        names = []
    return names + ["input%d" % i for i in range(len(names), count)]


def _loss_of(output, loss, targets=()):
    """The training step's loss: `loss(output, *targets)`, or the sum of
    every output."""
    if loss is not None:
        return loss(output, *targets)
    total = None
    for t in _flatten(output):
        total = t.sum() if total is None else total + t.sum()
    return total


def _training_step(module, loss, num_inputs, grad_inputs=(), input_names=()):
    """forward + backward: (loss, gradient of each trainable parameter)."""
    import torch
    try:
        from torch.func import functional_call
    except ImportError:
        from torch.nn.utils.stateless import functional_call
    trainable = [k for k, v in module.named_parameters() if v.requires_grad]
    if not trainable:
        raise TpMlirError("backward=True: the module has no parameter that requires grad")

    wanted = [input_names.index(n) for n in grad_inputs]

    def step(p, b, *inputs):
        inputs = list(inputs)
        for i in wanted:
            inputs[i] = inputs[i].detach().requires_grad_()
        output = functional_call(module, with_aliases(module, {**p, **b}),
                                 tuple(inputs[:num_inputs]))
        value = _loss_of(output, loss, inputs[num_inputs:])
        if value.dim() != 0:
            raise TpMlirError("backward=True: the loss has shape %s; expected a scalar"
                              % list(value.shape))
        return (value,) + tuple(torch.autograd.grad(
            value, [p[k] for k in trainable] + [inputs[i] for i in wanted]))
    step.needs_grad = True
    return step, ["loss"] + ["grad." + k for k in trainable] + \
        ["grad." + input_names[i] for i in wanted]


def import_module(module, example_inputs, mesh=None, plan=None, workdir=None, backward=False,
                  loss=None, targets=(), grad_inputs=(), auto_plan=False, donate=None):
    """Traces and imports `module` (with backward=True its training step: the
    loss and each trainable parameter's gradient): returns (mlir text, args,
    resolved plan) where args are (kind, name, IR shape) in the function's
    order. With auto_plan, parameters' gradients are left open: the
    planner lays each out as its parameter (it matches them by name)."""
    import torch
    example_inputs = tuple(torch.as_tensor(x) for x in example_inputs)
    names = _input_names(module, len(example_inputs))
    num_inputs = len(example_inputs)
    if targets:
        if not backward or loss is None:
            raise TpMlirError("targets are the loss's: they need backward=True and loss=")
        example_inputs += tuple(torch.as_tensor(t) for t in targets)
        names += ["target"] if len(targets) == 1 else ["target%d" % i for i in range(len(targets))]
    if mesh is not None and not isinstance(mesh, Mesh):
        mesh = Mesh(mesh)
    resolved = resolve(module, mesh, plan,
                       {n: tuple(x.shape) for n, x in zip(names, example_inputs)}) \
        if mesh is not None else None
    if grad_inputs and not backward:
        raise TpMlirError("grad_inputs needs backward=True")
    for name in grad_inputs:
        if name not in names[:num_inputs]:
            raise TpMlirError("grad_inputs names '%s'; the module's inputs are %s"
                              % (name, ", ".join(names[:num_inputs])))
        if not example_inputs[names.index(name)].is_floating_point():
            raise TpMlirError("grad_inputs names '%s', which is not a floating-point input"
                              % name)
    forward, result_names = (_training_step(module, loss, num_inputs, tuple(grad_inputs), names)
                             if backward else (None, None))
    traced = trace(module, example_inputs, names, forward)
    buffers = dict(module.named_buffers())
    placeholders = {}
    for node, info in traced.placeholders.items():
        info = dict(info)
        if info["kind"] == "buffer" and not buffers[info["name"]].is_floating_point():
            # Masks and index tables are constants of the program (the
            # manifest has no bool); float buffers are arguments.
            info = {"kind": "const", "name": info["name"], "value": buffers[info["name"]]}
        elif auto_plan and info["kind"] == "param" and _fused_split(node) > 1:
            # A fused projection under plan="auto": bound in Megatron's view
            # ([..., parts, features/parts]) so that the planner may split
            # inside each part.
            shape = tuple(node.meta["val"].shape)
            parts = _fused_split(node)
            d = _feature_dim(node)
            if shape[d] % parts == 0:
                info["shape"] = shape[:d] + (parts, shape[d] // parts) + shape[d + 1:]
                info["fused_parts"] = parts
        elif resolved is not None and info["name"] in resolved.params:
            shape = tuple(node.meta["val"].shape)
            ir_shape, dim_map = shape, None
            parts = _fused_split(node) if info["kind"] == "param" else 1
            axes = resolved.params[info["name"]]
            split_dims = set(axes.values())
            if parts > 1 and len(split_dims) == 1:
                # A fused projection (q|k|v) cut into equal parts: the weight
                # is viewed with its features as [parts, features/parts] and
                # split inside each part, so that each device holds the same
                # heads of q, k and v (Megatron's layout).
                d = next(iter(split_dims))
                if shape[d] % parts == 0 and (shape[d] // parts) % _split_count(resolved, axes) == 0:
                    ir_shape = shape[:d] + (parts, shape[d] // parts) + shape[d + 1:]
                    dim_map = {k: (k if k < d else k + 1) for k in range(len(shape))}
                    info["fused_parts"] = parts
            info["shape"] = ir_shape
            info["sharding"] = resolved.sharding_text(info["name"], len(ir_shape), dim_map)
        placeholders[node] = info
    imp = Importer(traced.graph, "forward", mesh)
    imp.result_names = result_names
    donated_shardings = _donations(placeholders, donate, mesh)
    views = {info["name"]: info["shape"] for info in placeholders.values()
             if info.get("fused_parts")}
    if result_names:
        imp.result_views = [views.get(n[len("grad."):]) if n.startswith("grad.") else None
                            for n in result_names]
        if mesh is not None:
            # Each gradient is laid out as its parameter (a replicated
            # parameter's gradient replicated: the optimizer updates it on
            # every device), so every reduction is in the program and its
            # plan report, none left to the runtime's gather.
            param_info = {info["name"]: (info, node) for node, info in placeholders.items()
                          if info["kind"] == "param"}
            imp_shapes = {"grad." + info["name"]: tuple(node.meta["val"].shape)
                          for node, info in placeholders.items() if info["kind"] == "input"}
            shardings = []
            for name in result_names:
                info, node = param_info.get(name[len("grad."):], (None, None))
                if info is None:
                    # The loss, and an input's gradient: replicated.
                    rank = len(imp_shapes[name]) if name in imp_shapes else 0
                    shardings.append("#tp.sharding<@%s, [%s]>" % (
                        mesh.name, ", ".join(["{}"] * rank)))
                    continue
                if auto_plan:
                    shardings.append(None)
                    continue
                rank = len(info.get("shape") or node.meta["val"].shape)
                shardings.append(info.get("sharding") or "#tp.sharding<@%s, [%s]>" % (
                    mesh.name, ", ".join(["{}"] * rank)))
            imp.result_shardings = shardings
    if donated_shardings:
        # A donated input and its output share a buffer: one sharding.
        shardings = list(getattr(imp, "result_shardings", None) or [])
        for k, sharding in donated_shardings.items():
            shardings += [None] * (k + 1 - len(shardings))
            shardings[k] = sharding
        imp.result_shardings = shardings
    try:
        text = imp.run(placeholders)
    except UnsupportedOpError as e:
        workdir = workdir or tempfile.mkdtemp(prefix="tp_mlir-")
        path = os.path.join(workdir, "reproducer.mlir")
        partial = [v for v in _imported_values(imp)]
        with open(path, "w") as f:
            f.write(imp.text(partial[-1:], note="tp_mlir: imported so far; stopped at: %s" % e))
        e.reproducer = path
        e.args = (str(e) + "\nwhat was imported so far: %s (tp-opt %s)" % (path, path),)
        raise
    args = [(info["kind"], info["name"], tuple(info.get("shape") or node.meta["val"].shape))
            for node, info in placeholders.items() if info["kind"] != "const"]
    return text, args, resolved


def _split_count(resolved, axes):
    n = 1
    for axis in axes:
        n *= resolved.mesh.axes[axis]
    return n


def _donations(placeholders, donate, mesh):
    """Marks each input named in `donate` ({input name: output index}) as
    donated to that output (tp.donate), with an explicit sharding (its own,
    or replicated) that the output gets too; returns {output: sharding}."""
    if not donate:
        return {}
    inputs = {info["name"]: (node, info) for node, info in placeholders.items()
              if info["kind"] == "input"}
    shardings = {}
    for name, output in dict(donate).items():
        if name not in inputs:
            raise TpMlirError("donate names '%s'; the module's inputs are %s" % (
                name, ", ".join(inputs) or "none"))
        if not isinstance(output, int) or output < 0 or output in shardings:
            raise TpMlirError("donate: input '%s' is given to output %r; expected the index "
                              "of an output no other input is donated to" % (name, output))
        node, info = inputs[name]
        rank = len(info.get("shape") or node.meta["val"].shape)
        sharding = info.get("sharding") or "#tp.sharding<@%s, [%s]>" % (
            mesh.name, ", ".join(["{}"] * rank))
        info["sharding"] = sharding
        info["donate"] = output
        shardings[output] = sharding
    return shardings


def _imported_values(imp):
    from .importer import Value
    return [v for v in imp.env.values() if isinstance(v, Value)]


def compile(module, example_inputs, mesh=None, plan=None, backward=False, loss=None,
            targets=(), grad_inputs=(), backend="cpu", comm=None, graphs=True, workdir=None,
            sequence_parallel=None, memory_per_device=None, cost_model=None, donate=None,
            precision="highest"):
    """Imports `module` (called on `example_inputs`), applies `plan` on
    `mesh`, compiles it with tp-compile and loads it. Returns a Program.

    backward=True imports the training step instead: the program returns
    the loss (`loss(output, *targets)`, default the sum of the outputs) and
    the gradient of every trainable parameter, in `named_parameters()`
    order, then of each input named in `grad_inputs` (as a layer inside a
    stack needs: Megatron's backward all-reduce at the block's input); it
    takes the module's inputs, then the targets.

    plan="auto" leaves every split to the compiler's planner (tp-compile
    --auto-plan): it chooses each parameter's sharding and each op's split
    at once, minimising the modelled step time of `cost_model` ("h200", the
    default, or a file written by `tprt-bench --calibrate`) with the
    parameters' bytes and the activations live at the peak per device within
    `memory_per_device` (bytes, or a string such as "80GB"); a training step's gradients are laid out as
    their parameters. report()["functions"][0]["plan"] explains the choice.
    With a plan of placements, the same search chooses each op's split after
    propagation (not with sequence_parallel), and replaces the plan's own only
    where it holds no more per device (or `memory_per_device` allows more) and
    is modelled more than 30% faster; its "rule" in the report says which.

    backend="cuda" compiles for NVIDIA GPUs (tp-compile --target cuda) and
    runs on the runtime's GPU communicators: comm="device" (default: every
    rank on one GPU) or "nccl" (rank r on GPU r). There, calls whose
    arguments are resident (the parameters, DeviceArrays) replay a CUDA graph
    per rank from their third run on (the first warms up, the second is
    captured); graphs=False launches every op, every call.

    donate={input name: output index} gives an input's buffer to an output
    of its shape and dtype (tp.donate, JAX's donate_argnums): the program
    writes that output in place, as a step that updates its state (a cache,
    an optimizer's moments) needs; the input and the output share one
    sharding (the input's, or replicated). The caller's tensor stays as it
    was; the output is the new state. tp-compile refuses, naming both, an
    output that cannot be written in its input's place.

    precision= is how f32 GEMMs may compute (tp-compile --matmul-precision,
    PyTorch's set_float32_matmul_precision): "highest" (IEEE f32, the
    default), "high" (TF32 inputs, f32 accumulation) or "medium" (bf16
    inputs, f32 accumulation). GPU ranks follow it in cuBLAS; CPU ranks
    compute IEEE f32 at every setting; verify()'s tolerance follows it."""
    if precision not in MATMUL_PRECISIONS:
        raise TpMlirError("precision %r: expected one of %s" % (
            precision, ", ".join(repr(p) for p in MATMUL_PRECISIONS)))
    known = _runtime.targets()
    if backend not in known:
        raise TpMlirError("backend %r: expected one of %s" % (
            backend, ", ".join(repr(t) for t in known)))
    if comm is None:
        comm = known[backend].default_backend
    if _runtime.backend_target(comm) != backend:
        raise TpMlirError("comm %r does not run %s programs; expected %s" % (
            comm, backend, " or ".join(repr(b) for b in known[backend].backends)))
    from .plan import Parallelized
    if isinstance(module, Parallelized):
        mesh, plan, module = module.mesh, module.plan, module.module
    auto = isinstance(plan, str) and plan == "auto"
    if isinstance(plan, str) and not auto:
        raise TpMlirError("plan %r: expected 'auto' or a dict of name patterns to placements"
                          % (plan,))
    # Which of these combine is --tp-propagate's to say (tp-compile passes
    # them to it): a CompileError naming the option.
    if auto:
        plan = None
    if mesh is None:
        mesh = Mesh({"tp": 1})
    if not isinstance(mesh, Mesh):
        mesh = Mesh(mesh)
    owned = workdir is None
    workdir = workdir or tempfile.mkdtemp(prefix="tp_mlir-")
    os.makedirs(workdir, exist_ok=True)
    text, args, resolved = import_module(module, example_inputs, mesh, plan, workdir,
                                         backward, loss, targets, grad_inputs, auto, donate)
    path = os.path.join(workdir, "model.mlir")
    with open(path, "w") as f:
        f.write(text)
    flags = ["--target=%s" % backend]
    if precision != "highest":
        flags.append("--matmul-precision=%s" % precision)
    if auto:
        flags.append("--auto-plan")
    if memory_per_device is not None:
        flags.append("--memory-per-device=%s" % (memory_per_device,))
    if cost_model is not None:
        flags.append("--cost-model=%s" % (cost_model,))
    if sequence_parallel or (sequence_parallel is None and resolved and
                             resolved.sequence_parallel):
        flags.append("--sequence-parallel")
    library = os.path.join(workdir, "model.so")
    _run([_tools.find_tool("tp-compile"), path, "-o", library] + flags, "tp-compile")
    program = Program(module, text, workdir, library, args, None, mesh, backend, flags)
    program.backward, program.loss, program.comm = backward, loss, comm
    program.graphs = graphs
    program.precision = precision
    program.num_targets = len(targets)
    program.grad_inputs = tuple(grad_inputs)
    if owned:
        # A temporary folder lives as long as its program; one of a failed
        # compile stays, for the reproducer in the error.
        weakref.finalize(program, shutil.rmtree, workdir, True)
    return program
