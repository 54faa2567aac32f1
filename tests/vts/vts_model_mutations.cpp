#include "vts/vts_model_mutations.h"

#include <numeric>

#include "hal/operand_utils.h"

namespace nnhal::testing {
namespace {

using L = OperandLifeTime;
using T = OperandType;
using Op = OperationType;

/// Builds the mutations of one family: add(description, edit) copies the model, applies the
/// edit and keeps the result.
class Collector {
 public:
  explicit Collector(const Model& model) : model_(model) {}

  void add(std::string description, const std::function<void(ModelMutation&)>& edit) {
    ModelMutation m;
    m.description = std::move(description);
    m.model = model_;
    edit(m);
    out_.push_back(std::move(m));
  }
  std::vector<ModelMutation> take() { return std::move(out_); }

 private:
  const Model& model_;
  std::vector<ModelMutation> out_;
};

std::string str(size_t n) { return std::to_string(n); }

/// Bytes of the operand's value; 0 when its shape is not fully known.
size_t dataBytes(const Operand& operand) {
  if (operand.type == T::SUBGRAPH) return 0;
  return hal::byteSize(operand.type, operand.dimensions).value_or(0);
}

/// The VTS's estimate of a model's size on the binder (fields and vector contents), used
/// only to skip lifetime mutations that would make a model larger than half of the
/// recommended 64 KiB transaction.
size_t representationBytes(const Model& model) {
  size_t bytes = model.operandValues.size();
  auto subgraph = [&](const Subgraph& s) {
    for (const Operand& o : s.operands) {
      bytes += 4 + 4 * o.dimensions.size() + 4 + 4 + 4 + 4 + 12;
      if (const auto* channel = std::get_if<SymmPerChannelQuantParams>(&o.extraParams)) {
        bytes += 4 * channel->scales.size() + 4;
      }
    }
    for (const Operation& op : s.operations)
      bytes += 4 + 4 * (op.inputs.size() + op.outputs.size());
    bytes += 4 * (s.inputIndexes.size() + s.outputIndexes.size());
  };
  subgraph(model.main);
  for (const Subgraph& s : model.referenced) subgraph(s);
  bytes += model.pools.size() * 24;
  return bytes;
}

bool exceedsBinderSizeLimit(size_t bytes) { return bytes > 64 * 1024 / 2; }

/// Extra bytes operandValues needs for a CONSTANT_COPY operand of `size` placed at offset 0.
size_t constantCopyExtra(const Model& model, size_t size) {
  return model.operandValues.size() < size ? size - model.operandValues.size() : 0;
}

void becomeConstantCopy(Model& model, Operand& operand) {
  const size_t size = dataBytes(operand);
  operand.location = {0, 0, static_cast<uint32_t>(size)};
  if (model.operandValues.size() < size) model.operandValues.resize(size);
}

void eraseValue(std::vector<uint32_t>& list, uint32_t value) {
  list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

uint32_t addInt32Operand(Model& model, L lifetime) {
  Operand operand;
  operand.type = T::INT32;
  operand.numberOfConsumers = 1;
  operand.lifetime = lifetime;
  model.main.operands.push_back(operand);
  return static_cast<uint32_t>(model.main.operands.size() - 1);
}

// --- families -----------------------------------------------------------------------------

void executionOrder(const Model& model, Collector& c) {
  const Subgraph& g = model.main;
  for (size_t k = 0; k < g.operations.size(); ++k) {
    const Operation& operation = g.operations[k];
    for (uint32_t in : operation.inputs) {
      const L lifetime = g.operands[in].lifetime;
      if (lifetime != L::TEMPORARY_VARIABLE && lifetime != L::SUBGRAPH_OUTPUT) continue;
      c.add("operation " + str(k) + " is a reader", [k](ModelMutation& m) {
        auto& ops = m.model.main.operations;
        std::rotate(ops.begin(), ops.begin() + k, ops.begin() + k + 1);
      });
      break;
    }
    for (uint32_t out : operation.outputs) {
      if (g.operands[out].numberOfConsumers == 0) continue;
      c.add("operation " + str(k) + " is a writer", [k](ModelMutation& m) {
        auto& ops = m.model.main.operations;
        std::rotate(ops.begin() + k, ops.begin() + k + 1, ops.end());
      });
      break;
    }
  }
}

void operandType(const Model& model, Collector& c) {
  // FUNDAMENTAL_MIN - 1, FUNDAMENTAL_MAX + 1, OEM_MIN - 1, OEM_MAX + 1.
  const int32_t invalid[] = {-1, kOperandTypeFundamentalMax + 1, 9999, 10002};
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    for (int32_t type : invalid) {
      c.add("operand " + str(i) + " set to value " + std::to_string(type),
            [i, type](ModelMutation& m) { m.model.main.operands[i].type = static_cast<T>(type); });
    }
  }
}

bool isScalar(T type) {
  return type == T::FLOAT16 || type == T::FLOAT32 || type == T::INT32 || type == T::UINT32 ||
         type == T::BOOL;
}

void operandRank(const Model& model, Collector& c) {
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    if (!isScalar(model.main.operands[i].type)) continue;
    c.add("operand " + str(i) + " has rank of 1",
          [i](ModelMutation& m) { m.model.main.operands[i].dimensions = {0}; });
  }
}

float invalidScale(T type) {
  switch (type) {
    case T::TENSOR_INT32:
      return -1.0f;
    case T::TENSOR_QUANT8_SYMM:
    case T::TENSOR_QUANT8_ASYMM:
    case T::TENSOR_QUANT16_ASYMM:
    case T::TENSOR_QUANT16_SYMM:
    case T::TENSOR_QUANT8_ASYMM_SIGNED:  // the VTS's default branch
      return 0.0f;
    default:
      return 1.0f;
  }
}

void operandScale(const Model& model, Collector& c) {
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    const float scale = invalidScale(model.main.operands[i].type);
    c.add("operand " + str(i) + " has scale of " + std::to_string(scale),
          [i, scale](ModelMutation& m) { m.model.main.operands[i].scale = scale; });
  }
}

