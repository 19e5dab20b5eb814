"""Plans in the vocabulary of torch.distributed.tensor.parallel: a mesh, and
module or parameter name patterns mapped to ColwiseParallel(),
RowwiseParallel(), SequenceParallel(), or explicit placements Shard(d) /
Replicate() per parameter. A plan becomes `tp.sharding` constraints on the
function's arguments; propagation does the rest.
"""
import fnmatch

from .errors import PlanError


class Mesh:
    """A device mesh: axis names and sizes, major to minor
    (`Mesh({"dp": 2, "tp": 4})`: 8 devices, tp the fastest-varying)."""

    def __init__(self, axes, name="mesh"):
        if isinstance(axes, int):
            axes = {"tp": axes}
        self.axes = dict(axes)
        if not self.axes or len(self.axes) > 4:
            raise PlanError("a mesh has 1 to 4 axes, got %r" % (axes,))
        for axis, size in self.axes.items():
            if not isinstance(size, int) or size < 1:
                raise PlanError("mesh axis '%s' has size %r; expected a positive integer"
                                % (axis, size))
        self.name = name

    @property
    def num_devices(self):
        n = 1
        for size in self.axes.values():
            n *= size
        return n

    def default_axis(self):
        """The axis plan styles split over: "tp" if the mesh has one, else its
        last (fastest) axis."""
        return "tp" if "tp" in self.axes else list(self.axes)[-1]

    def mlir(self):
        return 'tp.mesh @%s [%s]' % (self.name, ", ".join(
            '"%s" = %d' % (a, s) for a, s in self.axes.items()))

    def __repr__(self):
        return "Mesh(%r)" % (self.axes,)


class Placement:
    pass


class Shard(Placement):
    """The tensor split along dimension `dim` over a mesh axis."""

    def __init__(self, dim):
        self.dim = dim

    def __repr__(self):
        return "Shard(%d)" % self.dim


class Replicate(Placement):
    """A full copy on every device of the axis."""

    def __repr__(self):
        return "Replicate()"


class ParallelStyle:
    def __init__(self, axis=None):
        self.axis = axis

    def __repr__(self):
        return "%s()" % type(self).__name__


class ColwiseParallel(ParallelStyle):
    """Splits a layer's output features (nn.Linear's weight rows, HF Conv1D's
    columns, nn.Embedding's embedding columns); the bias follows."""


class RowwiseParallel(ParallelStyle):
    """Splits a layer's input features (nn.Linear's weight columns, HF
    Conv1D's rows, nn.Embedding's vocabulary rows); the bias is replicated and
    the output is a partial sum reduced once."""


class SequenceParallel(ParallelStyle):
    """For norm and dropout layers: run them on tokens split over the axis
    (Megatron's sequence parallelism: reduce_scatter + all_gather around them
    instead of all_reduce)."""


def _matches(pattern, name):
    """Component-wise fnmatch, as parallelize_module matches module names."""
    p, n = pattern.split("."), name.split(".")
    return len(p) == len(n) and all(fnmatch.fnmatchcase(b, a) for a, b in zip(p, n))


def _layer_kind(module):
    import torch.nn as nn
    if isinstance(module, nn.Linear):
        return "linear"
    if isinstance(module, nn.Embedding):
        return "embedding"
    if type(module).__name__ == "Conv1D" and hasattr(module, "weight") and module.weight.dim() == 2:
        return "conv1d"
    return None


def _norm_like(module):
    name = type(module).__name__.lower()
    return "norm" in name or "dropout" in name


class ResolvedPlan:
    """What a plan means for one module: per parameter (FQN), the placements
    per mesh axis and the entry that set them; whether sequence parallelism is
    on; the modules each style entry matched."""

    def __init__(self, mesh):
        self.mesh = mesh
        self.params = {}       # fqn -> {axis: dim}
        self.entries = {}      # fqn -> plan key
        self.styles = {}       # module path -> style
        self.sequence_parallel = False

    def sharding_text(self, fqn, rank, dim_map=None):
        """The #tp.sharding of parameter `fqn` for an IR rank `rank`;
        `dim_map` maps the parameter's dims to the IR's (a viewed weight)."""
        dims = [[] for _ in range(rank)]
        for axis, dim in self.params.get(fqn, {}).items():
            d = dim_map[dim] if dim_map else dim
            dims[d].append(axis)
        order = list(self.mesh.axes)
        return "#tp.sharding<@%s, [%s]>" % (self.mesh.name, ", ".join(
            "{%s}" % ", ".join('"%s"' % a for a in sorted(ax, key=order.index)) for ax in dims))


