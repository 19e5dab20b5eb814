"""Writing the global-form module as MLIR text: types, constants, and the few
op shapes the importer needs (linalg generics with their bodies, reshapes,
slices, named contractions).

No MLIR Python bindings are needed: the text is what tp-opt parses.
"""
import struct

# torch dtype name -> MLIR element type.
ELEMENT_TYPES = {
    "float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
    "int64": "i64", "int32": "i32", "bool": "i1",
}
FLOATS = ("f32", "f16", "bf16", "f64")


def tensor_type(shape, dtype):
    return "tensor<%s%s>" % ("".join("%dx" % d for d in shape), dtype)


def float_literal(value, dtype):
    """A float constant as its exact bit pattern (MLIR reads hex literals of
    float types bit for bit): no decimal rounding, infinities included."""
    value = float(value)
    if dtype == "f64":
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", value))[0]
    if dtype == "f16":
        return "0x%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    if dtype == "bf16":  # round to nearest even
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        return "0x%04X" % bits
    return "0x%08X" % bits


def scalar_literal(value, dtype):
    if dtype in FLOATS:
        return float_literal(value, dtype)
    if dtype == "i1":
        return "true" if value else "false"
    return str(int(value))


def affine_map(num_dims, results):
    dims = ", ".join("d%d" % i for i in range(num_dims))
    return "affine_map<(%s) -> (%s)>" % (dims, ", ".join(results))


class Body:
    """The scalar ops of one linalg.generic body."""

    def __init__(self, builder, args):
        self.builder = builder
        self.args = args  # block argument names, inputs then the output
        self.lines = []

    def const(self, value, dtype):
        name = self.builder.fresh("c")
        self.lines.append("%s = arith.constant %s : %s" % (name, scalar_literal(value, dtype), dtype))
        return name

    def op(self, text, dtype):
        """`text` is the op with its operands (`arith.addf %a, %b`)."""
        name = self.builder.fresh("s")
        self.lines.append("%s = %s : %s" % (name, text, dtype))
        return name

    def raw(self, line):
        self.lines.append(line)


class Builder:
    """Collects the lines of one function."""

    def __init__(self):
        self.lines = []
        self._counter = 0

    def fresh(self, prefix="v"):
        self._counter += 1
        return "%%%s%d" % (prefix, self._counter)

    def emit(self, line):
        self.lines.append(line)

    def empty(self, shape, dtype):
        name = self.fresh("e")
        self.emit("%s = tensor.empty() : %s" % (name, tensor_type(shape, dtype)))
        return name

    def filled(self, value, shape, dtype):
        empty = self.empty(shape, dtype)
        c = self.fresh("c")
        self.emit("%s = arith.constant %s : %s" % (c, scalar_literal(value, dtype), dtype))
        name = self.fresh("f")
        t = tensor_type(shape, dtype)
        self.emit("%s = linalg.fill ins(%s : %s) outs(%s : %s) -> %s" % (name, c, dtype, empty, t, t))
        return name

    def generic(self, inputs, out_shape, out_dtype, iterators, body_fn, init=None,
                out_map=None):
        """A linalg.generic over len(iterators) loops. `inputs` are
        (name, shape, dtype, map results); the output is indexed by
        `out_map` (default: the parallel loops in order). `body_fn(body)`
        returns the yielded scalar."""
        n = len(iterators)
        if out_map is None:
            out_map = ["d%d" % i for i, it in enumerate(iterators) if it == "parallel"]
        if init is None:
            init = self.empty(out_shape, out_dtype)
        maps = [affine_map(n, m) for (_, _, _, m) in inputs] + [affine_map(n, out_map)]
        args = [self.fresh("a") for _ in inputs] + [self.fresh("o")]
        body = Body(self, args)
        result = body_fn(body)
        name = self.fresh("g")
        out_t = tensor_type(out_shape, out_dtype)
        ins = ""
        if inputs:
            ins = " ins(%s : %s)" % (", ".join(i[0] for i in inputs),
                                     ", ".join(tensor_type(i[1], i[2]) for i in inputs))
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}%s outs(%s : %s) {"
                  % (name, ", ".join(maps), ", ".join('"%s"' % it for it in iterators), ins,
                     init, out_t))
        block_args = ", ".join("%s: %s" % (a, i[2]) for a, i in zip(args, inputs))
        block_args += (", " if inputs else "") + "%s: %s" % (args[-1], out_dtype)
        self.emit("^bb0(%s):" % block_args)
        for line in body.lines:
            self.emit("  " + line)
        self.emit("  linalg.yield %s : %s" % (result, out_dtype))
        self.emit("} -> %s" % out_t)
        return name

    def collapse(self, value, shape, groups, new_shape, dtype):
        name = self.fresh("r")
        self.emit("%s = tensor.collapse_shape %s [%s] : %s into %s" % (
            name, value, ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups),
            tensor_type(shape, dtype), tensor_type(new_shape, dtype)))
        return name

    def expand(self, value, shape, groups, new_shape, dtype):
        name = self.fresh("r")
        self.emit("%s = tensor.expand_shape %s [%s] output_shape [%s] : %s into %s" % (
            name, value, ", ".join("[%s]" % ", ".join(map(str, g)) for g in groups),
            ", ".join(map(str, new_shape)), tensor_type(shape, dtype),
            tensor_type(new_shape, dtype)))
        return name


def reshape_groups(src, dst):
    """Groups of `src` dims and `dst` dims with equal products, in order
    (size-1 dims join the group before them), or None if the shapes' element
    counts differ. Both non-empty."""
    groups, i, j = [], 0, 0
    while i < len(src) and j < len(dst):
        ga, gb, pa, pb = [i], [j], src[i], dst[j]
        i, j = i + 1, j + 1
        while pa != pb:
            if pa < pb and i < len(src):
                ga.append(i)
                pa *= src[i]
                i += 1
            elif pb < pa and j < len(dst):
                gb.append(j)
                pb *= dst[j]
                j += 1
            else:
                return None
        groups.append((ga, gb))
    if not groups:
        return None
    while i < len(src):
        if src[i] != 1:
            return None
        groups[-1][0].append(i)
        i += 1
    while j < len(dst):
        if dst[j] != 1:
            return None
        groups[-1][1].append(j)
        j += 1
    return groups
