// backend/vulkan/vulkan_planner.h — the Planner behind vulkan_plan.h, shared by the files
// that plan each family of operations (vulkan_plan_arithmetic.cpp: element-wise arithmetic;
// vulkan_plan_window.cpp: convolutions, pooling, FULLY_CONNECTED; vulkan_plan_indexed.cpp:
// GATHER and EMBEDDING_LOOKUP; vulkan_plan_movement.cpp: the data movements through the
// gather shader; vulkan_plan_reduce.cpp: the operations along an axis, reductions, resizing,
// quantization) and vulkan_plan.cpp (tensor layout, shapes, the NCHW wrapper, the operation
// switch). Internal to the GPU backend.
//
// Thread safety: one Planner per plan, used by one thread.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "backend/vulkan/vulkan_plan.h"
#include "hal/operand_utils.h"

namespace nnhal::backend::vulkan::planning {

inline constexpr uint32_t kAlignElements = 16;
inline constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// Why an operation is refused: the text explainSupport reports. `invalid`: the operation
/// breaks its own definition (shapes that do not fit together), which makes the model
/// invalid rather than unsupported.
struct Refusal {
  std::string reason;
  bool invalid = false;
};
template <typename T>
using Planned = std::expected<T, Refusal>;
inline std::unexpected<Refusal> refuse(std::string reason) {
  return std::unexpected(Refusal{std::move(reason)});
}

inline std::unexpected<Refusal> invalid(std::string reason) {
  return std::unexpected(Refusal{std::move(reason), true});
}

inline uint32_t floatBits(float value) { return std::bit_cast<uint32_t>(value); }

/// Builds the plan's buffer layout and dispatches; operands get their range when first used.
class Planner {
 public:
  explicit Planner(const Model& model)
      : model_(model), operands_(model.main.operands), ranges_(model.main.operands.size()) {}

  /// Adds the dispatches of operation `index`, or says why it cannot.
  Planned<void> operation(uint32_t index);

  /// Lays the constants out first, then every other tensor range (called after every
  /// operation was planned, so that the constant region is one block).
  Result<Plan> finish();

  /// The operand as planned: the model's, with the dimensions of outputs it leaves unknown
  /// filled in from the operations' inputs (shapeOutput).
  const Operand& operand(uint32_t index) const { return operands_[index]; }

 private:
  const Operation& op() const { return model_.main.operations[current_]; }
  /// Operand indexes of the current operation's inputs and outputs; input 0 and output 0
  /// are the NHWC stand-ins while an NCHW operation runs (nchwAsNhwc).
  uint32_t inputIndex(size_t k) const { return k == 0 && input0_ ? *input0_ : op().inputs[k]; }
  uint32_t outputIndex(size_t k) const { return k == 0 && output0_ ? *output0_ : op().outputs[k]; }
  /// Runs `step` with operand `index` standing in for output 0 (a temporary of the plan's,
  /// another output of the operation), then puts back the stand-in before it (the NCHW
  /// wrapper's, or none), whether `step` succeeded or not.
  template <typename Step>
  auto asOutput0(uint32_t index, Step step) {
    const std::optional<uint32_t> before = output0_;
    output0_ = index;
    auto result = step();
    output0_ = before;
    return result;
  }
  const Operand& input(size_t k) const { return operand(inputIndex(k)); }
  const Operand& output(size_t k) const { return operand(outputIndex(k)); }

  /// The element range of a float32 tensor operand (assigned on first use; the offset is
  /// relative to its region until finish()). With `quantized`, the 8-bit types (held as
  /// floats of their integer values) and constant TENSOR_INT32 (held as raw int32 words) too.
  /// With `indices`, a TENSOR_INT32 of indices (ARGMAX's output: whole values below 2^24,
  /// held as floats).
  Planned<uint32_t> tensor(uint32_t operandIndex, bool quantized = false, bool indices = false);
  Planned<uint32_t> inputTensor(size_t k) { return tensor(inputIndex(k)); }
  Planned<uint32_t> outputTensor(size_t k) { return tensor(outputIndex(k)); }

