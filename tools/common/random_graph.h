// tools/common/random_graph.h — valid random models with the tolerances their outputs are
// judged by, in the manner of AOSP's TestRandomGraph: for checking the optimized kernels
// against nnhal's reference (scalar) kernels, and for crash tests.
//
// A graph has one main operand type, chosen per graph: TENSOR_FLOAT32, TENSOR_FLOAT16,
// TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED. Its 1-3 inputs have that type; each
// operation reads earlier tensors (inputs, results, constants) and obeys the HAL's rules for
// the operand types (quantization: bias scale = input scale x filter scale with zero point 0,
// fixed output scales of LOGISTIC, TANH and SOFTMAX, per-channel filters with bias scale 0,
// equal scales where an operation only moves values). Besides the main type, operations
// produce TENSOR_BOOL8 (LESS, GREATER, LOGICAL_NOT, consumed by SELECT), TENSOR_INT32
// (ARGMAX) and the other side of DEQUANTIZE / QUANTIZE. Every result no operation reads is
// an output. Shapes are small (at most 8 per dimension), so a graph runs in well under a
// millisecond.
//
// Tolerances: nnhal's integer kernels compute TFLite's integer arithmetic at every
// instruction-set level, and a float operation of one IEEE rounding (ADD, SUB, MUL, DIV,
// the activations, MAX/MIN, moves) gives one result. An output computed only by such steps
// from the inputs and constants is "exact" and must match bit for bit. Other float outputs
// (sums whose order the kernels choose: CONV_2D, FULLY_CONNECTED, MEAN, pooling;
// transcendental functions) get atol = rtol = 1e-4 (float32) or 1e-2 (float16), AOSP's
// RandomGraphTest's "relaxed" level for float32 and tighter than it for float16. Operations
// whose result jumps at a threshold (comparisons, ARGMAX, QUANTIZE) read only exact
// tensors, so a rounding difference upstream can never flip them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnhal/types.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {

struct RandomGraphOptions {
  unsigned maxOperations = 8;  ///< 1..maxOperations operations per graph
  unsigned maxInputs = 3;      ///< 1..maxInputs inputs of the main type
};

/// One generated model with its inputs, built as a client builds one
/// (hal/tflite/model_builder.h: constants of more than 128 bytes in a shared-memory pool);
/// `outputs` are left empty (the reference fills them) and `outputTolerances` hold each
/// output's rule (above). `name` is "random_graph_<seed>". Errors:
/// RESOURCE_EXHAUSTED_PERSISTENT when the constants' pool cannot be created.
Result<CtsModel> generateRandomGraph(uint64_t seed, const RandomGraphOptions& options = {});

/// "QUANT8_ASYMM: CONV_2D ADD LOGISTIC" — the main type and the operations, in order.
std::string describeRandomGraph(const CtsModel& graph);

}  // namespace nnhal::tools
