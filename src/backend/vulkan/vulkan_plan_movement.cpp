// The data movements, all through the gather shader or copies (vulkan_planner.h).
#include "backend/vulkan/vulkan_planner.h"

#include <algorithm>
#include <cstring>

#include "kernels/concatenation.h"

namespace nnhal::backend::vulkan::planning {

Planned<bool> Planner::movesQuantized() const {
  const Operand& in = input(0);
  const Operand& out = output(0);
  if (!isQuant8(in.type)) return false;
  if (out.type != in.type || out.scale != in.scale || out.zeroPoint != in.zeroPoint) {
    return invalid("the output's type and quantization must be the input's");
  }
  return true;
}

Planned<void> Planner::copyAs(std::vector<uint32_t> dims) {
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_CHECK(shapeOutput(std::move(dims)));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  if (elementsOf(output(0)) != elementsOf(input(0))) return invalid("the sizes differ");
  unaryDispatch(6, out, in);
  return {};
}

Planned<void> Planner::cast() {
  const OperandType from = input(0).type;
  const OperandType to = output(0).type;
  const bool sameQuant8 = isQuant8(to) && to == from && output(0).scale == input(0).scale &&
                          output(0).zeroPoint == input(0).zeroPoint;
  // From a float type to TENSOR_QUANT8_ASYMM's raw values (the HAL casts no scale).
  const bool floatToUint8 =
      to == OperandType::TENSOR_QUANT8_ASYMM &&
      (from == OperandType::TENSOR_FLOAT32 || from == OperandType::TENSOR_FLOAT16);
  if (to != OperandType::TENSOR_FLOAT32 && to != OperandType::TENSOR_FLOAT16 && !sameQuant8 &&
      !floatToUint8) {
    return refuse("CAST to " + std::string(toString(to)) + " is not supported");
  }
  // From the float types, or from the 8-bit ones, whose stored integers the buffer already
  // holds as floats: a copy.
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), isQuant8(from)));
  NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), sameQuant8 || floatToUint8));
  unaryDispatch(floatToUint8 ? 17 : 6, out, in);
  return {};
}

Planned<void> Planner::squeeze() {
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
  NNHAL_PLAN_TRY(axis, scalarInt(1));
  std::vector<uint32_t> dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  if (axis < -(rank + 1) || axis > rank) return invalid("the axis is outside [-(rank+1), rank]");
  dims.insert(dims.begin() + (axis < 0 ? axis + rank + 1 : axis), 1);
  return copyAs(std::move(dims));
}