  /// A temporary tensor of the plan's own (not the model's), of `like`'s type and
  /// quantization and of `dims` (empty: found later by shapeOutput).
  uint32_t temporary(const Operand& like, std::vector<uint32_t> dims);
  /// A constant TENSOR_INT32 vector of the plan's own (not the model's): its operand index.
  uint32_t ownConstant(std::vector<int32_t> values);
  /// `values` as a constant of the plan's own that shaders read as floats (a table, or
  /// indices), with its range in the buffer: its operand index. It may move the operands.
  Planned<uint32_t> floatConstant(const std::vector<float>& values);
  /// The bytes of constant operand `index` (the model's or the plan's own), else null.
  const uint8_t* constantAt(uint32_t index) const;
  /// Input `layoutAt` of the current operation, when present, is the NCHW layout flag: the
  /// layout it gives (false when absent).
  Planned<bool> nchwLayout(size_t layoutAt) const;
  /// Runs an operation that takes an NCHW layout flag at input `layoutAt`: as is for NHWC;
  /// for NCHW between two transposes (input 0 to NHWC, output 0 back), as the CPU engine does.
  template <typename Run>
  Planned<void> withLayout(size_t layoutAt, Run run);
  /// The position of the layout input of CONV_2D, DEPTHWISE_CONV_2D and the pooling
  /// operations: after the activation, whose position depends on the padding form.
  size_t layoutInput(size_t implicitAt, size_t explicitAt, bool exactlyOneMore) const;

  /// Output 0 has `expected` dimensions: fills in what the model leaves unknown (the whole
  /// shape, or 0 entries), or says the operation is invalid where the model's differ.
  Planned<void> shapeOutput(std::vector<uint32_t> expected);

  Planned<int32_t> scalarInt(size_t k) const;
  Planned<float> scalarFloat(size_t k) const;
  Planned<bool> scalarBool(size_t k) const;
  const uint8_t* constantBytes(const Operand& o) const;

  /// [lo, hi] of the fused activation code in input k.
  Planned<std::pair<float, float>> activation(size_t k) const;
  /// [lo, hi] of the fused activation code in input k for the 8-bit quantized output 0, as
  /// the CPU device computes it (kernels/quantization.h).
  Planned<std::pair<int32_t, int32_t>> quantizedActivation(size_t k) const;

  void dispatch(Shader shader, uint32_t invocations, std::vector<uint32_t> push) {
    dispatches_.push_back({shader, invocations, std::move(push), current_});
  }

