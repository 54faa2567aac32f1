#!/usr/bin/env bash
# The main job: builds the nnhal command (only it: the tests are scripts/test.sh's) and
# classifies grace_hopper.bmp with MobileNet v2 (uint8) through the embedded driver, printing
# the top-5 classes and preparation/execution times.
set -euo pipefail
cd "$(dirname "$0")/.."
SHARED=${NNHAL_SHARED_DIR:-../shared}
echo "building the nnhal command (a few minutes on 2 cores the first time)..." >&2
NNHAL_TARGETS=nnhal_cli bash scripts/build.sh
./build/nnhal run --model "$SHARED/models/mobilenet_v2_1.0_224_quant.tflite" \
  --image "$SHARED/models/grace_hopper.bmp" --labels "$SHARED/models/imagenet_labels.txt" \
  --top 5 --num_runs 10
