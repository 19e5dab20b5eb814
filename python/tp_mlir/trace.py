"""Tracing a module into an ATen graph whose placeholders carry the fully
qualified names of the parameters and buffers they stand for.

torch >= 2.1: torch.export, then its decompositions to core ATen ops.
Older torch (Debian's 1.13): make_fx of the module called functionally
(parameters and buffers as inputs), fake tensors for shapes.
Each graph node records the submodule that was running when it was made
(meta['tp_module']), for error messages and plans.
"""
import contextlib

from .errors import UnsupportedOpError


class Traced:
    """The graph and what each placeholder stands for."""

    def __init__(self, graph, placeholders, output_spec=None):
        self.graph = graph
        # node -> {"kind": param|buffer|input, "name": fqn or input name}
        self.placeholders = placeholders
        self.output_spec = output_spec


@contextlib.contextmanager
def _module_paths(module):
    """Stamps every graph node made while a submodule runs with its path."""
    import torch.fx
    stack = [""]
    handles = []
    for name, sub in module.named_modules():
        def pre(mod, args, name=name):
            stack.append(name)

        def post(mod, args, out, name=name):
            if stack[-1] == name:
                stack.pop()
        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post))
    original = torch.fx.Graph.create_node

    def create_node(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        node.meta.setdefault("tp_module", stack[-1])
        return node
    torch.fx.Graph.create_node = create_node
    try:
        yield
    finally:
        torch.fx.Graph.create_node = original
        for h in handles:
            h.remove()


def _torch_version():
    import torch
    parts = torch.__version__.split("+")[0].split(".")
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts[:2])


def trace(module, example_inputs, input_names, forward=None):
    """Traces `forward(params, buffers, *inputs)` (default: the module's own
    forward) and returns a Traced. A `forward` with `needs_grad` set is
    traced through autograd (a training step: its backward ops decomposed
    into forward ones)."""
    import torch
    params = dict(module.named_parameters())
    buffers = dict(module.named_buffers())
    if forward is None and _torch_version() >= (2, 1) and hasattr(torch, "export") and \
            not aliases(module):
        try:
            return _trace_export(module, example_inputs, input_names, params, buffers)
        except UnsupportedOpError as e:
            # Modules export refuses (Python control flow it cannot capture)
            # may still trace with make_fx.
            import warnings
            warnings.warn("%s; tracing with make_fx instead" % e)
    try:
        from torch.func import functional_call
    except ImportError:
        from torch.nn.utils.stateless import functional_call
    from torch.fx.experimental.proxy_tensor import make_fx

    if forward is None:
        def forward(p, b, *inputs):
            return functional_call(module, with_aliases(module, {**p, **b}), tuple(inputs))
    decompositions = {}
    if _needs_grad(forward):
        # Backward ops as the forward ops the importer knows.
        from torch._decomp import get_decompositions
        aten = torch.ops.aten
        decompositions = get_decompositions([
            aten.native_layer_norm_backward, aten._softmax_backward_data,
            aten._log_softmax_backward_data, aten.tanh_backward, aten.gelu_backward,
            aten.silu_backward, aten.sigmoid_backward, aten.threshold_backward,
            aten.embedding_dense_backward])
    with _module_paths(module), torch.no_grad() if not _needs_grad(forward) else \
            contextlib.nullcontext():
        try:
            gm = make_fx(forward, decomposition_table=decompositions,
                         tracing_mode="fake")(params, buffers, *example_inputs)
        except Exception as e:  # a data-dependent shape, an unsupported Python construct
            raise UnsupportedOpError("tracing the module failed: %s: %s" % (type(e).__name__, e))
    nodes = [n for n in gm.graph.nodes if n.op == "placeholder"]
    names = [("param", k) for k in params] + [("buffer", k) for k in buffers] + \
            [("input", k) for k in input_names]
    if len(nodes) != len(names):
        raise UnsupportedOpError("tracing gave %d inputs for %d parameters, buffers and inputs"
                                 % (len(nodes), len(names)))
    placeholders = {n: {"kind": kind, "name": name} for n, (kind, name) in zip(nodes, names)}
    return Traced(gm.graph, placeholders)


def aliases(module):
    """{name: canonical name} for every parameter or buffer reachable under
    a second name (a tied LM head: lm_head.weight is wte.weight)."""
    canonical, result = {}, {}
    for prefix, sub in module.named_modules(remove_duplicate=False):
        for kind in (sub._parameters, sub._buffers):
            for name, tensor in kind.items():
                if tensor is None:
                    continue
                fqn = prefix + "." + name if prefix else name
                first = canonical.setdefault(id(tensor), fqn)
                if first != fqn:
                    result[fqn] = first
    return result


def with_aliases(module, tensors):
    """`tensors` (by canonical name) with every alias of each bound too, so
    that functional_call replaces a tied parameter under all its names."""
    full = dict(tensors)
    for alias, name in aliases(module).items():
        if name in full:
            full[alias] = full[name]
    return full


def _needs_grad(forward):
    return getattr(forward, "needs_grad", False)


def _trace_export(module, example_inputs, input_names, params, buffers):
    import torch
    with _module_paths(module):
        try:
            program = torch.export.export(module, tuple(example_inputs))
            program = program.run_decompositions()
        except Exception as e:
            raise UnsupportedOpError("torch.export of the module failed: %s: %s"
                                     % (type(e).__name__, e))
    sig = program.graph_signature
    to_param = dict(sig.inputs_to_parameters)
    to_buffer = dict(sig.inputs_to_buffers)
    user = list(sig.user_inputs)
    placeholders = {}
    for node in program.graph.nodes:
        if node.op != "placeholder":
            continue
        if node.name in to_param:
            placeholders[node] = {"kind": "param", "name": to_param[node.name]}
        elif node.name in to_buffer:
            placeholders[node] = {"kind": "buffer", "name": to_buffer[node.name]}
        elif node.name in user:
            placeholders[node] = {"kind": "input", "name": input_names[user.index(node.name)]}
        else:
            raise UnsupportedOpError("torch.export input '%s' is neither a parameter, a buffer "
                                     "nor a user input (lifted constants are not supported)"
                                     % node.name)
        # export names modules in nn_module_stack; keep the innermost path.
    for node in program.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            node.meta["tp_module"] = list(stack.values())[-1][0]
    return Traced(program.graph, placeholders)
