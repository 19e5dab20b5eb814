#!/usr/bin/env python3
"""Makes the seed corpora of the fuzz targets from the project's own tests.

    make_corpus.py BUILD_DIR OUT_DIR

OUT_DIR gets one folder per target (parse, spmd, lower-cpu, manifest, npy):
- parse, spmd: every .mlir test, example and test input, split at `// -----`,
  with comment lines dropped (RUN and CHECK lines are not what is fuzzed);
- lower-cpu: what `tp-opt --tp-spmd` makes of those (local form), and the
  inputs already in local form;
- manifest: the `tp.manifest` texts `--tp-record-manifest` writes for them;
- npy: .npy files of every dtype tp-run reads, versions 1 and 2, and a few
  that it must reject (Fortran order, big-endian, truncated).
Needs /usr/bin/python3 with numpy (Debian's python3-numpy).
"""

import hashlib
import io
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(folder, data):
    """Writes `data` under its hash, so that duplicates collapse."""
    if isinstance(data, str):
        data = data.encode()
    os.makedirs(folder, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def mlir_sources():
    for top in ("test", "examples"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith(".mlir"):
                    yield os.path.join(dirpath, f)


def split(path):
    with open(path) as f:
        text = f.read()
    for chunk in re.split(r"^// -----\s*$", text, flags=re.M):
        lines = [l for l in chunk.splitlines() if not l.lstrip().startswith("//")]
        body = "\n".join(lines).strip()
        if body:
            yield body + "\n"


def unescape_mlir_string(s):
    """Undoes MLIR's string escapes (\\22, \\0A, \\\\, \\")."""
    out = bytearray()
    i = 0
    raw = s.encode()
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 1 < len(raw):  # backslash
            nxt = raw[i + 1:i + 3]
            if re.fullmatch(rb"[0-9A-Fa-f]{2}", nxt):
                out.append(int(nxt, 16))
                i += 3
                continue
            out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def tp_opt(build, args, text):
    proc = subprocess.run([os.path.join(build, "bin", "tp-opt")] + args,
                          input=text.encode(), capture_output=True, timeout=60)
    return proc.stdout.decode() if proc.returncode == 0 else None


def npy_bytes(array, version=None):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, version=version)
    return buf.getvalue()


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build, out = sys.argv[1], sys.argv[2]
    seeds = [s for path in mlir_sources() for s in split(path)]
    for s in seeds:
        write(os.path.join(out, "parse"), s)
        write(os.path.join(out, "spmd"), s)
        if "tp.spmd" in s:
            write(os.path.join(out, "lower-cpu"), s)
        local = tp_opt(build, ["--tp-spmd"], s)
        if local and "tp.spmd" in local:
            write(os.path.join(out, "lower-cpu"), local)
            manifests = tp_opt(build, ["--tp-record-manifest"], local)
            for m in re.findall(r'tp\.manifest = "((?:[^"\\]|\\.)*)"',
                                manifests or ""):
                write(os.path.join(out, "manifest"), unescape_mlir_string(m))

    npy = os.path.join(out, "npy")
    rng = np.random.default_rng(0)
    for dtype in ("<f4", "<f8", "<f2", "<i4", "<i8"):
        for shape in ((), (3,), (2, 3), (2, 1, 4), (0, 5)):
            a = (rng.standard_normal(shape) * 10).astype(dtype)
            write(npy, npy_bytes(a))
            write(npy, npy_bytes(a, version=(2, 0)))
    a = rng.standard_normal((3, 4)).astype("<f4")
    write(npy, npy_bytes(np.asfortranarray(a)))
    write(npy, npy_bytes(a.astype(">f4")))
    write(npy, npy_bytes(a)[:-5])
    counts = {t: len(os.listdir(os.path.join(out, t)))
              for t in sorted(os.listdir(out))}
    print(" ".join(f"{t}={n}" for t, n in counts.items()))


if __name__ == "__main__":
    main()
