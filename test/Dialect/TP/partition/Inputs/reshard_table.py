#!/usr/bin/env python3
"""The resharding table: every pair of shardings of a 2-D tensor on a 2x2 mesh.

`generate` prints a module with one function per (source, target) pair, each resharding
its argument. `check FILE` reads that module after --tp-partition and runs every function
on 4 simulated devices (numpy): the argument's shards are cut from a random global tensor
by the source sharding (partial sums as random parts that add up), the collectives run
with their documented semantics, and each device's result must be its shard of the same
global tensor under the target sharding (partial: the parts must add up). It prints one
line per failure and a summary.
"""

import itertools
import re
import sys

import numpy as np

AXES = {"x": 2, "y": 2}
SHAPE = (8, 8)


def all_shardings():
    """Each axis unused, splitting dim 0 or 1, or partial; two axes on one dim in
    both orders."""
    result = []
    for roles in itertools.product(["none", "d0", "d1", "partial"], repeat=2):
        dims = [[], []]
        partial = []
        for axis, role in zip(AXES, roles):
            if role == "d0":
                dims[0].append(axis)
            elif role == "d1":
                dims[1].append(axis)
            elif role == "partial":
                partial.append(axis)
        variants = [dims]
        for d in range(2):
            if len(dims[d]) == 2:
                swapped = [list(x) for x in dims]
                swapped[d] = list(reversed(dims[d]))
                variants.append(swapped)
        for v in variants:
            result.append((v, partial))
    return result


def fmt(sharding):
    dims, partial = sharding
    text = "[" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]"
    if partial:
        text += ", partial = [" + ", ".join(f'"{a}"' for a in partial) + "]"
    return f"<@mesh, {text}>"


def generate():
    print('tp.mesh @mesh ["x" = 2, "y" = 2]')
    t = f"tensor<{SHAPE[0]}x{SHAPE[1]}xf32>"
    for i, (src, dst) in enumerate(itertools.product(all_shardings(), repeat=2)):
        print(f"func.func @r{i}(%a: {t} {{tp.sharding = #tp.sharding{fmt(src)}}})"
              f" -> ({t} {{tp.sharding = #tp.sharding{fmt(dst)}}}) {{")
        print(f"  %r = tp.reshard %a {fmt(dst)} : {t}")
        print(f"  return %r : {t}")
        print("}")


# ----------------------------------------------------------------------------- check

DEVICES = list(itertools.product(range(AXES["x"]), range(AXES["y"])))
AXIS_POS = {a: i for i, a in enumerate(AXES)}


def linear(dev, axes):
    idx = 0
    for a in axes:
        idx = idx * AXES[a] + dev[AXIS_POS[a]]
    return idx


def group_size(axes):
    n = 1
    for a in axes:
        n *= AXES[a]
    return n


def group(dev, axes):
    """Devices sharing dev's coordinates off `axes`, ordered by linear index."""
    members = [d for d in DEVICES
               if all(d[AXIS_POS[a]] == dev[AXIS_POS[a]] for a in AXES if a not in axes)]
    return sorted(members, key=lambda d: linear(d, axes))


def block(glob, dims, dev):
    sl = []
    for d, axes in enumerate(dims):
        n = group_size(axes)
        size = glob.shape[d] // n
        i = linear(dev, axes)
        sl.append(slice(i * size, (i + 1) * size))
    return glob[tuple(sl)]


def parse_sharding(text):
    m = re.search(r"<@\w+, \[(.*?)\](?:, partial = \[(.*?)\])?>", text)
    dims = [re.findall(r'"(\w+)"', d) for d in re.findall(r"\{(.*?)\}", m.group(1))]
    partial = re.findall(r'"(\w+)"', m.group(2) or "")
    return dims, partial


def parse_axes(text):
    return re.findall(r'"(\w+)"', text)


def run_function(lines, rng):
    header = lines[0]
    src = parse_sharding(header.split("->")[0])
    dst = parse_sharding(header.split("->")[1])
    glob = rng.standard_normal(SHAPE).astype(np.float64)
    env = {}
    # Argument shards, with partial sums split into random parts.
    arg = {}
    for dev in DEVICES:
        arg[dev] = block(glob, src[0], dev).copy()
    if src[1]:
        done = set()
        for dev in DEVICES:
            members = group(dev, src[1])
            key = tuple(members)
            if key in done:
                continue
            done.add(key)
            total = arg[members[0]].copy()
            parts = [rng.standard_normal(total.shape) for _ in members[1:]]
            arg[members[0]] = total - sum(parts)
            for m, p in zip(members[1:], parts):
                arg[m] = p
    name = re.search(r"\((%\w+):", header).group(1)
    env[name] = arg
    ops = []
    for line in lines[1:]:
        line = line.strip()
        m = re.match(r"(%\w+) = (.*)", line)
        if line.startswith("return"):
            result = env[re.match(r"return (%\w+)", line).group(1)]
            break
        if not m:
            continue
        res, rhs = m.groups()
        ops.append(rhs.split()[0])
        env[res] = execute(rhs, env)
    # Compare with the target shards.
    for dev in DEVICES:
        want = block(glob, dst[0], dev)
        if dst[1]:
            got = sum(result[d] for d in group(dev, dst[1]))
        else:
            got = result[dev]
        if got.shape != want.shape or not np.allclose(got, want, atol=1e-9):
            return False, ops
    return True, ops


