// engine/ops/ops.h — the prepare function of every operation the engine implements, one
// per operation type, registered in the one sorted table of engine/operation_registry.cpp.
// engine/operation.h states the contract: a prepare function validates its operation's
// operands (static types from hal's signature table, values, shapes), sets the output shapes
// and returns the Kernel; its errors are INVALID_ARGUMENT with a message that names the
// operation and the operand. Operand numbering and semantics follow NN HAL 1.3 types.hal;
// arithmetic follows the NNAPI CPU reference (TFLite's rounding for quantized types).
#pragma once

#include <memory>

#include "engine/operation.h"

namespace nnhal::engine::ops {

using PrepareResult = Result<std::unique_ptr<Kernel>>;

// ---- Convolutions, pooling, the MobileNet core ----
// Convolutions and fully connected (conv.cpp, depthwise_conv.cpp, fully_connected.cpp).
PrepareResult prepareConv2D(PrepareContext& ctx);
PrepareResult prepareDepthwiseConv2D(PrepareContext& ctx);
PrepareResult prepareFullyConnected(PrepareContext& ctx);
// Pooling (pooling.cpp).
PrepareResult prepareAveragePool2D(PrepareContext& ctx);
PrepareResult prepareMaxPool2D(PrepareContext& ctx);
// Element-wise arithmetic with broadcasting (broadcast_arith.cpp).
PrepareResult prepareAdd(PrepareContext& ctx);
PrepareResult prepareMul(PrepareContext& ctx);
// Activations (activations.cpp).
PrepareResult prepareRelu(PrepareContext& ctx);
PrepareResult prepareRelu1(PrepareContext& ctx);
PrepareResult prepareRelu6(PrepareContext& ctx);
PrepareResult prepareLogistic(PrepareContext& ctx);
PrepareResult prepareSoftmax(PrepareContext& ctx);
// Shape and data movement (reshape.cpp, concatenation.cpp).
PrepareResult prepareReshape(PrepareContext& ctx);
PrepareResult prepareConcatenation(PrepareContext& ctx);
// Type conversion (quantize.cpp).
PrepareResult prepareQuantize(PrepareContext& ctx);
PrepareResult prepareDequantize(PrepareContext& ctx);
// Reductions (mean.cpp).
PrepareResult prepareMean(PrepareContext& ctx);

// ---- Grouped and transposed convolutions ----
/// GROUPED_CONV_2D. Inputs: 0 input [batches, height, width, depthIn] (NHWC, or NCHW when
/// the layout BOOL is true); 1 filter [depthOut, filterHeight, filterWidth, depthIn /
/// numGroups] (TENSOR_QUANT8_SYMM_PER_CHANNEL filters: channelDim 0); 2 bias [depthOut];
/// then either explicit paddings (3-6: left, right, top, bottom), strides (7, 8: width,
/// height), numGroups (9), activation (10), layout (11) — 12 inputs — or an implicit padding
/// code (3), strides (4, 5), numGroups (6), activation (7), layout (8) — 9 inputs. depthOut
/// must be a multiple of numGroups; group g reads input channels [g * depthIn / numGroups,
/// ...) and writes output channels [g * depthOut / numGroups, ...).
PrepareResult prepareGroupedConv2D(PrepareContext& ctx);

/// TRANSPOSE_CONV_2D. Inputs: 0 input [batches, height, width, depthIn] (or NCHW); 1 filter
/// [depthOut, filterHeight, filterWidth, depthIn] (per-channel: channelDim 0); 2 bias
/// [depthOut]; then either explicit paddings (3-6: left, right, top, bottom; left and top
/// >= 0, right and bottom may be negative), strides (7, 8), activation (9), layout (10) — 11
/// inputs — or the output shape TENSOR_INT32 [4] (3, in the layout of the input), an implicit
/// padding code (4), strides (5, 6), activation (7), layout (8) — 9 inputs. Output height =
/// (height - 1) * strideHeight + filterHeight - padTop - padBottom (likewise for width).
PrepareResult prepareTransposeConv2D(PrepareContext& ctx);

// ---- Element-wise operations (semantics: types.hal; arithmetic: the NNAPI CPU reference) ----
// Unary math on float32 (ABS and NEG also on int32) (unary_ops.cpp).
PrepareResult prepareAbs(PrepareContext& ctx);
PrepareResult prepareExp(PrepareContext& ctx);
PrepareResult prepareFloor(PrepareContext& ctx);
PrepareResult prepareLog(PrepareContext& ctx);
PrepareResult prepareNeg(PrepareContext& ctx);
PrepareResult prepareRsqrt(PrepareContext& ctx);
PrepareResult prepareSin(PrepareContext& ctx);
PrepareResult prepareSqrt(PrepareContext& ctx);
// Activations with quantized variants, ELU, LOGICAL_NOT (unary_ops.cpp).
PrepareResult prepareTanh(PrepareContext& ctx);
PrepareResult prepareHardSwish(PrepareContext& ctx);
PrepareResult prepareElu(PrepareContext& ctx);
PrepareResult prepareLogicalNot(PrepareContext& ctx);
// Broadcasting binary arithmetic (binary_ops.cpp).
PrepareResult prepareSub(PrepareContext& ctx);
PrepareResult prepareDiv(PrepareContext& ctx);
PrepareResult preparePow(PrepareContext& ctx);
PrepareResult prepareMaximum(PrepareContext& ctx);
PrepareResult prepareMinimum(PrepareContext& ctx);
PrepareResult preparePrelu(PrepareContext& ctx);
PrepareResult prepareLogicalAnd(PrepareContext& ctx);
PrepareResult prepareLogicalOr(PrepareContext& ctx);
// Comparisons with a TENSOR_BOOL8 output (comparison_ops.cpp).
PrepareResult prepareEqual(PrepareContext& ctx);
PrepareResult prepareNotEqual(PrepareContext& ctx);
PrepareResult prepareGreater(PrepareContext& ctx);
PrepareResult prepareGreaterEqual(PrepareContext& ctx);
PrepareResult prepareLess(PrepareContext& ctx);
PrepareResult prepareLessEqual(PrepareContext& ctx);
// SELECT and CAST (select_cast_ops.cpp).
PrepareResult prepareSelect(PrepareContext& ctx);
PrepareResult prepareCast(PrepareContext& ctx);

// ---- Shape and data movement ----
// Space/depth/batch rearrangements (space_ops.cpp).
PrepareResult prepareBatchToSpaceNd(PrepareContext& ctx);
PrepareResult prepareSpaceToBatchNd(PrepareContext& ctx);
PrepareResult prepareDepthToSpace(PrepareContext& ctx);
PrepareResult prepareSpaceToDepth(PrepareContext& ctx);
// Padding (pad_ops.cpp).
PrepareResult preparePad(PrepareContext& ctx);
PrepareResult preparePadV2(PrepareContext& ctx);
// Shape-only and constant-producing operations (shape_ops.cpp).
PrepareResult prepareSqueeze(PrepareContext& ctx);
PrepareResult prepareExpandDims(PrepareContext& ctx);
PrepareResult prepareFill(PrepareContext& ctx);
PrepareResult prepareRank(PrepareContext& ctx);
// Slicing (slice_ops.cpp).
PrepareResult prepareStridedSlice(PrepareContext& ctx);
PrepareResult prepareSlice(PrepareContext& ctx);
PrepareResult prepareSplit(PrepareContext& ctx);
// Permutations and repetition (permute_ops.cpp).
PrepareResult prepareTranspose(PrepareContext& ctx);
PrepareResult prepareTile(PrepareContext& ctx);
PrepareResult prepareChannelShuffle(PrepareContext& ctx);
// Index-driven copies (gather_ops.cpp).
PrepareResult prepareGather(PrepareContext& ctx);
PrepareResult prepareEmbeddingLookup(PrepareContext& ctx);
PrepareResult prepareHashtableLookup(PrepareContext& ctx);
// Index selection (arg_topk_ops.cpp).
PrepareResult prepareArgMax(PrepareContext& ctx);
PrepareResult prepareArgMin(PrepareContext& ctx);
PrepareResult prepareTopKV2(PrepareContext& ctx);

// ---- Reductions, normalizations, L2 pooling, resizing ----
// Reductions over axes (reduce_ops.cpp).
PrepareResult prepareReduceAll(PrepareContext& ctx);
PrepareResult prepareReduceAny(PrepareContext& ctx);
PrepareResult prepareReduceMax(PrepareContext& ctx);
PrepareResult prepareReduceMin(PrepareContext& ctx);
PrepareResult prepareReduceProd(PrepareContext& ctx);
PrepareResult prepareReduceSum(PrepareContext& ctx);
// Normalizations along one axis (axis_normalization.cpp).
PrepareResult prepareL2Normalization(PrepareContext& ctx);
PrepareResult prepareLocalResponseNormalization(PrepareContext& ctx);
PrepareResult prepareLogSoftmax(PrepareContext& ctx);
// Per-plane normalization (instance_normalization.cpp).
PrepareResult prepareInstanceNormalization(PrepareContext& ctx);
// L2 pooling (pooling.cpp, with the other pools).
PrepareResult prepareL2Pool2D(PrepareContext& ctx);
// Image resizing (resize.cpp).
PrepareResult prepareResizeBilinear(PrepareContext& ctx);
PrepareResult prepareResizeNearestNeighbor(PrepareContext& ctx);

// ---- Recurrent cells, SVDF, LSH projection (float16 models arrive through the float16
// adapter, as float32) ----
// Basic RNN cells (rnn.cpp).
PrepareResult prepareRnn(PrepareContext& ctx);
PrepareResult prepareUnidirectionalSequenceRnn(PrepareContext& ctx);
PrepareResult prepareBidirectionalSequenceRnn(PrepareContext& ctx);
// LSTM cells (lstm.cpp, bidirectional_lstm.cpp).
PrepareResult prepareLstm(PrepareContext& ctx);
PrepareResult prepareUnidirectionalSequenceLstm(PrepareContext& ctx);
PrepareResult prepareBidirectionalSequenceLstm(PrepareContext& ctx);
// Integer LSTM cells (quantized_lstm.cpp).
PrepareResult prepareQuantized16BitLstm(PrepareContext& ctx);
PrepareResult prepareQuantizedLstm(PrepareContext& ctx);
// SVDF (svdf.cpp) and LSH_PROJECTION (lsh_projection.cpp).
PrepareResult prepareSvdf(PrepareContext& ctx);
PrepareResult prepareLshProjection(PrepareContext& ctx);

// ---- Detection: boxes, regions of interest, keypoints, sampling ----
// BOX_WITH_NMS_LIMIT and GENERATE_PROPOSALS produce as many boxes as their input VALUES
// select, so their prepare reads every input through PrepareContext::values and computes the
// result there (at execution time when inputs arrive with the request); the kernel only
// copies it out.
// Box regression and suppression (bbox_transform_op.cpp, box_with_nms_limit_op.cpp,
// generate_proposals_op.cpp, detection_postprocess_op.cpp).
PrepareResult prepareAxisAlignedBboxTransform(PrepareContext& ctx);
PrepareResult prepareBoxWithNmsLimit(PrepareContext& ctx);
PrepareResult prepareGenerateProposals(PrepareContext& ctx);
PrepareResult prepareDetectionPostprocessing(PrepareContext& ctx);
// Regions of interest and keypoints (roi_align_op.cpp, roi_pooling_op.cpp,
// heatmap_max_keypoint_op.cpp).
PrepareResult prepareRoiAlign(PrepareContext& ctx);
PrepareResult prepareRoiPooling(PrepareContext& ctx);
PrepareResult prepareHeatmapMaxKeypoint(PrepareContext& ctx);
// Sampling (random_multinomial_op.cpp).
PrepareResult prepareRandomMultinomial(PrepareContext& ctx);

// ---- The org.nnhal.tflite_compat extension (tflite_compat_ops.cpp, reshape.cpp,
// concatenation.cpp) ----
/// FLOOR_DIV: inputs a, b (both TENSOR_FLOAT32 or both TENSOR_INT32, broadcast, rank <= 6).
PrepareResult prepareFloorDiv(PrepareContext& ctx);
/// GATHER_ND: inputs params (rank >= 1), indices (TENSOR_INT32, rank >= 1, last dim <= rank
/// of params).
PrepareResult prepareGatherNd(PrepareContext& ctx);
/// RESHAPE (reshape.cpp) and CONCATENATION (concatenation.cpp): the types.hal operations'
/// inputs and rules, for TENSOR_INT32 tensors too.
PrepareResult prepareTfliteCompatReshape(PrepareContext& ctx);
PrepareResult prepareTfliteCompatConcatenation(PrepareContext& ctx);

}  // namespace nnhal::engine::ops