std::vector<int32_t> invalidZeroPoints(T type) {
  switch (type) {
    case T::TENSOR_QUANT8_ASYMM:
      return {-1, 256};
    case T::TENSOR_QUANT8_SYMM:
      return {-129, -1, 1, 128};
    case T::TENSOR_QUANT16_ASYMM:
      return {-1, 65536};
    case T::TENSOR_QUANT16_SYMM:
      return {-32769, -1, 1, 32768};
    case T::TENSOR_QUANT8_ASYMM_SIGNED:  // the VTS lists none
      return {};
    default:
      return {1};
  }
}

void operandZeroPoint(const Model& model, Collector& c) {
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    for (int32_t zeroPoint : invalidZeroPoints(model.main.operands[i].type)) {
      c.add("operand " + str(i) + " has zero point of " + std::to_string(zeroPoint),
            [i, zeroPoint](ModelMutation& m) { m.model.main.operands[i].zeroPoint = zeroPoint; });
    }
  }
}

void operandLifeTime(const Model& model, Collector& c) {
  const size_t modelBytes = representationBytes(model);
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    const Operand& operand = model.main.operands[i];
    std::vector<L> invalid;
    switch (operand.lifetime) {
      case L::SUBGRAPH_OUTPUT:
      case L::TEMPORARY_VARIABLE:
        invalid = {L::SUBGRAPH_INPUT, L::CONSTANT_COPY};
        break;
      case L::CONSTANT_COPY:
      case L::CONSTANT_REFERENCE:
      case L::SUBGRAPH_INPUT:
        invalid = {L::TEMPORARY_VARIABLE, L::SUBGRAPH_OUTPUT};
        break;
      default:
        break;
    }
    const size_t size = dataBytes(operand);
    if (size == 0 || exceedsBinderSizeLimit(modelBytes + constantCopyExtra(model, size))) {
      invalid.erase(std::remove(invalid.begin(), invalid.end(), L::CONSTANT_COPY), invalid.end());
    }
    for (L lifetime : invalid) {
      c.add("operand " + str(i) + " has lifetime " + std::string(toString(lifetime)) +
                " instead of lifetime " + std::string(toString(operand.lifetime)),
            [i, lifetime](ModelMutation& m) {
              Operand& o = m.model.main.operands[i];
              const auto index = static_cast<uint32_t>(i);
              if (o.lifetime == L::SUBGRAPH_INPUT) eraseValue(m.model.main.inputIndexes, index);
              if (o.lifetime == L::SUBGRAPH_OUTPUT) eraseValue(m.model.main.outputIndexes, index);
              o.lifetime = lifetime;
              o.location = {};
              if (lifetime == L::CONSTANT_COPY) becomeConstantCopy(m.model, o);
              if (lifetime == L::SUBGRAPH_INPUT) m.model.main.inputIndexes.push_back(index);
              if (lifetime == L::SUBGRAPH_OUTPUT) m.model.main.outputIndexes.push_back(index);
            });
    }
  }
}