  /// For the operations that move values without changing them (RESHAPE, SQUEEZE,
  /// EXPAND_DIMS): whether input 0 is an 8-bit tensor, whose output must then have its type
  /// and quantization.
  Planned<bool> movesQuantized() const;
  Planned<void> binary(uint32_t op, bool fusedActivation);
  /// The real values of inputs 0 and 1 by stored byte (two 256-entry float tables, as own
  /// constants, in the CPU device's float arithmetic): comparisons of 8-bit and BOOL8 inputs.
  Planned<uint32_t> comparisonTables();
  /// The push words of a quantized ADD (`op` 0), MUL (1), SUB (2, an ADD whose second
  /// multiplier is negated, as on the CPU device) or PRELU (6: the multipliers of the
  /// non-negative and the negative inputs): the zero points of inputs 0 and 1 and output 0,
  /// then (multiplier, shift) pairs as shaders/binary.comp reads them.
  Planned<std::array<uint32_t, 9>> quantizedArithmetic(uint32_t op) const;
  /// The CPU device's tables requantizing inputs 0 and 1 of a quantized MAXIMUM or MINIMUM
  /// to output 0: one constant of 512 floats (input 0's, then input 1's), by stored byte.
  Planned<uint32_t> requantizeTables(size_t first = 0, size_t second = 1);
  Planned<void> select();
  /// GATHER along a constant axis by constant indices or indices that are a model input
  /// (checked by the host before each run: Plan::indexChecks).
  Planned<void> gatherAlongAxis();
  Planned<void> embeddingLookup();
  /// GATHER and EMBEDDING_LOOKUP: the values of input `valuesAt` along `axis` by the indices
  /// of input `indicesAt`, constant (checked here) or a model input (checked by the host
  /// before each run: Plan::indexChecks, whose failures name `what`).
  Planned<void> gatherBy(size_t valuesAt, size_t indicesAt, int32_t axis, const std::string& what);
  /// TILE by constant multiples: a gather view of [multiple, size] per dimension.
  Planned<void> tile();
  Planned<void> unary(uint32_t op);
  /// A dispatch of the unary shader: op `code` from tensor `in` to `out` (`table` for op 16).
  void unaryDispatch(uint32_t code, uint32_t out, uint32_t in, float alpha = 0.0f,
                     std::optional<uint32_t> table = std::nullopt);
  /// RELU, RELU1, RELU6, LOGISTIC, TANH and HARD_SWISH (unary ops 0-5) on 8-bit tensors: a
  /// lookup in the CPU device's table.
  Planned<void> quantizedLookup(uint32_t code);
  /// RESHAPE's output shape: its constant shape input with a -1 resolved.
  Planned<std::vector<uint32_t>> reshaped() const;
  enum class ConvKind { kConv, kDepthwise, kGrouped };
  Planned<void> convolution(ConvKind kind);
  /// What the quantized convolution shader needs beyond the geometry (shaders/
  /// conv2d_quant.comp): the per-channel requantization, zero points and output range.
  struct QuantizedDot {
    uint32_t requant = 0;  ///< operand of the (multiplier, shift) pairs
    int32_t inZero = 0, filterZero = 0, outZero = 0, lo = 0, hi = 0;
  };
  /// Checks the types of a quantized convolution or FULLY_CONNECTED (input 0, filter input 1
  /// quantized per tensor or per channel along `channelDim`, constant bias input 2, output 0)
  /// and derives its QuantizedDot for `channels` output channels, activation code at input
  /// `activationAt`.
  Planned<QuantizedDot> quantizedDot(uint32_t channelDim, uint32_t channels, size_t activationAt);
  /// kind: 0 AVERAGE_POOL_2D, 1 MAX_POOL_2D, 2 L2_POOL_2D (the pool shader's op).
  Planned<void> pooling(uint32_t kind);
  /// The operations along one axis (the softmax shader's op): 0 SOFTMAX, 1 L2_NORMALIZATION,
  /// 2 LOCAL_RESPONSE_NORMALIZATION, 3 LOG_SOFTMAX.
  Planned<void> alongAxis(uint32_t kind);
  /// SQUEEZE and EXPAND_DIMS: a copy into the output with `dims`.
  Planned<void> copyAs(std::vector<uint32_t> dims);
  /// CAST to the float types (from the float and the 8-bit types), or between equal 8-bit
  /// types.
  Planned<void> cast();
  Planned<void> squeeze();
  Planned<void> expandDims();
  Planned<void> fullyConnected();
  Planned<void> concatenation();
  Planned<void> pad(bool withValue);
  Planned<void> transpose();
  /// kind: 0 MEAN, 1 REDUCE_SUM, 2 REDUCE_MAX, 3 REDUCE_MIN, 4 REDUCE_PROD (the mean shader's
  /// op).
  Planned<void> mean(uint32_t kind = 0);
  /// ARGMAX (`largest`) and ARGMIN: the index along the axis (the softmax shader's ops 5, 6).
  Planned<void> argExtreme(bool largest);
  /// INSTANCE_NORMALIZATION (NHWC; NCHW through withLayout): the softmax shader's op 7 over
  /// rows of height * width elements, one row per image and channel.
  Planned<void> instanceNormalization();
  /// TOPK_V2 on float or 8-bit values: the softmax shader's op 8, one row per invocation.
  Planned<void> topK();
  Planned<void> resize(bool bilinear);
  Planned<void> quantization(bool quantize);
  Planned<void> transposeConv();
  /// A constant TENSOR_INT32 input's values.
  Planned<std::vector<int32_t>> constantInts(size_t k) const;
  /// What the gather shader reads for each output element (shaders/gather.comp).
  /// Rank 6 (leading 1s): the block moves need two more dimensions than a tensor has.
  struct GatherView {
    std::array<uint32_t, 6> viewDims{1, 1, 1, 1, 1, 1};  ///< output coordinates
    std::array<int32_t, 6> before{};
    std::array<uint32_t, 6> inDims{1, 1, 1, 1, 1, 1};  ///< bounds of coordinates - before
    std::array<int32_t, 6> inStrides{};
    int32_t inBase = 0;
    float padValue = 0.0f;
  };
  /// A view over output(0)'s shape with `before` 0, bounds that always hold and the strides
  /// of its last four dimensions.
  GatherView plainView(const std::array<int32_t, 4>& inStrides) const;
  /// A view of `dims` (at most 6) over output(0), reading with `strides` (same length).
  GatherView blockView(const std::vector<uint32_t>& dims,
                       const std::vector<int32_t>& strides) const;
  Planned<void> depthToSpace(bool toSpace);
  Planned<void> batchToSpace(bool toSpace);
  void gather(uint32_t out, uint32_t in, const GatherView& view);
  Planned<void> slice(bool strided);
  /// SPLIT: one gather per output, each a slice of input 0 along the axis.
  Planned<void> split();
  Planned<void> channelShuffle();
  /// DEQUANTIZE of TENSOR_QUANT8_SYMM_PER_CHANNEL: each value times its channel's scale.
  Planned<void> perChannelDequantization();

