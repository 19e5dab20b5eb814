#!/usr/bin/env python3
"""Reads JUnit XML files (lit's --xunit-xml-output, ctest's --output-junit) and prints
`N passed, M failed` as the last line. A missing or unreadable file counts as one failure.
An argument LABEL=PATH prefixes that file's test names with LABEL (the sanitizer runs).
Skipped tests (lit UNSUPPORTED, e.g. CUDA tests without a GPU) are listed on the line
before. Exits 1 when anything failed."""

import sys
import xml.etree.ElementTree as ET


def main(paths):
    passed = failed = skipped = 0
    failures = []
    for arg in paths:
        label, _, path = arg.partition("=") if "=" in arg else ("", "", arg)
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as err:
            failures.append(f"{path}: no results ({err})")
            failed += 1
            continue
        for case in root.iter("testcase"):
            name = f"{case.get('classname')}::{case.get('name')}"
            if label:
                name = f"[{label}] {name}"
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
                failures.append(name)
            elif case.find("skipped") is not None or case.get("status") == "notrun":
                skipped += 1
            else:
                passed += 1
    for name in failures:
        print(f"FAILED: {name}")
    if skipped:
        print(f"{skipped} skipped (unsupported here)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
