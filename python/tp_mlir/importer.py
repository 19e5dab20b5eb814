"""ATen graph -> the global form (func, linalg, tensor, arith, math).

The graph comes from tracing the module (trace.py): ATen ops with static
shapes, parameters and buffers as placeholders that carry their fully
qualified names. Each node becomes a few ops; every tensor keeps its static
type. Nodes whose inputs are all constants (a causal-mask buffer, `full`,
`arange`, their slices) are evaluated here with torch and become constants.
An op the importer does not cover is an UnsupportedOpError naming the op,
the node and the module path, with what was imported so far written as a
tp-opt reproducer.
"""
import math
import re
import operator

from ._mlir import (ELEMENT_TYPES, FLOATS, Builder, reshape_groups, scalar_literal,
                    tensor_type)
from .errors import UnsupportedOpError


class Value:
    """An imported tensor: its SSA name, static shape and element type."""
    __slots__ = ("name", "shape", "dtype")

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, tuple(shape), dtype


class Const:
    """A value known at import time (a torch tensor or a Python scalar)."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def element_type(torch_dtype):
    name = str(torch_dtype).replace("torch.", "")
    if name not in ELEMENT_TYPES:
        raise UnsupportedOpError("element type %s is not supported (the importer takes %s)"
                                 % (name, ", ".join(ELEMENT_TYPES)))
    return ELEMENT_TYPES[name]


def _convert(body, x, src, dst):
    """Scalar conversion inside a linalg body."""
    if src == dst:
        return x
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64, "i1": 1, "i32": 32, "i64": 64}
    if src in FLOATS and dst in FLOATS:
        if src in ("f16", "bf16") and dst in ("f16", "bf16"):
            return _convert(body, _convert(body, x, src, "f32"), "f32", dst)
        op = "arith.extf" if width[dst] > width[src] else "arith.truncf"
        return _op_cast(body, op, x, src, dst)
    if src in FLOATS:
        return _op_cast(body, "arith.fptosi" if dst != "i1" else "arith.fptoui", x, src, dst)
    if dst in FLOATS:
        return _op_cast(body, "arith.uitofp" if src == "i1" else "arith.sitofp", x, src, dst)
    if width[dst] > width[src]:
        return _op_cast(body, "arith.extui" if src == "i1" else "arith.extsi", x, src, dst)
    return _op_cast(body, "arith.trunci", x, src, dst)


def _op_cast(body, op, x, src, dst):
    name = body.builder.fresh("s")
    body.raw("%s = %s %s : %s to %s" % (name, op, x, src, dst))
    return name


class Importer:
    """Imports one traced graph into one function."""

    def __init__(self, graph, func_name, mesh=None):
        self.graph = graph
        self.func_name = func_name
        self.mesh = mesh
        self.b = Builder()
        self.env = {}
        self.args = []      # (Value, attributes text, placeholder info)
        self.node = None
        # Integer vectors known as a 0-d integer value plus constants (a
        # decode step's positions, pos + arange(t)): name -> (scalar, [ints]).
        self.offsets = {}

    # ----------------------------------------------------------------- driver

    def run(self, placeholders):
        """`placeholders` maps each placeholder node to a dict: kind
        ('param', 'buffer', 'input', 'const'), name, value (a torch tensor for
        constants), shape (the IR shape if the parameter is viewed), sharding
        (an attribute text or None)."""
        outputs = None
        for node in self.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                self._placeholder(node, placeholders[node])
            elif node.op == "call_function":
                self.env[node] = self._call(node)
            elif node.op == "output":
                outputs = self._flatten_output(node.args[0])
            else:
                self._unsupported("graph node of kind '%s'" % node.op)
        import torch.fx
        results = []
        for out in outputs:
            value = self.env.get(out) if isinstance(out, torch.fx.Node) else None
            if isinstance(value, Const) and hasattr(value.value, "shape"):
                value = self._materialize(value, out)
            if not isinstance(value, Value):
                raise UnsupportedOpError(
                    "the module returns %r, which is not a tensor; the program's results "
                    "are tensors" % (value.value if isinstance(value, Const) else out,))
            results.append(value)
        # Results returned in another (viewed) shape: a viewed parameter's
        # gradient, in the parameter's view.
        views = getattr(self, "result_views", None) or []
        for i, shape in enumerate(views):
            if shape is not None and i < len(results):
                results[i] = self._reshape(results[i], tuple(shape))
        self.results = results
        return self.text(results)

    def text(self, results, note=None):
        lines = []
        if note:
            lines += ["// " + line for line in note.splitlines()]
        if self.mesh is not None:
            lines.append(self.mesh.mlir())
        args = ",\n    ".join(
            "%s: %s%s" % (v.name, tensor_type(v.shape, v.dtype), " {%s}" % attrs if attrs else "")
            for v, attrs, _ in self.args)
        res = ", ".join(tensor_type(v.shape, v.dtype) for v in results)
        names = getattr(self, "result_names", None) or []
        shardings = getattr(self, "result_shardings", None) or []

        def result_attrs(i):
            attrs = []
            if i < len(names):
                attrs.append('tp.name = "%s"' % names[i])
            if i < len(shardings) and shardings[i]:
                attrs.append("tp.sharding = %s" % shardings[i])
            return " {%s}" % ", ".join(attrs) if attrs else ""
        sig = ", ".join(tensor_type(v.shape, v.dtype) + result_attrs(i)
                        for i, v in enumerate(results))
        lines.append("func.func @%s(%s)\n    -> (%s) {" % (self.func_name, args, sig))
        lines += ["  " + line for line in self.b.lines]
        lines.append("  return %s%s" % (", ".join(v.name for v in results),
                                        " : " + res if results else ""))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def _flatten_output(self, out):
        if isinstance(out, (list, tuple)):
            flat = []
            for o in out:
                flat += self._flatten_output(o)
            return flat
        return [out]

    def _placeholder(self, node, info):
        if info["kind"] == "const":
            self.env[node] = Const(info["value"])
            return
        val = node.meta["val"]
        shape = tuple(info.get("shape") or val.shape)
        dtype = element_type(val.dtype)
        name = "%" + _ssa_name(info["name"], len(self.args))
        attrs = ['tp.name = "%s"' % info["name"].replace("\\", "\\\\").replace('"', '\\"')]
        if info.get("sharding"):
            attrs.append("tp.sharding = %s" % info["sharding"])
        if info.get("donate") is not None:
            attrs.append("tp.donate = %d : i64" % info["donate"])
        arg = Value(name, shape, dtype)
        self.args.append((arg, ", ".join(attrs), info))
        if shape != tuple(val.shape):
            arg = self._reshape(arg, tuple(val.shape))
        self.env[node] = arg

    def _unsupported(self, what):
        node = self.node
        path = node.meta.get("tp_module", "") if node is not None else ""
        target = _target_name(node.target) if node is not None and node.op == "call_function" else None
        raise UnsupportedOpError(
            "unsupported %s%s at graph node '%s'%s" % (
                what, " (%s)" % target if target and target not in what else "",
                node.name if node is not None else "?",
                " in module '%s'" % path if path else " in the top-level module"),
            op=target, node=node.name if node is not None else None, module_path=path)

    # ------------------------------------------------------------ arguments

    def _val(self, node):
        return node.meta["val"]

    def _shape(self, node):
        return tuple(self._val(node).shape)

    def _dtype(self, node):
        return element_type(self._val(node).dtype)

    def _arg(self, a):
        """The imported form of a node argument: Value, Const, list or a
        Python value."""
        import torch.fx
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return [self._arg(x) for x in a]
        return a

    def _tensor(self, a):
        """A node argument as a Value (constants materialized)."""
        v = self._arg(a)
        if isinstance(v, Const):
            return self._materialize(v, a)
        if not isinstance(v, Value):
            self._unsupported("operand %r where a tensor was expected" % (v,))
        return v

    def _materialize(self, const, node=None):
        import torch
        t = const.value
        if not isinstance(t, torch.Tensor):
            t = torch.tensor(t)
        t = t.detach().contiguous()
        dtype = element_type(t.dtype)
        shape = tuple(t.shape)
        name = self.b.fresh("k")
        flat = t.reshape(-1)
        if flat.numel() > 0 and bool((flat == flat[0]).all()):
            text = scalar_literal(flat[0].item(), dtype)
        elif dtype == "i1":
            text = _nested(t.tolist(), lambda x: "true" if x else "false")
        else:
            raw = t.view(torch.int16) if dtype == "bf16" else t
            text = '"0x%s"' % raw.numpy().tobytes().hex().upper()
        self.b.emit("%s = arith.constant dense<%s> : %s" % (name, text, tensor_type(shape, dtype)))
        return Value(name, shape, dtype)

    # ---------------------------------------------------------------- calls

    def _call(self, node):
        if node.target is operator.getitem:
            seq = self.env[node.args[0]]
            if isinstance(seq, Const):
                return Const(seq.value[node.args[1]])
            if not isinstance(seq, list):
                self._unsupported("getitem on a non-tuple")
            return seq[node.args[1]]
        name = _target_name(node.target)
        args = [self._arg(a) for a in node.args]
        kwargs = {k: self._arg(v) for k, v in node.kwargs.items()}
        if _all_const(args) and _all_const(list(kwargs.values())):
            return self._fold(node)
        handler = _HANDLERS.get(name)
        if handler is None:
            self._unsupported("ATen op '%s'" % name)
        return handler(self, node)

    def _fold(self, node):
        """Evaluates a node whose inputs are all constants."""
        def real(a):
            import torch.fx
            if isinstance(a, torch.fx.Node):
                v = self.env[a]
                return v.value if isinstance(v, Const) else [x.value for x in v]
            if isinstance(a, (list, tuple)):
                return type(a)(real(x) for x in a)
            return a
        args = [real(a) for a in node.args]
        kwargs = {k: real(v) for k, v in node.kwargs.items()}
        if "device" in kwargs:
            kwargs["device"] = "cpu"
        result = node.target(*args, **kwargs)
        if isinstance(result, (list, tuple)):
            return [Const(r) for r in result]
        return Const(result)

    # ---------------------------------------------------------- elementwise

    def elementwise(self, node, operands, fn, compute=None, out_dtype=None):
        """One linalg.generic over the node's (broadcast) result shape.
        `operands` are node arguments (tensors or scalars); `fn(body, xs,
        dtype)` gets each operand as a scalar of the `compute` type."""
        shape = self._shape(node)
        out_dtype = out_dtype or self._dtype(node)
        compute = compute or out_dtype
        rank = len(shape)
        inputs, slots = [], []
        for a in operands:
            v = self._arg(a)
            if isinstance(v, Const):
                import torch
                if isinstance(v.value, torch.Tensor) and v.value.numel() == 1:
                    slots.append(("scalar", v.value.item()))
                    continue
                if isinstance(v.value, (int, float, bool)):
                    slots.append(("scalar", v.value))
                    continue
                v = self._materialize(v, a)
            elif isinstance(v, (int, float, bool)):
                slots.append(("scalar", v))
                continue
            elif not isinstance(v, Value):
                self._unsupported("operand %r" % (v,))
            value, dims = self._broadcast_operand(v, shape)
            slots.append(("tensor", len(inputs), value.dtype))
            inputs.append((value.name, value.shape, value.dtype, ["d%d" % d for d in dims]))

        def body_fn(body):
            xs = []
            for slot in slots:
                if slot[0] == "scalar":
                    xs.append(body.const(slot[1], compute))
                else:
                    xs.append(_convert(body, body.args[slot[1]], slot[2], compute))
            return fn(body, xs, compute)

        def wrapped(body):
            return _convert(body, body_fn(body), compute, out_dtype)

        return Value(self.b.generic(inputs, shape, out_dtype, ["parallel"] * rank, wrapped),
                     shape, out_dtype)

    def _broadcast_operand(self, v, shape):
        """`v` with its broadcast (size-1) dimensions collapsed away, and the
        result dimensions its remaining dimensions index."""
        offset = len(shape) - len(v.shape)
        keep = [k for k, size in enumerate(v.shape) if not (size == 1 and shape[offset + k] != 1)]
        if len(keep) == len(v.shape):
            return v, [offset + k for k in range(len(v.shape))]
        if not keep:
            return self._reshape(v, ()), []
        groups, start = [], 0
        for i, k in enumerate(keep):
            end = keep[i + 1] if i + 1 < len(keep) else len(v.shape)
            groups.append(list(range(start, end)) if i + 1 < len(keep) else list(range(start, len(v.shape))))
            start = end
        new_shape = tuple(v.shape[k] for k in keep)
        name = self.b.collapse(v.name, v.shape, groups, new_shape, v.dtype)
        return Value(name, new_shape, v.dtype), [offset + k for k in keep]

    # ------------------------------------------------------------- reshapes

    def _reshape(self, v, shape):
        shape = tuple(shape)
        if v.shape == shape:
            return v
        if not v.shape or not shape:
            if v.shape:  # to rank 0
                return Value(self.b.collapse(v.name, v.shape, [], shape, v.dtype), shape, v.dtype)
            return Value(self.b.expand(v.name, v.shape, [], shape, v.dtype), shape, v.dtype)
        groups = reshape_groups(v.shape, shape)
        if groups is None:
            self._unsupported("reshape of %s to %s" % (list(v.shape), list(shape)))
        mid = tuple(math.prod(v.shape[i] for i in ga) for ga, _ in groups)
        cur = v
        if any(len(ga) > 1 for ga, _ in groups) or len(mid) != len(v.shape):
            cur = Value(self.b.collapse(cur.name, cur.shape, [ga for ga, _ in groups], mid, v.dtype),
                        mid, v.dtype)
        if any(len(gb) > 1 for _, gb in groups) or len(mid) != len(shape):
            cur = Value(self.b.expand(cur.name, cur.shape, [gb for _, gb in groups], shape, v.dtype),
                        shape, v.dtype)
        return cur

    def reshape(self, node):
        return self._reshape(self._tensor(node.args[0]), self._shape(node))

    def identity(self, node):
        return self._tensor(node.args[0])

    def transpose(self, v, perm):
        if list(perm) == list(range(len(perm))):
            return v
        shape = tuple(v.shape[p] for p in perm)
        empty = self.b.empty(shape, v.dtype)
        name = self.b.fresh("t")
        self.b.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [%s]" % (
            name, v.name, tensor_type(v.shape, v.dtype), empty, tensor_type(shape, v.dtype),
            ", ".join(map(str, perm))))
        return Value(name, shape, v.dtype)

    def slice(self, v, dim, start, size, step=1):
        offsets = [0] * len(v.shape)
        sizes = list(v.shape)
        strides = [1] * len(v.shape)
        offsets[dim], sizes[dim], strides[dim] = start, size, step
        if tuple(sizes) == v.shape:
            return v
        name = self.b.fresh("x")
        self.b.emit("%s = tensor.extract_slice %s[%s] [%s] [%s] : %s to %s" % (
            name, v.name, ", ".join(map(str, offsets)), ", ".join(map(str, sizes)),
            ", ".join(map(str, strides)), tensor_type(v.shape, v.dtype),
            tensor_type(sizes, v.dtype)))
        return Value(name, sizes, v.dtype)

    # ------------------------------------------------------------ reductions

    def reduce(self, v, dims, combine, init, acc_dtype):
        """Reduces `v` over `dims` (keepdim=False) into `acc_dtype`."""
        rank = len(v.shape)
        dims = sorted(d % rank for d in dims) if rank else []
        kept = [d for d in range(rank) if d not in dims]
        shape = tuple(v.shape[d] for d in kept)
        init_t = self.b.filled(init, shape, acc_dtype)
        iterators = ["reduction" if d in dims else "parallel" for d in range(rank)]

        def body(b):
            x = _convert(b, b.args[0], v.dtype, acc_dtype)
            return combine(b, x, b.args[1], acc_dtype)
        name = self.b.generic([(v.name, v.shape, v.dtype, ["d%d" % d for d in range(rank)])],
                              shape, acc_dtype, iterators, body, init=init_t,
                              out_map=["d%d" % d for d in kept])
        return Value(name, shape, acc_dtype)

    def contraction(self, a, b, kind):
        """linalg.matmul / batch_matmul of two Values (same element type)."""
        if kind == "mm":
            shape = (a.shape[0], b.shape[1])
        else:
            shape = (a.shape[0], a.shape[1], b.shape[2])
        acc = self.b.filled(0, shape, a.dtype)
        name = self.b.fresh("m")
        op = "linalg.matmul" if kind == "mm" else "linalg.batch_matmul"
        self.b.emit("%s = %s ins(%s, %s : %s, %s) outs(%s : %s) -> %s" % (
            name, op, a.name, b.name, tensor_type(a.shape, a.dtype), tensor_type(b.shape, b.dtype),
            acc, tensor_type(shape, a.dtype), tensor_type(shape, a.dtype)))
        return Value(name, shape, a.dtype)


def _nested(values, fmt):
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v, fmt) for v in values) + "]"
    return fmt(values)


def _ssa_name(fqn, index):
    clean = "".join(c if c.isalnum() or c in "_$." else "_" for c in fqn)
    if not clean or clean[0].isdigit():
        clean = "a" + clean
    name = clean.replace(".", "_") + ("" if clean else str(index))
    # Letters then digits is the form of the builder's fresh names (%k1, %x3):
    # an argument so named (an input `k1`) takes a `_` they never have.
    if re.fullmatch(r"[A-Za-z]+[0-9]+", name):
        name += "_"
    return name


def _target_name(target):
    name = getattr(target, "_name", None) or getattr(target, "__name__", str(target))
    overload = getattr(target, "_overloadname", None)
    name = name.replace("::", ".")
    if overload and not name.endswith("." + overload):
        name += "." + overload
    return name


def _all_const(values):
    for v in values:
        if isinstance(v, list):
            if not _all_const(v):
                return False
        elif isinstance(v, (Value, _Deferred)):
            return False
    return True


# ------------------------------------------------------------------ handlers

def _binary(opf, opi=None):
    def fn(body, xs, dtype):
        op = opf if dtype in FLOATS else opi
        return body.op("%s %s, %s" % (op, xs[0], xs[1]), dtype)
    return fn


def _add_like(opf, opi):
    def handler(imp, node):
        alpha = node.kwargs.get("alpha", 1)
        operands = list(node.args[:2])

        def fn(body, xs, dtype):
            y = xs[1]
            if alpha != 1:
                y = _binary("arith.mulf", "arith.muli")(body, [y, body.const(alpha, dtype)], dtype)
            return _binary(opf, opi)(body, [xs[0], y], dtype)
        return imp.elementwise(node, operands, fn)
    return handler


def _unary(text):
    """`text` formats one operand: 'math.tanh {0}'."""
    def handler(imp, node):
        return imp.elementwise(node, [node.args[0]],
                               lambda body, xs, dtype: body.op(text.format(xs[0]), dtype))
    return handler


def _cmp(body, op, xs, dtype):
    name = body.builder.fresh("s")
    body.raw("%s = %s, %s, %s : %s" % (name, op, xs[0], xs[1], dtype))
    return name


def _mul(body, a, b, dtype):
    return body.op("arith.mulf %s, %s" % (a, b), dtype)


def _gelu(imp, node):
    approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")

    def fn(body, xs, dtype):
        x = xs[0]
        half = body.const(0.5, dtype)
        one = body.const(1.0, dtype)
        if approximate == "tanh":
            c = body.const(0.044715, dtype)
            k = body.const(math.sqrt(2.0 / math.pi), dtype)
            x3 = _mul(body, _mul(body, x, x, dtype), x, dtype)
            inner = body.op("arith.addf %s, %s" % (x, _mul(body, c, x3, dtype)), dtype)
            t = body.op("math.tanh %s" % _mul(body, k, inner, dtype), dtype)
        else:
            r = body.const(1.0 / math.sqrt(2.0), dtype)
            t = body.op("math.erf %s" % _mul(body, x, r, dtype), dtype)
        s = body.op("arith.addf %s, %s" % (one, t), dtype)
        return _mul(body, _mul(body, half, x, dtype), s, dtype)
    return imp.elementwise(node, [node.args[0]], fn)


def _sigmoid_of(body, x, dtype):
    one = body.const(1.0, dtype)
    n = body.op("arith.negf %s" % x, dtype)
    e = body.op("math.exp %s" % n, dtype)
    d = body.op("arith.addf %s, %s" % (one, e), dtype)
    return body.op("arith.divf %s, %s" % (one, d), dtype)


def _pow_scalar(imp, node):
    exponent = node.args[1]

    def fn(body, xs, dtype):
        x = xs[0]
        if exponent == 2:
            return _mul(body, x, x, dtype)
        if exponent == 3:
            return _mul(body, _mul(body, x, x, dtype), x, dtype)
        if exponent == 1:
            return x
        if exponent == 0.5:
            return body.op("math.sqrt %s" % x, dtype)
        if exponent == -0.5:
            return body.op("math.rsqrt %s" % x, dtype)
        if exponent == -1:
            return body.op("arith.divf %s, %s" % (body.const(1.0, dtype), x), dtype)
        return body.op("math.powf %s, %s" % (x, body.const(exponent, dtype)), dtype)
    return imp.elementwise(node, [node.args[0]], fn)


def _where(imp, node):
    # The condition stays i1; the branches are converted to the result type.
    return _select(imp, node, node.args[0], node.args[1], node.args[2], imp._dtype(node))


def _select(imp, node, cond, a, b, dtype):
    shape = imp._shape(node)
    inputs, slots = [], []
    for operand, want in ((cond, "i1"), (a, dtype), (b, dtype)):
        v = imp._arg(operand)
        if isinstance(v, Const):
            import torch
            if not isinstance(v.value, torch.Tensor) or v.value.numel() == 1:
                scalar = v.value.item() if hasattr(v.value, "item") else v.value
                slots.append(("scalar", scalar, want))
                continue
            v = imp._materialize(v)
        elif isinstance(v, (int, float, bool)):
            slots.append(("scalar", v, want))
            continue
        value, dims = imp._broadcast_operand(v, shape)
        slots.append(("tensor", len(inputs), value.dtype, want))
        inputs.append((value.name, value.shape, value.dtype, ["d%d" % d for d in dims]))

    def body_fn(body):
        xs = []
        for slot in slots:
            if slot[0] == "scalar":
                xs.append(body.const(slot[1], slot[2]))
            else:
                xs.append(_convert(body, body.args[slot[1]], slot[2], slot[3]))
        return body.op("arith.select %s, %s, %s" % (xs[0], xs[1], xs[2]), dtype)
    return Value(imp.b.generic(inputs, shape, dtype, ["parallel"] * len(shape), body_fn),
                 shape, dtype)


def _masked_fill(imp, node):
    return _select(imp, node, node.args[1], node.args[2], node.args[0], imp._dtype(node))


def _to_copy(imp, node):
    return imp.elementwise(node, [node.args[0]], lambda body, xs, d: xs[0])


def _sum(imp, node, mean=False):
    v = imp._tensor(node.args[0])
    dims = node.args[1] if len(node.args) > 1 else list(range(len(v.shape)))
    if dims is None or dims == []:
        dims = list(range(len(v.shape)))
    out_dtype = imp._dtype(node)
    acc = "f32" if out_dtype in ("f16", "bf16") else out_dtype
    r = imp.reduce(v, dims, lambda b, x, a, d: b.op(
        ("arith.addf" if d in FLOATS else "arith.addi") + " %s, %s" % (x, a), d), 0, acc)
    if mean:
        count = math.prod(v.shape[d % len(v.shape)] for d in dims) if v.shape else 1
        r = _scale(imp, r, 1.0 / count)
    if acc != out_dtype:
        r = _cast_value(imp, r, out_dtype)
    return imp._reshape(r, imp._shape(node))


def _scale(imp, v, factor):
    def fn(body):
        return body.op("arith.mulf %s, %s" % (body.args[0], body.const(factor, v.dtype)), v.dtype)
    rank = len(v.shape)
    m = ["d%d" % d for d in range(rank)]
    return Value(imp.b.generic([(v.name, v.shape, v.dtype, m)], v.shape, v.dtype,
                               ["parallel"] * rank, fn), v.shape, v.dtype)


def _cast_value(imp, v, dtype):
    rank = len(v.shape)
    m = ["d%d" % d for d in range(rank)]
    return Value(imp.b.generic([(v.name, v.shape, v.dtype, m)], v.shape, dtype,
                               ["parallel"] * rank,
                               lambda body: _convert(body, body.args[0], v.dtype, dtype)),
                 v.shape, dtype)


def _amax(imp, node):
    v = imp._tensor(node.args[0])
    dims = node.args[1] if len(node.args) > 1 else list(range(len(v.shape)))
    r = imp.reduce(v, dims, lambda b, x, a, d: b.op("arith.maximumf %s, %s" % (x, a), d),
                   float("-inf"), v.dtype)
    return imp._reshape(r, imp._shape(node))


def _layer_norm(imp, node):
    x = imp._tensor(node.args[0])
    normalized = list(node.args[1])
    weight = imp._arg(node.args[2]) if len(node.args) > 2 else None
    bias = imp._arg(node.args[3]) if len(node.args) > 3 else None
    eps = node.args[4] if len(node.args) > 4 else 1e-5
    rank, k = len(x.shape), len(normalized)
    rows = rank - k
    count = math.prod(normalized)
    acc = "f32"
    full = ["d%d" % d for d in range(rank)]
    row = ["d%d" % d for d in range(rows)]
    feat = ["d%d" % d for d in range(rows, rank)]
    s = imp.reduce(x, list(range(rows, rank)),
                   lambda b, v, a, d: b.op("arith.addf %s, %s" % (v, a), d), 0, acc)
    inv = 1.0 / count
    sq_init = imp.b.filled(0, s.shape, acc)

    def sq_body(b):
        v = _convert(b, b.args[0], x.dtype, acc)
        mean = _mul(b, b.args[1], b.const(inv, acc), acc)
        c = b.op("arith.subf %s, %s" % (v, mean), acc)
        return b.op("arith.addf %s, %s" % (_mul(b, c, c, acc), b.args[2]), acc)
    q = Value(imp.b.generic([(x.name, x.shape, x.dtype, full), (s.name, s.shape, acc, row)],
                            s.shape, acc, ["parallel"] * rows + ["reduction"] * k, sq_body,
                            init=sq_init, out_map=row), s.shape, acc)
    inputs = [(x.name, x.shape, x.dtype, full), (s.name, s.shape, acc, row),
              (q.name, q.shape, acc, row)]
    for p in (weight, bias):
        if isinstance(p, Const):
            p = imp._materialize(p)
        if isinstance(p, Value):
            inputs.append((p.name, p.shape, p.dtype, feat[len(feat) - len(p.shape):]))
    has_w, has_b = isinstance(weight, (Value, Const)), isinstance(bias, (Value, Const))

    def body(b):
        v = _convert(b, b.args[0], x.dtype, acc)
        mean = _mul(b, b.args[1], b.const(inv, acc), acc)
        var = _mul(b, b.args[2], b.const(inv, acc), acc)
        rs = b.op("math.rsqrt %s" % b.op("arith.addf %s, %s" % (var, b.const(eps, acc)), acc), acc)
        n = _mul(b, b.op("arith.subf %s, %s" % (v, mean), acc), rs, acc)
        i = 3
        if has_w:
            n = _mul(b, n, _convert(b, b.args[i], inputs[i][2], acc), acc)
            i += 1
        if has_b:
            n = b.op("arith.addf %s, %s" % (n, _convert(b, b.args[i], inputs[i][2], acc)), acc)
        return _convert(b, n, acc, x.dtype)
    out = Value(imp.b.generic(inputs, x.shape, x.dtype, ["parallel"] * rank, body),
                x.shape, x.dtype)
    stats_shape = tuple(x.shape[:rows]) + (1,) * k
    results = [out, None, None]
    users = {u.args[1] for u in node.users if u.target is operator.getitem}
    if 1 in users or 2 in users:
        def stat(fn):
            return imp._reshape(Value(imp.b.generic(
                [(s.name, s.shape, acc, row), (q.name, q.shape, acc, row)], s.shape, acc,
                ["parallel"] * rows, fn), s.shape, acc), stats_shape)
        results[1] = stat(lambda b: _mul(b, b.args[0], b.const(inv, acc), acc))
        results[2] = stat(lambda b: b.op("math.rsqrt %s" % b.op("arith.addf %s, %s" % (
            _mul(b, b.args[1], b.const(inv, acc), acc), b.const(eps, acc)), acc), acc))
    return results


def _softmax(imp, node):
    x = imp._tensor(node.args[0])
    dim = node.args[1] % len(x.shape)
    out_dtype = imp._dtype(node)
    if x.dtype != out_dtype:
        x = _cast_value(imp, x, out_dtype)
    t = tensor_type(x.shape, x.dtype)
    empty = imp.b.empty(x.shape, x.dtype)
    name = imp.b.fresh("sm")
    imp.b.emit("%s = linalg.softmax dimension(%d) ins(%s : %s) outs(%s : %s) -> %s" % (
        name, dim, x.name, t, empty, t, t))
    return Value(name, x.shape, x.dtype)


def _mm(imp, node):
    a, b = imp._tensor(node.args[0]), imp._tensor(node.args[1])
    return imp.contraction(a, b, "mm")


def _bmm(imp, node):
    a, b = imp._tensor(node.args[0]), imp._tensor(node.args[1])
    return imp.contraction(a, b, "bmm")


def _addmm(imp, node):
    beta = node.kwargs.get("beta", 1)
    alpha = node.kwargs.get("alpha", 1)
    product = imp.contraction(imp._tensor(node.args[1]), imp._tensor(node.args[2]), "mm")
    bias = imp._arg(node.args[0])
    dtype = imp._dtype(node)

    def fn(body, xs, d):
        p, c = xs[0], xs[1]
        if alpha != 1:
            p = _mul(body, p, body.const(alpha, d), d)
        if beta != 1:
            c = _mul(body, c, body.const(beta, d), d)
        return body.op("arith.addf %s, %s" % (p, c), d)
    return _elementwise_values(imp, [product, bias], product.shape, dtype, fn)


def _elementwise_values(imp, operands, shape, dtype, fn):
    """elementwise() on already imported Values/Consts."""
    inputs, slots = [], []
    for v in operands:
        if isinstance(v, Const):
            v = imp._materialize(v)
        value, dims = imp._broadcast_operand(v, shape)
        slots.append((len(inputs), value.dtype))
        inputs.append((value.name, value.shape, value.dtype, ["d%d" % d for d in dims]))

    def body_fn(body):
        xs = [_convert(body, body.args[i], d, dtype) for i, d in slots]
        return fn(body, xs, dtype)
    return Value(imp.b.generic(inputs, shape, dtype, ["parallel"] * len(shape), body_fn),
                 shape, dtype)


def _t(imp, node):
    v = imp._tensor(node.args[0])
    return imp.transpose(v, list(reversed(range(len(v.shape)))))


def _transpose(imp, node):
    v = imp._tensor(node.args[0])
    rank = len(v.shape)
    a, b = node.args[1] % rank, node.args[2] % rank
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return imp.transpose(v, perm)


def _permute(imp, node):
    v = imp._tensor(node.args[0])
    return imp.transpose(v, [d % len(v.shape) for d in node.args[1]])


def _expand(imp, node):
    v = imp._tensor(node.args[0])
    shape = imp._shape(node)
    if v.shape == shape:
        return v
    return _elementwise_values(imp, [v], shape, v.dtype, lambda body, xs, d: xs[0])


def _slice(imp, node):
    v = imp._tensor(node.args[0])
    rank = len(v.shape)
    dim = (node.args[1] if len(node.args) > 1 else 0) % rank
    start = node.args[2] if len(node.args) > 2 and node.args[2] is not None else 0
    step = node.args[4] if len(node.args) > 4 else 1
    size = imp._shape(node)[dim]
    if start < 0:
        start += v.shape[dim]
    start = max(0, min(start, v.shape[dim]))
    return imp.slice(v, dim, start, size, step)


def _select_int(imp, node):
    v = imp._tensor(node.args[0])
    dim = node.args[1] % len(v.shape)
    index = node.args[2] % v.shape[dim]
    s = imp.slice(v, dim, index, 1)
    return imp._reshape(s, imp._shape(node))


def _split(imp, node):
    v = imp._tensor(node.args[0])
    dim = (node.args[2] if len(node.args) > 2 else node.kwargs.get("dim", 0)) % len(v.shape)
    sizes = node.args[1]
    if isinstance(sizes, int):
        sizes = [min(sizes, v.shape[dim] - s) for s in range(0, v.shape[dim], sizes)]
    if len(sizes) > 1 and len(set(sizes)) == 1:
        # Equal parts: the dimension viewed as [parts, size] and each part
        # taken from the new major dimension, so that a split of the minor one
        # (heads of a fused q|k|v projection) carries through every part.
        n, size = len(sizes), sizes[0]
        parts = imp._reshape(v, v.shape[:dim] + (n, size) + v.shape[dim + 1:])
        return [imp._reshape(imp.slice(parts, dim, i, 1), v.shape[:dim] + (size,) + v.shape[dim + 1:])
                for i in range(n)]
    out, start = [], 0
    for size in sizes:
        out.append(imp.slice(v, dim, start, size))
        start += size
    return out


def _cat(imp, node):
    tensors = [imp._tensor(t) for t in node.args[0]]
    shape = imp._shape(node)
    dim = (node.args[1] if len(node.args) > 1 else 0) % len(shape)
    tensors = [t for t in tensors if t.shape[dim] != 0 or len(t.shape) != 1]
    if len(tensors) == 1:
        return tensors[0]
    if len({t.shape[dim] for t in tensors}) == 1:
        # Equal parts (the gradient of a split into q|k|v): concatenated
        # along a new major dimension, [parts, size], then merged, as the
        # split was imported, so that a split of the minor one carries on.
        size = tensors[0].shape[dim]
        parts = [imp._reshape(t, t.shape[:dim] + (1, size) + t.shape[dim + 1:]) for t in tensors]
        stacked = shape[:dim] + (len(parts), size) + shape[dim + 1:]
        name = imp.b.fresh("cat")
        imp.b.emit("%s = tensor.concat dim(%d) %s : (%s) -> %s" % (
            name, dim, ", ".join(t.name for t in parts),
            ", ".join(tensor_type(t.shape, t.dtype) for t in parts),
            tensor_type(stacked, parts[0].dtype)))
        return imp._reshape(Value(name, stacked, parts[0].dtype), shape)
    name = imp.b.fresh("cat")
    imp.b.emit("%s = tensor.concat dim(%d) %s : (%s) -> %s" % (
        name, dim, ", ".join(t.name for t in tensors),
        ", ".join(tensor_type(t.shape, t.dtype) for t in tensors),
        tensor_type(shape, tensors[0].dtype)))
    return Value(name, shape, tensors[0].dtype)


def _index_copy(imp, node):
    """`self.index_copy(dim, index, source)`: each slice i of `source` along
    `dim` written at position index[i], an insert at an offset read at run
    time (a KV cache written at a decode step's positions); the positions
    written last win where they repeat."""
    v, dim, index, source = node.args[:4]
    v, source = imp._tensor(v), imp._tensor(source)
    dim %= len(v.shape)
    index = imp._tensor(index)
    if len(index.shape) > 1:
        imp._unsupported("index_copy with a %d-d index" % len(index.shape))
    n = index.shape[0] if index.shape else 1
    if source.shape[dim] != n:
        imp._unsupported("index_copy of %d slices at %d positions" % (source.shape[dim], n))
    current = v
    known = imp.offsets.get(index.name)
    base = None
    if known is not None and len(known[1]) == n:
        # pos + constants: each offset from the scalar itself.
        scalar, constants = known
        base = imp.b.fresh("i")
        imp.b.emit("%s = tensor.extract %s[] : %s" % (
            base, scalar.name, tensor_type(scalar.shape, scalar.dtype)))
        index = Value(index.name, index.shape, scalar.dtype)
    for i in range(n):
        at = imp.b.fresh("i")
        if base is not None:
            c = imp.b.fresh("c")
            imp.b.emit("%s = arith.constant %d : %s" % (c, constants[i], index.dtype))
            imp.b.emit("%s = arith.addi %s, %s : %s" % (at, base, c, index.dtype))
        elif index.shape:
            c = imp.b.fresh("c")
            imp.b.emit("%s = arith.constant %d : index" % (c, i))
            imp.b.emit("%s = tensor.extract %s[%s] : %s" % (
                at, index.name, c, tensor_type(index.shape, index.dtype)))
        else:
            imp.b.emit("%s = tensor.extract %s[] : %s" % (
                at, index.name, tensor_type(index.shape, index.dtype)))
        offset = imp.b.fresh("i")
        imp.b.emit("%s = arith.index_cast %s : %s to index" % (offset, at, index.dtype))
        piece = imp.slice(source, dim, i, 1)
        offsets = ["0"] * len(v.shape)
        offsets[dim] = offset
        sizes = list(piece.shape)
        name = imp.b.fresh("x")
        imp.b.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s" % (
            name, piece.name, current.name, ", ".join(offsets), ", ".join(map(str, sizes)),
            ", ".join(["1"] * len(v.shape)), tensor_type(piece.shape, piece.dtype),
            tensor_type(v.shape, v.dtype)))
        current = Value(name, v.shape, v.dtype)
    return current


def _embedding(imp, node):
    """A lookup as a one-hot contraction over the vocabulary: the table may be
    split by rows (vocab-parallel, a partial sum) or by columns."""
    table, ids = imp._tensor(node.args[0]), imp._tensor(node.args[1])
    vocab, width = table.shape
    tokens = math.prod(ids.shape)
    flat = imp._reshape(ids, (tokens,))

    def one_hot(body):
        index = body.builder.fresh("s")
        body.raw("%s = linalg.index 1 : index" % index)
        cast = body.builder.fresh("s")
        body.raw("%s = arith.index_cast %s : index to %s" % (cast, index, flat.dtype))
        hit = body.builder.fresh("s")
        body.raw("%s = arith.cmpi eq, %s, %s : %s" % (hit, body.args[0], cast, flat.dtype))
        return body.op("arith.select %s, %s, %s" % (hit, body.const(1.0, table.dtype),
                                                  body.const(0.0, table.dtype)), table.dtype)
    onehot = Value(imp.b.generic([(flat.name, flat.shape, flat.dtype, ["d0"])], (tokens, vocab),
                                 table.dtype, ["parallel", "parallel"], one_hot),
                   (tokens, vocab), table.dtype)
    rows = imp.contraction(onehot, table, "mm")
    return imp._reshape(rows, imp._shape(node))


def _div(imp, node):
    if node.kwargs.get("rounding_mode") is not None:
        imp._unsupported("div with rounding_mode=%r" % node.kwargs["rounding_mode"])
    return imp.elementwise(node, list(node.args[:2]), _binary("arith.divf", "arith.divsi"))


def _rsub(imp, node):
    alpha = node.kwargs.get("alpha", 1)

    def fn(body, xs, d):
        x = xs[0] if alpha == 1 else _mul(body, xs[0], body.const(alpha, d), d)
        return body.op("arith.subf %s, %s" % (xs[1], x), d)
    return imp.elementwise(node, list(node.args[:2]), fn)


def _silu(imp, node):
    return imp.elementwise(node, [node.args[0]],
                           lambda body, xs, d: _mul(body, xs[0], _sigmoid_of(body, xs[0], d), d))


def _relu(imp, node):
    return imp.elementwise(node, [node.args[0]], lambda body, xs, d: body.op(
        "arith.maximumf %s, %s" % (xs[0], body.const(0.0, d)), d))


def _comparison_handler(pred_f, pred_i):
    def handler(imp, node):
        a = imp._arg(node.args[0])
        b = imp._arg(node.args[1])
        dtypes = [v.dtype for v in (a, b) if isinstance(v, Value)]
        compute = dtypes[0] if dtypes else "f32"

        def fn(body, xs, d):
            if d in FLOATS:
                return _cmp(body, "arith.cmpf " + pred_f, xs, d)
            return _cmp(body, "arith.cmpi " + pred_i, xs, d)
        return _elementwise_cmp(imp, node, list(node.args[:2]), fn, compute)
    return handler


def _elementwise_cmp(imp, node, operands, fn, compute):
    shape = imp._shape(node)
    values = []
    for a in operands:
        v = imp._arg(a)
        if isinstance(v, Const) and hasattr(v.value, "numel") and v.value.numel() != 1:
            v = imp._materialize(v)
        values.append(v)
    inputs, slots = [], []
    for v in values:
        if isinstance(v, Value):
            value, dims = imp._broadcast_operand(v, shape)
            slots.append(("tensor", len(inputs), value.dtype))
            inputs.append((value.name, value.shape, value.dtype, ["d%d" % d for d in dims]))
        else:
            slots.append(("scalar", v.value.item() if isinstance(v, Const) and hasattr(v.value, "item")
                          else (v.value if isinstance(v, Const) else v)))

    def body_fn(body):
        xs = [body.const(s[1], compute) if s[0] == "scalar"
              else _convert(body, body.args[s[1]], s[2], compute) for s in slots]
        return fn(body, xs, compute)
    return Value(imp.b.generic(inputs, shape, "i1", ["parallel"] * len(shape), body_fn), shape, "i1")


def _logical_not(imp, node):
    v = imp._tensor(node.args[0])
    rank = len(v.shape)
    m = ["d%d" % d for d in range(rank)]

    def fn(body):
        return body.op("arith.xori %s, %s" % (body.args[0], body.const(True, "i1")), "i1")
    return Value(imp.b.generic([(v.name, v.shape, v.dtype, m)], v.shape, "i1",
                               ["parallel"] * rank, fn), v.shape, "i1")


def _filled_like(value):
    def handler(imp, node):
        if value is None:
            fill = node.args[1]
        else:
            fill = value
        return Value(imp.b.filled(fill, imp._shape(node), imp._dtype(node)), imp._shape(node),
                     imp._dtype(node))
    return handler


def _slice_backward(imp, node):
    """The gradient of a slice: the slice's gradient inserted into zeros."""
    grad = imp._tensor(node.args[0])
    shape = tuple(node.args[1])
    rank = len(shape)
    dim, start, step = node.args[2] % rank, node.args[3], node.args[5]
    if start < 0:
        start += shape[dim]
    start = max(0, min(start, shape[dim]))
    zeros = imp.b.filled(0, shape, grad.dtype)
    offsets, strides = [0] * rank, [1] * rank
    offsets[dim], strides[dim] = start, step
    name = imp.b.fresh("ins")
    imp.b.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [%s] : %s into %s" % (
        name, grad.name, zeros, ", ".join(map(str, offsets)), ", ".join(map(str, grad.shape)),
        ", ".join(map(str, strides)), tensor_type(grad.shape, grad.dtype),
        tensor_type(shape, grad.dtype)))
    return Value(name, shape, grad.dtype)