void operandInputOutput(const Model& model, Collector& c) {
  const size_t modelBytes = representationBytes(model);
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    const Operand& operand = model.main.operands[i];
    std::optional<L> changed;
    switch (operand.lifetime) {
      case L::CONSTANT_COPY:
      case L::CONSTANT_REFERENCE:
        changed = L::SUBGRAPH_INPUT;
        break;
      case L::SUBGRAPH_INPUT: {
        const size_t size = dataBytes(operand);
        if (size != 0 && !exceedsBinderSizeLimit(modelBytes + constantCopyExtra(model, size))) {
          changed = L::CONSTANT_COPY;
        }
        break;
      }
      case L::SUBGRAPH_OUTPUT:
        changed = L::TEMPORARY_VARIABLE;
        break;
      case L::TEMPORARY_VARIABLE:
        changed = L::SUBGRAPH_OUTPUT;
        break;
      default:
        break;
    }
    if (!changed) continue;
    const L lifetime = *changed;
    c.add("operand " + str(i) + " has lifetime " + std::string(toString(lifetime)) +
              " instead of lifetime " + std::string(toString(operand.lifetime)),
          [i, lifetime](ModelMutation& m) {
            Operand& o = m.model.main.operands[i];
            o.lifetime = lifetime;
            o.location = {};
            if (lifetime == L::CONSTANT_COPY) becomeConstantCopy(m.model, o);
          });
  }
}

void operandNumberOfConsumers(const Model& model, Collector& c) {
  for (size_t i = 0; i < model.main.operands.size(); ++i) {
    const uint32_t n = model.main.operands[i].numberOfConsumers;
    const std::vector<uint32_t> invalid =
        n == 0 ? std::vector<uint32_t>{1} : std::vector<uint32_t>{n - 1, n + 1};
    for (uint32_t count : invalid) {
      c.add("operand " + str(i) + " numberOfConsumers = " + std::to_string(count),
            [i, count](ModelMutation& m) { m.model.main.operands[i].numberOfConsumers = count; });
    }
  }
}

/// A copy of `operand` as an output nobody reads, for a duplicated or rewired writer.
Operand unreadCopy(const Operand& operand) {
  Operand copy = operand;
  copy.numberOfConsumers = 0;
  if (copy.lifetime == L::SUBGRAPH_OUTPUT) copy.lifetime = L::TEMPORARY_VARIABLE;
  return copy;
}

void operandAddWriter(const Model& model, Collector& c) {
  const Subgraph& g = model.main;
  for (size_t k = 0; k < g.operations.size(); ++k) {
    for (size_t bad = 0; bad < g.operations[k].outputs.size(); ++bad) {
      c.add("operation " + str(k) + " writes to " + str(g.operations[k].outputs[bad]),
            [k, bad](ModelMutation& m) {
              Subgraph& s = m.model.main;
              Operation copy = s.operations[k];
              for (uint32_t in : copy.inputs) ++s.operands[in].numberOfConsumers;
              for (size_t o = 0; o < copy.outputs.size(); ++o) {
                if (o == bad) continue;
                s.operands.push_back(unreadCopy(s.operands[copy.outputs[o]]));
                copy.outputs[o] = static_cast<uint32_t>(s.operands.size() - 1);
              }
              s.operations.push_back(std::move(copy));
            });
    }
  }
}

