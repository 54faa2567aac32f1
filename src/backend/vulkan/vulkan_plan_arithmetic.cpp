// The arithmetic: binary and unary element-wise operations, 8-bit ones through the CPU
// device's requantization and lookup tables (vulkan_planner.h).
#include "backend/vulkan/vulkan_planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <variant>

#include "kernels/activations.h"
#include "kernels/binary_math.h"
#include "kernels/comparisons.h"
#include "kernels/elementwise.h"
#include "kernels/quantization.h"
#include "kernels/unary_math.h"

namespace nnhal::backend::vulkan::planning {

Planned<void> Planner::binary(uint32_t code, bool fusedActivation) {
  // POW (24) on float tensors only.
  // ADD (0) and MUL (1) also on 8-bit tensors (the shader's ops 7 and 8), and SUB (2) as
  // an ADD with the second input's multiplier negated (op 7).
  // MAXIMUM (4) and MINIMUM (5) too (ops 9 and 10): both inputs requantized to the output
  // through the CPU device's tables, then compared.
  // The comparisons (11 + CompareOp) give TENSOR_BOOL8 outputs (0 or 1); 8-bit and BOOL8
  // inputs are compared through tables of their values (17 + CompareOp).
  const bool comparison = code >= 11 && code <= 16;
  // PRELU (6) too (op 23): the CPU device's two multipliers, one per sign of the input.
  const bool quantized = code <= 6 && code != 3 && isQuant8(input(0).type);
  const bool tabled =
      comparison && (isQuant8(input(0).type) || input(0).type == OperandType::TENSOR_BOOL8);
  std::optional<uint32_t> table;
  if (quantized && (code == 4 || code == 5)) {
    NNHAL_PLAN_TRY(t, requantizeTables());
    table = t;
  } else if (tabled) {
    NNHAL_PLAN_TRY(t, comparisonTables());
    table = t;
    code += 6;
  }
  NNHAL_PLAN_TRY(a, tensor(inputIndex(0), quantized || tabled));
  NNHAL_PLAN_TRY(b, tensor(inputIndex(1), quantized || tabled));
  std::pair<float, float> range{-kInfinity, kInfinity};
  std::array<uint32_t, 9> requant{};  // zero points, then (multiplier, shift) pairs
  if (comparison) {
    if (output(0).type != OperandType::TENSOR_BOOL8) return invalid("the output must be BOOL8");
  } else if (table || (quantized && code == 6)) {
    const bool isSigned = input(0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    range = {isSigned ? -128.0f : 0.0f, isSigned ? 127.0f : 255.0f};
    if (code == 6) {
      NNHAL_PLAN_TRY(words, quantizedArithmetic(code));
      requant = words;
      code = 23;
    } else {
      code += 5;
    }
  } else if (quantized) {
    NNHAL_PLAN_TRY(words, quantizedArithmetic(code));
    requant = words;
    NNHAL_PLAN_TRY(levels, quantizedActivation(2));
    range = {static_cast<float>(levels.first), static_cast<float>(levels.second)};
    code = code == 1 ? 8 : 7;
  } else if (fusedActivation) {
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
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized || comparison));
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
            sb[3],
            requant[0],
            requant[1],
            requant[2],
            requant[3],
            requant[4],
            requant[5],
            requant[6],
            requant[7],
            requant[8],
            offsetWord(table.value_or(a))});
  return {};
}

Planned<uint32_t> Planner::requantizeTables(size_t first, size_t second) {
  const Operand& a = input(first);
  const Operand& b = input(second);
  const Operand& out = output(0);
  if (b.type != a.type || out.type != a.type) return invalid("the operand types differ");
  std::vector<float> levels;
  const auto append = [&levels](const auto& table) {
    for (auto level : table) levels.push_back(static_cast<float>(level));
  };
  for (const Operand* in : {&a, &b}) {
    if (a.type == OperandType::TENSOR_QUANT8_ASYMM) {
      append(kernels::makeRequantizeTable<uint8_t>(in->scale, in->zeroPoint, out.scale,
                                                   out.zeroPoint));
    } else {
      append(
          kernels::makeRequantizeTable<int8_t>(in->scale, in->zeroPoint, out.scale, out.zeroPoint));
    }
  }
  return floatConstant(levels);
}

