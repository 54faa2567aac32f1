// The operation signature table, transcribed from the operation definitions of NN HAL 1.3
// types.hal (inputs, outputs and supported types of each operation).
#include "hal/operation_signatures.h"

#include <array>
#include <optional>

#include <fmt/format.h>

namespace nnhal::hal {
namespace {

using enum OperandType;

// Tensor type families used by many operations.
constexpr OperandTypeSet kFloat{TENSOR_FLOAT16, TENSOR_FLOAT32};
constexpr OperandTypeSet kFloatInt{TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32};
constexpr OperandTypeSet kFloatQuant{TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM,
                                     TENSOR_QUANT8_ASYMM_SIGNED};
constexpr OperandTypeSet kFloatQuantInt = kFloatQuant | OperandTypeSet{TENSOR_INT32};
constexpr OperandTypeSet kComparable = kFloatQuantInt | OperandTypeSet{TENSOR_BOOL8};
// Filters of the convolutions: like the input, or per-channel quantized.
constexpr OperandTypeSet kFilter = kFloatQuant | OperandTypeSet{TENSOR_QUANT8_SYMM_PER_CHANNEL};
// Biases: like a float input, or TENSOR_INT32 for quantized inputs.
constexpr OperandTypeSet kBias{TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32};

// Scalar parameter types.
constexpr OperandTypeSet kInt{INT32};
constexpr OperandTypeSet kBool{BOOL};
constexpr OperandTypeSet kIntOrBool{INT32, BOOL};
// Float scalars are FLOAT16 for TENSOR_FLOAT16 inputs and FLOAT32 otherwise.
constexpr OperandTypeSet kScalarFloat{FLOAT16, FLOAT32};
constexpr OperandTypeSet kTensorInt{TENSOR_INT32};
constexpr OperandTypeSet kTensorBool{TENSOR_BOOL8};

// Rule builders: `in`/`out` fix the types of a range, `sameIn`/`sameOut` require the type of
// input 0, `sameInIfFloat`/`sameOutIfFloat` only in the float variants (the quantized ones
// use other types there, e.g. TENSOR_QUANT16_ASYMM boxes), `intIfQuant` a TENSOR_INT32 bias in
// the quantized variants (`ifQuant` other types there), `likeIn` the type of another input.
OperandRule in(int32_t first, int32_t last, OperandTypeSet types) { return {first, last, types}; }
OperandRule sameIn(int32_t first, int32_t last) { return {first, last, {}, 0}; }
OperandRule out(int32_t first, int32_t last, OperandTypeSet types) { return {first, last, types}; }
OperandRule sameOut(int32_t first, int32_t last) { return {first, last, {}, 0}; }
OperandRule sameInIfFloat(int32_t first, int32_t last) {
  return {first, last, {}, 0, RuleCondition::kInput0Float};
}
OperandRule sameOutIfFloat(int32_t first, int32_t last) { return sameInIfFloat(first, last); }
OperandRule ifQuant(int32_t first, int32_t last, OperandTypeSet types) {
  return {first, last, types, OperandRule::kNoCoupling, RuleCondition::kInput0NotFloat};
}
OperandRule intIfQuant(int32_t first, int32_t last) {
  return ifQuant(first, last, {OperandType::TENSOR_INT32});
}
OperandRule likeIn(int32_t first, int32_t last, int32_t input) { return {first, last, {}, input}; }

CountSet counts(std::initializer_list<uint32_t> list) { return CountSet::of(list); }
CountSet atLeast(uint32_t minimum) { return CountSet::from(minimum); }

// Shared shapes.
OperationSignature unary(OperationType type, OperandTypeSet types) {
  return {type, counts({1}), counts({1}), types, {}, {sameOut(0, 0)}};
}
// ADD, SUB, MUL, DIV: two tensors of one type and a fused activation.
OperationSignature binaryWithActivation(OperationType type, OperandTypeSet types) {
  return {type, counts({3}), counts({1}), types, {sameIn(1, 1), in(2, 2, kInt)}, {sameOut(0, 0)}};
}
OperationSignature comparison(OperationType type) {
  return {type, counts({2}), counts({1}), kComparable, {sameIn(1, 1)}, {out(0, 0, kTensorBool)}};
}
// Pooling: explicit (10, +layout) or implicit (7, +layout) padding; all parameters INT32
// except the BOOL layout flag.
OperationSignature pool(OperationType type, OperandTypeSet types) {
  return {type,  counts({7, 8, 10, 11}),  counts({1}),
          types, {in(1, -1, kIntOrBool)}, {sameOut(0, 0)}};
}
// CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D: input, filter, bias, then INT32/BOOL scalars.
OperationSignature convolution(OperationType type, CountSet inputs) {
  return {type,
          inputs,
          counts({1}),
          kFloatQuant,
          {in(1, 1, kFilter), in(2, 2, kBias), sameInIfFloat(1, 2), intIfQuant(2, 2),
           in(3, -1, kIntOrBool)},
          {sameOut(0, 0)}};
}
// REDUCE_*: input, axes (TENSOR_INT32), keep_dims (BOOL).
OperationSignature reduce(OperationType type, OperandTypeSet types) {
  return {type,           counts({3}), counts({1}), types, {in(1, 1, kTensorInt), in(2, 2, kBool)},
          {sameOut(0, 0)}};
}
// RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR: sizes (INT32) or scales (FLOAT16/32), then
// layout, align_corners, half_pixel_centers (BOOL).
OperationSignature resize(OperationType type, CountSet inputs) {
  return {type,
          inputs,
          counts({1}),
          kFloatQuant,
          {in(1, 2, kScalarFloat | kInt), in(3, 5, kBool)},
          {sameOut(0, 0)}};
}

using Op = OperationType;

// The operations of HAL 1.0 (codes 0-28).
std::vector<OperationSignature> hal10Signatures() {
  return {
      binaryWithActivation(Op::ADD, kFloatQuantInt),
      pool(Op::AVERAGE_POOL_2D, kFloatQuant),
      {Op::CONCATENATION,
       atLeast(2),
       counts({1}),
       kFloatQuant,
       {sameIn(1, -2), in(-1, -1, kInt)},
       {sameOut(0, 0)}},
      convolution(Op::CONV_2D, counts({7, 8, 10, 11, 13})),
      convolution(Op::DEPTHWISE_CONV_2D, counts({8, 9, 11, 12, 14})),
      {Op::DEPTH_TO_SPACE,
       counts({2, 3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kInt), in(2, 2, kBool)},
       {sameOut(0, 0)}},
      {Op::DEQUANTIZE,
       counts({1}),
       counts({1}),
       {TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM,
        TENSOR_QUANT8_SYMM_PER_CHANNEL},
       {},
       {out(0, 0, kFloat)}},
      // Lookups (TENSOR_INT32), values.
      {Op::EMBEDDING_LOOKUP,
       counts({2}),
       counts({1}),
       kTensorInt,
       {in(1, 1, kFloatQuantInt)},
       {likeIn(0, 0, 1)}},
      unary(Op::FLOOR, kFloat),
      // Input, weights, bias, activation.
      {Op::FULLY_CONNECTED,
       counts({4}),
       counts({1}),
       kFloatQuant,
       {sameIn(1, 1), in(2, 2, kBias), sameInIfFloat(2, 2), intIfQuant(2, 2), in(3, 3, kInt)},
       {sameOut(0, 0)}},
      // Lookups, keys (TENSOR_INT32), values -> output, hits (TENSOR_QUANT8_ASYMM).
      {Op::HASHTABLE_LOOKUP,
       counts({3}),
       counts({2}),
       kTensorInt,
       {in(1, 1, kTensorInt), in(2, 2, {TENSOR_FLOAT32, TENSOR_INT32, TENSOR_QUANT8_ASYMM})},
       {likeIn(0, 0, 2), out(1, 1, {TENSOR_QUANT8_ASYMM})}},
      {Op::L2_NORMALIZATION,
       counts({1, 2}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kInt)},
       {sameOut(0, 0)}},
      pool(Op::L2_POOL_2D, kFloat),
      // Input, radius (INT32), bias, alpha, beta (float scalars), optional axis (INT32).
      {Op::LOCAL_RESPONSE_NORMALIZATION,
       counts({5, 6}),
       counts({1}),
       kFloat,
       {in(1, 1, kInt), in(2, 4, kScalarFloat), in(5, 5, kInt)},
       {sameOut(0, 0)}},
      unary(Op::LOGISTIC, kFloatQuant),
      // Hash functions (float), input (any type), optional weight, projection type (INT32).
      {Op::LSH_PROJECTION,
       counts({4}),
       counts({1}),
       kFloat,
       {sameIn(2, 2), in(3, 3, kInt)},
       {out(0, 0, kTensorInt)}},
      // 23 inputs (1.0) or 27 with layer normalization (1.2); 20 = activation,
      // 21/22 = clipping thresholds.
      {Op::LSTM,
       counts({23, 27}),
       counts({4}),
       kFloat,
       {sameIn(1, 19), in(20, 20, kInt), in(21, 22, kScalarFloat), sameIn(23, 26)},
       {sameOut(0, 3)}},
      pool(Op::MAX_POOL_2D, kFloatQuant),
      binaryWithActivation(Op::MUL, kFloatQuantInt),
      unary(Op::RELU, kFloatQuant),
      unary(Op::RELU1, kFloatQuant),
      unary(Op::RELU6, kFloatQuant),
      {Op::RESHAPE, counts({2}), counts({1}), kFloatQuant, {in(1, 1, kTensorInt)}, {sameOut(0, 0)}},
      resize(Op::RESIZE_BILINEAR, counts({3, 4, 6})),
      // Input, weights, recurrent weights, bias, hidden state, activation.
      {Op::RNN, counts({6}), counts({2}), kFloat, {sameIn(1, 4), in(5, 5, kInt)}, {sameOut(0, 1)}},
      {Op::SOFTMAX,
       counts({2, 3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kScalarFloat), in(2, 2, kInt)},
       {sameOut(0, 0)}},
      {Op::SPACE_TO_DEPTH,
       counts({2, 3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kInt), in(2, 2, kBool)},
       {sameOut(0, 0)}},
      // ..., 5 = rank, 6 = activation.
      {Op::SVDF, counts({7}), counts({2}), kFloat, {sameIn(1, 4), in(5, 6, kInt)}, {sameOut(0, 1)}},
      unary(Op::TANH, kFloatQuant),
  };
}

// The operations of HAL 1.1 (codes 29-37).
std::vector<OperationSignature> hal11Signatures() {
  return {
      {Op::BATCH_TO_SPACE_ND,
       counts({2, 3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kTensorInt), in(2, 2, kBool)},
       {sameOut(0, 0)}},
      binaryWithActivation(Op::DIV, kFloatInt),
      {Op::MEAN,
       counts({3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kTensorInt), in(2, 2, kInt)},
       {sameOut(0, 0)}},
      {Op::PAD, counts({2}), counts({1}), kFloatQuant, {in(1, 1, kTensorInt)}, {sameOut(0, 0)}},
      {Op::SPACE_TO_BATCH_ND,
       counts({3, 4}),
       counts({1}),
       kFloatQuant,
       {in(1, 2, kTensorInt), in(3, 3, kBool)},
       {sameOut(0, 0)}},
      {Op::SQUEEZE, counts({2}), counts({1}), kFloatQuant, {in(1, 1, kTensorInt)}, {sameOut(0, 0)}},
      // Input, begin, end, strides (TENSOR_INT32), begin/end/shrink masks (INT32).
      {Op::STRIDED_SLICE,
       counts({7}),
       counts({1}),
       kFloatQuant,
       {in(1, 3, kTensorInt), in(4, 6, kInt)},
       {sameOut(0, 0)}},
      binaryWithActivation(Op::SUB, kFloatQuantInt),
      {Op::TRANSPOSE,
       counts({2}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kTensorInt)},
       {sameOut(0, 0)}},
  };
}