/// The VTS's retyping of an operand: fields made consistent with the new type so that only
/// the operation's signature is wrong.
void retype(Operand& operand, T type) {
  const std::vector<uint32_t> dims =
      operand.dimensions.empty() ? std::vector<uint32_t>{1} : operand.dimensions;
  const Operand before = operand;
  operand.type = type;
  switch (type) {
    case T::FLOAT16:
    case T::FLOAT32:
    case T::INT32:
    case T::UINT32:
    case T::BOOL:
      operand.dimensions = {};
      operand.scale = 0.0f;
      operand.zeroPoint = 0;
      break;
    case T::TENSOR_BOOL8:
    case T::TENSOR_FLOAT16:
    case T::TENSOR_FLOAT32:
      operand.dimensions = dims;
      operand.scale = 0.0f;
      operand.zeroPoint = 0;
      break;
    case T::TENSOR_INT32:
      operand.dimensions = dims;
      operand.zeroPoint = 0;
      break;
    case T::TENSOR_QUANT8_ASYMM:
    case T::TENSOR_QUANT8_SYMM:
    case T::TENSOR_QUANT16_ASYMM:
    case T::TENSOR_QUANT16_SYMM:
      operand.dimensions = dims;
      operand.scale = before.scale != 0.0f ? before.scale : 1.0f;
      break;
    case T::TENSOR_QUANT8_SYMM_PER_CHANNEL: {
      operand.dimensions = dims;
      operand.scale = 0.0f;
      operand.zeroPoint = 0;
      SymmPerChannelQuantParams channel;
      channel.channelDim = 0;
      channel.scales.assign(before.dimensions.empty() ? 0 : before.dimensions[0], 1.0f);
      operand.extraParams = std::move(channel);
      break;
    }
    default:  // TENSOR_QUANT8_ASYMM_SIGNED, SUBGRAPH: only the type changes
      break;
  }
}

bool anyOf(T type, std::initializer_list<T> types) {
  return std::find(types.begin(), types.end(), type) != types.end();
}

/// Operands whose operations legitimately take several types (the VTS's skip list).
bool skipRetype(const Model& model, uint32_t operand, T type) {
  if (type == model.main.operands[operand].type) return true;
  for (const Operation& op : model.main.operations) {
    const bool isIn0 = !op.inputs.empty() && op.inputs[0] == operand;
    const bool isIn1 = op.inputs.size() > 1 && op.inputs[1] == operand;
    const bool isOut0 = !op.outputs.empty() && op.outputs[0] == operand;
    switch (op.type) {
      case Op::LSH_PROJECTION:
        if (isIn1) return true;
        break;
      case Op::CAST:
      case Op::ARGMAX:
      case Op::ARGMIN:
        if (anyOf(type, {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32, T::TENSOR_INT32,
                         T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED})) {
          return true;
        }
        break;
      case Op::QUANTIZE:
        if (isIn0 && anyOf(type, {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32})) return true;
        if (isOut0 && anyOf(type, {T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED})) {
          return true;
        }
        break;
      case Op::RANDOM_MULTINOMIAL:
        if (isIn0 && anyOf(type, {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32})) return true;
        break;
      case Op::DEQUANTIZE:
        if (isIn0 && anyOf(type, {T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED,
                                  T::TENSOR_QUANT8_SYMM, T::TENSOR_QUANT8_SYMM_PER_CHANNEL})) {
          return true;
        }
        if (isOut0 && anyOf(type, {T::TENSOR_FLOAT16, T::TENSOR_FLOAT32})) return true;
        break;
      case Op::TRANSPOSE_CONV_2D:
      case Op::GROUPED_CONV_2D:
      case Op::DEPTHWISE_CONV_2D:
      case Op::CONV_2D:
        if (isIn1 && anyOf(type, {T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_SYMM_PER_CHANNEL})) {
          return true;
        }
        break;
      case Op::AXIS_ALIGNED_BBOX_TRANSFORM:
        if (isIn1 && anyOf(type, {T::TENSOR_QUANT8_ASYMM, T::TENSOR_QUANT8_ASYMM_SIGNED})) {
          return true;
        }
        break;
      case Op::RANK:
        if (isIn0 && hal::isTensorType(type)) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

/// "operand 3 (TENSOR_FLOAT32, CONV_2D input 1)": where an operand is used, for messages.
std::string describeOperand(const Model& model, uint32_t index) {
  std::string text =
      "operand " + str(index) + " (" + std::string(toString(model.main.operands[index].type));
  for (const Operation& op : model.main.operations) {
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      if (op.inputs[j] == index) text += ", " + std::string(toString(op.type)) + " input " + str(j);
    }
    for (size_t j = 0; j < op.outputs.size(); ++j) {
      if (op.outputs[j] == index) {
        text += ", " + std::string(toString(op.type)) + " output " + str(j);
      }
    }
  }
  return text + ")";
}

void operationOperandType(const Model& model, Collector& c) {
  for (uint32_t i = 0; i < model.main.operands.size(); ++i) {
    for (int32_t code = 0; code <= kOperandTypeFundamentalMax; ++code) {
      const auto type = static_cast<T>(code);
      if (skipRetype(model, i, type)) continue;
      c.add(describeOperand(model, i) + " set to type " + std::string(toString(type)),
            [i, type](ModelMutation& m) { retype(m.model.main.operands[i], type); });
    }
  }
}

void operationType(const Model& model, Collector& c) {
  // FUNDAMENTAL_MAX + 1, OEM_MIN - 1, OEM_MAX + 1.
  const int32_t invalid[] = {kOperationTypeFundamentalMax + 1, 9999, 10001};
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    for (int32_t type : invalid) {
      c.add(
          "operation " + str(k) + " set to value " + std::to_string(type),
          [k, type](ModelMutation& m) { m.model.main.operations[k].type = static_cast<Op>(type); });
    }
  }
}

void operationOperandIndex(const Model& model, Collector& c, bool inputs) {
  const auto invalid = static_cast<uint32_t>(model.main.operands.size());
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    const Operation& op = model.main.operations[k];
    const size_t count = inputs ? op.inputs.size() : op.outputs.size();
    for (size_t j = 0; j < count; ++j) {
      c.add("operation " + str(k) + (inputs ? " input " : " output ") + str(j),
            [k, j, inputs, invalid](ModelMutation& m) {
              Operation& o = m.model.main.operations[k];
              (inputs ? o.inputs : o.outputs)[j] = invalid;
            });
    }
  }
}

