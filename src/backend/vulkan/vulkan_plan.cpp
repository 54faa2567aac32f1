#include "backend/vulkan/vulkan_plan.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "hal/model_constants.h"

namespace nnhal::backend::vulkan {
namespace {

constexpr uint32_t kAlignElements = 16;
constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// Why an operation is refused: the text explainSupport reports. `invalid`: the operation
/// breaks its own definition (shapes that do not fit together), which makes the model
/// invalid rather than unsupported.
struct Refusal {
  std::string reason;
  bool invalid = false;
};
template <typename T>
using Planned = std::expected<T, Refusal>;
std::unexpected<Refusal> refuse(std::string reason) {
  return std::unexpected(Refusal{std::move(reason)});
}

std::unexpected<Refusal> invalid(std::string reason) {
  return std::unexpected(Refusal{std::move(reason), true});
}

uint32_t floatBits(float value) { return std::bit_cast<uint32_t>(value); }

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
  const Operand& input(size_t k) const { return operand(inputIndex(k)); }
  const Operand& output(size_t k) const { return operand(outputIndex(k)); }

  /// The element range of a float32 tensor operand (assigned on first use; the offset is
  /// relative to its region until finish()).
  Planned<uint32_t> tensor(uint32_t operandIndex, bool quantized = false);
  Planned<uint32_t> inputTensor(size_t k) { return tensor(inputIndex(k)); }
  Planned<uint32_t> outputTensor(size_t k) { return tensor(outputIndex(k)); }

  /// A temporary tensor of the plan's own (not the model's), of `type` and `dims` (empty:
  /// found later by shapeOutput).
  uint32_t temporary(OperandType type, std::vector<uint32_t> dims);
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

  void dispatch(Shader shader, uint32_t invocations, std::vector<uint32_t> push) {
    dispatches_.push_back({shader, invocations, std::move(push), current_});
  }

  Planned<void> binary(uint32_t op, bool fusedActivation);
  Planned<void> unary(uint32_t op);
  /// RESHAPE's output shape: its constant shape input with a -1 resolved.
  Planned<std::vector<uint32_t>> reshaped() const;
  enum class ConvKind { kConv, kDepthwise, kGrouped };
  Planned<void> convolution(ConvKind kind);
  /// kind: 0 AVERAGE_POOL_2D, 1 MAX_POOL_2D, 2 L2_POOL_2D (the pool shader's op).
  Planned<void> pooling(uint32_t kind);
  /// The operations along one axis (the softmax shader's op): 0 SOFTMAX, 1 L2_NORMALIZATION,
  /// 2 LOCAL_RESPONSE_NORMALIZATION, 3 LOG_SOFTMAX.
  Planned<void> alongAxis(uint32_t kind);
  /// SQUEEZE and EXPAND_DIMS: a copy into the output with `dims`.
  Planned<void> copyAs(std::vector<uint32_t> dims);
  Planned<void> squeeze();
  Planned<void> expandDims();
  Planned<void> fullyConnected();
  Planned<void> concatenation();
  Planned<void> pad(bool withValue);
  Planned<void> transpose();
  /// kind: 0 MEAN, 1 REDUCE_SUM, 2 REDUCE_MAX, 3 REDUCE_MIN, 4 REDUCE_PROD (the mean shader's
  /// op).
  Planned<void> mean(uint32_t kind = 0);
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
  Planned<void> channelShuffle();