_VIEWS = ("aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default",
          "aten.reshape.default", "aten.clone.default", "aten.permute.default",
          "aten.t.default", "aten.transpose.int", "aten.expand.default")
_CONTRACTIONS = ("aten.mm.default", "aten.bmm.default", "aten.addmm.default")


def _is_plain_add(node):
    import torch.fx
    return (node.op == "call_function" and _target_name(node.target) == "aten.add.Tensor"
            and "alpha" not in node.kwargs and len(node.args) == 2
            and all(isinstance(a, torch.fx.Node) and "val" in a.meta and
                    tuple(a.meta["val"].shape) == tuple(node.meta["val"].shape)
                    for a in node.args))


def _from_contraction(node):
    """Whether `node` is a matmul's result, through views."""
    for _ in range(8):
        if node.op != "call_function":
            return False
        name = _target_name(node.target)
        if name in _CONTRACTIONS:
            return True
        if name not in _VIEWS:
            return False
        node = node.args[0]
    return False


def _record_offsets(imp, node, result):
    """Remembers an integer vector that is a 0-d integer value plus constants
    (`pos + positions[:t]`), so that index_copy can read its elements from
    the scalar itself: on a GPU the host code may read an argument, not what
    a kernel computed."""
    import torch.fx
    if not isinstance(result, Value) or len(result.shape) != 1 or result.dtype[0] != "i":
        return
    if len(node.args) != 2 or node.kwargs.get("alpha", 1) != 1:
        return
    values = [imp.env.get(a) if isinstance(a, torch.fx.Node) else Const(a) for a in node.args]
    for scalar, const in (values, values[::-1]):
        if (isinstance(scalar, Value) and scalar.shape == () and isinstance(const, Const)
                and getattr(const.value, "dim", lambda: -1)() == 1
                and not const.value.is_floating_point()):
            imp.offsets[result.name] = (scalar, [int(v) for v in const.value.tolist()])
            return


