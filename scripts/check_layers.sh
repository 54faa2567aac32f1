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
check_top() {  # folder (its own files only, not its subfolders), forbidden include pattern, why
  local hits
  hits=$(grep -nHE "#include [<\"]($2)" "$1"/*.h "$1"/*.cpp 2>/dev/null || true)
  if [ -n "$hits" ]; then
    echo "layering: $1/*.{h,cpp} must not include $2 ($3):"; echo "$hits"; status=1
  fi
}
check include/nnhal 'hal/|kernels/|engine/|actors/|cache/|ipc/|boost/|tbb/|oneapi/' "public headers stand alone"
check src/common 'hal/|kernels/|engine/|backend/|actors/|cache/|ipc/|boost/|tbb/|oneapi/' "common (threads, logging, tracing, descriptors, calibration) is below hal: the public API and itself only"
check src/hal 'kernels/|engine/|actors/|cache/|ipc/|boost/asio|tbb/|oneapi/' "hal is the bottom layer"
check src/kernels 'engine/|actors/|cache/|ipc/|boost/|tbb/|oneapi/|spdlog/' "kernels are pure"
check src/engine 'actors/|cache/|ipc/|boost/asio' "the engine knows nothing of actors or IPC"
check src/cache 'actors/|ipc/|boost/asio' "the cache layer is below actors and ipc"
check src/backend 'actors/|ipc/|boost/asio' "a backend is below the HAL plumbing (actors) and ipc"
check src/actors 'ipc/|kernels/|engine/(compiler|executor|execution_plan|operation|prepared_state|parallel)' "actors are below ipc, and reach the engine only through a Backend (backend/backend.h)"
check src/ipc 'cache/|engine/|kernels/' "ipc (wire code, client and daemon) stands on hal and the public API only"
check_top src/ipc 'actors/|ipc/daemon/|ipc/client/' "the shared wire code (nnhal_ipc) is below the client and the daemon and links no driver"
check src/ipc/client 'actors/|ipc/daemon/' "a client (nnhal_client) links no driver code: the public API and hal only"
check src/ipc/daemon 'actors/' "the daemon reaches the driver through the public Device and hal/driver_control.h; it links actors only for nnhald's createDevice"
for tool in tools/common tools/cpu_reference tools/nnhal tools/nnhal-stress tools/nnhal-soak tools/litert; do
  check "$tool" 'kernels/|engine/|cache/|backend/|actors/|ipc/' "a tool drives nnhal through the public API (with hal's and common's helpers), as any other program would"
done
check tools/nnhald 'kernels/|engine/|cache/' "nnhald assembles its devices from backends (backend/, actors/device_factory.h) and serves them (ipc/daemon/)"
exit $status