Planned<void> Planner::select() {
  // Inputs: 0 the TENSOR_BOOL8 condition, 1 and 2 the values; every shape the output's.
  anyRank_ = true;  // elementwise
  const OperandType type = input(1).type;
  const bool quantized = isQuant8(type);
  if (input(0).type != OperandType::TENSOR_BOOL8) return invalid("the condition must be BOOL8");
  if (input(2).type != type || output(0).type != type) return invalid("the value types differ");
  if (input(0).dimensions != input(1).dimensions || input(2).dimensions != input(1).dimensions) {
    return invalid("the condition and the values differ in shape");
  }
  std::optional<uint32_t> table;
  if (quantized) {
    NNHAL_PLAN_TRY(t, requantizeTables(1, 2));
    table = t;
  }
  NNHAL_PLAN_TRY(condition, tensor(inputIndex(0), true));
  NNHAL_PLAN_TRY(a, tensor(inputIndex(1), quantized));
  NNHAL_PLAN_TRY(b, tensor(inputIndex(2), quantized));
  NNHAL_PLAN_CHECK(shapeOutput(input(1).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  dispatch(Shader::kSelect, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(condition), offsetWord(a),
            offsetWord(b), offsetWord(table.value_or(a)), table ? 1u : 0u});
  return {};
}

Planned<uint32_t> Planner::comparisonTables() {
  const Operand& a = input(0);
  const Operand& b = input(1);
  if (b.type != a.type) return invalid("the operand types differ");
  std::vector<float> tables;
  for (const Operand* in : {&a, &b}) {
    // The CPU device's real values (kernels/comparisons.h); BOOL8: any non-zero byte is true.
    kernels::DequantTable values{};
    if (in->type == OperandType::TENSOR_QUANT8_ASYMM) {
      values = kernels::makeDequantTable<uint8_t>(in->scale, in->zeroPoint);
    } else if (in->type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      values = kernels::makeDequantTable<int8_t>(in->scale, in->zeroPoint);
    } else {
      for (size_t byte = 1; byte < values.size(); ++byte) values[byte] = 1.0f;
    }
    tables.insert(tables.end(), values.begin(), values.end());
  }
  return floatConstant(tables);
}

Planned<std::array<uint32_t, 9>> Planner::quantizedArithmetic(uint32_t op) const {
  const Operand& a = input(0);
  const Operand& b = input(1);
  const Operand& out = output(0);
  if (b.type != a.type || out.type != a.type) return invalid("the operand types differ");
  // The CPU device's parameters (kernels/elementwise.h), so that the results are its own.
  const int32_t lowest = a.type == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
  std::vector<kernels::QuantizedMultiplier> multipliers;
  if (op == 6) {
    const auto params = kernels::makeQuantPreluParams(a.scale, a.zeroPoint, b.scale, b.zeroPoint,
                                                      out.scale, out.zeroPoint);
    if (params) multipliers = {params->positive, params->negative};
  } else if (op == 1) {
    const auto params = kernels::makeQuantMulParams(a.scale, a.zeroPoint, b.scale, b.zeroPoint,
                                                    out.scale, out.zeroPoint, lowest, lowest + 255);
    if (params) multipliers = {params->outputMultiplier};
  } else {
    const auto make = op == 0 ? kernels::makeQuantAddParams : kernels::makeQuantSubParams;
    const auto params = make(a.scale, a.zeroPoint, b.scale, b.zeroPoint, out.scale, out.zeroPoint,
                             lowest, lowest + 255);
    if (params) {
      multipliers = {params->inputMultiplier1, params->inputMultiplier2, params->outputMultiplier};
    }
  }
  if (multipliers.empty()) {
    return invalid("a scale is not positive or a multiplier is out of range");
  }
  std::array<uint32_t, 9> words{static_cast<uint32_t>(a.zeroPoint),
                                static_cast<uint32_t>(b.zeroPoint),
                                static_cast<uint32_t>(out.zeroPoint)};
  for (size_t k = 0; k < multipliers.size(); ++k) {
    words[3 + 2 * k] = static_cast<uint32_t>(multipliers[k].multiplier);
    words[4 + 2 * k] = static_cast<uint32_t>(multipliers[k].shift);
  }
  return words;
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

void Planner::unaryDispatch(uint32_t code, uint32_t out, uint32_t in, float alpha,
                            std::optional<uint32_t> table) {
  dispatch(Shader::kUnary, elementsOf(output(0)),
           {elementsOf(output(0)), code, offsetWord(out), offsetWord(in), floatBits(alpha),
            offsetWord(table.value_or(in))});
}

Planned<void> Planner::quantizedLookup(uint32_t code) {
  const Operand& i = input(0);
  const Operand& o = output(0);
  if (o.type != i.type) return invalid("the output's type must be the input's");
  const bool isSigned = i.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  // The CPU device's tables (kernels/activations.h, kernels/unary_math.h), by stored byte.
  std::array<int32_t, 256> levels{};
  const auto fill = [&levels](const auto& table) {
    for (size_t b = 0; b < 256; ++b) levels[b] = table[b];
  };
  if (code <= 2) {  // the RELU family clamps in the input's own steps
    if (o.scale != i.scale || o.zeroPoint != i.zeroPoint) {
      return invalid("the output's quantization must be the input's");
    }
    const int32_t qmin = isSigned ? -128 : 0;
    int32_t lo = 0, hi = 0;
    kernels::activationRangeQuantized(static_cast<FusedActivationFunc>(code + 1), i.scale,
                                      i.zeroPoint, qmin, qmin + 255, &lo, &hi);
    for (size_t b = 0; b < 256; ++b) {
      const int32_t v = isSigned ? static_cast<int8_t>(b) : static_cast<int32_t>(b);
      levels[b] = std::clamp(v, lo, hi);
    }
  } else if (code == 3 || code == 4) {
    // LOGISTIC: scale 1/256, zero point 0 (-128 signed); TANH: 1/128, 128 (0 signed).
    const float scale = code == 3 ? 1.0f / 256.0f : 1.0f / 128.0f;
    const int32_t zeroPoint = code == 3 ? (isSigned ? -128 : 0) : (isSigned ? 0 : 128);
    if (o.scale != scale || o.zeroPoint != zeroPoint) {
      return invalid("the output must have scale " + std::string(code == 3 ? "1/256" : "1/128") +
                     " and zero point " + std::to_string(zeroPoint));
    }
    if (code == 3) {
      isSigned ? fill(kernels::makeLogisticTable<int8_t>(i.scale, i.zeroPoint))
               : fill(kernels::makeLogisticTable<uint8_t>(i.scale, i.zeroPoint));
    } else {
      isSigned ? fill(kernels::makeTanhTable<int8_t>(i.scale, i.zeroPoint))
               : fill(kernels::makeTanhTable<uint8_t>(i.scale, i.zeroPoint));
    }
  } else {
    isSigned
        ? fill(kernels::makeHardSwishTable<int8_t>(i.scale, i.zeroPoint, o.scale, o.zeroPoint))
        : fill(kernels::makeHardSwishTable<uint8_t>(i.scale, i.zeroPoint, o.scale, o.zeroPoint));
  }
  // It may move the operands.
  NNHAL_PLAN_TRY(table, floatConstant(std::vector<float>(levels.begin(), levels.end())));
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), true));
  NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), true));
  unaryDispatch(16, out, in, 0.0f, table);
  return {};
}

Planned<void> Planner::unary(uint32_t code) {
  anyRank_ = true;  // elementwise, or a flat copy
  if (code <= 5 && isQuant8(input(0).type)) return quantizedLookup(code);
  bool quantized = false;
  if (code == 6) {  // RESHAPE moves 8-bit values too
    NNHAL_PLAN_TRY(moves, movesQuantized());
    quantized = moves;
  }
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  if (code == 6) {
    NNHAL_PLAN_TRY(shape, reshaped());
    NNHAL_PLAN_CHECK(shapeOutput(shape));
  } else {
    NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  }
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  float alpha = 0.0f;
  if (code == 15) {  // ELU
    NNHAL_PLAN_TRY(a, scalarFloat(1));
    alpha = a;
  }
  unaryDispatch(code, out, in, alpha);
  return {};
}

}  // namespace nnhal::backend::vulkan::planning
