"""Rewrites the shape in a .npy header in place, keeping the data: makes
files whose header lies about their size.

usage: edit_npy_shape.py FILE "(SHAPE)"
"""
import re
import struct
import sys

path, shape = sys.argv[1], sys.argv[2]
data = open(path, "rb").read()
assert data[:6] == b"\x93NUMPY" and data[6] == 1, "a version 1 .npy file"
(length,) = struct.unpack("<H", data[8:10])
header = data[10:10 + length].decode("latin1")
header = re.sub(r"'shape': \([^)]*\)", "'shape': " + shape, header).rstrip()
header = header.ljust(length - 1) + "\n"
assert len(header) == length, "the new shape does not fit the header"
open(path, "wb").write(data[:10] + header.encode("latin1") + data[10 + length:])
