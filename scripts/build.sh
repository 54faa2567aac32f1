#!/usr/bin/env bash
# Configures and builds nnhal into build/ (Release with debug info, warnings as errors).
# Usage: scripts/build.sh [extra cmake -D options]
# NNHAL_TARGETS="nnhal_cli nnhald" builds only those targets (and what they need); default: all.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
# ccache (when installed) hits across checkouts in different folders, e.g. CI's fresh clone.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNHAL_WERROR=ON "$@" >/dev/null
targets=()
for target in ${NNHAL_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$BUILD_DIR" -j"$(nproc)" "${targets[@]}"
