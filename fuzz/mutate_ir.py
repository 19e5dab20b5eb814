#!/usr/bin/env python3
"""A structure-aware fuzzer for tp-opt: mutates the meaning of MLIR text, not its bytes.

libFuzzer's byte mutations rarely keep MLIR parseable, so they seldom reach the passes
behind the parser. This script takes the seed corpus (the lit tests' .mlir files, or any
files given) and applies edits that keep the text well-formed while changing what it
means, the way a user's model can differ from the tests:

  - element types   f32 -> f16, bf16, f64, i1, i32, i64, index, complex<f32>
  - dimensions      a static size -> 0, 1, ?, 3, a large or a 33-bit number
  - shardings       a dimension's axes dropped or moved, partial = [...] added or dropped
  - integers        a list element or attribute integer -> 0, -1, 2^31, 2^32 + 1
  - tokens          two ops' names swapped within a family (matmul, batch_matmul, ...)

Each mutant runs through `tp-opt` with a pass pipeline (default: --tp-spmd; --pipeline
gives others, e.g. "--tp-spmd --tp-lower-to-cpu"), under a timeout. A run is a finding
when tp-opt crashes (a signal, or its crash handler's message) or hangs past the
timeout; a diagnostic and exit code 1 is the expected answer to bad input. Findings are
written to --out (default build-fuzz/mutants/) as crash-<signature>-<n>.mlir, one file
per distinct signature (the first tp-mlir frame of the stack, or the LLVM ERROR text),
with a summary of executions and signatures at the end.

usage: fuzz/mutate_ir.py [--seconds 60] [--jobs 2] [--seed N] [--timeout 10]
                         [--pipeline "--tp-spmd"] [--tp-opt build/bin/tp-opt]
                         [--out build-fuzz/mutants] [SEED_FILE_OR_DIR ...]

Runs with Debian's /usr/bin/python3 or any Python 3; nothing to install. The seeds
default to test/**/*.mlir (inputs of the tests split at `// -----`).
"""
import argparse
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "index",
                 "complex<f32>"]
SIZES = ["0", "1", "?", "3", "7", "4096", "8589934592"]
INTEGERS = ["0", "-1", "1", "2147483648", "4294967297", "9223372036854775807"]
FAMILIES = [
    ["linalg.matmul", "linalg.batch_matmul", "linalg.batch_reduce_matmul",
     "linalg.matvec", "linalg.vecmat", "linalg.dot"],
    ["arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
     "arith.minimumf"],
    ["math.exp", "math.tanh", "math.log", "math.sqrt", "math.rsqrt"],
    ["tensor.expand_shape", "tensor.collapse_shape"],
    ["llvm.insertvalue", "llvm.extractvalue"],
]

SHAPED = re.compile(r"\b(tensor|memref|vector)<((?:[0-9?]+x)*)([a-z][a-z0-9]*(?:<[^<>]*>)?)")
SHARDING = re.compile(r"#tp\.sharding<@(\w+), \[([^]]*)\](, partial = \[[^]]*\])?>")
INTEGER = re.compile(r"(?<![\w.%#@^!-])(-?\d+)(?![\w.])")
OP_NAME = re.compile(r"\b([a-z_]+\.[a-z_]+)\b")


def pick(rng, matches):
    matches = list(matches)
    return rng.choice(matches) if matches else None


def mutate_element_type(text, rng):
    m = pick(rng, SHAPED.finditer(text))
    if not m:
        return None
    new = rng.choice([t for t in ELEMENT_TYPES if t != m.group(3)])
    if rng.random() < 0.7:
        # The element type everywhere, scalars and bodies included: the
        # function stays consistent with itself (a change of one operand
        # alone seldom verifies).
        return re.sub(r"(?<![\w<.])%s(?![\w>])" % re.escape(m.group(3)), new, text)
    old = m.group(0)
    return text.replace(old, old[: old.rfind(m.group(3))] + new)


def mutate_dimension(text, rng):
    m = pick(rng, SHAPED.finditer(text))
    if not m or not m.group(2):
        return None
    dims = m.group(2)[:-1].split("x")
    i = rng.randrange(len(dims))
    dims[i] = rng.choice([s for s in SIZES if s != dims[i]])
    old = m.group(0)
    new = "%s<%s%s" % (m.group(1), "x".join(dims) + "x", m.group(3))
    return text.replace(old, new)


def mutate_sharding(text, rng):
    m = pick(rng, SHARDING.finditer(text))
    if not m:
        return None
    mesh, dims, partial = m.group(1), m.group(2), m.group(3)
    axes = re.findall(r'"(\w+)"', text[text.find("tp.mesh"):].split("\n")[0]) or ["tp"]
    entries = re.findall(r"\{[^}]*\}", dims)
    choice = rng.randrange(3)
    if choice == 0 and entries:
        i = rng.randrange(len(entries))
        entries[i] = "{}" if entries[i] != "{}" else '{"%s"}' % rng.choice(axes)
    elif choice == 1 and entries:
        rng.shuffle(entries)
    else:
        partial = None if partial else ', partial = ["%s"]' % rng.choice(axes)
    new = "#tp.sharding<@%s, [%s]%s>" % (mesh, ", ".join(entries), partial or "")
    return text[: m.start()] + new + text[m.end():]