// The operations of HAL 1.2, ABS to NOT_EQUAL.
std::vector<OperationSignature> hal12SignaturesAbsToNotEqual() {
  return {
      unary(Op::ABS, kFloatInt),
      {Op::ARGMAX,
       counts({2}),
       counts({1}),
       kFloatQuantInt,
       {in(1, 1, kInt)},
       {out(0, 0, kTensorInt)}},
      {Op::ARGMIN,
       counts({2}),
       counts({1}),
       kFloatQuantInt,
       {in(1, 1, kInt)},
       {out(0, 0, kTensorInt)}},
      // Boxes, deltas, batch indexes (TENSOR_INT32), image info.
      {Op::AXIS_ALIGNED_BBOX_TRANSFORM,
       counts({4}),
       counts({1}),
       {TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_QUANT16_ASYMM},
       {in(1, 1, kFloatQuant), sameInIfFloat(1, 1), in(2, 2, kTensorInt),
        in(3, 3, {TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_QUANT16_ASYMM}), sameInIfFloat(3, 3)},
       {sameOut(0, 0)}},
      // 61 inputs: 48 = activation, 49/50 = clipping, 51/52 = merge_outputs/time_major.
      // Outputs: fw, bw (absent when merged), then optionally the four final states (1.3).
      {Op::BIDIRECTIONAL_SEQUENCE_LSTM,
       counts({61}),
       counts({1, 2, 5, 6}),
       kFloat,
       {sameIn(1, 47), in(48, 48, kInt), in(49, 50, kScalarFloat), in(51, 52, kBool),
        sameIn(53, 60)},
       {sameOut(0, -1)}},
      // 15 inputs: 12 = activation, 13/14 = time_major/merge_outputs. Outputs: fw, bw
      // (absent when merged), then optionally the two final hidden states (1.3).
      {Op::BIDIRECTIONAL_SEQUENCE_RNN,
       counts({15}),
       counts({1, 2, 3, 4}),
       kFloat,
       {sameIn(1, 11), in(12, 12, kInt), in(13, 14, kBool)},
       {sameOut(0, -1)}},
      // Scores, boxes, batch indexes, score threshold, max boxes, kernel, IoU threshold,
      // sigma, NMS score threshold.
      {Op::BOX_WITH_NMS_LIMIT,
       counts({9}),
       counts({4}),
       kFloatQuant,
       {sameInIfFloat(1, 1), in(2, 2, kTensorInt), in(3, 3, kScalarFloat), in(4, 5, kInt),
        in(6, 8, kScalarFloat)},
       {sameOut(0, 0), sameOutIfFloat(1, 1), ifQuant(1, 1, {TENSOR_QUANT16_ASYMM}),
        out(2, 3, kTensorInt)}},
      {Op::CAST,
       counts({1}),
       counts({1}),
       {TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_BOOL8,
        TENSOR_QUANT16_ASYMM, TENSOR_QUANT16_SYMM, TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM},
       {},
       {}},
      {Op::CHANNEL_SHUFFLE,
       counts({3}),
       counts({1}),
       kFloatQuant,
       {in(1, 2, kInt)},
       {sameOut(0, 0)}},
      // Scores, deltas, anchors, 4 scale factors, use_regular_nms, 3 limits, score and IoU
      // thresholds, include_background.
      {Op::DETECTION_POSTPROCESSING,
       counts({14}),
       counts({4}),
       kFloat,
       {sameIn(1, 2), in(3, 6, kScalarFloat), in(7, 7, kBool), in(8, 10, kInt),
        in(11, 12, kScalarFloat), in(13, 13, kBool)},
       {sameOut(0, 1), out(2, 3, kTensorInt)}},
      comparison(Op::EQUAL),
      unary(Op::EXP, kFloat),
      {Op::EXPAND_DIMS,
       counts({2}),
       counts({1}),
       kFloatQuantInt,
       {in(1, 1, kInt)},
       {sameOut(0, 0)}},
      // Input, axis (INT32), indices (TENSOR_INT32).
      {Op::GATHER,
       counts({3}),
       counts({1}),
       kFloatQuantInt,
       {in(1, 1, kInt), in(2, 2, kTensorInt)},
       {sameOut(0, 0)}},
      // Scores, deltas, anchors, image info, 2 ratios, 2 limits, IoU threshold, min size,
      // layout.
      {Op::GENERATE_PROPOSALS,
       counts({11}),
       counts({3}),
       kFloatQuant,
       {sameInIfFloat(1, 3), in(4, 5, kScalarFloat), in(6, 7, kInt), in(8, 9, kScalarFloat),
        in(10, 10, kBool)},
       {sameOut(0, 0), sameOutIfFloat(1, 1), ifQuant(1, 1, {TENSOR_QUANT16_ASYMM}),
        out(2, 2, kTensorInt)}},
      comparison(Op::GREATER),
      comparison(Op::GREATER_EQUAL),
      convolution(Op::GROUPED_CONV_2D, counts({9, 12})),
      {Op::HEATMAP_MAX_KEYPOINT,
       counts({3}),
       counts({2}),
       kFloatQuant,
       {sameInIfFloat(1, 1), in(2, 2, kBool)},
       {sameOut(0, 0), sameOutIfFloat(1, 1), ifQuant(1, 1, {TENSOR_QUANT16_ASYMM})}},
      // Input, gamma, beta, epsilon (float scalars), layout.
      {Op::INSTANCE_NORMALIZATION,
       counts({5}),
       counts({1}),
       kFloat,
       {in(1, 3, kScalarFloat), in(4, 4, kBool)},
       {sameOut(0, 0)}},
      comparison(Op::LESS),
      comparison(Op::LESS_EQUAL),
      unary(Op::LOG, kFloat),
      {Op::LOGICAL_AND,
       counts({2}),
       counts({1}),
       kTensorBool,
       {sameIn(1, 1)},
       {out(0, 0, kTensorBool)}},
      unary(Op::LOGICAL_NOT, kTensorBool),
      {Op::LOGICAL_OR,
       counts({2}),
       counts({1}),
       kTensorBool,
       {sameIn(1, 1)},
       {out(0, 0, kTensorBool)}},
      {Op::LOG_SOFTMAX,
       counts({3}),
       counts({1}),
       kFloat,
       {in(1, 1, kScalarFloat), in(2, 2, kInt)},
       {sameOut(0, 0)}},
      {Op::MAXIMUM, counts({2}), counts({1}), kFloatQuantInt, {sameIn(1, 1)}, {sameOut(0, 0)}},
      {Op::MINIMUM, counts({2}), counts({1}), kFloatQuantInt, {sameIn(1, 1)}, {sameOut(0, 0)}},
      unary(Op::NEG, kFloatInt),
      comparison(Op::NOT_EQUAL),
  };
}