  const Model& model_;
  std::vector<Operand> operands_;
  uint32_t current_ = 0;
  /// Whether the current operation reads its tensors flat or along one axis (the elementwise
  /// unary operations, SELECT, the operations along an axis): tensors of any rank. The others
  /// take rank 1 to 4 (their shaders index rank-4 views).
  bool anyRank_ = false;
  std::optional<uint32_t> input0_;
  std::optional<uint32_t> output0_;
  struct Assigned {
    bool known = false;
    bool constant = false;
    uint64_t offset = 0;  ///< within its region (constants or the rest)
  };
  std::vector<Assigned> ranges_;
  uint64_t constantElements_ = 0;
  uint64_t otherElements_ = 0;
  std::vector<Dispatch> dispatches_;
  /// TENSOR_INT32 model inputs held as raw words (quantized biases).
  std::set<uint32_t> rawWords_;
  /// Model inputs read as indices, with their bounds (Plan::indexChecks).
  std::vector<IndexCheck> indexChecks_;
  /// The bytes of the plan's own constants, by operand index.
  std::unordered_map<uint32_t, std::vector<uint8_t>> ownConstants_;
};

/// The quantized types of one byte per element: TENSOR_QUANT8_ASYMM, _ASYMM_SIGNED, _SYMM and
/// _SYMM_PER_CHANNEL.
inline bool isQuant8(OperandType type) {
  return hal::isQuantizedType(type) && hal::sizeOfElement(type) == 1;
}

inline uint64_t alignUp(uint64_t value) {
  return (value + kAlignElements - 1) / kAlignElements * kAlignElements;
}

inline uint32_t elementsOf(const Operand& o) {
  uint32_t n = 1;
  for (uint32_t d : o.dimensions) n *= d;
  return n;
}

/// Dimensions padded with leading 1s to rank 4.
inline std::array<uint32_t, 4> rank4(const std::vector<uint32_t>& dims) {
  std::array<uint32_t, 4> out{1, 1, 1, 1};
  std::copy(dims.begin(), dims.end(), out.begin() + (4 - dims.size()));
  return out;
}

// Offsets are stored in the push words as operand indexes tagged with this bit until
// finish() knows the constant region's size; every offset word goes through here.
inline constexpr uint32_t kOperandTag = 0x80000000u;
inline uint32_t offsetWord(uint32_t operandIndex) { return kOperandTag | operandIndex; }

// NNHAL_ASSIGN_OR_RETURN for Planned values (the planning files only).
#define NNHAL_PLAN_TRY(lhs, expr)                                  \
  auto lhs##_result = (expr);                                      \
  if (!lhs##_result) return std::unexpected(lhs##_result.error()); \
  const auto lhs = *lhs##_result
// The same for Planned<void>.
#define NNHAL_PLAN_CHECK(expr)                 \
  do {                                         \
    if (auto checked = (expr); !checked) {     \
      return std::unexpected(checked.error()); \
    }                                          \
  } while (false)

}  // namespace nnhal::backend::vulkan::planning
