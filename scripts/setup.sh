#!/usr/bin/env bash
# Installs every build and test dependency of nnhal from Debian 12's packages.
# Usage: sudo scripts/setup.sh   (runs as root in CI; needs no terminal)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  build-essential g++ cmake ninja-build pkg-config git ca-certificates ccache \
  clang-14 clang-format clang-16 libclang-rt-16-dev \
  libboost-dev libboost-system-dev \
  libtbb-dev libspdlog-dev libfmt-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  libcrypto++-dev libflatbuffers-dev flatbuffers-compiler \
  nlohmann-json3-dev libcli11-dev libstb-dev \
  libxnnpack-dev libpthreadpool-dev libdnnl-dev \
  gnuplot-nox graphviz libsystemd-dev libxml2-utils \
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers \
  nodejs
# Debian's nodejs comes without npm, which is a package of its own; NodeSource's nodejs
# bundles npm and conflicts with Debian's, so npm is installed only where it is missing.
if ! command -v npm >/dev/null; then
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends npm
fi
# TFLite's own runtime (LiteRT, from the npm registry, pinned by the lock file) for the
# comparisons with TFLite: nnhal run --compare-tflite and the tools suite (docs/TESTING.md).
# Without the registry, everything else still works: those comparisons then skip and say why.
if ! npm ci --prefix "$(dirname "$0")/../tools/litert" --no-audit --no-fund --loglevel=error; then
  echo "setup.sh: npm ci failed: LiteRT is not installed, the comparisons with TFLite skip" >&2
fi