  const Model& model_;
  std::vector<Operand> operands_;
  uint32_t current_ = 0;
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
};

uint64_t alignUp(uint64_t value) {
  return (value + kAlignElements - 1) / kAlignElements * kAlignElements;
}

uint32_t elementsOf(const Operand& o) {
  uint32_t n = 1;
  for (uint32_t d : o.dimensions) n *= d;
  return n;
}

/// Dimensions padded with leading 1s to rank 4.
std::array<uint32_t, 4> rank4(const std::vector<uint32_t>& dims) {
  std::array<uint32_t, 4> out{1, 1, 1, 1};
  std::copy(dims.begin(), dims.end(), out.begin() + (4 - dims.size()));
  return out;
}

const uint8_t* Planner::constantBytes(const Operand& o) const {
  return hal::constantBytes(model_, o);
}

Planned<uint32_t> Planner::tensor(uint32_t operandIndex, bool quantized) {
  const Operand& o = operand(operandIndex);
  const bool quant8 = o.type == OperandType::TENSOR_QUANT8_ASYMM ||
                      o.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
                      o.type == OperandType::TENSOR_QUANT8_SYMM;
  if (quant8 && quantized) {
    // DEQUANTIZE's input and QUANTIZE's output only.
  } else if (o.type != OperandType::TENSOR_FLOAT32 && o.type != OperandType::TENSOR_FLOAT16) {
    return refuse("operand type " + std::string(toString(o.type)) +
                  " is not supported (TENSOR_FLOAT32 and TENSOR_FLOAT16 only)");
  }
  if (o.dimensions.empty() || o.dimensions.size() > 4) {
    return refuse("tensors of rank 1 to 4 only");
  }
  if (std::find(o.dimensions.begin(), o.dimensions.end(), 0u) != o.dimensions.end()) {
    return refuse("tensors whose dimensions the model leaves unknown are not supported");
  }
  if (o.lifetime == OperandLifeTime::NO_VALUE) return refuse("omitted tensors are not supported");
  Assigned& a = ranges_[operandIndex];
  if (!a.known) {
    a.known = true;
    a.constant = constantBytes(o) != nullptr;
    uint64_t& region = a.constant ? constantElements_ : otherElements_;
    a.offset = region;
    region = alignUp(region + elementsOf(o));
    if (constantElements_ + otherElements_ > kMaxBufferElements) {
      return refuse("the model's tensors exceed the execution buffer's 2^29 elements");
    }
  }
  return operandIndex;  // resolved to an offset in finish(); see offsetWord below
}

Planned<void> Planner::shapeOutput(std::vector<uint32_t> expected) {
  std::vector<uint32_t>& dims = operands_[outputIndex(0)].dimensions;
  bool fits = dims.empty() || dims.size() == expected.size();
  for (size_t d = 0; fits && d < dims.size(); ++d) fits = dims[d] == 0 || dims[d] == expected[d];
  if (!fits) {
    std::string text;
    for (uint32_t d : expected) text += (text.empty() ? "" : ", ") + std::to_string(d);
    return invalid("the output's shape is not the operation's [" + text + "]");
  }
  dims = std::move(expected);
  return {};
}

Planned<int32_t> Planner::scalarInt(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (o.type != OperandType::INT32 || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant INT32");
  }
  int32_t value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

Planned<float> Planner::scalarFloat(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (bytes != nullptr && o.type == OperandType::FLOAT16) {
    _Float16 half{};
    std::memcpy(&half, bytes, sizeof half);
    return static_cast<float>(half);
  }
  if (o.type != OperandType::FLOAT32 || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant FLOAT32 or FLOAT16");
  }
  float value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

Planned<bool> Planner::scalarBool(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (o.type != OperandType::BOOL || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant BOOL");
  }
  return bytes[0] != 0;
}

Planned<std::pair<float, float>> Planner::activation(size_t k) const {
  auto code = scalarInt(k);
  if (!code) return std::unexpected(code.error());
  switch (*code) {
    case 0:
      return std::pair{-kInfinity, kInfinity};
    case 1:
      return std::pair{0.0f, kInfinity};
    case 2:
      return std::pair{-1.0f, 1.0f};
    case 3:
      return std::pair{0.0f, 6.0f};
    default:
      return refuse("fused activation " + std::to_string(*code) + " is not supported");
  }
}

// Offsets are stored in the push words as operand indexes tagged with this bit until
// finish() knows the constant region's size; every offset word goes through here.
constexpr uint32_t kOperandTag = 0x80000000u;
uint32_t offsetWord(uint32_t operandIndex) { return kOperandTag | operandIndex; }

// The shaders' Params blocks list offsets at these word positions (kept in step with
// shaders/*.comp).
std::vector<size_t> offsetWords(Shader shader) {
  switch (shader) {
    case Shader::kBinary:
      return {2, 3, 4};
    case Shader::kUnary:
      return {2, 3};
    case Shader::kConv2d:
      return {1, 2, 3, 4};
    case Shader::kPool:
      return {2, 3};
    case Shader::kSoftmax:
      return {2, 3};
    case Shader::kFullyConnected:
      return {1, 2, 3, 4};
    case Shader::kConcat:
      return {4, 5};
    case Shader::kGather:
      return {1, 2};
    case Shader::kMean:
      return {1, 2};
    case Shader::kResize:
      return {2, 3};
    case Shader::kQuantize:
      return {2, 3};
    case Shader::kTransposeConv:
      return {1, 2, 3, 4};
  }
  return {};
}

// NNHAL_ASSIGN_OR_RETURN for Planned values (undefined at the end of this file).
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

Planned<void> Planner::binary(uint32_t code, bool fusedActivation) {
  NNHAL_PLAN_TRY(a, inputTensor(0));
  NNHAL_PLAN_TRY(b, inputTensor(1));
  std::pair<float, float> range{-kInfinity, kInfinity};
  if (fusedActivation) {
    NNHAL_PLAN_TRY(r, activation(2));
    range = r;
  }
  const size_t rank = std::max(input(0).dimensions.size(), input(1).dimensions.size());
  const auto da = rank4(input(0).dimensions);
  const auto db = rank4(input(1).dimensions);
  std::vector<uint32_t> broadcast;
  for (size_t d = 4 - rank; d < 4; ++d) {
    const uint32_t size = std::max(da[d], db[d]);
    if ((da[d] != size && da[d] != 1) || (db[d] != size && db[d] != 1)) {
      return invalid("the input shapes do not broadcast");
    }
    broadcast.push_back(size);
  }
  NNHAL_PLAN_CHECK(shapeOutput(std::move(broadcast)));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const auto dims = rank4(output(0).dimensions);
  const auto strides = [&](const Operand& o) {
    const auto d = rank4(o.dimensions);
    std::array<uint32_t, 4> s{};
    uint32_t step = 1;
    for (int i = 3; i >= 0; --i) {
      s[i] = d[i] == 1 && dims[i] != 1 ? 0 : step;
      step *= d[i];
    }
    return s;
  };
  const auto sa = strides(input(0));
  const auto sb = strides(input(1));
  const bool clamped = range.first != -kInfinity || range.second != kInfinity;
  dispatch(Shader::kBinary, elementsOf(output(0)),
           {elementsOf(output(0)),
            code,
            offsetWord(out),
            offsetWord(a),
            offsetWord(b),
            clamped ? 1u : 0u,
            floatBits(range.first),
            floatBits(range.second),
            dims[0],
            dims[1],
            dims[2],
            dims[3],
            sa[0],
            sa[1],
            sa[2],
            sa[3],
            sb[0],
            sb[1],
            sb[2],
            sb[3]});
  return {};
}

Planned<std::vector<uint32_t>> Planner::reshaped() const {
  const Operand& shape = input(1);
  const uint8_t* bytes = constantBytes(shape);
  if (shape.type != OperandType::TENSOR_INT32 || bytes == nullptr || shape.dimensions.size() != 1) {
    return refuse("the shape must be a constant TENSOR_INT32 vector");
  }
  std::vector<int32_t> values(shape.dimensions[0]);
  std::memcpy(values.data(), bytes, values.size() * sizeof(int32_t));
  std::vector<uint32_t> dims;
  uint64_t known = 1;
  std::optional<size_t> free;
  for (size_t k = 0; k < values.size(); ++k) {
    if (values[k] == -1 && !free) {
      free = k;
      dims.push_back(1);
    } else if (values[k] > 0) {
      dims.push_back(static_cast<uint32_t>(values[k]));
      known *= static_cast<uint32_t>(values[k]);
    } else {
      return invalid("the shape holds " + std::to_string(values[k]));
    }
  }
  const uint64_t elements = elementsOf(input(0));
  if (free) {
    if (known == 0 || elements % known != 0) return invalid("the shape does not fit the input");
    dims[*free] = static_cast<uint32_t>(elements / known);
  } else if (known != elements) {
    return invalid("the shape's size is not the input's");
  }
  return dims;
}

Planned<void> Planner::unary(uint32_t code) {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  if (code == 6) {
    NNHAL_PLAN_TRY(shape, reshaped());
    NNHAL_PLAN_CHECK(shapeOutput(shape));
  } else {
    NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  }
  NNHAL_PLAN_TRY(out, outputTensor(0));
  float alpha = 0.0f;
  if (code == 15) {  // ELU
    NNHAL_PLAN_TRY(a, scalarFloat(1));
    alpha = a;
  }
  dispatch(Shader::kUnary, elementsOf(output(0)),
           {elementsOf(output(0)), code, offsetWord(out), offsetWord(in), floatBits(alpha)});
  return {};
}

/// The leading padding of one dimension for NNAPI's implicit padding scheme (1 SAME, 2 VALID).
Planned<int32_t> implicitPadding(int32_t scheme, uint32_t in, uint32_t out, uint32_t stride,
                                 uint32_t filter, uint32_t dilation) {
  if (scheme == 2) return 0;
  if (scheme != 1) return refuse("padding scheme " + std::to_string(scheme) + " is unknown");
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  const int64_t total = std::max<int64_t>((int64_t{out} - 1) * stride + effective - int64_t{in}, 0);
  return static_cast<int32_t>(total / 2);
}

/// The output size along one dimension: explicit paddings, or the implicit scheme's rule.
int64_t windowOutput(bool implicit, int32_t scheme, int64_t in, int64_t padHead, int64_t padTail,
                     uint32_t stride, uint32_t filter, uint32_t dilation) {
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  if (implicit) {
    return scheme == 1 ? (in + stride - 1) / stride
                       : std::max<int64_t>((in - effective + stride) / stride, 0);
  }
  const int64_t span = in + padHead + padTail - effective;
  return span < 0 ? 0 : span / stride + 1;
}

struct Window {
  int32_t padTop = 0, padLeft = 0;
  uint32_t strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  float lo = -kInfinity, hi = kInfinity;
  uint32_t multiplier = 0;
};

Planned<void> Planner::convolution(ConvKind kind) {
  const bool depthwise = kind == ConvKind::kDepthwise;
  const size_t count = op().inputs.size();
  // The implicit-padding form has one input fewer before the activation (types.hal);
  // DEPTHWISE_CONV_2D's multiplier and GROUPED_CONV_2D's group count precede it.
  const size_t layoutAt = kind == ConvKind::kConv ? 7 : 8;
  const bool implicit =
      count == layoutAt || (count > layoutAt && input(layoutAt).type == OperandType::BOOL);
  const size_t first = 3;                   // padding scheme, or the four paddings
  const size_t strides = implicit ? 4 : 7;  // strideW, strideH
  size_t next = strides + 2;
  Window w;
  uint32_t groups = 1;
  if (depthwise) {
    NNHAL_PLAN_TRY(m, scalarInt(next));
    if (m < 1) return invalid("the depth multiplier must be at least 1");
    w.multiplier = static_cast<uint32_t>(m);
    ++next;
  } else if (kind == ConvKind::kGrouped) {
    NNHAL_PLAN_TRY(g, scalarInt(next));
    if (g < 1) return invalid("the group count must be at least 1");
    groups = static_cast<uint32_t>(g);
    ++next;
  }
  NNHAL_PLAN_TRY(range, activation(next));
  ++next;
  w.lo = range.first;
  w.hi = range.second;
  if (count > next) {
    NNHAL_PLAN_TRY(nchw, scalarBool(next));
    if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
    ++next;
  }
  if (count > next + 1) {
    NNHAL_PLAN_TRY(dw, scalarInt(next));
    NNHAL_PLAN_TRY(dh, scalarInt(next + 1));
    if (dw < 1 || dh < 1) return refuse("dilation factors must be at least 1");
    w.dilW = static_cast<uint32_t>(dw);
    w.dilH = static_cast<uint32_t>(dh);
  }
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  if (sw < 1 || sh < 1) return refuse("strides must be at least 1");
  w.strideW = static_cast<uint32_t>(sw);
  w.strideH = static_cast<uint32_t>(sh);
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(filter, inputTensor(1));
  NNHAL_PLAN_TRY(bias, inputTensor(2));
  const Operand& i = input(0);
  const Operand& f = input(1);
  if (i.dimensions.size() != 4 || f.dimensions.size() != 4) {
    return invalid("the input and filter must have rank 4");
  }
  const uint32_t fH = f.dimensions[1];
  const uint32_t fW = f.dimensions[2];
  const uint32_t outC = depthwise ? f.dimensions[3] : f.dimensions[0];
  const bool channelsFit = depthwise
                               ? f.dimensions[0] == 1 && i.dimensions[3] * w.multiplier == outC
                               : f.dimensions[3] * groups == i.dimensions[3] && outC % groups == 0;
  if (!channelsFit || input(2).dimensions != std::vector<uint32_t>{outC}) {
    return invalid("the input, filter and bias channels do not fit together");
  }
  int32_t scheme = 0;
  int32_t padBottom = 0;
  int32_t padRight = 0;
  if (implicit) {
    NNHAL_PLAN_TRY(code, scalarInt(first));
    if (code != 1 && code != 2) return invalid("padding scheme " + std::to_string(code));
    scheme = code;
  } else {
    NNHAL_PLAN_TRY(left, scalarInt(first));
    NNHAL_PLAN_TRY(right, scalarInt(first + 1));
    NNHAL_PLAN_TRY(top, scalarInt(first + 2));
    NNHAL_PLAN_TRY(bottom, scalarInt(first + 3));
    if (left < 0 || right < 0 || top < 0 || bottom < 0) return invalid("negative padding");
    w.padLeft = left;
    w.padTop = top;
    padRight = right;
    padBottom = bottom;
  }
  const int64_t outH =
      windowOutput(implicit, scheme, i.dimensions[1], w.padTop, padBottom, w.strideH, fH, w.dilH);
  const int64_t outW =
      windowOutput(implicit, scheme, i.dimensions[2], w.padLeft, padRight, w.strideW, fW, w.dilW);
  if (outH < 1 || outW < 1) return invalid("the window is larger than the padded input");
  NNHAL_PLAN_CHECK(shapeOutput(
      {i.dimensions[0], static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), outC}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const Operand& o = output(0);
  if (implicit) {
    NNHAL_PLAN_TRY(
        top, implicitPadding(scheme, i.dimensions[1], o.dimensions[1], w.strideH, fH, w.dilH));
    NNHAL_PLAN_TRY(
        left, implicitPadding(scheme, i.dimensions[2], o.dimensions[2], w.strideW, fW, w.dilW));
    w.padTop = top;
    w.padLeft = left;
  }
  dispatch(Shader::kConv2d, elementsOf(o),
           {elementsOf(o),
            offsetWord(out),
            offsetWord(in),
            offsetWord(filter),
            offsetWord(bias),
            i.dimensions[1],
            i.dimensions[2],
            i.dimensions[3],
            o.dimensions[1],
            o.dimensions[2],
            o.dimensions[3],
            fH,
            fW,
            w.strideH,
            w.strideW,
            static_cast<uint32_t>(w.padTop),
            static_cast<uint32_t>(w.padLeft),
            w.dilH,
            w.dilW,
            w.multiplier,
            floatBits(w.lo),
            floatBits(w.hi),
            groups});
  return {};
}

Planned<void> Planner::pooling(uint32_t kind) {
  const size_t count = op().inputs.size();
  const bool implicit = count == 7 || (count == 8 && input(7).type == OperandType::BOOL);
  const size_t strides = implicit ? 2 : 5;  // strideW, strideH, filterW, filterH, activation
  const size_t layoutAt = strides + 5;
  if (count > layoutAt) {
    NNHAL_PLAN_TRY(nchw, scalarBool(layoutAt));
    if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  }
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  NNHAL_PLAN_TRY(fw, scalarInt(strides + 2));
  NNHAL_PLAN_TRY(fh, scalarInt(strides + 3));
  NNHAL_PLAN_TRY(range, activation(strides + 4));
  if (sw < 1 || sh < 1 || fw < 1 || fh < 1) return refuse("strides and filter sizes must be >= 1");
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const Operand& i = input(0);
  if (i.dimensions.size() != 4) return invalid("the input must have rank 4");
  int32_t padTop = 0;
  int32_t padLeft = 0;
  int32_t padBottom = 0;
  int32_t padRight = 0;
  int32_t scheme = 0;
  if (implicit) {
    NNHAL_PLAN_TRY(code, scalarInt(1));
    if (code != 1 && code != 2) return invalid("padding scheme " + std::to_string(code));
    scheme = code;
  } else {
    NNHAL_PLAN_TRY(left, scalarInt(1));
    NNHAL_PLAN_TRY(right, scalarInt(2));
    NNHAL_PLAN_TRY(top, scalarInt(3));
    NNHAL_PLAN_TRY(bottom, scalarInt(4));
    if (left < 0 || right < 0 || top < 0 || bottom < 0) return invalid("negative padding");
    padLeft = left;
    padTop = top;
    padRight = right;
    padBottom = bottom;
  }
  const auto strideH = static_cast<uint32_t>(sh);
  const auto strideW = static_cast<uint32_t>(sw);
  const auto filterH = static_cast<uint32_t>(fh);
  const auto filterW = static_cast<uint32_t>(fw);
  const int64_t outH =
      windowOutput(implicit, scheme, i.dimensions[1], padTop, padBottom, strideH, filterH, 1);
  const int64_t outW =
      windowOutput(implicit, scheme, i.dimensions[2], padLeft, padRight, strideW, filterW, 1);
  if (outH < 1 || outW < 1) return invalid("the window is larger than the padded input");
  NNHAL_PLAN_CHECK(shapeOutput({i.dimensions[0], static_cast<uint32_t>(outH),
                                static_cast<uint32_t>(outW), i.dimensions[3]}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const Operand& o = output(0);
  if (implicit) {
    NNHAL_PLAN_TRY(top,
                   implicitPadding(scheme, i.dimensions[1], o.dimensions[1], strideH, filterH, 1));
    NNHAL_PLAN_TRY(left,
                   implicitPadding(scheme, i.dimensions[2], o.dimensions[2], strideW, filterW, 1));
    padTop = top;
    padLeft = left;
  }
  dispatch(Shader::kPool, elementsOf(o),
           {elementsOf(o), kind, offsetWord(out), offsetWord(in), i.dimensions[1], i.dimensions[2],
            i.dimensions[3], o.dimensions[1], o.dimensions[2], static_cast<uint32_t>(fh),
            static_cast<uint32_t>(fw), static_cast<uint32_t>(sh), static_cast<uint32_t>(sw),
            static_cast<uint32_t>(padTop), static_cast<uint32_t>(padLeft), floatBits(range.first),
            floatBits(range.second)});
  return {};
}

Planned<void> Planner::alongAxis(uint32_t kind) {
  // Inputs: SOFTMAX (x, beta, [axis]); L2_NORMALIZATION (x, [axis]); LOCAL_RESPONSE_
  // NORMALIZATION (x, radius, bias, alpha, beta, [axis]); LOG_SOFTMAX (x, beta, axis).
  const size_t axisAt = kind == 1 ? 1 : kind == 2 ? 5 : 2;
  float beta = 1.0f, bias = 0.0f, alpha = 0.0f, lrnBeta = 0.0f;
  int32_t radius = 0;
  if (kind == 0 || kind == 3) {
    NNHAL_PLAN_TRY(b, scalarFloat(1));
    beta = b;
  } else if (kind == 2) {
    NNHAL_PLAN_TRY(r, scalarInt(1));
    NNHAL_PLAN_TRY(b, scalarFloat(2));
    NNHAL_PLAN_TRY(a, scalarFloat(3));
    NNHAL_PLAN_TRY(e, scalarFloat(4));
    if (r < 0) return invalid("a negative radius");
    radius = r;
    bias = b;
    alpha = a;
    lrnBeta = e;
  }
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const auto& dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  int32_t axis = rank - 1;
  if (op().inputs.size() > axisAt) {
    NNHAL_PLAN_TRY(given, scalarInt(axisAt));
    if (given < -rank || given >= rank) return invalid("the axis is outside the input's rank");
    axis = given < 0 ? given + rank : given;
  }
  NNHAL_PLAN_CHECK(shapeOutput(dims));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  uint32_t inner = 1;
  for (int32_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  const uint32_t axisSize = dims[axis];
  if (axisSize == 0) return invalid("an empty axis");
  const uint32_t rows = elementsOf(input(0)) / axisSize;
  dispatch(Shader::kSoftmax, rows,
           {rows, axisSize, offsetWord(out), offsetWord(in), floatBits(beta), inner, kind,
            static_cast<uint32_t>(radius), floatBits(bias), floatBits(alpha), floatBits(lrnBeta)});
  return {};
}

Planned<void> Planner::copyAs(std::vector<uint32_t> dims) {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_CHECK(shapeOutput(std::move(dims)));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  if (elementsOf(output(0)) != elementsOf(input(0))) return invalid("the sizes differ");
  dispatch(Shader::kUnary, elementsOf(output(0)),
           {elementsOf(output(0)), 6u, offsetWord(out), offsetWord(in), floatBits(0.0f)});
  return {};
}

Planned<void> Planner::squeeze() {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  (void)in;
  const auto& dims = input(0).dimensions;
  std::vector<bool> drop(dims.size(), false);
  if (op().inputs.size() > 1 && input(1).lifetime != OperandLifeTime::NO_VALUE) {
    NNHAL_PLAN_TRY(axes, constantInts(1));
    const auto rank = static_cast<int32_t>(dims.size());
    for (int32_t a : axes) {
      if (a < -rank || a >= rank) return invalid("an axis is outside the input's rank");
      const auto d = static_cast<size_t>(a < 0 ? a + rank : a);
      if (dims[d] != 1) return invalid("a squeezed dimension is not 1");
      drop[d] = true;
    }
  } else {
    for (size_t d = 0; d < dims.size(); ++d) drop[d] = dims[d] == 1;
  }
  std::vector<uint32_t> kept;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!drop[d]) kept.push_back(dims[d]);
  }
  if (kept.empty()) return refuse("a squeeze to a scalar is not supported");
  return copyAs(std::move(kept));
}

Planned<void> Planner::expandDims() {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  (void)in;
  NNHAL_PLAN_TRY(axis, scalarInt(1));
  std::vector<uint32_t> dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  if (axis < -(rank + 1) || axis > rank) return invalid("the axis is outside [-(rank+1), rank]");
  dims.insert(dims.begin() + (axis < 0 ? axis + rank + 1 : axis), 1);
  return copyAs(std::move(dims));
}

Planned<void> Planner::fullyConnected() {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(weights, inputTensor(1));
  NNHAL_PLAN_TRY(bias, inputTensor(2));
  NNHAL_PLAN_TRY(range, activation(3));
  const Operand& w = input(1);
  if (w.dimensions.size() != 2) return invalid("the weights must have rank 2");
  const uint32_t units = w.dimensions[0];
  const uint32_t inSize = w.dimensions[1];
  if (inSize == 0 || elementsOf(input(0)) % inSize != 0 ||
      input(2).dimensions != std::vector<uint32_t>{units}) {
    return invalid("the input, weights and bias sizes do not fit together");
  }
  NNHAL_PLAN_CHECK(shapeOutput({elementsOf(input(0)) / inSize, units}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  dispatch(Shader::kFullyConnected, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(in), offsetWord(weights),
            offsetWord(bias), inSize, units, floatBits(range.first), floatBits(range.second)});
  return {};
}

Planned<void> Planner::concatenation() {
  const size_t tensors = op().inputs.size() - 1;
  NNHAL_PLAN_TRY(rawAxis, scalarInt(tensors));
  std::vector<std::pair<uint32_t, uint32_t>> parts;  // (operand, its size along the axis)
  std::vector<uint32_t> joined;
  int32_t axis = 0;
  for (size_t k = 0; k < tensors; ++k) {
    NNHAL_PLAN_TRY(in, inputTensor(k));
    const auto& d = input(k).dimensions;
    const auto rank = static_cast<int32_t>(d.size());
    if (k == 0) {
      axis = rawAxis < 0 ? rawAxis + rank : rawAxis;
      if (axis < 0 || axis >= rank) return invalid("the axis is outside the inputs' rank");
      joined = d;
      joined[axis] = 0;
    }
    if (d.size() != joined.size()) return invalid("the inputs' ranks differ");
    for (int32_t j = 0; j < rank; ++j) {
      if (j != axis && d[j] != joined[j]) return invalid("the inputs' shapes differ off the axis");
    }
    joined[axis] += d[axis];
    parts.emplace_back(in, d[axis]);
  }
  NNHAL_PLAN_CHECK(shapeOutput(joined));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  uint32_t after = 1;
  for (size_t d = axis + 1; d < joined.size(); ++d) after *= joined[d];
  uint32_t at = 0;
  for (const auto& [in, size] : parts) {
    const uint32_t elements = elementsOf(operand(in));
    if (elements > 0) {
      dispatch(Shader::kConcat, elements,
               {elements, size * after, joined[axis] * after, at * after, offsetWord(out),
                offsetWord(in)});
    }
    at += size;
  }
  return {};
}

Planned<std::vector<int32_t>> Planner::constantInts(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (o.type != OperandType::TENSOR_INT32 || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant TENSOR_INT32");
  }
  std::vector<int32_t> values(elementsOf(o));
  std::memcpy(values.data(), bytes, values.size() * sizeof(int32_t));
  return values;
}

/// Row-major element strides of `dims` padded to rank 4.
std::array<uint32_t, 4> stridesOf(const std::array<uint32_t, 4>& dims) {
  std::array<uint32_t, 4> strides{};
  uint32_t step = 1;
  for (int d = 3; d >= 0; --d) {
    strides[d] = step;
    step *= dims[d];
  }
  return strides;
}

Planner::GatherView Planner::plainView(const std::array<int32_t, 4>& inStrides) const {
  const auto dims = rank4(output(0).dimensions);
  return blockView({dims.begin(), dims.end()}, {inStrides.begin(), inStrides.end()});
}

Planner::GatherView Planner::blockView(const std::vector<uint32_t>& dims,
                                       const std::vector<int32_t>& strides) const {
  GatherView view;
  const size_t first = 6 - dims.size();
  for (size_t d = 0; d < dims.size(); ++d) {
    view.viewDims[first + d] = dims[d];
    view.inDims[first + d] = dims[d];
    view.inStrides[first + d] = strides[d];
  }
  return view;
}

void Planner::gather(uint32_t out, uint32_t in, const GatherView& v) {
  std::vector<uint32_t> push{elementsOf(output(0)), offsetWord(out), offsetWord(in),
                             floatBits(v.padValue)};
  for (uint32_t d : v.viewDims) push.push_back(d);
  for (int32_t b : v.before) push.push_back(static_cast<uint32_t>(b));
  for (uint32_t d : v.inDims) push.push_back(d);
  for (int32_t s : v.inStrides) push.push_back(static_cast<uint32_t>(s));
  push.push_back(static_cast<uint32_t>(v.inBase));
  dispatch(Shader::kGather, elementsOf(output(0)), std::move(push));
}

/// stridesOf as the gather shader's signed strides.
std::array<int32_t, 4> signedStrides(const std::array<uint32_t, 4>& dims) {
  std::array<int32_t, 4> strides{};
  int32_t step = 1;
  for (int d = 3; d >= 0; --d) {
    strides[d] = step;
    step *= static_cast<int32_t>(dims[d]);
  }
  return strides;
}

/// NNAPI's (TFLite legacy) clamping of a STRIDED_SLICE begin or end of a dimension of size
/// `dim` > 0: negative indices count from the end; positive strides clamp into [0, dim],
/// negative ones into [-1, dim - 1] (as the CPU engine, engine/ops/slice_ops.cpp).
int64_t clampedIndex(int64_t index, int64_t dim, bool positiveStride) {
  const auto wrap = [dim](int64_t v) { return ((v % dim) + dim) % dim; };
  if (positiveStride) return index >= dim ? dim : wrap(std::min(std::max(index, -dim), dim));
  return index < -dim ? -1 : wrap(std::min(std::max(index, -dim), dim - 1));
}

Planned<void> Planner::slice(bool strided) {
  // SLICE (input, begin, size); STRIDED_SLICE (input, begin, end, strides, begin_mask,
  // end_mask, shrink_axis_mask).
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const auto& dims = input(0).dimensions;
  const size_t rank = dims.size();
  NNHAL_PLAN_TRY(begins, constantInts(1));
  NNHAL_PLAN_TRY(second, constantInts(2));
  std::vector<int32_t> steps(rank, 1);
  int32_t beginMask = 0, endMask = 0, shrinkMask = 0;
  if (strided) {
    NNHAL_PLAN_TRY(given, constantInts(3));
    NNHAL_PLAN_TRY(b, scalarInt(4));
    NNHAL_PLAN_TRY(e, scalarInt(5));
    NNHAL_PLAN_TRY(k, scalarInt(6));
    steps = given;
    beginMask = b;
    endMask = e;
    shrinkMask = k;
  }
  if (begins.size() != rank || second.size() != rank || steps.size() != rank) {
    return invalid("begin, end/size and strides need one entry per dimension");
  }
  const auto inStrides = signedStrides(rank4(dims));
  GatherView view;
  std::vector<uint32_t> outDims;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = dims[d];
    const int64_t step = steps[d];
    int64_t first = 0;
    int64_t count = 0;
    if (!strided) {
      first = begins[d];
      count = second[d] == -1 ? dim - first : second[d];
      if (first < 0 || first > dim || count < 0 || first + count > dim) {
        return invalid("the slice does not fit the input");
      }
    } else {
      if (step == 0) return invalid("a stride of 0");
      const bool positive = step > 0;
      const auto bit = uint32_t{1} << d;
      first = (static_cast<uint32_t>(beginMask) & bit) ? (positive ? 0 : dim - 1)
                                                       : clampedIndex(begins[d], dim, positive);
      const int64_t last = (static_cast<uint32_t>(endMask) & bit)
                               ? (positive ? dim : -1)
                               : clampedIndex(second[d], dim, positive);
      count = positive ? (last > first ? (last - first + step - 1) / step : 0)
                       : (first > last ? (first - last - step - 1) / -step : 0);
      if ((static_cast<uint32_t>(shrinkMask) & bit) && (!positive || count != 1)) {
        return invalid("a shrunk dimension must have one element and a positive stride");
      }
    }
    if (count == 0) return refuse("an empty slice is not supported");
    if (!(static_cast<uint32_t>(shrinkMask) & (uint32_t{1} << d))) {
      outDims.push_back(static_cast<uint32_t>(count));
    }
    const size_t at = 4 - rank + d;
    view.viewDims[2 + at] = static_cast<uint32_t>(count);
    view.inStrides[2 + at] = inStrides[at] * static_cast<int32_t>(step);
    view.inBase += static_cast<int32_t>(first) * inStrides[at];
  }
  if (outDims.empty()) outDims.push_back(1);
  NNHAL_PLAN_CHECK(shapeOutput(outDims));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  view.inDims = view.viewDims;
  gather(out, in, view);
  return {};
}

Planned<void> Planner::channelShuffle() {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(groups, scalarInt(1));
  NNHAL_PLAN_TRY(rawAxis, scalarInt(2));
  const auto& dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  if (rawAxis < -rank || rawAxis >= rank) return invalid("the axis is outside the input's rank");
  const auto axis = static_cast<size_t>(rawAxis < 0 ? rawAxis + rank : rawAxis);
  const uint32_t channels = dims[axis];
  if (groups < 1 || channels % static_cast<uint32_t>(groups) != 0) {
    return invalid("the channels are not a multiple of the groups");
  }
  uint32_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= dims[d];
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  NNHAL_PLAN_CHECK(shapeOutput(dims));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  // Output channel k * G + g is input channel g * (C / G) + k: the view [outer, C / G, G,
  // inner] of the output reads the input as [outer, G, C / G, inner] transposed.
  const auto g = static_cast<uint32_t>(groups);
  const uint32_t perGroup = channels / g;
  gather(out, in,
         blockView({outer, perGroup, g, inner},
                   {static_cast<int32_t>(channels * inner), static_cast<int32_t>(inner),
                    static_cast<int32_t>(perGroup * inner), 1}));
  return {};
}

Planned<void> Planner::pad(bool withValue) {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(paddings, constantInts(1));
  const auto& dims = input(0).dimensions;
  const size_t rank = dims.size();
  if (input(1).dimensions != std::vector<uint32_t>{static_cast<uint32_t>(rank), 2}) {
    return invalid("the paddings must have shape [rank, 2]");
  }
  float value = 0.0f;
  if (withValue) {
    NNHAL_PLAN_TRY(v, scalarFloat(2));
    value = v;
  }
  std::vector<uint32_t> padded;
  std::array<int32_t, 4> before{};
  for (size_t d = 0; d < rank; ++d) {
    const int32_t head = paddings[2 * d];
    const int32_t tail = paddings[2 * d + 1];
    if (head < 0 || tail < 0) return invalid("negative padding");
    padded.push_back(dims[d] + static_cast<uint32_t>(head) + static_cast<uint32_t>(tail));
    before[4 - rank + d] = head;
  }
  NNHAL_PLAN_CHECK(shapeOutput(padded));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const auto inDims = rank4(dims);
  GatherView view = plainView(signedStrides(inDims));
  for (size_t d = 0; d < 4; ++d) {
    view.before[2 + d] = before[d];
    view.inDims[2 + d] = inDims[d];
  }
  view.padValue = value;
  gather(out, in, view);
  return {};
}

Planned<void> Planner::transpose() {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const auto& dims = input(0).dimensions;
  const size_t rank = dims.size();
  std::vector<int32_t> perm(rank);
  if (op().inputs.size() < 2 || input(1).lifetime == OperandLifeTime::NO_VALUE) {
    for (size_t d = 0; d < rank; ++d) perm[d] = static_cast<int32_t>(rank - 1 - d);
  } else {
    NNHAL_PLAN_TRY(given, constantInts(1));
    perm = given;
  }
  if (perm.size() != rank) return invalid("the permutation's size is not the input's rank");
  std::vector<bool> seen(rank, false);
  std::vector<uint32_t> permuted;
  for (int32_t p : perm) {
    if (p < 0 || p >= static_cast<int32_t>(rank) || seen[p]) return invalid("not a permutation");
    seen[p] = true;
    permuted.push_back(dims[p]);
  }
  NNHAL_PLAN_CHECK(shapeOutput(permuted));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const auto inStrides = stridesOf(rank4(dims));
  std::array<uint32_t, 4> strides{0, 0, 0, 0};
  std::array<uint32_t, 4> bounds{1, 1, 1, 1};
  for (size_t d = 0; d < rank; ++d) {
    strides[4 - rank + d] = inStrides[4 - rank + perm[d]];
    bounds[4 - rank + d] = permuted[d];
  }
  std::array<int32_t, 4> signedPermuted{};
  for (size_t d = 0; d < 4; ++d) signedPermuted[d] = static_cast<int32_t>(strides[d]);
  (void)bounds;
  gather(out, in, plainView(signedPermuted));
  return {};
}

Planned<void> Planner::mean(uint32_t kind) {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(axes, constantInts(1));
  // MEAN's keep_dims is an INT32 (> 0: keep); the REDUCE_* operations' a BOOL.
  int32_t keep = 0;
  if (kind == 0) {
    NNHAL_PLAN_TRY(k, scalarInt(2));
    keep = k;
  } else {
    NNHAL_PLAN_TRY(k, scalarBool(2));
    keep = k ? 1 : 0;
  }
  const auto& dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  std::array<uint32_t, 4> reduced{};
  for (int32_t a : axes) {
    if (a < -rank || a >= rank) return invalid("an axis is outside the input's rank");
    reduced[4 - rank + (a < 0 ? a + rank : a)] = 1;
  }
  std::vector<uint32_t> kept;
  uint32_t reducedCount = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (reduced[4 - rank + d] == 0) {
      kept.push_back(dims[d]);
    } else {
      reducedCount *= dims[d];
      if (keep > 0) kept.push_back(1);
    }
  }
  if (kept.empty()) kept.push_back(1);
  NNHAL_PLAN_CHECK(shapeOutput(kept));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const auto d4 = rank4(dims);
  dispatch(Shader::kMean, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(in), reducedCount, d4[0], d4[1],
            d4[2], d4[3], reduced[0], reduced[1], reduced[2], reduced[3], kind});
  return {};
}

Planned<void> Planner::resize(bool bilinear) {
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const auto& dims = input(0).dimensions;
  if (dims.size() != 4) return invalid("the input must have rank 4");
  const size_t count = op().inputs.size();
  bool nchw = false, alignCorners = false, halfPixel = false;
  if (count > 3) {
    NNHAL_PLAN_TRY(layout, scalarBool(3));
    nchw = layout;
  }
  if (count > 4) {
    NNHAL_PLAN_TRY(align, scalarBool(4));
    alignCorners = align;
  }
  if (count > 5) {
    NNHAL_PLAN_TRY(half, scalarBool(5));
    halfPixel = half;
  }
  if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  if (alignCorners && halfPixel) return invalid("align_corners with half_pixel_centers");
  // Output width and height: INT32 sizes, or FLOAT32 scales (size = floor(in * scale)).
  const auto size = [&](size_t k, uint32_t inSize) -> Planned<uint32_t> {
    if (input(k).type == OperandType::INT32) {
      NNHAL_PLAN_TRY(n, scalarInt(k));
      if (n < 1) return invalid("an output size below 1");
      return static_cast<uint32_t>(n);
    }
    NNHAL_PLAN_TRY(scale, scalarFloat(k));
    const double n = std::floor(static_cast<double>(inSize) * scale);
    if (!(n >= 1.0 && n <= 65536.0)) return invalid("an output size outside [1, 65536]");
    return static_cast<uint32_t>(n);
  };
  NNHAL_PLAN_TRY(outW, size(1, dims[2]));
  NNHAL_PLAN_TRY(outH, size(2, dims[1]));
  NNHAL_PLAN_CHECK(shapeOutput({dims[0], outH, outW, dims[3]}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const auto scale = [&](uint32_t from, uint32_t to) {
    if (alignCorners && to > 1) return static_cast<float>(from - 1) / static_cast<float>(to - 1);
    return static_cast<float>(from) / static_cast<float>(to);
  };
  dispatch(Shader::kResize, elementsOf(output(0)),
           {elementsOf(output(0)), bilinear ? 0u : 1u, offsetWord(out), offsetWord(in), dims[1],
            dims[2], dims[3], outH, outW, floatBits(scale(dims[1], outH)),
            floatBits(scale(dims[2], outW)), alignCorners ? 1u : 0u, halfPixel ? 1u : 0u});
  return {};
}

uint32_t Planner::temporary(OperandType type, std::vector<uint32_t> dims) {
  Operand o;
  o.type = type;
  o.dimensions = std::move(dims);
  o.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  operands_.push_back(std::move(o));
  ranges_.emplace_back();
  return static_cast<uint32_t>(operands_.size() - 1);
}

Planned<bool> Planner::nchwLayout(size_t layoutAt) const {
  if (op().inputs.size() <= layoutAt) return false;
  return scalarBool(layoutAt);
}

size_t Planner::layoutInput(size_t implicitAt, size_t explicitAt, bool exactlyOneMore) const {
  const size_t count = op().inputs.size();
  const bool implicit =
      count == implicitAt || ((exactlyOneMore ? count == implicitAt + 1 : count > implicitAt) &&
                              input(implicitAt).type == OperandType::BOOL);
  return implicit ? implicitAt : explicitAt;
}

template <typename Run>
Planned<void> Planner::withLayout(size_t layoutAt, Run run) {
  NNHAL_PLAN_TRY(nchw, nchwLayout(layoutAt));
  if (!nchw) return run();
  // [N, C, H, W] -> [N, H, W, C]: the gather reads input element (n, c, h, w) for output
  // (n, h, w, c).
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const std::vector<uint32_t> d = input(0).dimensions;
  if (d.size() != 4) return invalid("the input must have rank 4");
  const uint32_t nhwcIn = temporary(input(0).type, {d[0], d[2], d[3], d[1]});
  const uint32_t nhwcOut = temporary(output(0).type, {});
  const uint32_t nchwOut = outputIndex(0);
  input0_ = nhwcIn;
  output0_ = nhwcIn;  // the gather below writes the stand-in input
  NNHAL_PLAN_TRY(inTemp, tensor(nhwcIn));
  gather(inTemp, in,
         plainView({static_cast<int32_t>(d[1] * d[2] * d[3]), static_cast<int32_t>(d[3]), 1,
                    static_cast<int32_t>(d[2] * d[3])}));
  output0_ = nhwcOut;
  auto ran = run();
  input0_.reset();
  output0_.reset();
  if (!ran) return ran;
  // [N, H, W, C] -> [N, C, H, W].
  const std::vector<uint32_t> o = operand(nhwcOut).dimensions;
  NNHAL_PLAN_CHECK(shapeOutput({o[0], o[3], o[1], o[2]}));
  NNHAL_PLAN_TRY(outTemp, tensor(nhwcOut));
  NNHAL_PLAN_TRY(out, tensor(nchwOut));
  gather(out, outTemp,
         plainView({static_cast<int32_t>(o[1] * o[2] * o[3]), 1, static_cast<int32_t>(o[2] * o[3]),
                    static_cast<int32_t>(o[3])}));
  return {};
}

Planned<void> Planner::quantization(bool quantize) {
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), !quantize));
  const Operand& q = quantize ? output(0) : input(0);
  if (quantize && q.type != OperandType::TENSOR_QUANT8_ASYMM &&
      q.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    return refuse("QUANTIZE to " + std::string(toString(q.type)) + " is not supported");
  }
  NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantize));
  const bool isSigned = q.type != OperandType::TENSOR_QUANT8_ASYMM;
  dispatch(Shader::kQuantize, elementsOf(output(0)),
           {elementsOf(output(0)), quantize ? 1u : 0u, offsetWord(out), offsetWord(in),
            floatBits(q.scale), floatBits(static_cast<float>(q.zeroPoint)),
            floatBits(isSigned ? -128.0f : 0.0f), floatBits(isSigned ? 127.0f : 255.0f)});
  return {};
}

