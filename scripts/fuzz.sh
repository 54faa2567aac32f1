#!/usr/bin/env bash
# The libFuzzer targets of fuzz/ (docs/FUZZING.md), built with clang 16, ASan and UBSan into
# build-asan/, the sanitizer configuration of scripts/asan.sh (one build serves both).
#
#   scripts/fuzz.sh --list               the targets, one per line, with what each feeds
#   scripts/fuzz.sh TARGET SECONDS       builds what it needs, seeds the corpus from ../shared
#                                        the first time, and fuzzes TARGET for SECONDS
#   scripts/fuzz.sh --smoke SECONDS      every target for SECONDS each (CI)
#
# Corpora grow in build-asan/corpus/TARGET; findings (crash-*, leak-*, timeout-* after 25 s,
# oom-*) land in build-asan/findings/TARGET and make the script fail; inputs slower than 10 s
# are kept in build-asan/slow/TARGET and reported. Inputs that once failed live in
# fuzz/regressions/TARGET and are replayed before every run. The last lines of each run (executions,
# executions per second, coverage) are printed; the whole log is build-asan/logs/TARGET.log.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
TARGETS=(model tflite cache session burst)
describe() {
  case "$1" in
    model) echo "model + request -> getSupportedOperations, prepareModel, executeSynchronously (embedded)" ;;
    tflite) echo "TFLite flatbuffer -> importTfliteModel -> validateModel" ;;
    cache) echo "model and data cache files -> the decoding and compilation of prepareModelFromCache" ;;
    session) echo "bytes and descriptors -> a connection to an in-process nnhald" ;;
    burst) echo "burst request packets -> a BurstListener over real message queues (embedded model)" ;;
  esac
}

usage() {
  sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
}

build() {
  BUILD_DIR="$BUILD_DIR" bash scripts/asan.sh configure
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target fuzz_seeds $(printf 'fuzz_%s ' "${TARGETS[@]}")
}

seed() {
  if [ ! -d "$BUILD_DIR/corpus/model" ] || [ ! -d "$BUILD_DIR/corpus/burst" ]; then
    echo "== seeding the corpora from ../shared"
    "$BUILD_DIR/fuzz_seeds" "$BUILD_DIR/corpus"
  fi
}

run() {
  local target=$1 seconds=$2
  local corpus="$BUILD_DIR/corpus/$target" findings="$BUILD_DIR/findings/$target"
  local log="$BUILD_DIR/logs/$target.log"
  mkdir -p "$corpus" "$findings" "$BUILD_DIR/logs"
  local status=0
  # Inputs that once failed (fuzz/regressions/TARGET) must pass first, each run once.
  if ls fuzz/regressions/"$target"/* >/dev/null 2>&1; then
    echo "== fuzz_$target: $(ls fuzz/regressions/"$target" | wc -l) regression inputs"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 "$BUILD_DIR/fuzz_$target" \
      -timeout=25 -rss_limit_mb=4096 fuzz/regressions/"$target"/* >"$log.regressions" 2>&1 || {
      echo "fuzz_$target: a regression input fails again; see $log.regressions" >&2
      tail -n 40 "$log.regressions" >&2
      return 1
    }
  fi
  echo "== fuzz_$target for ${seconds}s: $(describe "$target")"
  # -max_len: the TFLite seeds are models of up to 3.6 MB; the others stay small.
  local maxLen=65536
  [ "$target" = tflite ] && maxLen=4000000
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$BUILD_DIR/fuzz_$target" -max_total_time="$seconds" -max_len="$maxLen" -timeout=25 -report_slow_units=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$findings/" "$corpus" \
    >"$log" 2>&1 || status=$?
  grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -n 1 || true
  grep -E '^stat::' "$log" || true
  # Slow inputs (over -report_slow_units seconds, under the -timeout that makes a hang) are
  # reported and kept apart, not failures: under ASan on a busy machine a valid model's
  # execution may take that long.
  local slow
  for slow in "$findings"/slow-unit-*; do
    [ -e "$slow" ] || continue
    mkdir -p "$BUILD_DIR/slow/$target"
    mv "$slow" "$BUILD_DIR/slow/$target/"
    echo "fuzz_$target: slow input (not a failure) kept as $BUILD_DIR/slow/$target/$(basename "$slow")"
  done
  if [ "$status" -ne 0 ] || ls "$findings" | grep -q .; then
    echo "fuzz_$target: FINDING (exit $status); see $log and $findings" >&2
    tail -n 40 "$log" >&2
    return 1
  fi
}

case "${1:-}" in
  --list)
    for t in "${TARGETS[@]}"; do printf '%-8s %s\n' "$t" "$(describe "$t")"; done ;;
  --smoke)
    build
    seed
    failed=0
    for t in "${TARGETS[@]}"; do run "$t" "${2:-20}" || failed=1; done
    exit "$failed" ;;
  -h|--help|"")
    usage ;;
  *)
    target=$1
    if [[ ! " ${TARGETS[*]} " =~ " $target " ]]; then
      echo "fuzz.sh: unknown target '$target' (scripts/fuzz.sh --list)" >&2
      exit 2
    fi
    build
    seed
    run "$target" "${2:-600}" ;;
esac