def resolve(module, mesh, plan, input_shapes=None):
    """Resolves `plan` against `module`'s submodules and parameters."""
    resolved = ResolvedPlan(mesh)
    if plan is None:
        return resolved
    if not isinstance(plan, dict):
        raise PlanError("a plan is a dict of name patterns to ColwiseParallel(), "
                        "RowwiseParallel(), SequenceParallel(), Shard(d) or Replicate(); got %r"
                        % type(plan).__name__)
    modules = dict(module.named_modules())
    params = dict(module.named_parameters())
    shapes = {k: tuple(v.shape) for k, v in params.items()}
    shapes.update(input_shapes or {})

    def place(fqn, axis, dim, entry):
        shape = shapes[fqn]
        if dim < -len(shape) or dim >= len(shape):
            raise PlanError("plan entry '%s': Shard(%d) of '%s' of shape %s: no such dimension"
                            % (entry, dim, fqn, list(shape)))
        dim %= len(shape)
        size = mesh.axes[axis]
        previous = resolved.params.setdefault(fqn, {})
        splits = size
        for other_axis, other_dim in previous.items():
            if other_dim == dim and other_axis != axis:
                splits *= mesh.axes[other_axis]
        if shape[dim] % splits:
            raise PlanError("plan entry '%s': dimension %d of '%s' (size %d) does not divide "
                            "over %d devices (mesh axis '%s' of size %d)"
                            % (entry, dim, fqn, shape[dim], splits, axis, size))
        if axis in previous and previous[axis] != dim:
            raise PlanError("plan entry '%s' splits '%s' over axis '%s' along dimension %d, but "
                            "entry '%s' already splits it along dimension %d"
                            % (entry, fqn, axis, dim, resolved.entries[fqn], previous[axis]))
        previous[axis] = dim
        resolved.entries[fqn] = entry

    for key, value in plan.items():
        if not isinstance(key, str):
            raise PlanError("plan keys are name patterns (strings); got %r" % (key,))
        if isinstance(value, ParallelStyle):
            axis = value.axis or mesh.default_axis()
            if axis not in mesh.axes:
                raise PlanError("plan entry '%s': %r names axis '%s', which mesh %r does not have"
                                % (key, value, axis, mesh))
            matched = [path for path in modules if path and _matches(key, path)]
            if not matched:
                raise PlanError("plan entry '%s' (%r) matches no submodule of %s"
                                % (key, value, type(module).__name__))
            for path in matched:
                sub = modules[path]
                resolved.styles[path] = value
                if isinstance(value, SequenceParallel):
                    if not _norm_like(sub):
                        raise PlanError("plan entry '%s': SequenceParallel() applies to norm and "
                                        "dropout layers; '%s' is a %s"
                                        % (key, path, type(sub).__name__))
                    resolved.sequence_parallel = True
                    continue
                kind = _layer_kind(sub)
                if kind is None:
                    raise PlanError("plan entry '%s': %r applies to nn.Linear, nn.Embedding and "
                                    "Conv1D layers; '%s' is a %s"
                                    % (key, value, path, type(sub).__name__))
                colwise = isinstance(value, ColwiseParallel)
                weight_dim = {("linear", True): 0, ("linear", False): 1,
                              ("conv1d", True): 1, ("conv1d", False): 0,
                              ("embedding", True): 1, ("embedding", False): 0}[(kind, colwise)]
                place(path + ".weight", axis, weight_dim, key)
                if colwise and getattr(sub, "bias", None) is not None and kind != "embedding":
                    place(path + ".bias", axis, 0, key)
            continue
        placements = value if isinstance(value, (list, tuple)) else None
        if placements is None:
            if not isinstance(value, Placement):
                raise PlanError("plan entry '%s': %r is not a ParallelStyle or a placement "
                                "(Shard(d), Replicate())" % (key, value))
            placements = {mesh.default_axis(): value}
        else:
            if len(placements) != len(mesh.axes):
                raise PlanError("plan entry '%s': %d placements for a mesh of %d axes %r"
                                % (key, len(placements), len(mesh.axes), mesh))
            placements = dict(zip(mesh.axes, placements))
        matched = [name for name in shapes if _matches(key, name)]
        if not matched:
            raise PlanError("plan entry '%s' (%r) matches no parameter or input of %s"
                            % (key, value, type(module).__name__))
        for name in matched:
            for axis, p in placements.items():
                if isinstance(p, Shard):
                    place(name, axis, p.dim, key)
                elif not isinstance(p, Replicate):
                    raise PlanError("plan entry '%s': %r is not Shard(d) or Replicate()"
                                    % (key, p))
            resolved.entries.setdefault(name, key)
            resolved.params.setdefault(name, {})
    return resolved


class Parallelized:
    """A module with a mesh and a plan, as parallelize() returns it; compile()
    takes it in place of the module."""

    def __init__(self, module, mesh, plan):
        self.module, self.mesh, self.plan = module, mesh, plan
        self.resolved = resolve(module, mesh, plan)

    def shardings(self):
        """Each planned parameter's placements: {fqn: {axis: dim}}."""
        return {k: dict(v) for k, v in self.resolved.params.items()}


def parallelize(module, mesh, plan):
    """Checks `plan` against `module` (every entry must match, every split
    divide) and binds them for compile()."""
    if not isinstance(mesh, Mesh):
        mesh = Mesh(mesh)
    return Parallelized(module, mesh, plan)
