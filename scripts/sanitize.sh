#!/usr/bin/env bash
# Builds with sanitizers and runs the suites under them; writes JUnit XML for
# scripts/summarize_tests.py. The test command (scripts/test.sh) runs `runtime` every
# time and `full` unless TP_SANITIZE_FULL=0.
#
#   scripts/sanitize.sh runtime   # the runtime, tp-run and their tests, twice:
#                                 #   ASan+UBSan (build-asan/) and TSan (build-tsan/):
#                                 #   the runtime's GoogleTest suite (communicator
#                                 #   conformance included), then the executable lit
#                                 #   tests (test/Integration) with the sanitized tp-run
#   scripts/sanitize.sh full      # everything (compiler too), twice: ASan+UBSan
#                                 #   (build-asan-full/) and TSan (build-tsan-full/):
#                                 #   every lit and unit test. Under TSan the
#                                 #   compiler runs its threads (tp-propagate's, the
#                                 #   verifier's) as it does for users
#
# TP_BUILD_DIR names the normal build (default ./build): `runtime` uses its tp-compile,
# tp-opt and lit configuration. Results: <build>/sanitize-*.xml. Exits non-zero when a
# build or a test fails.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
main_build=${TP_BUILD_DIR:-$root/build}
# Absolute: the link to its tp-compile below is read from another folder.
main_build=$(cd "$main_build" && pwd) || exit 1
lit=/usr/lib/llvm-22/bin/lit
mode=${1:-runtime}

# Every report is an error; leaks are reported at exit (LeakSanitizer). OpenBLAS and
# Debian's libMLIR.so are not instrumented: LLVM's allocators inlined into our code
# poison memory that libMLIR's code then reads legitimately, so manual poisoning is
# off (allow_user_poisoning=0); real out-of-bounds and use-after-free still report.
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:strict_string_checks=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# What TSan reports in code the project runs but does not build: scripts/tsan.supp.
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$root/scripts/tsan.supp

configure() { # configure <dir> <sanitizers> <compiler: ON|OFF>
  mkdir -p "$1"
  cmake -G Ninja -S "$root" -B "$1" -DCMAKE_BUILD_TYPE=Release -DTP_ENABLE_ASSERTIONS=ON \
    -DTP_SANITIZE="$2" -DTP_ENABLE_COMPILER="$3" -DTP_ENABLE_CUDA=OFF \
    >"$1/configure.log" 2>&1 || { cat "$1/configure.log" >&2; return 1; }
}

build() { # build <dir> <asan|tsan> <compiler: ON|OFF> <what, for the messages>
  local sanitizers="address;undefined" start=$(date +%s)
  [ "$2" = tsan ] && sanitizers="thread"
  if ! configure "$1" "$sanitizers" "$3" || ! ninja -C "$1"; then
    echo "sanitize: the $4 build failed" >&2
    return 1
  fi
  echo "sanitize: $4 build in $(( $(date +%s) - start ))s"
}

status=0
case $mode in
runtime)
  for kind in asan tsan; do
    dir=$root/build-$kind
    build "$dir" $kind OFF "$kind runtime" || { status=1; continue; }
    (cd "$dir" && ctest --output-on-failure --timeout 300 \
      --output-junit "$main_build/sanitize-$kind-runtime.xml") || status=1
    # tp-run finds tp-compile beside itself.
    ln -sf "$main_build/bin/tp-compile" "$dir/bin/tp-compile"
    "$lit" -sv --param tp_run="$dir/bin/tp-run" --param tp_run_has_cuda=0 \
      --xunit-xml-output="$main_build/sanitize-$kind-integration.xml" \
      "$main_build/test/Integration" || status=1
  done
  ;;
full)
  for kind in asan tsan; do
    dir=$root/build-$kind-full
    build "$dir" $kind ON "full $kind" || { status=1; continue; }
    "$lit" -sv --xunit-xml-output="$main_build/sanitize-$kind-full-lit.xml" \
      "$dir/test" || status=1
    (cd "$dir" && ctest --output-on-failure --timeout 300 \
      --output-junit "$main_build/sanitize-$kind-full-unit.xml") || status=1
  done
  ;;
*)
  echo "usage: scripts/sanitize.sh runtime|full" >&2
  exit 2
  ;;
esac
exit $status
