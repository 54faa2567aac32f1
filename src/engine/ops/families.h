// engine/ops/families.h — the operation families the registry is assembled from.
//
// Each family lives in its own files under engine/ops/ and lists its OperationDefs in one
// function, so families can grow independently. An operation type appears in exactly one
// family (operation_registry_test checks it).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "engine/operation.h"

namespace nnhal::engine::ops {

/// CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, pools, ADD, MUL, activations, SOFTMAX,
/// RESHAPE, CONCATENATION, QUANTIZE, DEQUANTIZE, MEAN (core_family.cpp).
std::span<const OperationDef> coreOperations();
/// Unary/binary element-wise math, comparisons, logical ops, SELECT, CAST, PRELU, POW, DIV,
/// SUB, MAXIMUM, MINIMUM, ELU, HARD_SWISH, ... (elementwise_family.cpp).
std::span<const OperationDef> elementwiseOperations();
/// Shape and data movement: PAD, TRANSPOSE, SLICE, GATHER, SPLIT, TILE, ... (data_family.cpp).
std::span<const OperationDef> dataMovementOperations();
/// Reductions, normalizations, resizes, LOG_SOFTMAX, L2_POOL_2D (normalization_family.cpp).
std::span<const OperationDef> normalizationOperations();
/// GROUPED_CONV_2D, TRANSPOSE_CONV_2D (conv_family.cpp).
std::span<const OperationDef> convolutionOperations();
/// LSTM/RNN/SVDF/LSH families (sequence_family.cpp).
std::span<const OperationDef> sequenceOperations();
/// Detection and ROI operations, RANDOM_MULTINOMIAL (detection_family.cpp).
std::span<const OperationDef> detectionOperations();

/// One operation of a vendor extension: its extension's name, its type within the extension
/// (the low 16 bits of the code) and its name. `def.type` is unused: the code depends on the
/// prefix each model gives the extension.
struct ExtensionOperationDef {
  std::string_view extension;
  uint16_t type = 0;
  std::string_view name;
  OperationDef def;
};
/// FLOOR_DIV and GATHER_ND of org.nnhal.tflite_compat (tflite_compat_family.cpp).
std::span<const ExtensionOperationDef> tfliteCompatOperations();

}  // namespace nnhal::engine::ops