def mutate_integer(text, rng):
    m = pick(rng, INTEGER.finditer(text))
    if not m:
        return None
    return text[: m.start(1)] + rng.choice(INTEGERS) + text[m.end(1):]


def mutate_token(text, rng):
    present = [m for m in OP_NAME.finditer(text)
               if any(m.group(1) in family for family in FAMILIES)]
    m = pick(rng, present)
    if not m:
        return None
    family = next(f for f in FAMILIES if m.group(1) in f)
    return text[: m.start(1)] + rng.choice(family) + text[m.end(1):]


MUTATIONS = [mutate_element_type, mutate_dimension, mutate_sharding, mutate_integer,
             mutate_token]


def mutate(text, rng):
    """One to three meaning-changing edits."""
    for _ in range(rng.randint(1, 3)):
        for _ in range(8):
            edited = rng.choice(MUTATIONS)(text, rng)
            if edited and edited != text:
                text = edited
                break
    return text


def seeds_from(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for d, _, names in os.walk(p):
                files += [os.path.join(d, n) for n in sorted(names) if n.endswith(".mlir")]
        else:
            files.append(p)
    seeds = []
    for f in files:
        with open(f, errors="replace") as fh:
            text = fh.read()
        for part in text.split("// -----"):
            # Drop FileCheck and diagnostic-verifier lines: they only mean something
            # to the tests.
            body = "\n".join(l for l in part.splitlines()
                             if not l.lstrip().startswith(("// RUN", "// CHECK", "// expected")))
            if "func.func" in body or "llvm.func" in body:
                seeds.append(body)
    return seeds


def signature(output):
    """The first tp-mlir frame of a crash's stack, or the LLVM ERROR line."""
    m = re.search(r"LLVM ERROR: ([^\n]*)", output)
    if m:
        return "llvm-error-" + re.sub(r"\W+", "-", m.group(1))[:60]
    for line in output.splitlines():
        f = re.search(r"#\d+ 0x[0-9a-f]+ (.*?) \(", line)
        if f and "tp-opt" in line or (f and "mlir::tp::" in line):
            return re.sub(r"\W+", "-", f.group(1))[:80]
    frames = re.findall(r"#\d+ 0x[0-9a-f]+ ([\w:~<>]+)", output)
    frames = [f for f in frames if "llvm::sys::" not in f and "SignalHandler" not in f]
    return re.sub(r"\W+", "-", frames[0])[:80] if frames else "unknown"


def run_one(tp_opt, pipeline, text, timeout, tmp):
    fd, path = tempfile.mkstemp(suffix=".mlir", dir=tmp)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    try:
        p = subprocess.run([tp_opt, path, *pipeline.split(), "-o", os.devnull],
                           capture_output=True, text=True, errors="replace",
                           timeout=timeout)
        crashed = p.returncode < 0 or "tp-mlir crashed" in p.stderr or \
            "LLVM ERROR" in p.stderr or p.returncode not in (0, 1)
        result = ("crash", signature(p.stderr)) if crashed else ("ok", None)
    except subprocess.TimeoutExpired:
        result = ("hang", "timeout")
    finally:
        os.unlink(path)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("seeds", nargs="*", default=[os.path.join(ROOT, "test")])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--pipeline", default="--tp-spmd")
    ap.add_argument("--tp-opt", default=os.path.join(ROOT, "build", "bin", "tp-opt"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build-fuzz", "mutants"))
    ap.add_argument("--runs", type=int, default=0,
                    help="stop after this many mutants (0: run for --seconds)")
    args = ap.parse_args()
    if not os.access(args.tp_opt, os.X_OK):
        sys.exit("mutate_ir: no tp-opt at %s (build first, or give --tp-opt)" % args.tp_opt)
    seeds = seeds_from(args.seeds)
    if not seeds:
        sys.exit("mutate_ir: no seed with a function in %s" % " ".join(args.seeds))
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    os.makedirs(args.out, exist_ok=True)
    print("mutate_ir: %d seeds, seed %d, pipeline %r, %d jobs"
          % (len(seeds), seed, args.pipeline, args.jobs), flush=True)
    found = {}
    runs = 0
    deadline = time.monotonic() + args.seconds
    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        while (args.runs and runs < args.runs) or (not args.runs and time.monotonic() < deadline):
            batch = [mutate(rng.choice(seeds), rng) for _ in range(args.jobs * 4)]
            results = pool.map(lambda t: run_one(args.tp_opt, args.pipeline, t,
                                                 args.timeout, tmp), batch)
            for text, (kind, sig) in zip(batch, results):
                runs += 1
                if kind == "ok":
                    continue
                key = "%s-%s" % (kind, sig)
                found[key] = found.get(key, 0) + 1
                if found[key] == 1:
                    path = os.path.join(args.out, "%s.mlir" % key[:120])
                    with open(path, "w") as f:
                        f.write("// %s under tp-opt %s (mutate_ir seed %d)\n%s"
                                % (kind, args.pipeline, seed, text))
                    print("  new %s: %s" % (kind, path), flush=True)
    print("mutate_ir: %d runs, %d findings, %d signatures"
          % (runs, sum(found.values()), len(found)))
    for key, n in sorted(found.items(), key=lambda kv: -kv[1]):
        print("  %6d  %s" % (n, key))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