def _add(imp, node):
    """A sum of same-shaped terms (autograd accumulating a gradient, residual
    connections) is added up with the matmul results first: in a sharded
    program those are the pending sums, which then meet the other terms once,
    reduced once, instead of each being reduced where it meets a replicated
    term (floating-point reassociation, which the partitioned program may do
    anyway)."""
    if not _is_plain_add(node):
        result = _add_like("arith.addf", "arith.addi")(imp, node)
        _record_offsets(imp, node, result)
        return result
    users = list(node.users)
    if len(users) == 1 and _is_plain_add(users[0]):
        return _Deferred([node])  # an inner add of a longer sum
    terms = []

    def collect(n):
        value = imp.env.get(n)
        if isinstance(value, _Deferred):
            for a in n.args:
                collect(a)
        else:
            terms.append(n)
    for a in node.args:
        collect(a)
    if len(terms) == 2:
        return _add_like("arith.addf", "arith.addi")(imp, node)
    ordered = [t for t in terms if _from_contraction(t)] + \
        [t for t in terms if not _from_contraction(t)]
    dtype = imp._dtype(node)
    shape = imp._shape(node)
    total = imp._tensor(ordered[0])
    for t in ordered[1:]:
        total = _elementwise_values(
            imp, [total, imp._tensor(t)], shape, dtype,
            lambda body, xs, d: body.op(("arith.addf" if d in FLOATS else "arith.addi")
                                        + " %s, %s" % (xs[0], xs[1]), d))
    return total


