#!/usr/bin/env bash
# The sanitizer build: clang 16 with AddressSanitizer, UndefinedBehaviorSanitizer and
# libFuzzer's coverage instrumentation, in build-asan/. One configuration serves the test
# suites under ASan+UBSan (this script) and the libFuzzer targets (scripts/fuzz.sh), so CI
# compiles the libraries once for both.
#
#   scripts/asan.sh configure       configures build-asan/ (what scripts/fuzz.sh uses too)
#   scripts/asan.sh build           configures and builds the test suites
#   scripts/asan.sh test            builds, then runs what CI runs under the sanitizers: every
#                                   suite but tools, CTS V1_2 and V1_3, the VTS sweeps
#                                   embedded and a remote subset
#
# -O1 with line tables (-g1): the sanitizers' reports name files and lines, and clang compiles
# this configuration in about half the time GCC needs for ASan+UBSan at -O2 (measured on
# src/ipc/daemon/session.cpp: 32 s against 62 s).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1

configure() {
  if ! command -v clang++-16 >/dev/null; then
    echo "asan.sh: clang++-16 is missing (scripts/setup.sh installs it)" >&2
    exit 1
  fi
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_COMPILER=clang++-16 \
    -DNNHAL_SANITIZE=ON -DNNHAL_FUZZ=ON -DNNHAL_BUILD_BENCH=OFF -DNNHAL_WERROR=OFF >/dev/null
}

build() {
  configure
  # Only what runs under ASan below (the tools suite runs in the plain build only).
  cmake --build "$BUILD_DIR" -j"$(nproc)" --target nnhal_hal_tests nnhal_kernels_tests \
    nnhal_engine_tests nnhal_cache_tests nnhal_actors_tests nnhal_ipc_tests nnhal_cts_tests \
    nnhal_vts_tests
}

# Two GoogleTest shards of one binary side by side (each keeps one core busy); both must pass.
run_sharded() {
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 "$@" &
  local first=$!
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 "$@" &
  local second=$! status=0
  wait "$first" || status=1
  wait "$second" || status=1
  return "$status"
}

ASAN_EXCLUDED='-CliConnect.*:CachingOff.Soak*:VersionCompliance.EveryCtsModelIsCompliantWithItsVersion'

run_tests() {
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
  # Reports with function names and lines (Debian's llvm package provides llvm-symbolizer).
  if command -v llvm-symbolizer >/dev/null; then
    export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(command -v llvm-symbolizer)}
  fi
  # Through nnhald the CTS folders V1_0 and V1_1 (the plain build runs all four). Left to the
  # plain build: the tests that drive whole programs end to end (the CLI through nnhald, the
  # soak harness) and the CTS-wide version sweep, whose code the other tests run under ASan.
  NNHAL_IPC_SHORT_CTS=1 GTEST_FILTER="${GTEST_FILTER:-$ASAN_EXCLUDED}" \
    ctest --test-dir "$BUILD_DIR" --output-on-failure -E '^(cts|tools|gpu|vts-[0-9]+)$' --timeout 1800
  # V1_2 and V1_3 in every mode; the models of all four folders with extreme scales and zero
  # points and with extreme input values (tests/cts/extremes_test.cpp), where UBSan
  # finds overflows and out-of-range conversions.
  run_sharded "./$BUILD_DIR/nnhal_cts_tests" --gtest_brief=1 \
    --gtest_filter='V1_2/*:V1_3/*:V1_0/QuantExtremes.*:V1_1/QuantExtremes.*:V1_0/ExtremeInputs.*:V1_1/ExtremeInputs.*'
  # The extremes again on the portable kernels (what runs without AVX2, and every SIMD tail).
  NNHAL_ISA=scalar run_sharded "./$BUILD_DIR/nnhal_cts_tests" --gtest_brief=1 \
    --gtest_filter='*/QuantExtremes.*:*/ExtremeInputs.*'
  # The VTS's own model set (not the inputs_as_internal / all_tensors_as_inputs variants the
  # plain run adds), embedded, and a remote subset; the CompilationCachingTests against the
  # four caching targets; the MemoryDomainTests and the QualityOfServiceTests on both targets.
  run_sharded "./$BUILD_DIR/nnhal_vts_tests" --gtest_brief=1 --gtest_filter='Embedded/*:Devices/VtsCompilationCaching.*:Vts/MemoryDomain.*:Remote/BasicTest*:Remote/DeadlineTest*:Remote/ValidateRequest*:Remote/ValidateModel.Rejects/mutateOperandTypeTest__*:Remote/ValidateModel.Rejects/removeOperandTest__*-*inputs_as_internal*:*all_tensors_as_inputs*'
}

case "${1:-}" in
  configure) configure ;;
  build) build ;;
  test)
    build
    run_tests ;;
  *)
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    [ "${1:-}" = -h ] || [ "${1:-}" = --help ] ;;
esac