void operationRemoveWrite(const Model& model, Collector& c) {
  const Subgraph& g = model.main;
  for (size_t k = 0; k < g.operations.size(); ++k) {
    for (size_t j = 0; j < g.operations[k].outputs.size(); ++j) {
      const uint32_t out = g.operations[k].outputs[j];
      if (g.operands[out].numberOfConsumers == 0) continue;
      c.add("operation " + str(k) + " writes to " + str(out), [k, j](ModelMutation& m) {
        Subgraph& s = m.model.main;
        s.operands.push_back(unreadCopy(s.operands[s.operations[k].outputs[j]]));
        s.operations[k].outputs[j] = static_cast<uint32_t>(s.operands.size() - 1);
      });
    }
  }
}

bool skipRemoveOperand(const Model& model, uint32_t index) {
  if (model.main.operands[index].numberOfConsumers == 0) return true;
  for (const Operation& op : model.main.operations) {
    const bool isOutput =
        std::find(op.outputs.begin(), op.outputs.end(), index) != op.outputs.end();
    if (!isOutput) continue;
    if (op.type == Op::SPLIT || op.type == Op::UNIDIRECTIONAL_SEQUENCE_LSTM ||
        op.type == Op::UNIDIRECTIONAL_SEQUENCE_RNN || op.type == Op::BIDIRECTIONAL_SEQUENCE_LSTM ||
        op.type == Op::BIDIRECTIONAL_SEQUENCE_RNN) {
      return true;
    }
  }
  return false;
}

void removeOperand(const Model& model, Collector& c) {
  for (uint32_t i = 0; i < model.main.operands.size(); ++i) {
    if (skipRemoveOperand(model, i)) continue;
    // As in the VTS: the operand goes from the list and from every index list, and the
    // larger indexes stay as they were (the VTS's renumbering lambda returns `v--`, the value
    // before the decrement), so they now name the next operand or one past the end. With a
    // renumbering, removing an optional trailing argument (a layout flag, an axis) would
    // leave a valid model.
    c.add("operand " + str(i), [i](ModelMutation& m) {
      Subgraph& s = m.model.main;
      s.operands.erase(s.operands.begin() + i);
      for (Operation& op : s.operations) {
        eraseValue(op.inputs, i);
        eraseValue(op.outputs, i);
      }
      eraseValue(s.inputIndexes, i);
      eraseValue(s.outputIndexes, i);
    });
  }
}

void removeOperation(const Model& model, Collector& c) {
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    c.add("operation " + str(k), [k](ModelMutation& m) {
      Subgraph& s = m.model.main;
      for (uint32_t in : s.operations[k].inputs) --s.operands[in].numberOfConsumers;
      s.operations.erase(s.operations.begin() + k);
    });
  }
}