class _Deferred:
    """An add folded into the sum it feeds."""

    def __init__(self, nodes):
        self.nodes = nodes


_HANDLERS = {
    "aten.ones_like.default": _filled_like(1),
    "aten.zeros_like.default": _filled_like(0),
    "aten.full_like.default": _filled_like(None),
    "aten.slice_backward.default": _slice_backward,
    "aten.add.Tensor": _add,
    "aten.add.Scalar": _add_like("arith.addf", "arith.addi"),
    "aten.sub.Tensor": _add_like("arith.subf", "arith.subi"),
    "aten.sub.Scalar": _add_like("arith.subf", "arith.subi"),
    "aten.rsub.Scalar": _rsub,
    "aten.rsub.Tensor": _rsub,
    "aten.mul.Tensor": lambda imp, n: imp.elementwise(n, list(n.args[:2]), _binary("arith.mulf", "arith.muli")),
    "aten.mul.Scalar": lambda imp, n: imp.elementwise(n, list(n.args[:2]), _binary("arith.mulf", "arith.muli")),
    "aten.div.Tensor": _div,
    "aten.div.Scalar": _div,
    "aten.neg.default": _unary("arith.negf {0}"),
    "aten.rsqrt.default": _unary("math.rsqrt {0}"),
    "aten.sqrt.default": _unary("math.sqrt {0}"),
    "aten.exp.default": _unary("math.exp {0}"),
    "aten.log.default": _unary("math.log {0}"),
    "aten.tanh.default": _unary("math.tanh {0}"),
    "aten.sin.default": _unary("math.sin {0}"),
    "aten.cos.default": _unary("math.cos {0}"),
    "aten.erf.default": _unary("math.erf {0}"),
    "aten.abs.default": _unary("math.absf {0}"),
    "aten.sigmoid.default": lambda imp, n: imp.elementwise(
        n, [n.args[0]], lambda body, xs, d: _sigmoid_of(body, xs[0], d)),
    "aten.silu.default": _silu,
    "aten.relu.default": _relu,
    "aten.gelu.default": _gelu,
    "aten.pow.Tensor_Scalar": _pow_scalar,
    "aten.reciprocal.default": lambda imp, n: imp.elementwise(
        n, [n.args[0]], lambda body, xs, d: body.op("arith.divf %s, %s" % (body.const(1.0, d), xs[0]), d)),
    "aten.maximum.default": lambda imp, n: imp.elementwise(n, list(n.args[:2]), _binary("arith.maximumf", "arith.maxsi")),
    "aten.minimum.default": lambda imp, n: imp.elementwise(n, list(n.args[:2]), _binary("arith.minimumf", "arith.minsi")),
    "aten.where.self": _where,
    "aten.masked_fill.Scalar": _masked_fill,
    "aten.masked_fill.Tensor": _masked_fill,
    "aten.eq.Scalar": _comparison_handler("oeq", "eq"),
    "aten.eq.Tensor": _comparison_handler("oeq", "eq"),
    "aten.ne.Scalar": _comparison_handler("une", "ne"),
    "aten.ne.Tensor": _comparison_handler("une", "ne"),
    "aten.lt.Scalar": _comparison_handler("olt", "slt"),
    "aten.lt.Tensor": _comparison_handler("olt", "slt"),
    "aten.le.Scalar": _comparison_handler("ole", "sle"),
    "aten.gt.Scalar": _comparison_handler("ogt", "sgt"),
    "aten.gt.Tensor": _comparison_handler("ogt", "sgt"),
    "aten.ge.Scalar": _comparison_handler("oge", "sge"),
    "aten.logical_not.default": _logical_not,
    "aten.bitwise_not.default": _logical_not,
    "aten._to_copy.default": _to_copy,
    "aten.sum.dim_IntList": _sum,
    "aten.sum.default": _sum,
    "aten.mean.dim": lambda imp, n: _sum(imp, n, mean=True),
    "aten.mean.default": lambda imp, n: _sum(imp, n, mean=True),
    "aten.amax.default": _amax,
    "aten.native_layer_norm.default": _layer_norm,
    "aten._softmax.default": _softmax,
    "aten.mm.default": _mm,
    "aten.bmm.default": _bmm,
    "aten.addmm.default": _addmm,
    "aten.t.default": _t,
    "aten.transpose.int": _transpose,
    "aten.permute.default": _permute,
    "aten.expand.default": _expand,
    "aten.clone.default": Importer.identity,
    "aten.alias.default": Importer.identity,
    "aten.detach.default": Importer.identity,
    "aten.lift_fresh_copy.default": Importer.identity,
    "aten.view.default": Importer.reshape,
    "aten._unsafe_view.default": Importer.reshape,
    "aten._reshape_alias.default": Importer.reshape,
    "aten.reshape.default": Importer.reshape,
    "aten.unsqueeze.default": Importer.reshape,
    "aten.squeeze.dim": Importer.reshape,
    "aten.squeeze.default": Importer.reshape,
    "aten.flatten.using_ints": Importer.reshape,
    "aten.slice.Tensor": _slice,
    "aten.select.int": _select_int,
    "aten.split.Tensor": _split,
    "aten.split_with_sizes.default": _split,
    "aten.cat.default": _cat,
    "aten.embedding.default": _embedding,
    "aten.index_copy.default": _index_copy,
}
