#!/usr/bin/env bash
# The test command: installs what is missing (scripts/setup.sh), configures and builds
# everything, runs every test (lit regression tests and GoogleTest unit tests), and ends
# with the line `N passed, M failed`. Exits non-zero on any failure.
#
#   scripts/test.sh            # build in ./build
#   TP_BUILD_DIR=/tmp/b scripts/test.sh
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TP_BUILD_DIR:-$root/build}
lit=/usr/lib/llvm-22/bin/lit

fail_early() {
  echo "test: $1" >&2
  echo "0 passed, 1 failed"
  exit 1
}

"$root/scripts/setup.sh" || fail_early "setup failed"

start=$(date +%s)
mkdir -p "$build"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; fail_early "cmake configure failed"; }
grep -E "^-- tp-mlir:" "$build/configure.log"
ninja -C "$build" || fail_early "build failed"
echo "test: configured and built in $(( $(date +%s) - start ))s"

# Regression tests (lit) and unit tests (ctest); both write JUnit XML that the summary reads.
rm -f "$build/lit-results.xml" "$build/ctest-results.xml"
"$lit" -sv --xunit-xml-output="$build/lit-results.xml" "$build/test"
lit_rc=$?
(cd "$build" && ctest --output-on-failure --timeout 300 --output-junit ctest-results.xml)
ctest_rc=$?

/usr/bin/python3 "$root/scripts/summarize_tests.py" \
  "$build/lit-results.xml" "$build/ctest-results.xml"
summary_rc=$?

if [ $lit_rc -ne 0 ] || [ $ctest_rc -ne 0 ] || [ $summary_rc -ne 0 ]; then
  exit 1
fi
exit 0
