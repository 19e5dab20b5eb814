#!/usr/bin/env bash
# The test command: installs what is missing (scripts/setup.sh), configures and builds
# everything, runs every test (lit regression tests and GoogleTest unit tests), then the
# sanitizer runs (scripts/sanitize.sh): the runtime, its conformance suite and the
# executable tests under ASan+UBSan and under TSan, and everything under ASan+UBSan and
# under TSan.
# Ends with the line `N passed, M failed`; exits non-zero on any failure.
#
#   scripts/test.sh                      # build in ./build
#   TP_BUILD_DIR=/tmp/b scripts/test.sh
#   TP_SANITIZE_FULL=0 scripts/test.sh   # skip the full sanitizer builds (~30 min cold)
#   TP_SANITIZE=0 scripts/test.sh        # skip every sanitizer run
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

# Paths relative to the checkout in ccache's keys: a clone elsewhere hits the cache.
export CCACHE_BASEDIR=$root

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

# Sanitizers: their results join the summary under a label.
results=("$build/lit-results.xml" "$build/ctest-results.xml")
sanitize_rc=0
rm -f "$build"/sanitize-*.xml
if [ "${TP_SANITIZE:-1}" != 0 ]; then
  TP_BUILD_DIR=$build "$root/scripts/sanitize.sh" runtime || sanitize_rc=1
  for kind in asan tsan; do
    results+=("$kind=$build/sanitize-$kind-runtime.xml" "$kind=$build/sanitize-$kind-integration.xml")
  done
  if [ "${TP_SANITIZE_FULL:-1}" != 0 ]; then
    TP_BUILD_DIR=$build "$root/scripts/sanitize.sh" full || sanitize_rc=1
    for kind in asan tsan; do
      results+=("$kind-full=$build/sanitize-$kind-full-lit.xml" "$kind-full=$build/sanitize-$kind-full-unit.xml")
    done
  fi
  echo "test: sanitizer runs done after $(( $(date +%s) - start ))s"
fi

/usr/bin/python3 "$root/scripts/summarize_tests.py" "${results[@]}"
summary_rc=$?

if [ $lit_rc -ne 0 ] || [ $ctest_rc -ne 0 ] || [ $summary_rc -ne 0 ] || [ $sanitize_rc -ne 0 ]; then
  exit 1
fi
exit 0