// The operations of HAL 1.2, PAD_V2 to RESIZE_NEAREST_NEIGHBOR.
std::vector<OperationSignature> hal12SignaturesPadV2ToResizeNearestNeighbor() {
  return {
      // Input, paddings, pad value (FLOAT16/FLOAT32, INT32 for quantized inputs).
      {Op::PAD_V2,
       counts({3}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kTensorInt), in(2, 2, kScalarFloat | kInt)},
       {sameOut(0, 0)}},
      {Op::POW, counts({2}), counts({1}), kFloat, {sameIn(1, 1)}, {sameOut(0, 0)}},
      {Op::PRELU, counts({2}), counts({1}), kFloatQuant, {sameIn(1, 1)}, {sameOut(0, 0)}},
      {Op::QUANTIZE,
       counts({1}),
       counts({1}),
       kFloat,
       {},
       {out(0, 0, {TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED})}},
      // Input, 8 weights (QUANT8_ASYMM), 4 biases (INT32), cell state (QUANT16_SYMM),
      // output state (QUANT8_ASYMM) -> cell state, output.
      {Op::QUANTIZED_16BIT_LSTM,
       counts({15}),
       counts({2}),
       {TENSOR_QUANT8_ASYMM},
       {in(1, 8, {TENSOR_QUANT8_ASYMM}), in(9, 12, kTensorInt), in(13, 13, {TENSOR_QUANT16_SYMM}),
        in(14, 14, {TENSOR_QUANT8_ASYMM})},
       {out(0, 0, {TENSOR_QUANT16_SYMM}), out(1, 1, {TENSOR_QUANT8_ASYMM})}},
      // Logits, sample count (INT32), seeds (TENSOR_INT32).
      {Op::RANDOM_MULTINOMIAL,
       counts({3}),
       counts({1}),
       kFloat,
       {in(1, 1, kInt), in(2, 2, kTensorInt)},
       {out(0, 0, kTensorInt)}},
      reduce(Op::REDUCE_ALL, kTensorBool),
      reduce(Op::REDUCE_ANY, kTensorBool),
      reduce(Op::REDUCE_MAX, kFloatQuant),
      reduce(Op::REDUCE_MIN, kFloatQuant),
      reduce(Op::REDUCE_PROD, kFloat),
      reduce(Op::REDUCE_SUM, kFloat),
      // Feature map, rois, batch indexes, output h/w, 2 ratios, 2 sampling counts, layout.
      {Op::ROI_ALIGN,
       counts({10}),
       counts({1}),
       kFloatQuant,
       {sameInIfFloat(1, 1), in(2, 2, kTensorInt), in(3, 4, kInt), in(5, 6, kScalarFloat),
        in(7, 8, kInt), in(9, 9, kBool)},
       {sameOut(0, 0)}},
      // Feature map, rois, batch indexes, output h/w, 2 ratios, layout.
      {Op::ROI_POOLING,
       counts({8}),
       counts({1}),
       kFloatQuant,
       {sameInIfFloat(1, 1), in(2, 2, kTensorInt), in(3, 4, kInt), in(5, 6, kScalarFloat),
        in(7, 7, kBool)},
       {sameOut(0, 0)}},
      unary(Op::RSQRT, kFloat),
      // Condition (TENSOR_BOOL8), then the two value tensors.
      {Op::SELECT,
       counts({3}),
       counts({1}),
       kTensorBool,
       {in(1, 2, kFloatQuantInt), likeIn(2, 2, 1)},
       {likeIn(0, 0, 1)}},
      unary(Op::SIN, kFloat),
      {Op::SLICE,
       counts({3}),
       counts({1}),
       kFloatQuantInt,
       {in(1, 2, kTensorInt)},
       {sameOut(0, 0)}},
      // Input, axis, num_splits -> num_splits outputs.
      {Op::SPLIT, counts({3}), atLeast(1), kFloatQuantInt, {in(1, 2, kInt)}, {sameOut(0, -1)}},
      unary(Op::SQRT, kFloat),
      {Op::TILE, counts({2}), counts({1}), kFloatQuantInt, {in(1, 1, kTensorInt)}, {sameOut(0, 0)}},
      {Op::TOPK_V2,
       counts({2}),
       counts({2}),
       kFloatQuantInt,
       {in(1, 1, kInt)},
       {sameOut(0, 0), out(1, 1, kTensorInt)}},
      // Explicit (11) or implicit (9, input 3 = output shape tensor) padding.
      {Op::TRANSPOSE_CONV_2D,
       counts({9, 11}),
       counts({1}),
       kFloatQuant,
       {in(1, 1, kFilter), in(2, 2, kBias), sameInIfFloat(1, 2), intIfQuant(2, 2),
        in(3, 3, kInt | kTensorInt), in(4, -1, kIntOrBool)},
       {sameOut(0, 0)}},
      // 28 inputs: 20 = activation, 21/22 = clipping, 23 = time_major, 24-27 = optional
      // layer normalization weights. Outputs: output, then optionally the final states.
      {Op::UNIDIRECTIONAL_SEQUENCE_LSTM,
       counts({28}),
       counts({1, 3}),
       kFloat,
       {sameIn(1, 19), in(20, 20, kInt), in(21, 22, kScalarFloat), in(23, 23, kBool),
        sameIn(24, 27)},
       {sameOut(0, -1)}},
      // Input, weights, recurrent weights, bias, hidden state, activation, time_major.
      {Op::UNIDIRECTIONAL_SEQUENCE_RNN,
       counts({7}),
       counts({1, 2}),
       kFloat,
       {sameIn(1, 4), in(5, 6, kInt)},
       {sameOut(0, -1)}},
      resize(Op::RESIZE_NEAREST_NEIGHBOR, counts({4, 6})),
  };
}

