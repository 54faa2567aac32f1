#!/usr/bin/env bash
# Builds nnhal and runs every test suite (CTest, one entry per tests/<layer> folder).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# -j2: the VTS shards and the suites without timing-sensitive tests run side by side; actors,
# cache and ipc run alone (RUN_SERIAL, CMakeLists.txt).
ctest --test-dir build --output-on-failure --timeout 1800 -j2