/// Optional trailing inputs the VTS does not remove (layout, axis, align_corners, ...).
bool skipRemoveInput(const Operation& op, size_t input) {
  const size_t n = op.inputs.size();
  switch (op.type) {
    case Op::CONCATENATION:
      return n > 2 && input != n - 1;
    case Op::DEPTHWISE_CONV_2D:
      return (n == 12 && input == 11) || (n == 9 && input == 8);
    case Op::CONV_2D:
    case Op::AVERAGE_POOL_2D:
    case Op::MAX_POOL_2D:
    case Op::L2_POOL_2D:
      return (n == 11 && input == 10) || (n == 8 && input == 7);
    case Op::RESIZE_BILINEAR:
      return n >= 4 && input >= 3;
    case Op::RESIZE_NEAREST_NEIGHBOR:
      return n >= 5 && input >= 3;
    case Op::SPACE_TO_DEPTH:
    case Op::DEPTH_TO_SPACE:
    case Op::BATCH_TO_SPACE_ND:
      return n == 3 && input == 2;
    case Op::SPACE_TO_BATCH_ND:
      return n == 4 && input == 3;
    case Op::L2_NORMALIZATION:
      return n == 2 && input == 1;
    case Op::LOCAL_RESPONSE_NORMALIZATION:
      return n == 6 && input == 5;
    case Op::SOFTMAX:
      return n == 3 && input == 2;
    default:
      return false;
  }
}

void removeOperationInput(const Model& model, Collector& c) {
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    const Operation& op = model.main.operations[k];
    for (size_t j = 0; j < op.inputs.size(); ++j) {
      if (skipRemoveInput(op, j)) continue;
      c.add("operation " + str(k) + ", input " + str(j), [k, j](ModelMutation& m) {
        Subgraph& s = m.model.main;
        Operation& o = s.operations[k];
        --s.operands[o.inputs[j]].numberOfConsumers;
        o.inputs.erase(o.inputs.begin() + j);
      });
    }
  }
}

void removeOperationOutput(const Model& model, Collector& c) {
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    for (size_t j = 0; j < model.main.operations[k].outputs.size(); ++j) {
      c.add("operation " + str(k) + ", output " + str(j), [k, j](ModelMutation& m) {
        auto& outputs = m.model.main.operations[k].outputs;
        outputs.erase(outputs.begin() + j);
      });
    }
  }
}

/// Operations that take an optional extra INT32 input (the VTS does not add one to them).
bool skipAddInput(const Operation& op) {
  const size_t n = op.inputs.size();
  return (op.type == Op::L2_NORMALIZATION && n == 1) ||
         (op.type == Op::LOCAL_RESPONSE_NORMALIZATION && n == 5) ||
         (op.type == Op::SOFTMAX && n == 2) || (op.type == Op::RESIZE_BILINEAR && n < 6) ||
         (op.type == Op::RESIZE_NEAREST_NEIGHBOR && n < 6);
}

void addOperationInput(const Model& model, Collector& c) {
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    if (skipAddInput(model.main.operations[k])) continue;
    c.add("operation " + str(k), [k](ModelMutation& m) {
      const uint32_t index = addInt32Operand(m.model, L::SUBGRAPH_INPUT);
      m.model.main.operations[k].inputs.push_back(index);
      m.model.main.inputIndexes.push_back(index);
    });
  }
}

void addOperationOutput(const Model& model, Collector& c) {
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    c.add("operation " + str(k), [k](ModelMutation& m) {
      const uint32_t index = addInt32Operand(m.model, L::SUBGRAPH_OUTPUT);
      m.model.main.operations[k].outputs.push_back(index);
      m.model.main.outputIndexes.push_back(index);
    });
  }
}

void executionPreference(Collector& c) {
  for (int32_t p : {-1, 3}) {  // LOW_POWER - 1, SUSTAINED_SPEED + 1
    c.add("preference " + std::to_string(p),
          [p](ModelMutation& m) { m.preference = static_cast<ExecutionPreference>(p); });
  }
}

void executionPriority(Collector& c) {
  for (int32_t p : {-1, 3}) {  // LOW - 1, HIGH + 1
    c.add("priority " + std::to_string(p),
          [p](ModelMutation& m) { m.priority = static_cast<Priority>(p); });
  }
}

}  // namespace

