#!/usr/bin/env bash
# Fails when an #include points the wrong way between layers (docs/ARCHITECTURE.md).
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
check() {  # folder, forbidden include pattern, why
  local hits
  hits=$(grep -rnE "#include [<\"]($2)" "$1" 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "layering: $1 must not include $2 ($3):"; echo "$hits"; status=1
  fi
}
check include/nnhal 'hal/|kernels/|engine/|actors/|cache/|ipc/|boost/|tbb/|oneapi/' "public headers stand alone"
check src/hal 'kernels/|engine/|actors/|cache/|ipc/|boost/asio|tbb/|oneapi/' "hal is the bottom layer"
check src/kernels 'engine/|actors/|cache/|ipc/|boost/|tbb/|oneapi/|spdlog/' "kernels are pure"
check src/engine 'actors/|cache/|ipc/|boost/asio' "the engine knows nothing of actors or IPC"
check src/cache 'actors/|ipc/|boost/asio' "the cache layer is below actors and ipc"
check src/actors 'ipc/' "actors are below ipc"
check src/ipc 'actors/|engine/|kernels/' "ipc (daemon and client) uses the driver through the public Device only"
exit $status