Planned<void> Planner::transposeConv() {
  // Inputs: 0 input, 1 filter [outC, fH, fW, inC], 2 bias; implicit (9): 3 output shape,
  // 4 padding scheme, 5 strideW, 6 strideH, 7 activation, 8 layout; explicit (11): 3-6
  // paddings left, right, top, bottom, 7 strideW, 8 strideH, 9 activation, 10 layout.
  const size_t count = op().inputs.size();
  if (count != 9 && count != 11) return invalid("TRANSPOSE_CONV_2D takes 9 or 11 inputs");
  const bool implicit = count == 9;
  const size_t strides = implicit ? 5 : 7;
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  NNHAL_PLAN_TRY(range, activation(strides + 2));
  NNHAL_PLAN_TRY(nchw, scalarBool(strides + 3));
  if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  if (sw < 1 || sh < 1) return invalid("strides must be at least 1");
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(filter, inputTensor(1));
  NNHAL_PLAN_TRY(bias, inputTensor(2));
  const auto& i = input(0).dimensions;
  const auto& f = input(1).dimensions;
  if (i.size() != 4 || f.size() != 4 || f[3] != i[3] ||
      input(2).dimensions != std::vector<uint32_t>{f[0]}) {
    return invalid("the input, filter and bias shapes do not fit together");
  }
  int64_t pads[4] = {0, 0, 0, 0};  // left, right, top, bottom
  if (implicit) {
    NNHAL_PLAN_TRY(shape, constantInts(3));
    NNHAL_PLAN_TRY(scheme, scalarInt(4));
    if (shape.size() != 4) return invalid("the output shape must have 4 entries");
    if (scheme != 1 && scheme != 2) return invalid("padding scheme " + std::to_string(scheme));
    // Inside an NCHW operation the output shape tensor lists NCHW dimensions.
    const int64_t height = shape[input0_ ? 2 : 1];
    const int64_t width = shape[input0_ ? 3 : 2];
    const auto implicitPads = [&](int64_t out, int64_t stride, int64_t size, int64_t* head,
                                  int64_t* tail) {
      if (scheme != 1) return;
      const int64_t needed = ((out + stride - 1) / stride - 1) * stride + size;
      *head = std::max<int64_t>(needed - out, 0) / 2;
      *tail = needed - out - *head;
    };
    implicitPads(width, sw, f[2], &pads[0], &pads[1]);
    implicitPads(height, sh, f[1], &pads[2], &pads[3]);
  } else {
    for (size_t k = 0; k < 4; ++k) {
      NNHAL_PLAN_TRY(v, scalarInt(3 + k));
      pads[k] = v;
    }
    if (pads[0] < 0 || pads[2] < 0) return invalid("a negative left or top padding");
  }
  const int64_t outH = (int64_t{i[1]} - 1) * sh + f[1] - pads[2] - pads[3];
  const int64_t outW = (int64_t{i[2]} - 1) * sw + f[2] - pads[0] - pads[1];
  if (outH < 1 || outW < 1 || outH > 65536 || outW > 65536) {
    return invalid("an output size outside [1, 65536]");
  }
  NNHAL_PLAN_CHECK(
      shapeOutput({i[0], static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), f[0]}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  dispatch(
      Shader::kTransposeConv, elementsOf(output(0)),
      {elementsOf(output(0)), offsetWord(out), offsetWord(in), offsetWord(filter), offsetWord(bias),
       i[1], i[2], i[3], static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), f[0], f[1], f[2],
       static_cast<uint32_t>(sh), static_cast<uint32_t>(sw), static_cast<uint32_t>(pads[2]),
       static_cast<uint32_t>(pads[0]), floatBits(range.first), floatBits(range.second)});
  return {};
}