Planned<void> Planner::concatenation() {
  const size_t tensors = op().inputs.size() - 1;
  NNHAL_PLAN_TRY(rawAxis, scalarInt(tensors));
  std::vector<std::pair<uint32_t, uint32_t>> parts;  // (operand, its size along the axis)
  std::vector<uint32_t> joined;
  int32_t axis = 0;
  // 8-bit inputs too: each one of another scale or zero point than the output's is
  // requantized with the CPU device's parameters.
  const bool quantized = isQuant8(input(0).type);
  std::vector<kernels::ConcatRequant> requant;
  for (size_t k = 0; k < tensors; ++k) {
    if (quantized) {
      if (input(k).type != input(0).type || output(0).type != input(0).type) {
        return invalid("the inputs' and output's types differ");
      }
      requant.push_back(kernels::makeConcatRequant(input(k).scale, input(k).zeroPoint,
                                                   output(0).scale, output(0).zeroPoint));
    }
    NNHAL_PLAN_TRY(in, tensor(inputIndex(k), quantized));
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  const bool isSigned = output(0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  uint32_t after = 1;
  for (size_t d = axis + 1; d < joined.size(); ++d) after *= joined[d];
  uint32_t at = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    const auto [in, size] = parts[k];
    const uint32_t elements = elementsOf(operand(in));
    const kernels::ConcatRequant q = quantized ? requant[k] : kernels::ConcatRequant{};
    if (elements > 0) {
      dispatch(Shader::kConcat, elements,
               {elements, size * after, joined[axis] * after, at * after, offsetWord(out),
                offsetWord(in), q.identity ? 0u : 1u, floatBits(q.scale), floatBits(q.bias),
                floatBits(static_cast<float>(q.outputZeroPoint)),
                floatBits(isSigned ? -128.0f : 0.0f), floatBits(isSigned ? 127.0f : 255.0f)});
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
static std::array<uint32_t, 4> stridesOf(const std::array<uint32_t, 4>& dims) {
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
static std::array<int32_t, 4> signedStrides(const std::array<uint32_t, 4>& dims) {
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
static int64_t clampedIndex(int64_t index, int64_t dim, bool positiveStride) {
  const auto wrap = [dim](int64_t v) { return ((v % dim) + dim) % dim; };
  if (positiveStride) return index >= dim ? dim : wrap(std::min(std::max(index, -dim), dim));
  return index < -dim ? -1 : wrap(std::min(std::max(index, -dim), dim - 1));
}

Planned<void> Planner::tile() {
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  const std::vector<uint32_t> dims = input(0).dimensions;
  NNHAL_PLAN_TRY(multiples, constantInts(1));
  if (multiples.size() != dims.size()) return invalid("one multiple per input dimension");
  const auto strides = signedStrides(rank4(dims));
  // Output dimension d, viewed as [multiples[d], dims[d]], reads the input with stride 0 along
  // the first: every copy is the whole input. Multiples of 1 add no view dimension.
  std::vector<uint32_t> viewDims;
  std::vector<int32_t> viewStrides;
  std::vector<uint32_t> outDims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (multiples[d] < 1) return refuse("a multiple below 1 (an empty output)");
    const uint64_t size = uint64_t{dims[d]} * static_cast<uint64_t>(multiples[d]);
    if (size > kMaxBufferElements) return refuse("the output exceeds the execution buffer");
    if (multiples[d] > 1) {
      viewDims.push_back(static_cast<uint32_t>(multiples[d]));
      viewStrides.push_back(0);
    }
    viewDims.push_back(dims[d]);
    viewStrides.push_back(strides[4 - dims.size() + d]);
    outDims.push_back(static_cast<uint32_t>(size));
  }
  if (viewDims.size() > 6) return refuse("TILE repeating more than two of four dimensions");
  NNHAL_PLAN_CHECK(shapeOutput(std::move(outDims)));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  gather(out, in, blockView(viewDims, viewStrides));
  return {};
}

Planned<void> Planner::slice(bool strided) {
  // SLICE (input, begin, size); STRIDED_SLICE (input, begin, end, strides, begin_mask,
  // end_mask, shrink_axis_mask).
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  view.inDims = view.viewDims;
  gather(out, in, view);
  return {};
}

Planned<void> Planner::split() {
  // (input, axis INT32, number of splits INT32) -> that many outputs of equal size.
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(rawAxis, scalarInt(1));
  NNHAL_PLAN_TRY(parts, scalarInt(2));
  const std::vector<uint32_t> dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  if (rawAxis < -rank || rawAxis >= rank) return invalid("the axis is outside the input's rank");
  const auto axis = static_cast<size_t>(rawAxis < 0 ? rawAxis + rank : rawAxis);
  if (parts < 1 || static_cast<size_t>(parts) != op().outputs.size() ||
      dims[axis] % static_cast<uint32_t>(parts) != 0) {
    return invalid("the axis does not split into the outputs evenly");
  }
  const auto strides = signedStrides(rank4(dims));
  std::vector<uint32_t> piece = dims;
  piece[axis] /= static_cast<uint32_t>(parts);
  const size_t at = 4 - dims.size() + axis;
  for (size_t k = 0; k < op().outputs.size(); ++k) {
    NNHAL_PLAN_CHECK(asOutput0(op().outputs[k], [&]() -> Planned<void> {
      auto same = movesQuantized();
      if (!same || *same != quantized) {
        return invalid("the outputs' types and quantization must be the input's");
      }
      NNHAL_PLAN_CHECK(shapeOutput(piece));
      NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
      GatherView view = plainView(strides);
      view.inBase = static_cast<int32_t>(k * piece[axis]) * strides[at];
      gather(out, in, view);
      return {};
    }));
  }
  return {};
}

Planned<void> Planner::channelShuffle() {
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
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
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(paddings, constantInts(1));
  const auto& dims = input(0).dimensions;
  const size_t rank = dims.size();
  if (input(1).dimensions != std::vector<uint32_t>{static_cast<uint32_t>(rank), 2}) {
    return invalid("the paddings must have shape [rank, 2]");
  }
  // 8-bit tensors pad with the zero point (PAD) or PAD_V2's INT32 value, in stored units.
  float value = quantized ? static_cast<float>(input(0).zeroPoint) : 0.0f;
  if (withValue && quantized) {
    NNHAL_PLAN_TRY(v, scalarInt(2));
    value = static_cast<float>(v);
  } else if (withValue) {
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
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
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
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

Planned<void> Planner::depthToSpace(bool toSpace) {
  // DEPTH_TO_SPACE (toSpace) and SPACE_TO_DEPTH: (input, block size, [layout]), NHWC here.
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
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
    NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
    // Output [n, h, dy, w, dx, c'] reads input [n, h, w, (dy * bs + dx) * c' + c'].
    gather(out, in,
           blockView({n, h, bs, w, bs, depth}, {s(uint64_t{h} * w * c), s(uint64_t{w} * c),
                                                s(uint64_t{bs} * depth), s(c), s(depth), 1}));
    return {};
  }
  if (h % bs != 0 || w % bs != 0) return invalid("the height or width is not a multiple of it");
  NNHAL_PLAN_CHECK(shapeOutput({n, h / bs, w / bs, c * bs * bs}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  // Output [n, h', w', dy, dx, c] reads input [n, h' * bs + dy, w' * bs + dx, c].
  gather(out, in,
         blockView({n, h / bs, w / bs, bs, bs, c},
                   {s(uint64_t{h} * w * c), s(uint64_t{bs} * w * c), s(uint64_t{bs} * c),
                    s(uint64_t{w} * c), s(c), 1}));
  return {};
}

Planned<void> Planner::batchToSpace(bool toSpace) {
  // BATCH_TO_SPACE_ND (toSpace): (input, block shape [2], [layout]); SPACE_TO_BATCH_ND:
  // (input, block shape [2], paddings [2, 2], [layout]).
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
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
    NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
    // Output [b, h, dy, w, dx, c] reads input [(dy * bw + dx) * batches + b, h, w, c].
    const uint64_t image = uint64_t{h} * w * c;
    gather(out, in,
           blockView({batches, h, bh, w, bw, c},
                     {s(image), s(uint64_t{w} * c), s(bw * batches * image), s(c),
                      s(batches * image), 1}));
    return {};
  }
  NNHAL_PLAN_TRY(paddings, constantInts(2));
  if (paddings.size() != 4) return invalid("the paddings must have shape [2, 2]");
  if (std::any_of(paddings.begin(), paddings.end(), [](int32_t p) { return p < 0; })) {
    return invalid("negative padding");
  }
  uint32_t source = in;
  uint32_t ph = h;
  uint32_t pw = w;
  if (std::any_of(paddings.begin(), paddings.end(), [](int32_t p) { return p != 0; })) {
    // Padded first, into a temporary of the plan's own (zeros, or the zero point of 8-bit
    // values): the block move's view cannot tell a padded row from a real one.
    const uint64_t paddedH =
        uint64_t{h} + static_cast<uint32_t>(paddings[0]) + static_cast<uint32_t>(paddings[1]);
    const uint64_t paddedW =
        uint64_t{w} + static_cast<uint32_t>(paddings[2]) + static_cast<uint32_t>(paddings[3]);
    if (paddedH > UINT32_MAX / 2 || paddedW > UINT32_MAX / 2) return invalid("padding too large");
    ph = static_cast<uint32_t>(paddedH);
    pw = static_cast<uint32_t>(paddedW);
    const uint32_t padded = temporary(input(0), {n, ph, pw, c});
    const float padValue = quantized ? static_cast<float>(input(0).zeroPoint) : 0.0f;
    // The gather writes the temporary, which stands in for output 0 meanwhile.
    NNHAL_PLAN_TRY(held, asOutput0(padded, [&]() -> Planned<uint32_t> {
                     NNHAL_PLAN_TRY(temp, tensor(padded, quantized));
                     GatherView view = plainView(signedStrides({n, h, w, c}));
                     view.before[3] = paddings[0];
                     view.before[4] = paddings[2];
                     view.inDims[3] = h;
                     view.inDims[4] = w;
                     view.padValue = padValue;
                     gather(temp, in, view);
                     return temp;
                   }));
    source = held;
  }
  if (ph % bh != 0 || pw % bw != 0) {
    return invalid("the padded height or width is not a multiple of the block");
  }
  NNHAL_PLAN_CHECK(shapeOutput({n * bh * bw, ph / bh, pw / bw, c}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  // Output [dy, dx, b, h', w', c] reads the padded input [b, h' * bh + dy, w' * bw + dx, c].
  gather(out, source,
         blockView({bh, bw, n, ph / bh, pw / bw, c},
                   {s(uint64_t{pw} * c), s(c), s(uint64_t{ph} * pw * c), s(uint64_t{bh} * pw * c),
                    s(uint64_t{bw} * c), 1}));
  return {};
}

}  // namespace nnhal::backend::vulkan::planning
