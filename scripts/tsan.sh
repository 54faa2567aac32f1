#!/usr/bin/env bash
# ThreadSanitizer run of the suites where threads meet: actors, cache and ipc (the latter
# against a ThreadSanitizer build of nnhald). Builds into build-tsan/ (g++, -fsanitize=thread)
# and fails on the first data race, lock-order inversion or other report.
# Usage: scripts/tsan.sh [extra GoogleTest arguments, e.g. --gtest_filter=...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-tsan}
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
# -g1: line tables (enough for TSan's reports) compile in about half the time of full -g.
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNHAL_TSAN=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DNNHAL_BUILD_BENCH=OFF -DNNHAL_WERROR=OFF >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)" \
  --target nnhal_actors_tests nnhal_cache_tests nnhal_ipc_tests nnhald nnhal_cli
# TBB's own synchronization is not instrumented: its scheduler is suppressed, nnhal's code
# around it is not.
# die_after_fork=0: some ipc tests fork a client process that then starts threads.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 die_after_fork=0 suppressions=$PWD/scripts/tsan.supp"
# Through nnhald the CTS folders V1_0 and V1_1 (the plain build runs all four).
export NNHAL_IPC_SHORT_CTS=1
# The soak harness's own tests (a minute of a whole client program each) run in the plain
# build; the daemon's threads meet in every other ipc test here. GTEST_FILTER overrides.
export GTEST_FILTER="${GTEST_FILTER:--CachingOff.Soak*}"
status=0
for suite in actors cache ipc; do
  echo "== ThreadSanitizer: $suite"
  "./$BUILD_DIR/nnhal_${suite}_tests" --gtest_brief=1 "$@" || status=1
done
exit "$status"