Planned<void> Planner::depthToSpace(bool toSpace) {
  // DEPTH_TO_SPACE (toSpace) and SPACE_TO_DEPTH: (input, block size, [layout]), NHWC here.
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(size, scalarInt(1));
  const auto& d = input(0).dimensions;
  if (d.size() != 4) return invalid("the input must have rank 4");
  if (size < 1) return invalid("the block size must be at least 1");
  const auto bs = static_cast<uint32_t>(size);
  const uint32_t n = d[0], h = d[1], w = d[2], c = d[3];
  const auto s = [](uint64_t v) { return static_cast<int32_t>(v); };
  if (toSpace) {
    if (c % (bs * bs) != 0) return invalid("the depth is not a multiple of the block size squared");
    const uint32_t depth = c / (bs * bs);
    NNHAL_PLAN_CHECK(shapeOutput({n, h * bs, w * bs, depth}));
    NNHAL_PLAN_TRY(out, outputTensor(0));
    // Output [n, h, dy, w, dx, c'] reads input [n, h, w, (dy * bs + dx) * c' + c'].
    gather(out, in,
           blockView({n, h, bs, w, bs, depth}, {s(uint64_t{h} * w * c), s(uint64_t{w} * c),
                                                s(uint64_t{bs} * depth), s(c), s(depth), 1}));
    return {};
  }
  if (h % bs != 0 || w % bs != 0) return invalid("the height or width is not a multiple of it");
  NNHAL_PLAN_CHECK(shapeOutput({n, h / bs, w / bs, c * bs * bs}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  // Output [n, h', w', dy, dx, c] reads input [n, h' * bs + dy, w' * bs + dx, c].
  gather(out, in,
         blockView({n, h / bs, w / bs, bs, bs, c},
                   {s(uint64_t{h} * w * c), s(uint64_t{bs} * w * c), s(uint64_t{bs} * c),
                    s(uint64_t{w} * c), s(c), 1}));
  return {};
}

Planned<void> Planner::batchToSpace(bool toSpace) {
  // BATCH_TO_SPACE_ND (toSpace): (input, block shape [2], [layout]); SPACE_TO_BATCH_ND:
  // (input, block shape [2], paddings [2, 2], [layout]), here without padding only.
  NNHAL_PLAN_TRY(in, inputTensor(0));
  NNHAL_PLAN_TRY(block, constantInts(1));
  const auto& d = input(0).dimensions;
  if (d.size() != 4 || block.size() != 2) return invalid("a rank-4 input and a block of 2");
  if (block[0] < 1 || block[1] < 1) return invalid("block sizes must be at least 1");
  const auto bh = static_cast<uint32_t>(block[0]);
  const auto bw = static_cast<uint32_t>(block[1]);
  const uint32_t n = d[0], h = d[1], w = d[2], c = d[3];
  const auto s = [](uint64_t v) { return static_cast<int32_t>(v); };
  if (toSpace) {
    if (n % (bh * bw) != 0) return invalid("the batch is not a multiple of the block");
    const uint32_t batches = n / (bh * bw);
    NNHAL_PLAN_CHECK(shapeOutput({batches, h * bh, w * bw, c}));
    NNHAL_PLAN_TRY(out, outputTensor(0));
    // Output [b, h, dy, w, dx, c] reads input [(dy * bw + dx) * batches + b, h, w, c].
    const uint64_t image = uint64_t{h} * w * c;
    gather(out, in,
           blockView({batches, h, bh, w, bw, c},
                     {s(image), s(uint64_t{w} * c), s(bw * batches * image), s(c),
                      s(batches * image), 1}));
    return {};
  }
  NNHAL_PLAN_TRY(paddings, constantInts(2));
  if (std::any_of(paddings.begin(), paddings.end(), [](int32_t p) { return p != 0; })) {
    return refuse("SPACE_TO_BATCH_ND with padding is not supported");
  }
  if (h % bh != 0 || w % bw != 0) return invalid("the height or width is not a multiple of it");
  NNHAL_PLAN_CHECK(shapeOutput({n * bh * bw, h / bh, w / bw, c}));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  // Output [dy, dx, b, h', w', c] reads input [b, h' * bh + dy, w' * bw + dx, c].
  gather(
      out, in,
      blockView({bh, bw, n, h / bh, w / bw, c}, {s(uint64_t{w} * c), s(c), s(uint64_t{h} * w * c),
                                                 s(uint64_t{bh} * w * c), s(uint64_t{bw} * c), 1}));
  return {};
}

Planned<void> Planner::operation(uint32_t index) {
  current_ = index;
  switch (op().type) {
    case OperationType::ADD:
      return binary(0, true);
    case OperationType::MUL:
      return binary(1, true);
    case OperationType::SUB:
      return binary(2, true);
    case OperationType::DIV:
      return binary(3, true);
    case OperationType::MAXIMUM:
      return binary(4, false);
    case OperationType::MINIMUM:
      return binary(5, false);
    case OperationType::RELU:
      return unary(0);
    case OperationType::RELU1:
      return unary(1);
    case OperationType::RELU6:
      return unary(2);
    case OperationType::LOGISTIC:
      return unary(3);
    case OperationType::TANH:
      return unary(4);
    case OperationType::HARD_SWISH:
      return unary(5);
    case OperationType::RESHAPE:
      return unary(6);
    case OperationType::CONV_2D:
      return withLayout(layoutInput(7, 10, false), [this] { return convolution(ConvKind::kConv); });
    case OperationType::DEPTHWISE_CONV_2D:
      return withLayout(layoutInput(8, 11, false),
                        [this] { return convolution(ConvKind::kDepthwise); });
    case OperationType::GROUPED_CONV_2D:
      return withLayout(layoutInput(8, 11, false),
                        [this] { return convolution(ConvKind::kGrouped); });
    case OperationType::AVERAGE_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(0); });
    case OperationType::MAX_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(1); });
    case OperationType::TRANSPOSE_CONV_2D:
      return withLayout(op().inputs.size() == 9 ? 8 : 10, [this] { return transposeConv(); });
    case OperationType::L2_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(2); });
    case OperationType::L2_NORMALIZATION:
      return alongAxis(1);
    case OperationType::LOCAL_RESPONSE_NORMALIZATION:
      return alongAxis(2);
    case OperationType::LOG_SOFTMAX:
      return alongAxis(3);
    case OperationType::SLICE:
      return slice(false);
    case OperationType::STRIDED_SLICE:
      return slice(true);
    case OperationType::CHANNEL_SHUFFLE:
      return channelShuffle();
    case OperationType::DEPTH_TO_SPACE:
      return withLayout(2, [this] { return depthToSpace(true); });
    case OperationType::SPACE_TO_DEPTH:
      return withLayout(2, [this] { return depthToSpace(false); });
    case OperationType::BATCH_TO_SPACE_ND:
      return withLayout(2, [this] { return batchToSpace(true); });
    case OperationType::SPACE_TO_BATCH_ND:
      return withLayout(3, [this] { return batchToSpace(false); });
    case OperationType::SQUEEZE:
      return squeeze();
    case OperationType::EXPAND_DIMS:
      return expandDims();
    case OperationType::REDUCE_SUM:
      return mean(1);
    case OperationType::REDUCE_MAX:
      return mean(2);
    case OperationType::REDUCE_MIN:
      return mean(3);
    case OperationType::REDUCE_PROD:
      return mean(4);
    case OperationType::SOFTMAX:
      return alongAxis(0);
    case OperationType::FULLY_CONNECTED:
      return fullyConnected();
    case OperationType::CONCATENATION:
      return concatenation();
    case OperationType::ABS:
      return unary(7);
    case OperationType::EXP:
      return unary(8);
    case OperationType::LOG:
      return unary(9);
    case OperationType::NEG:
      return unary(10);
    case OperationType::RSQRT:
      return unary(11);
    case OperationType::SQRT:
      return unary(12);
    case OperationType::SIN:
      return unary(13);
    case OperationType::FLOOR:
      return unary(14);
    case OperationType::ELU:
      return unary(15);
    case OperationType::PAD:
      return pad(false);
    case OperationType::PAD_V2:
      return pad(true);
    case OperationType::TRANSPOSE:
      return transpose();
    case OperationType::MEAN:
      return mean();
    case OperationType::DEQUANTIZE:
      return quantization(false);
    case OperationType::QUANTIZE:
      return quantization(true);
    case OperationType::RESIZE_BILINEAR:
      return withLayout(3, [this] { return resize(true); });
    case OperationType::RESIZE_NEAREST_NEIGHBOR:
      return withLayout(3, [this] { return resize(false); });
    default:
      return refuse("the operation is not supported by nnhal-vulkan");
  }
}

