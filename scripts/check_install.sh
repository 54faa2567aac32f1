#!/usr/bin/env bash
# Checks nnhal as a library others build against (docs/ARCHITECTURE.md, "Building against
# nnhal"): installs BUILD_DIR into a temporary prefix, builds examples/classify against it
# with find_package(nnhal) (nnhal::driver and nnhal::client, and a client-only build), with
# pkg-config (nnhal-client.pc), and with nnhal's source tree added by add_subdirectory
# (examples/CMakeLists.txt); runs each on the quantized MobileNet v1 0.25 with the cat photo's
# input tensor, embedded and through an nnhald started from the prefix, and checks the top class
# (286 Egyptian cat or 283 tiger cat). Also checks the installed systemd units
# (systemd-analyze verify, where it exists) and `nnhald --check-config`.
#   usage: bash scripts/check_install.sh [BUILD_DIR]   (default build; configured here if needed)
# CMAKE_BUILD_PARALLEL_LEVEL sets the build's parallelism (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shared=${NNHAL_SHARED_DIR:-$PWD/../shared}
model=$shared/models/mobilenet_v1_0.25_128_quant.tflite
input=$shared/models/inputs/mobilenet_v1_0.25_128_quant__cat.input.bin
labels=$shared/models/imagenet_labels.txt
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# A fixed folder inside the build tree: with CCACHE_BASEDIR (.ci/run) the add_subdirectory
# build then sees the same relative paths on every run and its compiles come from ccache.
work=$(cd "$build" 2>/dev/null && pwd || echo "$PWD/$build")/check-install
rm -rf "$work"
mkdir -p "$work"
daemon_pid=
cleanup() {
  if [ -n "$daemon_pid" ]; then kill "$daemon_pid" 2>/dev/null || true; wait "$daemon_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check_install: $*" >&2; exit 1; }

# The top class printed by `classify ...` must be the cat.
expect_cat() {
  local out
  out=$("$@") || fail "failed: $*"
  echo "   $out" | tail -1
  grep -qE '^top class: (286|283) ' <<<"$out" || fail "wrong top class from $*: $out"
}

# `classify ... --cache-dir DIR` must say what nnhal::CacheDirectory did: "cache: WORDS".
expect_cache() {
  local words=$1 out
  shift
  out=$("$@") || fail "failed: $*"
  grep -q "^cache: $words" <<<"$out" || fail "expected 'cache: $words' from $*: $out"
  grep -qE '^top class: (286|283) ' <<<"$out" || fail "wrong top class from $*: $out"
  echo "   cache: $words"
}

echo "-- build and install $build into a prefix"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNNHAL_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$build" --target nnhal_hal nnhal_tflite nnhal_ipc nnhal_client nnhal_kernels \
  nnhal_engine nnhal_cache nnhal_backend nnhal_actors nnhal_cli nnhald nnhal_stress nnhal_soak >/dev/null
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/nnhal bin/nnhald bin/nnhal-stress bin/nnhal-soak include/nnhal/device.h \
    include/nnhal/client.h include/nnhal/version.h; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
libdir=$(dirname "$(find "$prefix" -name nnhal-config.cmake)")/../..
[ -f "$libdir/pkgconfig/nnhal.pc" ] && [ -f "$libdir/pkgconfig/nnhal-client.pc" ] || fail "no .pc files"
version=$(sed -n 's/^project(nnhal VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ "$("$prefix/bin/nnhal" --version)" = "nnhal $version" ] || fail "nnhal --version"
[ "$("$prefix/bin/nnhald" --version)" = "nnhald $version" ] || fail "nnhald --version"

echo "-- systemd units (docs/DEPLOYMENT.md)"
units=$prefix/lib/systemd/system
for f in nnhald.service nnhald.socket nnhald-admin.socket; do
  [ -f "$units/$f" ] || fail "not installed: lib/systemd/system/$f"
done
grep -q "^ExecStart=$prefix/bin/nnhald " "$units/nnhald.service" || fail "nnhald.service: ExecStart is not $prefix/bin/nnhald"
grep -q "^ExecStartPre=-$prefix/bin/nnhal calibrate --if-stale " "$units/nnhald.service" ||
  fail "nnhald.service: ExecStartPre does not calibrate with $prefix/bin/nnhal"
if command -v systemd-analyze >/dev/null; then
  (cd "$units" && systemd-analyze verify --man=no ./nnhald.service ./nnhald.socket ./nnhald-admin.socket) ||
    fail "systemd-analyze verify found problems in the units"
fi
"$prefix/bin/nnhald" --check-config --socket "$work/check.sock" >/dev/null || fail "nnhald --check-config"

echo "-- examples/classify against the prefix (find_package(nnhal))"
cmake -S examples/classify -B "$work/classify" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/classify" >/dev/null
cmake -S examples/classify -B "$work/classify-client" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCLASSIFY_CLIENT_ONLY=ON >/dev/null
cmake --build "$work/classify-client" >/dev/null
# The client links no driver code: no symbol of the kernels, engine, cache or actors layers.
if nm -C "$work/classify-client/classify_client" | grep -qE 'nnhal::(actors|cache|engine|kernels)::'; then
  fail "classify_client links driver code"
fi
echo "-- examples/classify with pkg-config (nnhal-client.pc)"
pc_flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs nnhal-client)
# shellcheck disable=SC2086
g++ -std=c++23 -O1 examples/classify/classify.cpp $pc_flags -o "$work/classify-pc"

echo "-- embedded driver"
expect_cat "$work/classify/classify" "$model" "$input" --labels "$labels"
echo "-- a host program caching its compilation (nnhal/cache_directory.h): the second start loads"
expect_cache "compiled and saved" "$work/classify/classify" "$model" "$input" --cache-dir "$work/cache-embedded"
expect_cache "loaded" "$work/classify/classify" "$model" "$input" --cache-dir "$work/cache-embedded"

echo "-- through nnhald from the prefix"
socket=$work/nnhald.sock
"$prefix/bin/nnhald" --socket "$socket" --cache-dir "$work/nnhald-state" --log-level warn &
daemon_pid=$!
for _ in $(seq 100); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || fail "nnhald did not listen on $socket"
expect_cat "$work/classify/classify" "$model" "$input" --labels "$labels" --connect "$socket"
expect_cat "$work/classify-client/classify_client" "$model" "$input" --labels "$labels" --connect "$socket"
expect_cat "$work/classify-pc" "$model" "$input" --labels "$labels" --connect "$socket"
if "$work/classify-client/classify_client" "$model" "$input" 2>/dev/null; then
  fail "classify_client without --connect must fail"
fi
expect_cache "compiled and saved" "$work/classify-pc" "$model" "$input" --connect "$socket" --cache-dir "$work/cache-client"
expect_cache "loaded" "$work/classify-client/classify_client" "$model" "$input" --connect "$socket" --cache-dir "$work/cache-client"

echo "-- examples/ with nnhal's source tree added by add_subdirectory"
# What this checks is the build glue (nnhal as a subproject: its targets, include folders and
# link order); the code itself was compiled and tested above. So -O1 without debug info: the
# cold compile of every library takes 40% of the time at -O2 -g.
cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" >/dev/null
cmake --build "$work/examples" --target classify classify_client >/dev/null
expect_cat "$work/examples/classify/classify" "$model" "$input" --labels "$labels"
expect_cat "$work/examples/classify/classify_client" "$model" "$input" --labels "$labels" --connect "$socket"
echo "check_install: OK"
