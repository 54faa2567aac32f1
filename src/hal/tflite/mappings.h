// hal/tflite/mappings.h — the mapping function of every supported TFLite builtin operator,
// by family. Each adds the NNAPI operation(s) for one operator (see operator_mapping.h);
// the comment gives the NNAPI inputs it produces. kMappings in operator_mapping.cpp lists
// which builtin code uses which function.
//
// Thread safety: pure functions over the context they are given.
#pragma once

#include "hal/tflite/operator_mapping.h"
#include "nnhal/status.h"
#include "nnhal/types.h"
#include "tflite_schema_generated.h"

namespace nnhal::hal::tfl {

// --- generic shapes (map_core.cpp) ---------------------------------------------------------

/// Exactly `inputs` inputs and `outputs` outputs, passed through unchanged in their order.
Result<void> mapPassThrough(OperatorContext& c, OperationType type, size_t inputs, size_t outputs);
/// input0, input1, fused activation.
Result<void> mapBinaryActivation(OperatorContext& c, OperationType type,
                                 ::tflite::ActivationFunctionType activation);
/// Implicit padding pooling: input, padding code, stride w, stride h, filter w, filter h,
/// fused activation (Pool2DOptions).
Result<void> mapPool(OperatorContext& c, OperationType type);
/// REDUCE_*: input, axes (1-D TENSOR_INT32), keep dims (BOOL) (ReducerOptions).
Result<void> mapReduce(OperatorContext& c, OperationType type);

/// Operators whose NNAPI inputs are exactly the operator's N inputs.
template <OperationType kType>
Result<void> mapUnary(OperatorContext& c) {
  return mapPassThrough(c, kType, 1, 1);
}
template <OperationType kType>
Result<void> mapBinary(OperatorContext& c) {
  return mapPassThrough(c, kType, 2, 1);
}
template <OperationType kType>
Result<void> mapTernary(OperatorContext& c) {
  return mapPassThrough(c, kType, 3, 1);
}
/// ADD, SUB, MUL, DIV: the options table `Options` carries the fused activation (NONE when
/// the options are absent).
template <OperationType kType, typename Options>
Result<void> mapBinaryWithActivation(OperatorContext& c) {
  const Options* options = c.options<Options>();
  return mapBinaryActivation(c, kType,
                             options != nullptr ? options->fused_activation_function()
                                                : ::tflite::ActivationFunctionType_NONE);
}
template <OperationType kType>
Result<void> mapPool2d(OperatorContext& c) {
  return mapPool(c, kType);
}
template <OperationType kType>
Result<void> mapReduction(OperatorContext& c) {
  return mapReduce(c, kType);
}

// --- convolutions and the first operators (map_core.cpp) -----------------------------------

/// CONV_2D: input, filter, bias, padding, stride w, stride h, activation [, NHWC, dilations].
Result<void> mapConv2d(OperatorContext& c);
/// DEPTHWISE_CONV_2D: ..., stride h, depth multiplier, activation [, NHWC, dilations].
Result<void> mapDepthwiseConv2d(OperatorContext& c);
/// FULLY_CONNECTED: input, weights, bias (zero when omitted), activation.
Result<void> mapFullyConnected(OperatorContext& c);
/// SOFTMAX: input, beta.
Result<void> mapSoftmax(OperatorContext& c);
/// CONCATENATION: inputs..., axis.
Result<void> mapConcatenation(OperatorContext& c);
/// MEAN: input, axes, keep dims (INT32 1/0).
Result<void> mapMean(OperatorContext& c);
/// RESHAPE: input, shape tensor.
Result<void> mapReshape(OperatorContext& c);

// --- element-wise and normalization (map_elementwise.cpp) ----------------------------------

/// LEAKY_RELU -> PRELU: input, a constant [1] alpha tensor of the input's type.
Result<void> mapLeakyRelu(OperatorContext& c);
/// ELU: input, alpha 1.0.
Result<void> mapElu(OperatorContext& c);
/// SELECT, SELECT_V2: condition, x, y (NNAPI SELECT does not broadcast: shapes must match).
Result<void> mapSelect(OperatorContext& c);
/// LOG_SOFTMAX: input, beta 1.0, axis -1.
Result<void> mapLogSoftmax(OperatorContext& c);
/// L2_NORMALIZATION: input (only fused activation NONE).
Result<void> mapL2Normalization(OperatorContext& c);
/// LOCAL_RESPONSE_NORMALIZATION: input, radius, bias, alpha, beta.
Result<void> mapLocalResponseNormalization(OperatorContext& c);
/// QUANTIZE: input; a quantized input (requantization) is first DEQUANTIZEd to float32.
Result<void> mapQuantize(OperatorContext& c);
/// DEQUANTIZE: input; a float16 input (TFLite's float16 weights) becomes a CAST to float32.
Result<void> mapDequantize(OperatorContext& c);

// --- shapes and indexing (map_shape.cpp) ---------------------------------------------------

/// PAD, PADV2: input, paddings -> PAD; with a pad value -> PAD_V2 (input, paddings, value).
Result<void> mapPad(OperatorContext& c);
/// SQUEEZE: input, squeeze dims (NO_VALUE when the option lists none: squeeze all).
Result<void> mapSqueeze(OperatorContext& c);
/// EXPAND_DIMS: input, axis (INT32 from the constant axis tensor).
Result<void> mapExpandDims(OperatorContext& c);
/// STRIDED_SLICE: input, begin, end, strides, begin mask, end mask, shrink axis mask.
Result<void> mapStridedSlice(OperatorContext& c);
/// GATHER: input, axis, indices (TFLite order: params, indices).
Result<void> mapGather(OperatorContext& c);
/// SPACE_TO_DEPTH, DEPTH_TO_SPACE: input, block size.
Result<void> mapSpaceToDepth(OperatorContext& c);
Result<void> mapDepthToSpace(OperatorContext& c);
/// BATCH_TO_SPACE_ND: input, block shape (the crops must be a constant of zeros).
Result<void> mapBatchToSpaceNd(OperatorContext& c);
/// ARG_MAX, ARG_MIN: input, axis (INT32 from the constant axis tensor).
Result<void> mapArgMax(OperatorContext& c);
Result<void> mapArgMin(OperatorContext& c);
/// TOPK_V2: input, k (INT32 from the constant k tensor) -> values, indices.
Result<void> mapTopKV2(OperatorContext& c);
/// FILL: shape, value (scalar of the output's type from the constant value tensor).
Result<void> mapFill(OperatorContext& c);

// --- split and pack (map_split_pack.cpp) ---------------------------------------------------

/// SPLIT: input, axis, number of splits (TFLite order: axis, input).
Result<void> mapSplit(OperatorContext& c);
/// SPLIT_V: SPLIT when all sizes are equal, otherwise one SLICE per output.
Result<void> mapSplitV(OperatorContext& c);
/// PACK: EXPAND_DIMS of each input at the axis, then CONCATENATION along it.
Result<void> mapPack(OperatorContext& c);
/// UNPACK: SPLIT along the axis into size-1 slices, then SQUEEZE of each.
Result<void> mapUnpack(OperatorContext& c);

// --- image operators (map_image.cpp) -------------------------------------------------------

/// RESIZE_BILINEAR: input, width, height [, NHWC, align corners, half pixel centers].
Result<void> mapResizeBilinear(OperatorContext& c);
/// RESIZE_NEAREST_NEIGHBOR: input, width, height, NHWC [, align corners, half pixel].
Result<void> mapResizeNearestNeighbor(OperatorContext& c);
/// TRANSPOSE_CONV -> TRANSPOSE_CONV_2D (implicit padding): input, filter, bias (zero when
/// omitted), output shape, padding, stride w, stride h, activation, NHWC.
Result<void> mapTransposeConv(OperatorContext& c);

// --- recurrent and text operators (map_recurrent.cpp) --------------------------------------

/// RNN: input, weights, recurrent weights, bias, hidden state, activation -> hidden state
/// out (new), output.
Result<void> mapRnn(OperatorContext& c);
/// UNIDIRECTIONAL_SEQUENCE_RNN: input, weights, recurrent, bias, hidden state, activation,
/// time major (INT32).
Result<void> mapUnidirectionalSequenceRnn(OperatorContext& c);
/// BIDIRECTIONAL_SEQUENCE_RNN: the 12 tensors, activation, time major, merge outputs.
Result<void> mapBidirectionalSequenceRnn(OperatorContext& c);
/// SVDF: input, weights feature, weights time, bias, state, rank, activation -> state out
/// (new), output.
Result<void> mapSvdf(OperatorContext& c);
/// LSTM (full kernel): the 20 tensors, activation, cell clip, projection clip [, the 4
/// layer normalization weights] -> scratch buffer, output state, cell state (new), output.
Result<void> mapLstm(OperatorContext& c);
/// UNIDIRECTIONAL_SEQUENCE_LSTM: the 20 tensors, activation, cell clip, projection clip,
/// time major, the 4 layer normalization weights (NO_VALUE when absent).
Result<void> mapUnidirectionalSequenceLstm(OperatorContext& c);
/// The int8 form of UNIDIRECTIONAL_SEQUENCE_LSTM as SPLIT + one QUANTIZED_LSTM per time
/// step + CONCATENATION (map_quantized_lstm.cpp).
Result<void> mapQuantizedSequenceLstm(OperatorContext& c, const ::tflite::SubGraph& subgraph,
                                      bool timeMajor, float cellClip, float projClip);
/// BIDIRECTIONAL_SEQUENCE_LSTM: the 48 tensors, activation, cell clip, projection clip,
/// merge outputs, time major, 8 layer normalization weights (NO_VALUE).
Result<void> mapBidirectionalSequenceLstm(OperatorContext& c);
/// LSH_PROJECTION: hash, input, weight (NO_VALUE when omitted), type (2 dense, 3 sparse).
Result<void> mapLshProjection(OperatorContext& c);
/// HASHTABLE_LOOKUP: lookups, keys, values -> output, hits.
Result<void> mapHashtableLookup(OperatorContext& c);

// --- custom operators (map_detection.cpp) --------------------------------------------------

/// TFLite_Detection_PostProcess: [DEQUANTIZE encodings and scores,] DETECTION_POSTPROCESSING
/// (class scores, box deltas, FLOAT32 anchors, y/x/h/w scales, regular NMS, max detections,
/// max classes per detection, detections per class, score and IoU thresholds, background
/// not in label), then CAST of the INT32 classes and count to the FLOAT32 outputs.
Result<void> mapDetectionPostprocess(OperatorContext& c);

}  // namespace nnhal::hal::tfl