Result<Plan> Planner::finish() {
  // Model outputs are written by an operation, so they have their range; a model input no
  // operation reads gets one if it is a float32 tensor, and is ignored otherwise.
  std::vector<bool> ignored(ranges_.size(), false);
  for (uint32_t index : model_.main.inputIndexes) {
    if (!ranges_[index].known && !tensor(index)) ignored[index] = true;
  }
  Plan plan;
  plan.bufferElements = constantElements_ + otherElements_;
  const auto offsetOf = [&](uint32_t operandIndex) -> uint32_t {
    const Assigned& a = ranges_[operandIndex];
    return static_cast<uint32_t>(a.constant ? a.offset : constantElements_ + a.offset);
  };
  plan.constantImage.assign(constantElements_, 0.0f);
  for (uint32_t k = 0; k < ranges_.size(); ++k) {
    if (!ranges_[k].known || !ranges_[k].constant) continue;
    float* to = plan.constantImage.data() + ranges_[k].offset;
    const uint8_t* from = constantBytes(operand(k));
    const size_t n = elementsOf(operand(k));
    const OperandType type = operand(k).type;
    if (type == OperandType::TENSOR_FLOAT16) {
      for (size_t e = 0; e < n; ++e) {
        _Float16 half{};
        std::memcpy(&half, from + e * sizeof half, sizeof half);
        to[e] = static_cast<float>(half);
      }
    } else if (type == OperandType::TENSOR_QUANT8_ASYMM) {
      for (size_t e = 0; e < n; ++e) to[e] = static_cast<float>(from[e]);
    } else if (type != OperandType::TENSOR_FLOAT32) {  // the signed 8-bit types
      for (size_t e = 0; e < n; ++e) to[e] = static_cast<float>(static_cast<int8_t>(from[e]));
    } else {
      std::memcpy(to, from, n * sizeof(float));
    }
  }
  for (Dispatch& d : dispatches_) {
    for (size_t word : offsetWords(d.shader)) d.push[word] = offsetOf(d.push[word] & ~kOperandTag);
  }
  plan.dispatches = std::move(dispatches_);
  const auto rangeOf = [&](uint32_t index) {
    const OperandType type = operand(index).type;
    const Storage storage = type == OperandType::TENSOR_FLOAT16        ? Storage::kFloat16
                            : type == OperandType::TENSOR_QUANT8_ASYMM ? Storage::kUint8
                            : type == OperandType::TENSOR_FLOAT32      ? Storage::kFloat32
                                                                       : Storage::kInt8;
    return TensorRange{offsetOf(index), elementsOf(operand(index)), storage};
  };
  for (uint32_t index : model_.main.inputIndexes) {
    plan.inputs.push_back(ignored[index] ? TensorRange{} : rangeOf(index));
  }
  for (uint32_t index : model_.main.outputIndexes) {
    plan.outputs.push_back(rangeOf(index));
    plan.outputDimensions.push_back(operand(index).dimensions);
  }
  return plan;
}

