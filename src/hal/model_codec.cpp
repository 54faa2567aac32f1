#include "hal/model_codec.h"

#include <utility>
#include <variant>
#include <vector>

namespace nnhal::hal {
namespace {

enum class Extra : uint8_t { kNone = 0, kChannelQuant = 1, kExtension = 2 };

void putOperand(ByteWriter& out, const Operand& operand) {
  out.putI32(static_cast<int32_t>(operand.type));
  out.putU32Vector(operand.dimensions);
  out.putU32(operand.numberOfConsumers);
  out.putF32(operand.scale);
  out.putI32(operand.zeroPoint);
  out.putI32(static_cast<int32_t>(operand.lifetime));
  out.putU32(operand.location.poolIndex);
  out.putU32(operand.location.offset);
  out.putU32(operand.location.length);
  if (const auto* channel = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams)) {
    out.putU8(static_cast<uint8_t>(Extra::kChannelQuant));
    out.putU32(static_cast<uint32_t>(channel->scales.size()));
    for (float scale : channel->scales) out.putF32(scale);
    out.putU32(channel->channelDim);
  } else if (const auto* bytes = std::get_if<std::vector<uint8_t>>(&operand.extraParams)) {
    out.putU8(static_cast<uint8_t>(Extra::kExtension));
    out.putBlob(*bytes);
  } else {
    out.putU8(static_cast<uint8_t>(Extra::kNone));
  }
}

Operand getOperand(ByteReader& in) {
  Operand operand;
  operand.type = static_cast<OperandType>(in.getI32());
  operand.dimensions = in.getU32Vector(kMaxCodecRank);
  operand.numberOfConsumers = in.getU32();
  operand.scale = in.getF32();
  operand.zeroPoint = in.getI32();
  operand.lifetime = static_cast<OperandLifeTime>(in.getI32());
  operand.location.poolIndex = in.getU32();
  operand.location.offset = in.getU32();
  operand.location.length = in.getU32();
  switch (static_cast<Extra>(in.getU8())) {
    case Extra::kNone:
      break;
    case Extra::kChannelQuant: {
      SymmPerChannelQuantParams channel;
      const uint32_t count = in.readCount(kMaxCodecCount, sizeof(float));
      channel.scales.resize(count);
      for (float& scale : channel.scales) scale = in.getF32();
      channel.channelDim = in.getU32();
      operand.extraParams = std::move(channel);
      break;
    }
    case Extra::kExtension: {
      const uint64_t length = in.readLength(UINT32_MAX);
      const std::span<const uint8_t> bytes = in.getBytes(length);
      operand.extraParams = std::vector<uint8_t>(bytes.begin(), bytes.end());
      break;
    }
    default:
      in.failWith("unknown operand extraParams kind");
  }
  return operand;
}

}  // namespace

void putSubgraph(ByteWriter& out, const Subgraph& subgraph) {
  out.putU32(static_cast<uint32_t>(subgraph.operands.size()));
  for (const Operand& operand : subgraph.operands) putOperand(out, operand);
  out.putU32(static_cast<uint32_t>(subgraph.operations.size()));
  for (const Operation& operation : subgraph.operations) {
    out.putI32(static_cast<int32_t>(operation.type));
    out.putU32Vector(operation.inputs);
    out.putU32Vector(operation.outputs);
  }
  out.putU32Vector(subgraph.inputIndexes);
  out.putU32Vector(subgraph.outputIndexes);
}

Subgraph getSubgraph(ByteReader& in) {
  Subgraph subgraph;
  const uint32_t operands = in.readCount(kMaxCodecCount, 37);
  subgraph.operands.reserve(operands);
  for (uint32_t i = 0; i < operands && in.ok(); ++i) subgraph.operands.push_back(getOperand(in));
  const uint32_t operations = in.readCount(kMaxCodecCount, 12);
  subgraph.operations.reserve(operations);
  for (uint32_t i = 0; i < operations && in.ok(); ++i) {
    Operation operation;
    operation.type = static_cast<OperationType>(in.getI32());
    operation.inputs = in.getU32Vector(kMaxCodecCount);
    operation.outputs = in.getU32Vector(kMaxCodecCount);
    subgraph.operations.push_back(std::move(operation));
  }
  subgraph.inputIndexes = in.getU32Vector(kMaxCodecCount);
  subgraph.outputIndexes = in.getU32Vector(kMaxCodecCount);
  return subgraph;
}

}  // namespace nnhal::hal