std::string familyName(MutationFamily family) {
  switch (family) {
    case MutationFamily::kExecutionOrder:
      return "mutateExecutionOrderTest";
    case MutationFamily::kOperandType:
      return "mutateOperandTypeTest";
    case MutationFamily::kOperandRank:
      return "mutateOperandRankTest";
    case MutationFamily::kOperandScale:
      return "mutateOperandScaleTest";
    case MutationFamily::kOperandZeroPoint:
      return "mutateOperandZeroPointTest";
    case MutationFamily::kOperandLifeTime:
      return "mutateOperandLifeTimeTest";
    case MutationFamily::kOperandInputOutput:
      return "mutateOperandInputOutputTest";
    case MutationFamily::kOperandNumberOfConsumers:
      return "mutateOperandNumberOfConsumersTest";
    case MutationFamily::kOperandAddWriter:
      return "mutateOperandAddWriterTest";
    case MutationFamily::kOperationOperandType:
      return "mutateOperationOperandTypeTest";
    case MutationFamily::kOperationType:
      return "mutateOperationTypeTest";
    case MutationFamily::kOperationInputOperandIndex:
      return "mutateOperationInputOperandIndexTest";
    case MutationFamily::kOperationOutputOperandIndex:
      return "mutateOperationOutputOperandIndexTest";
    case MutationFamily::kOperationRemoveWrite:
      return "mutateOperationRemoveWriteTest";
    case MutationFamily::kRemoveOperand:
      return "removeOperandTest";
    case MutationFamily::kRemoveOperation:
      return "removeOperationTest";
    case MutationFamily::kRemoveOperationInput:
      return "removeOperationInputTest";
    case MutationFamily::kRemoveOperationOutput:
      return "removeOperationOutputTest";
    case MutationFamily::kAddOperationInput:
      return "addOperationInputTest";
    case MutationFamily::kAddOperationOutput:
      return "addOperationOutputTest";
    case MutationFamily::kExecutionPreference:
      return "mutateExecutionPreferenceTest";
    case MutationFamily::kExecutionPriority:
      return "mutateExecutionPriorityTest";
  }
  return "unknown family";
}

std::vector<ModelMutation> mutationsOf(MutationFamily family, const Model& model) {
  Collector c(model);
  switch (family) {
    case MutationFamily::kExecutionOrder:
      executionOrder(model, c);
      break;
    case MutationFamily::kOperandType:
      operandType(model, c);
      break;
    case MutationFamily::kOperandRank:
      operandRank(model, c);
      break;
    case MutationFamily::kOperandScale:
      operandScale(model, c);
      break;
    case MutationFamily::kOperandZeroPoint:
      operandZeroPoint(model, c);
      break;
    case MutationFamily::kOperandLifeTime:
      operandLifeTime(model, c);
      break;
    case MutationFamily::kOperandInputOutput:
      operandInputOutput(model, c);
      break;
    case MutationFamily::kOperandNumberOfConsumers:
      operandNumberOfConsumers(model, c);
      break;
    case MutationFamily::kOperandAddWriter:
      operandAddWriter(model, c);
      break;
    case MutationFamily::kOperationOperandType:
      operationOperandType(model, c);
      break;
    case MutationFamily::kOperationType:
      operationType(model, c);
      break;
    case MutationFamily::kOperationInputOperandIndex:
      operationOperandIndex(model, c, true);
      break;
    case MutationFamily::kOperationOutputOperandIndex:
      operationOperandIndex(model, c, false);
      break;
    case MutationFamily::kOperationRemoveWrite:
      operationRemoveWrite(model, c);
      break;
    case MutationFamily::kRemoveOperand:
      removeOperand(model, c);
      break;
    case MutationFamily::kRemoveOperation:
      removeOperation(model, c);
      break;
    case MutationFamily::kRemoveOperationInput:
      removeOperationInput(model, c);
      break;
    case MutationFamily::kRemoveOperationOutput:
      removeOperationOutput(model, c);
      break;
    case MutationFamily::kAddOperationInput:
      addOperationInput(model, c);
      break;
    case MutationFamily::kAddOperationOutput:
      addOperationOutput(model, c);
      break;
    case MutationFamily::kExecutionPreference:
      executionPreference(c);
      break;
    case MutationFamily::kExecutionPriority:
      executionPriority(c);
      break;
  }
  std::vector<ModelMutation> mutations = c.take();
  for (ModelMutation& m : mutations) m.description = familyName(family) + ": " + m.description;
  return mutations;
}

}  // namespace nnhal::testing