#undef NNHAL_PLAN_TRY
#undef NNHAL_PLAN_CHECK

}  // namespace

std::pair<uint32_t, uint32_t> workgroupCounts(uint32_t invocations) {
  const uint32_t groups = (invocations + kWorkgroupSize - 1) / kWorkgroupSize;
  if (groups <= kMaxWorkgroupsX) return {std::max(groups, 1u), 1};
  return {kMaxWorkgroupsX, (groups + kMaxWorkgroupsX - 1) / kMaxWorkgroupsX};
}

Result<std::vector<std::string>> explainSupport(const Model& model) {
  std::vector<std::string> reasons;
  // One planner for all: an operation's output shapes, found from its inputs, are the next
  // operations' input shapes.
  Planner planner(model);
  for (uint32_t k = 0; k < model.main.operations.size(); ++k) {
    auto planned = planner.operation(k);
    const std::string name(toString(model.main.operations[k].type));
    if (!planned && planned.error().invalid) {
      return invalidArgument("operation " + std::to_string(k) + " (" + name +
                             ") is invalid: " + planned.error().reason);
    }
    reasons.push_back(planned ? std::string() : name + ": " + planned.error().reason);
  }
  return reasons;
}

Result<Plan> buildPlan(const Model& model) {
  Planner planner(model);
  for (uint32_t k = 0; k < model.main.operations.size(); ++k) {
    auto planned = planner.operation(k);
    if (!planned) {
      return invalidArgument(
          "operation " + std::to_string(k) + " (" +
          std::string(toString(model.main.operations[k].type)) + ") is " +
          (planned.error().invalid ? "invalid: " : "not supported by nnhal-vulkan: ") +
          planned.error().reason);
    }
  }
  return planner.finish();
}

}  // namespace nnhal::backend::vulkan
