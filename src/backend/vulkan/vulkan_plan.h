// backend/vulkan/vulkan_plan.h — what nnhal-vulkan makes of a Model, before any Vulkan call:
// which operations it runs and why it refuses the others, where each tensor lives in the
// execution buffer, and the list of compute dispatches that runs the model.
//
// Every tensor of one execution lives in one storage buffer of float32 elements: the
// constants first (copied in when the buffer is made), then the inputs, temporaries and
// outputs, each at an offset aligned to 16 elements (64 bytes). A dispatch runs one shader
// (shaders/*.comp) over `invocations` invocations with its parameters as push constants
// (element offsets, sizes, clamp bounds as float bits); the dispatches run in order with a
// memory barrier between each pair.
//
// What is supported (the first operations of issue 30; getSupportedOperations says the rest):
// TENSOR_FLOAT32 and TENSOR_FLOAT16 tensors (float16 is held and computed as float32) of
// rank 1 to 4 (any rank in the flat and along-axis operations), NHWC, the model's inputs
// with every dimension given
// (the other shapes, or their open dimensions, are found from the inputs'), in ADD,
// MUL, SUB, DIV, MAXIMUM, MINIMUM, PRELU (broadcasting), RELU, RELU1, RELU6, LOGISTIC, TANH,
// HARD_SWISH, ELU, ABS, EXP, LOG, NEG, RSQRT, SQRT, SIN, FLOOR, CONV_2D, DEPTHWISE_CONV_2D and
// GROUPED_CONV_2D (explicit or implicit padding, strides, dilation, a fused activation),
// TRANSPOSE_CONV_2D,
// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D, SOFTMAX, LOG_SOFTMAX, L2_NORMALIZATION and
// LOCAL_RESPONSE_NORMALIZATION (any axis), FULLY_CONNECTED, RESHAPE, SQUEEZE, EXPAND_DIMS,
// CONCATENATION, SPLIT, PAD, PAD_V2, TRANSPOSE, SLICE, STRIDED_SLICE, CHANNEL_SHUFFLE,
// DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND (no padding), MEAN and
// REDUCE_SUM/MAX/MIN/PROD, RESIZE_BILINEAR
// and RESIZE_NEAREST_NEIGHBOR (NHWC or NCHW where the operation has a layout), DEQUANTIZE
// (from 8-bit asymmetric or symmetric) and QUANTIZE (to 8-bit asymmetric), the only
// operations that take 8-bit tensors. Float32 is computed in
// float32 (also when the model allows float16). No control flow, no extension, at most 2^29
// elements in all.
//
// Thread safety: pure functions over their arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::backend::vulkan {

/// Invocations per workgroup of every shader (shaders/common.glsl).
inline constexpr uint32_t kWorkgroupSize = 64;
/// Workgroups every Vulkan device runs in one dimension (maxComputeWorkGroupCount minimum).
inline constexpr uint32_t kMaxWorkgroupsX = 65535;
/// Elements of the execution buffer at most (2 GiB of float32, below every device's
/// maxStorageBufferRange that nnhal-vulkan accepts, vulkan_context.h).
inline constexpr uint64_t kMaxBufferElements = uint64_t{1} << 29;

/// The compute shaders, one pipeline each (shaders/<name>.comp).
enum class Shader : uint8_t {
  kBinary,
  kUnary,
  kConv2d,
  kPool,
  kSoftmax,
  kFullyConnected,
  kConcat,
  kGather,
  kMean,
  kResize,
  kQuantize,
  kTransposeConv,
  kConvQuant,
  kTransposeConvQuant,
  kSelect,
  kGatherAxis,
};
inline constexpr size_t kShaderCount = 16;

/// Push-constant words at most (the 128 bytes every device allows).
inline constexpr size_t kMaxPushWords = 32;

struct Dispatch {
  Shader shader = Shader::kUnary;
  uint32_t invocations = 0;
  std::vector<uint32_t> push;  ///< the shader's Params block, word by word
  uint32_t operation = 0;      ///< index into model.main.operations
};

/// Where a tensor lives in the execution buffer, in float32 elements.
/// How an operand's elements are stored in a request. The buffer holds every element as a
/// float32: float16 widened, 8-bit quantized values as the integers they are; an execution
/// converts as it copies inputs in and outputs out.
/// kInt32: whole values held as floats (indices); kWords: 32-bit words copied as they are
/// (quantized biases given as model inputs).
enum class Storage : uint8_t { kFloat32, kFloat16, kUint8, kInt8, kInt32, kWords };

struct TensorRange {
  uint32_t offset = 0;
  uint32_t elements = 0;
  Storage storage = Storage::kFloat32;
  /// Bytes of the operand in a request.
  size_t requestBytes() const {
    const size_t element =
        storage == Storage::kFloat32 || storage == Storage::kInt32 || storage == Storage::kWords ? 4
        : storage == Storage::kFloat16                                                           ? 2
                                       : 1;
    return size_t{elements} * element;
  }
};

/// A model input holding indices (TENSOR_INT32) that an operation reads: every element must
/// lie in [0, bound), checked by the host before the run (GENERAL_FAILURE naming `what`).
struct IndexCheck {
  size_t input = 0;  ///< position in model.main.inputIndexes
  uint32_t bound = 0;
  std::string what;
};

struct Plan {
  std::vector<Dispatch> dispatches;
  std::vector<IndexCheck> indexChecks;
  /// The buffer's size in elements; its first constantImage.size() hold the constants.
  uint64_t bufferElements = 0;
  std::vector<float> constantImage;
  std::vector<TensorRange> inputs;   ///< per model input (model.main.inputIndexes)
  std::vector<TensorRange> outputs;  ///< per model output
  std::vector<std::vector<uint32_t>> outputDimensions;
};

/// The workgroup counts (x, y) of a dispatch of `invocations`: x at most kMaxWorkgroupsX.
std::pair<uint32_t, uint32_t> workgroupCounts(uint32_t invocations);

/// Per operation of model.main: "" when nnhal-vulkan runs it, else why not (e.g.
/// "CONV_2D: the NCHW layout is not supported (NHWC only)"). The model must have passed
/// hal::validateModel. Errors: INVALID_ARGUMENT for an operation whose operands do not fit
/// its definition (shapes that do not broadcast, filter channels that are not the input's,
/// an output size that is not the window's).
Result<std::vector<std::string>> explainSupport(const Model& model);

/// The plan of a validated model. Errors: INVALID_ARGUMENT naming the first operation
/// explainSupport refuses or finds invalid ("operation 3 (CONV_2D) is not supported by
/// nnhal-vulkan: ..."), or a model whose tensors exceed kMaxBufferElements.
Result<Plan> buildPlan(const Model& model);

/// buildPlan's errors without building the plan (no copy of the constants): what
/// Backend::checkModel asks at preparation.
Result<void> checkPlan(const Model& model);

}  // namespace nnhal::backend::vulkan
