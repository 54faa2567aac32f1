// The model token (hal/model_token.h): a canonical walk of the model into SHA-256.
#include "hal/model_token.h"

#include <cryptopp/filters.h>
#include <cryptopp/hex.h>
#include <cryptopp/sha.h>

#include <string_view>
#include <type_traits>
#include <variant>

namespace nnhal::hal {
namespace {

class Hasher {
 public:
  void bytes(const void* data, uint64_t length) {
    number(length);
    hash_.Update(static_cast<const CryptoPP::byte*>(data), length);
  }
  template <typename T>
  requires std::is_arithmetic_v<T> || std::is_enum_v<T>
  void number(T value) {
    hash_.Update(reinterpret_cast<const CryptoPP::byte*>(&value), sizeof(value));
  }
  template <typename T>
  void numbers(const std::vector<T>& values) {
    number(static_cast<uint64_t>(values.size()));
    for (const T& value : values) number(value);
  }
  void text(std::string_view value) { bytes(value.data(), value.size()); }

  CacheToken finish() {
    CacheToken token{};
    static_assert(sizeof(token) == CryptoPP::SHA256::DIGESTSIZE);
    hash_.Final(token.data());
    return token;
  }

 private:
  CryptoPP::SHA256 hash_;
};

/// The constant bytes of `operand`, or null when its location is outside its storage.
const uint8_t* constantBytes(const Model& model, const Operand& operand) {
  const DataLocation& at = operand.location;
  if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
    if (size_t{at.offset} + at.length > model.operandValues.size()) return nullptr;
    return model.operandValues.data() + at.offset;
  }
  if (at.poolIndex >= model.pools.size()) return nullptr;
  const Memory& pool = model.pools[at.poolIndex];
  if (pool.data() == nullptr || size_t{at.offset} + at.length > pool.size()) return nullptr;
  return pool.data() + at.offset;
}

void hashOperand(Hasher& h, const Model& model, const Operand& operand) {
  h.number(operand.type);
  h.numbers(operand.dimensions);
  h.number(operand.scale);
  h.number(operand.zeroPoint);
  h.number(operand.lifetime);
  h.number(operand.numberOfConsumers);
  h.number(static_cast<uint32_t>(operand.extraParams.index()));
  if (const auto* quant = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams)) {
    h.numbers(quant->scales);
    h.number(quant->channelDim);
  } else if (const auto* extension = std::get_if<std::vector<uint8_t>>(&operand.extraParams)) {
    h.bytes(extension->data(), extension->size());
  }
  switch (operand.lifetime) {
    case OperandLifeTime::CONSTANT_COPY:
    case OperandLifeTime::CONSTANT_REFERENCE:
      if (const uint8_t* value = constantBytes(model, operand)) {
        h.bytes(value, operand.location.length);
      } else {
        h.number(operand.location.poolIndex);
        h.number(operand.location.offset);
        h.number(operand.location.length);
      }
      break;
    case OperandLifeTime::SUBGRAPH:
      h.number(operand.location.offset);  // the index of the subgraph it names
      break;
    default:
      break;
  }
}

void hashSubgraph(Hasher& h, const Model& model, const Subgraph& subgraph) {
  h.number(static_cast<uint64_t>(subgraph.operands.size()));
  for (const Operand& operand : subgraph.operands) hashOperand(h, model, operand);
  h.number(static_cast<uint64_t>(subgraph.operations.size()));
  for (const Operation& operation : subgraph.operations) {
    h.number(operation.type);
    h.numbers(operation.inputs);
    h.numbers(operation.outputs);
  }
  h.numbers(subgraph.inputIndexes);
  h.numbers(subgraph.outputIndexes);
}

}  // namespace

CacheToken modelToken(const Model& model, const PrepareOptions& options) {
  Hasher h;
  h.text("nnhal model token 1");
  h.number(model.relaxComputationFloat32toFloat16);
  h.number(static_cast<uint64_t>(model.extensionNameToPrefix.size()));
  for (const ExtensionNameAndPrefix& extension : model.extensionNameToPrefix) {
    h.text(extension.name);
    h.number(extension.prefix);
  }
  hashSubgraph(h, model, model.main);
  h.number(static_cast<uint64_t>(model.referenced.size()));
  for (const Subgraph& subgraph : model.referenced) hashSubgraph(h, model, subgraph);
  h.number(options.preference);
  h.number(options.priority);
  return h.finish();
}

std::string tokenHex(const CacheToken& token) {
  std::string text;
  CryptoPP::StringSource source(token.data(), token.size(), true,
                                new CryptoPP::HexEncoder(new CryptoPP::StringSink(text),
                                                         /*uppercase=*/false));
  return text;
}

}  // namespace nnhal::hal
