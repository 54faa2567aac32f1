// tools/common/calibration_workloads.h — the workloads `nnhal calibrate` times: the NNAPI
// benchmark's reference networks, built in so that an installed driver can measure itself
// without any model file.
//
// Each network has the layer shapes of the published model (kernel sizes, strides, channel
// counts, residual ADDs) with deterministic pseudo-random weights: the time of a dense network
// does not depend on its weight values. Quantized networks use TENSOR_QUANT8_ASYMM with
// per-tensor weights (what the reference CPU path, XNNPACK's qu8 operators, runs); the float
// network is the quantized MobileNet v2 with its weights dequantized
// (tools/common/dequantize_model.h). Weights are scaled so that activations keep their range
// through the network (no overflow to infinity, no denormals in float).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::tools {

struct CalibrationWorkload {
  std::string name;  ///< e.g. "mobilenet_v2_1.0_224_quant"
  bool quantized = true;
  Model model;  ///< one NHWC input [1, H, W, 3], one output [1, 1001] (SOFTMAX)
};

/// MobileNet v1 0.25 128 (quantized: 15 convolutions and 13 depthwise ones, input
/// [1, 128, 128, 3]).
Result<Model> mobileNetV1Quant();
/// MobileNet v2 1.0 224 (quantized: 36 convolutions, 17 depthwise ones and 10 residual ADDs,
/// input [1, 224, 224, 3]).
Result<Model> mobileNetV2Quant();

/// The three workloads: MobileNet v1 0.25 128 quant, MobileNet v2 1.0 224 quant, and
/// MobileNet v2 1.0 224 float. Errors: RESOURCE_EXHAUSTED_PERSISTENT when a weight pool cannot
/// be allocated.
Result<std::vector<CalibrationWorkload>> builtInCalibrationWorkloads();

}  // namespace nnhal::tools
