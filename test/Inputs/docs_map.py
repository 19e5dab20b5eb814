"""Checks the paths docs/design.md's change map names (test/docs-map.test)."""
import os
import re
import sys

root = sys.argv[1]
text = open(os.path.join(root, "docs", "design.md")).read()
start = text.index("## Where each kind of change goes")
end = text.index("\n## ", start + 1)
paths = sorted({p for p in re.findall(r"`([^`\s]+)`", text[start:end]) if "/" in p})
missing = [p for p in paths if not os.path.exists(os.path.join(root, p))]
for p in missing:
    print("docs map: missing %s" % p)
if missing:
    sys.exit(1)
print("docs map: %d paths, all present" % len(paths))
