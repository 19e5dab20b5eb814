"""Prints, per program library, how many CUDA fatbins it embeds and the
target its manifest names (tp-compile --target cuda)."""
import re
import sys

FATBIN_MAGIC = b"\x50\xed\x55\xba"  # fatbinary's header magic, little-endian

for path in sys.argv[1:]:
    data = open(path, "rb").read()
    target = re.search(rb"\ntarget ([a-z]+)\n", data)
    print("%s: fatbins=%d target=%s" % (
        path.rsplit("/", 1)[-1], data.count(FATBIN_MAGIC),
        target.group(1).decode() if target else "none"))