def per_device(f):
    return {dev: f(dev) for dev in DEVICES}


def execute(rhs, env):
    def val(n):
        return env[n]
    if rhs.startswith("tp.all_reduce"):
        m = re.match(r"tp.all_reduce sum (%\w+) over @\w+ (\[.*?\])", rhs)
        x, axes = val(m.group(1)), parse_axes(m.group(2))
        return per_device(lambda d: sum(x[g] for g in group(d, axes)))
    if rhs.startswith("tp.all_gather"):
        m = re.match(r"tp.all_gather (%\w+) over @\w+ (\[.*?\]) dim (\d+)", rhs)
        x, axes, dim = val(m.group(1)), parse_axes(m.group(2)), int(m.group(3))
        return per_device(lambda d: np.concatenate([x[g] for g in group(d, axes)], axis=dim))
    if rhs.startswith("tp.reduce_scatter"):
        m = re.match(r"tp.reduce_scatter sum (%\w+) over @\w+ (\[.*?\]) dim (\d+)", rhs)
        x, axes, dim = val(m.group(1)), parse_axes(m.group(2)), int(m.group(3))
        return per_device(lambda d: np.split(sum(x[g] for g in group(d, axes)),
                                             group_size(axes), axis=dim)[linear(d, axes)])
    if rhs.startswith("tp.all_to_all"):
        m = re.match(r"tp.all_to_all (%\w+) over @\w+ (\[.*?\]) split (\d+) concat (\d+)", rhs)
        x, axes = val(m.group(1)), parse_axes(m.group(2))
        split, concat = int(m.group(3)), int(m.group(4))
        n = group_size(axes)
        return per_device(lambda d: np.concatenate(
            [np.split(x[g], n, axis=split)[linear(d, axes)] for g in group(d, axes)], axis=concat))
    if rhs.startswith("tp.all_slice"):
        m = re.match(r"tp.all_slice (%\w+) over @\w+ (\[.*?\]) dim (\d+)", rhs)
        x, axes, dim = val(m.group(1)), parse_axes(m.group(2)), int(m.group(3))
        return per_device(lambda d: np.split(x[d], group_size(axes), axis=dim)[linear(d, axes)])
    if rhs.startswith("tp.axis_index"):
        axes = parse_axes(rhs)
        return per_device(lambda d: linear(d, axes))
    if rhs.startswith("arith.constant"):
        m = re.match(r"arith.constant ([-\d.e+]+)", rhs)
        return per_device(lambda d: float(m.group(1)))
    if rhs.startswith("arith.cmpi eq"):
        m = re.match(r"arith.cmpi eq, (%\w+), (%\w+)", rhs)
        a, b = val(m.group(1)), val(m.group(2))
        return per_device(lambda d: a[d] == b[d])
    if rhs.startswith("tensor.empty"):
        shape = tuple(int(s) for s in re.search(r"tensor<([\dx]+)xf32>", rhs).group(1).split("x"))
        return per_device(lambda d: np.zeros(shape))
    if rhs.startswith("linalg.fill"):
        m = re.match(r"linalg.fill ins\((%\w+) : f32\) outs\((%\w+)", rhs)
        s, o = val(m.group(1)), val(m.group(2))
        return per_device(lambda d: np.full(o[d].shape, s[d]))
    if rhs.startswith("arith.select"):
        m = re.match(r"arith.select (%\w+), (%\w+), (%\w+)", rhs)
        c, a, b = val(m.group(1)), val(m.group(2)), val(m.group(3))
        return per_device(lambda d: a[d] if c[d] else b[d])
    raise ValueError(f"cannot simulate: {rhs}")


def check(path):
    text = open(path).read()
    functions = re.findall(r"(func\.func @r\d+.*?\n(?:.*\n)*?\s*return .*)", text)
    rng = np.random.default_rng(0)
    failures = 0
    comm = 0
    for fn in functions:
        lines = fn.splitlines()
        ok, ops = run_function(lines, rng)
        comm += sum(1 for o in ops if o in ("tp.all_reduce", "tp.all_gather",
                                            "tp.reduce_scatter", "tp.all_to_all"))
        if not ok:
            failures += 1
            print(f"WRONG: {lines[0].strip()} via {ops}")
    print(f"{len(functions)} reshards, {len(functions) - failures} correct, "
          f"{comm} communicating collectives")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate()
    else:
        sys.exit(check(sys.argv[2]))
