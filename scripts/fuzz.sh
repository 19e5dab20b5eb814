#!/usr/bin/env bash
# Fuzzes tp-mlir with libFuzzer: builds the fuzz targets of fuzz/ with clang-22, libFuzzer,
# ASan and UBSan (in build-fuzz/), makes the seed corpora from the tests
# (fuzz/make_corpus.py), then runs each target for the given time and prints its
# executions and crashes. Crashing inputs are kept under build-fuzz/crashes/<target>/;
# each one found becomes a fix and a file under fuzz/regressions/<target>/.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]    # default: 60 s, every target
#   TP_FUZZ_BUILD_DIR=/tmp/f TP_FUZZ_JOBS=2 scripts/fuzz.sh 600 manifest npy
#
# Targets: parse, spmd, lower-cpu, manifest, npy (see fuzz/README.md).
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${TP_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(parse spmd lower-cpu manifest npy)
jobs=${TP_FUZZ_JOBS:-1}

for t in "${targets[@]}"; do
  case $t in parse|spmd|lower-cpu|manifest|npy) ;;
  *) echo "fuzz: unknown target '$t' (parse, spmd, lower-cpu, manifest, npy)" >&2; exit 2 ;;
  esac
done
if ! [[ $seconds =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "fuzz: '$seconds' is not a number of seconds" >&2
  exit 2
fi

# clang-22 with libFuzzer and the sanitizer runtimes (Debian packages).
missing=()
for p in clang-22 libfuzzer-22-dev libclang-rt-22-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -ne 0 ]; then
  echo "fuzz: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null || { echo "fuzz: cannot install ${missing[*]}" >&2; exit 1; }
fi

mkdir -p "$build"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DTP_ENABLE_FUZZERS=ON -DTP_SANITIZE="address;undefined" -DTP_ENABLE_ASSERTIONS=ON \
  -DTP_ENABLE_TESTS=OFF \
  -DTP_ENABLE_CUDA=OFF >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log" >&2; exit 1; }
ninja -C "$build" $(printf "tp-fuzz-%s " "${targets[@]}") tp-opt || exit 1

corpus=$build/corpus
rm -rf "$corpus"
/usr/bin/python3 "$root/fuzz/make_corpus.py" "$build" "$corpus" || exit 1

# ASan: no leak checking per input (MLIR interns into the context on purpose), no
# manual poisoning (LLVM allocators inlined here, read by uninstrumented libMLIR); UBSan
# reports are crashes (built with -fno-sanitize-recover).
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1

status=0
printf "%-10s %12s %10s %8s\n" target executions exec/s crashes
for t in "${targets[@]}"; do
  crashes=$build/crashes/$t
  work=$build/work/$t
  # This run's crashes only (the counts below are this run's).
  rm -rf "$crashes"
  mkdir -p "$crashes" "$work"
  dict=()
  [ -f "$root/fuzz/$t.dict" ] && dict=(-dict="$root/fuzz/$t.dict")
  log=$build/$t.log
  # The regression inputs join the corpus: mutations of past crashes find their cousins.
  regressions=()
  [ -d "$root/fuzz/regressions/$t" ] && regressions=("$root/fuzz/regressions/$t")
  (cd "$work" && "$build/bin/tp-fuzz-$t" "$corpus/$t" "${regressions[@]}" \
      "${dict[@]}" -max_total_time="$seconds" -max_len=8192 -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="$crashes/" \
      -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1) >"$log" 2>&1
  execs=$(grep -o "stat::number_of_executed_units: *[0-9]*" "$log" | awk '{s += $2} END {print s + 0}')
  if [ "$execs" -eq 0 ]; then
    # Fork mode prints its total on the status lines: "#<execs> ..." of the last one.
    execs=$(grep -oE "^#[0-9]+" "$log" | tail -1 | tr -d '#')
    execs=${execs:-0}
  fi
  found=$(find "$crashes" -type f \( -name "crash-*" -o -name "timeout-*" -o -name "oom-*" \) | wc -l)
  printf "%-10s %12s %10s %8s\n" "$t" "$execs" "$(( execs / seconds ))" "$found"
  [ "$found" -ne 0 ] && status=1
done
[ $status -ne 0 ] && echo "fuzz: crashing inputs under $build/crashes/ (logs: $build/*.log)"
exit $status