// The operations of HAL 1.3.
std::vector<OperationSignature> hal13Signatures() {
  return {
      {Op::QUANTIZED_LSTM,
       counts({32}),
       counts({3}),
       {TENSOR_QUANT8_ASYMM_SIGNED},
       {in(1, 8, {TENSOR_QUANT8_SYMM}), in(9, 11, {TENSOR_QUANT16_SYMM}), in(12, 15, kTensorInt),
        in(16, 16, {TENSOR_QUANT8_SYMM}), in(17, 17, kTensorInt),
        in(18, 18, {TENSOR_QUANT8_ASYMM_SIGNED}), in(19, 23, {TENSOR_QUANT16_SYMM}),
        in(24, 29, {FLOAT32}), in(30, 30, kInt), in(31, 31, {FLOAT32})},
       {out(0, 0, {TENSOR_QUANT8_ASYMM_SIGNED}), out(1, 1, {TENSOR_QUANT16_SYMM}),
        out(2, 2, {TENSOR_QUANT8_ASYMM_SIGNED})}},
      // Condition, then/else subgraphs, branch inputs.
      {Op::IF, atLeast(3), atLeast(1), kTensorBool, {in(1, 2, {SUBGRAPH})}, {}},
      // Condition/body subgraphs, loop inputs (at least one input-output operand).
      {Op::WHILE, atLeast(3), atLeast(1), {SUBGRAPH}, {in(1, 1, {SUBGRAPH})}, {}},
      {Op::ELU, counts({2}), counts({1}), kFloat, {in(1, 1, kScalarFloat)}, {sameOut(0, 0)}},
      unary(Op::HARD_SWISH, kFloatQuant),
      // Shape (TENSOR_INT32), value (FLOAT16, FLOAT32 or INT32 like the output).
      {Op::FILL,
       counts({2}),
       counts({1}),
       kTensorInt,
       {in(1, 1, kScalarFloat | kInt)},
       {out(0, 0, kFloatInt)}},
      {Op::RANK,
       counts({1}),
       counts({1}),
       {TENSOR_BOOL8, TENSOR_FLOAT16, TENSOR_FLOAT32, TENSOR_INT32, TENSOR_QUANT8_ASYMM,
        TENSOR_QUANT16_SYMM, TENSOR_QUANT8_SYMM_PER_CHANNEL, TENSOR_QUANT16_ASYMM,
        TENSOR_QUANT8_SYMM, TENSOR_QUANT8_ASYMM_SIGNED},
       {},
       {out(0, 0, kInt)}},
  };
}

std::array<OperationSignature, kOperationTypeFundamentalMax + 1> buildTable() {
  std::array<OperationSignature, kOperationTypeFundamentalMax + 1> table;
  for (auto make : {hal10Signatures, hal11Signatures, hal12SignaturesAbsToNotEqual,
                    hal12SignaturesPadV2ToResizeNearestNeighbor, hal13Signatures}) {
    for (auto& signature : make()) {
      const auto code = static_cast<size_t>(signature.type);
      table[code] = std::move(signature);
    }
  }
  return table;
}

const std::array<OperationSignature, kOperationTypeFundamentalMax + 1>& table() {
  static const auto kTable = buildTable();
  return kTable;
}

}  // namespace

const OperationSignature* findSignature(OperationType type) {
  const auto code = static_cast<int32_t>(type);
  if (code < 0 || code > kOperationTypeFundamentalMax) return nullptr;
  return &table()[static_cast<size_t>(code)];
}

}  // namespace nnhal::hal
