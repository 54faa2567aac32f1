#include "tools/common/cts_model.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include <cryptopp/base64.h>
#include <cryptopp/filters.h>
#include <nlohmann/json.hpp>

namespace nnhal::tools {
namespace {

using nlohmann::json;

constexpr size_t kAlignment = 8;

size_t alignUp(size_t value) { return (value + kAlignment - 1) / kAlignment * kAlignment; }

std::optional<OperandLifeTime> lifetimeFromString(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, OperandLifeTime>, 7> kNames{{
      {"TEMPORARY_VARIABLE", OperandLifeTime::TEMPORARY_VARIABLE},
      {"SUBGRAPH_INPUT", OperandLifeTime::SUBGRAPH_INPUT},
      {"SUBGRAPH_OUTPUT", OperandLifeTime::SUBGRAPH_OUTPUT},
      {"CONSTANT_COPY", OperandLifeTime::CONSTANT_COPY},
      {"CONSTANT_REFERENCE", OperandLifeTime::CONSTANT_REFERENCE},
      {"NO_VALUE", OperandLifeTime::NO_VALUE},
      {"SUBGRAPH", OperandLifeTime::SUBGRAPH},
  }};
  for (const auto& [n, lifetime] : kNames) {
    if (n == name) return lifetime;
  }
  return std::nullopt;
}

// Constant bytes waiting for their final place: CONSTANT_REFERENCE data go to a pool that
// can only be created once its total size is known.
struct PendingReference {
  Operand* operand;
  std::vector<uint8_t> bytes;
};

struct Converter {
  Model& model;
  std::vector<PendingReference> references;
  size_t referenceBytes = 0;

  Result<void> convertOperand(const json& j, Operand& operand, const std::string& field) {
    const auto type = operandTypeFromString(j.at("type").get<std::string>());
    if (!type) return invalidArgument(field + ".type: unknown operand type");
    operand.type = *type;
    operand.dimensions = j.at("dimensions").get<std::vector<uint32_t>>();
    operand.numberOfConsumers = j.at("numberOfConsumers").get<uint32_t>();
    operand.scale = j.at("scale").get<float>();
    operand.zeroPoint = j.at("zeroPoint").get<int32_t>();
    const auto lifetime = lifetimeFromString(j.at("lifetime").get<std::string>());
    if (!lifetime) return invalidArgument(field + ".lifetime: unknown lifetime");
    operand.lifetime = *lifetime;
    if (const auto& quant = j.at("channelQuant"); !quant.is_null()) {
      operand.extraParams = SymmPerChannelQuantParams{quant.at("scales").get<std::vector<float>>(),
                                                      quant.at("channelDim").get<uint32_t>()};
    }
    auto bytes = decodeBase64(j.at("data").get<std::string>());
    if (!bytes) return invalidArgument(field + ".data: " + bytes.error().message);
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY: {
        const size_t offset = alignUp(model.operandValues.size());
        model.operandValues.resize(offset + bytes->size());
        std::copy(bytes->begin(), bytes->end(), model.operandValues.begin() + offset);
        operand.location = {0, static_cast<uint32_t>(offset), static_cast<uint32_t>(bytes->size())};
        break;
      }
      case OperandLifeTime::CONSTANT_REFERENCE: {
        const size_t offset = alignUp(referenceBytes);
        referenceBytes = offset + bytes->size();
        operand.location = {0, static_cast<uint32_t>(offset), static_cast<uint32_t>(bytes->size())};
        references.push_back({&operand, std::move(*bytes)});
        break;
      }
      case OperandLifeTime::SUBGRAPH: {
        if (bytes->size() != sizeof(uint32_t)) {
          return invalidArgument(field + ".data: a SUBGRAPH operand holds one uint32 index");
        }
        uint32_t index = 0;
        std::memcpy(&index, bytes->data(), sizeof(index));
        operand.location = {0, index, 0};
        break;
      }
      default:
        break;  // inputs/outputs keep their data beside the model
    }
    return {};
  }

  Result<void> convertSubgraph(const json& j, Subgraph& subgraph, const std::string& field) {
    const auto& operands = j.at("operands");
    subgraph.operands.resize(operands.size());
    for (size_t i = 0; i < operands.size(); ++i) {
      NNHAL_TRY(convertOperand(operands[i], subgraph.operands[i],
                               field + ".operands[" + std::to_string(i) + "]"));
    }
    for (const auto& op : j.at("operations")) {
      const auto type = operationTypeFromString(op.at("type").get<std::string>());
      if (!type) return invalidArgument(field + ".operations: unknown operation type");
      subgraph.operations.push_back({*type, op.at("inputs").get<std::vector<uint32_t>>(),
                                     op.at("outputs").get<std::vector<uint32_t>>()});
    }
    subgraph.inputIndexes = j.at("inputIndexes").get<std::vector<uint32_t>>();
    subgraph.outputIndexes = j.at("outputIndexes").get<std::vector<uint32_t>>();
    return {};
  }

  Result<void> finishReferences() {
    if (references.empty()) return {};
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(std::max<size_t>(referenceBytes, 1)));
    for (const auto& pending : references) {
      std::copy(pending.bytes.begin(), pending.bytes.end(),
                pool.data() + pending.operand->location.offset);
    }
    model.pools.push_back(std::move(pool));
    return {};
  }
};

Result<CtsModel> convert(const json& test, std::string_view spec, std::string_view version) {
  CtsModel cts;
  cts.name = test.at("name").get<std::string>();
  cts.spec = spec;
  cts.version = version;
  const json& j = test.at("model");
  cts.expectFailure = j.at("expectFailure").get<bool>();
  cts.isRelaxed = j.at("isRelaxed").get<bool>();
  cts.multinomialTolerance = j.value("expectedMultinomialDistributionTolerance", 0.0f);
  cts.model.relaxComputationFloat32toFloat16 = cts.isRelaxed;
  const auto& referenced = j.at("referenced");
  // Sized up front: the converter keeps pointers to operands until the pool exists.
  cts.model.referenced.resize(referenced.size());
  Converter converter{cts.model, {}, 0};
  NNHAL_TRY(converter.convertSubgraph(j.at("main"), cts.model.main, "main"));
  for (size_t i = 0; i < referenced.size(); ++i) {
    NNHAL_TRY(converter.convertSubgraph(referenced[i], cts.model.referenced[i],
                                        "referenced[" + std::to_string(i) + "]"));
  }
  NNHAL_TRY(converter.finishReferences());

  const auto& operands = j.at("main").at("operands");
  for (uint32_t index : cts.model.main.inputIndexes) {
    NNHAL_ASSIGN_OR_RETURN(auto bytes,
                           decodeBase64(operands.at(index).at("data").get<std::string>()));
    cts.inputs.push_back(std::move(bytes));
  }
  for (uint32_t index : cts.model.main.outputIndexes) {
    const json& operand = operands.at(index);
    NNHAL_ASSIGN_OR_RETURN(auto bytes, decodeBase64(operand.at("data").get<std::string>()));
    cts.outputs.push_back(std::move(bytes));
    cts.outputIgnored.push_back(operand.at("isIgnored").get<bool>());
  }
  if (j.contains("nnhalOutputTolerances")) {
    const json& tolerances = j.at("nnhalOutputTolerances");
    if (!tolerances.is_array() || tolerances.size() != cts.outputs.size()) {
      return invalidArgument("nnhalOutputTolerances: one {atol, rtol} per main output expected");
    }
    for (const json& t : tolerances) {
      const OutputTolerance tolerance{t.at("atol").get<double>(), t.at("rtol").get<double>()};
      if (!(tolerance.atol >= 0) || !(tolerance.rtol >= 0)) {
        return invalidArgument("nnhalOutputTolerances: atol and rtol must be >= 0");
      }
      cts.outputTolerances.push_back(tolerance);
    }
  }
  return cts;
}

/// The element type the CTS files name for an operand type, and its size in bytes; an empty
/// name for a type the format does not hold (extension and OEM types).
std::pair<std::string_view, size_t> dataTypeOf(OperandType type) {
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::TENSOR_FLOAT32:
      return {"float", 4};
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16:
      return {"_Float16", 2};
    case OperandType::INT32:
    case OperandType::TENSOR_INT32:
      return {"int32_t", 4};
    case OperandType::UINT32:
    case OperandType::SUBGRAPH:
      return {"uint32_t", 4};
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
      return {"bool8", 1};
    case OperandType::TENSOR_QUANT8_ASYMM:
      return {"uint8_t", 1};
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return {"int8_t", 1};
    case OperandType::TENSOR_QUANT16_ASYMM:
      return {"uint16_t", 2};
    case OperandType::TENSOR_QUANT16_SYMM:
      return {"int16_t", 2};
    default:
      return {"", 0};
  }
}

/// The bytes an operand's value occupies in `model` (constants and SUBGRAPH indexes); empty
/// for the other lifetimes.
Result<std::vector<uint8_t>> constantBytes(const Model& model, const Operand& operand,
                                           const std::string& field) {
  const DataLocation& at = operand.location;
  switch (operand.lifetime) {
    case OperandLifeTime::CONSTANT_COPY: {
      if (size_t{at.offset} + at.length > model.operandValues.size()) {
        return invalidArgument(field + ": its value lies outside operandValues");
      }
      const auto* begin = model.operandValues.data() + at.offset;
      return std::vector<uint8_t>(begin, begin + at.length);
    }
    case OperandLifeTime::CONSTANT_REFERENCE: {
      if (at.poolIndex >= model.pools.size() || model.pools[at.poolIndex].data() == nullptr ||
          size_t{at.offset} + at.length > model.pools[at.poolIndex].size()) {
        return invalidArgument(field + ": its value lies outside the model's pools");
      }
      const uint8_t* begin = model.pools[at.poolIndex].data() + at.offset;
      return std::vector<uint8_t>(begin, begin + at.length);
    }
    case OperandLifeTime::SUBGRAPH: {
      std::vector<uint8_t> index(sizeof(uint32_t));
      std::memcpy(index.data(), &at.offset, sizeof(uint32_t));
      return index;
    }
    default:
      return std::vector<uint8_t>();
  }
}

Result<json> subgraphToJson(const Model& model, const Subgraph& subgraph, const std::string& field,
                            const std::vector<std::vector<uint8_t>>* inputs,
                            const std::vector<std::vector<uint8_t>>* outputs,
                            const std::vector<bool>* outputIgnored) {
  json operands = json::array();
  for (size_t i = 0; i < subgraph.operands.size(); ++i) {
    const Operand& operand = subgraph.operands[i];
    const std::string at = field + ".operands[" + std::to_string(i) + "]";
    const auto [dataType, elementBytes] = dataTypeOf(operand.type);
    if (dataType.empty()) {
      return invalidArgument(at + ": operand type " +
                             std::to_string(static_cast<int>(operand.type)) +
                             " has no CTS JSON form");
    }
    NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, constantBytes(model, operand, at));
    bool ignored = false;
    const auto place = [&](const std::vector<uint32_t>& indexes,
                           const std::vector<std::vector<uint8_t>>* data) {
      if (data == nullptr) return;
      for (size_t k = 0; k < indexes.size() && k < data->size(); ++k) {
        if (indexes[k] != i) continue;
        bytes = (*data)[k];
        if (data == outputs && outputIgnored != nullptr && k < outputIgnored->size()) {
          ignored = (*outputIgnored)[k];
        }
      }
    };
    place(subgraph.inputIndexes, inputs);
    place(subgraph.outputIndexes, outputs);
    json channelQuant = nullptr;
    if (const auto* quant = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams)) {
      channelQuant = {{"scales", quant->scales}, {"channelDim", quant->channelDim}};
    }
    operands.push_back({{"name", ""},
                        {"type", std::string(toString(operand.type))},
                        {"dimensions", operand.dimensions},
                        {"scale", operand.scale},
                        {"zeroPoint", operand.zeroPoint},
                        {"lifetime", std::string(toString(operand.lifetime))},
                        {"numberOfConsumers", operand.numberOfConsumers},
                        {"channelQuant", channelQuant},
                        {"isIgnored", ignored},
                        {"data", encodeBase64(bytes)},
                        {"dataType", std::string(dataType)},
                        {"count", bytes.size() / elementBytes}});
  }
  json operations = json::array();
  for (size_t i = 0; i < subgraph.operations.size(); ++i) {
    const Operation& operation = subgraph.operations[i];
    if (!operationTypeFromString(toString(operation.type))) {
      return invalidArgument(field + ".operations[" + std::to_string(i) + "]: operation type " +
                             std::to_string(static_cast<int>(operation.type)) +
                             " has no CTS JSON form");
    }
    operations.push_back({{"type", std::string(toString(operation.type))},
                          {"inputs", operation.inputs},
                          {"outputs", operation.outputs}});
  }
  return json{{"operands", std::move(operands)},
              {"operations", std::move(operations)},
              {"inputIndexes", subgraph.inputIndexes},
              {"outputIndexes", subgraph.outputIndexes}};
}

}  // namespace

Result<std::vector<uint8_t>> decodeBase64(std::string_view text) {
  // Crypto++ decodes; it skips characters outside the alphabet, so the text is checked first.
  if (text.size() % 4 != 0) return invalidArgument("base64 length is not a multiple of 4");
  const size_t padding = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const char c = text[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '/') {
      return invalidArgument("bad base64 character");
    }
  }
  std::string bytes;
  CryptoPP::StringSource source(reinterpret_cast<const CryptoPP::byte*>(text.data()), text.size(),
                                true, new CryptoPP::Base64Decoder(new CryptoPP::StringSink(bytes)));
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

Result<CtsModel> ctsModelFromJson(const json& test, std::string_view spec,
                                  std::string_view version) {
  try {
    return convert(test, spec, version);
  } catch (const json::exception& e) {
    return invalidArgument(std::string("CTS JSON: ") + e.what());
  }
}

Result<std::vector<CtsModel>> loadCtsFile(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream) return invalidArgument("cannot open " + path.string());
  std::ostringstream text;
  text << stream.rdbuf();
  json file;
  try {
    file = json::parse(text.str());
  } catch (const json::exception& e) {
    return invalidArgument(path.string() + ": " + e.what());
  }
  std::vector<CtsModel> models;
  try {
    const std::string spec = file.at("spec").get<std::string>();
    const std::string version = file.at("version").get<std::string>();
    for (const auto& test : file.at("tests")) {
      auto model = ctsModelFromJson(test, spec, version);
      if (!model) {
        return invalidArgument(path.string() + ": " + model.error().message);
      }
      models.push_back(std::move(*model));
    }
  } catch (const json::exception& e) {
    return invalidArgument(path.string() + ": " + e.what());
  }
  return models;
}

std::string encodeBase64(std::span<const uint8_t> bytes) {
  std::string text;
  CryptoPP::StringSource source(bytes.data(), bytes.size(), true,
                                new CryptoPP::Base64Encoder(new CryptoPP::StringSink(text),
                                                            /*insertLineBreaks=*/false));
  return text;
}

Result<json> ctsModelToJson(const CtsModel& cts) {
  try {
    NNHAL_ASSIGN_OR_RETURN(json main, subgraphToJson(cts.model, cts.model.main, "main", &cts.inputs,
                                                     &cts.outputs, &cts.outputIgnored));
    json referenced = json::array();
    for (size_t i = 0; i < cts.model.referenced.size(); ++i) {
      NNHAL_ASSIGN_OR_RETURN(json subgraph, subgraphToJson(cts.model, cts.model.referenced[i],
                                                           "referenced[" + std::to_string(i) + "]",
                                                           nullptr, nullptr, nullptr));
      referenced.push_back(std::move(subgraph));
    }
    json model = {{"main", std::move(main)},
                  {"referenced", std::move(referenced)},
                  {"isRelaxed", cts.model.relaxComputationFloat32toFloat16},
                  {"expectFailure", cts.expectFailure},
                  {"expectedMultinomialDistributionTolerance", cts.multinomialTolerance},
                  {"minSupportedVersion", "UNKNOWN"}};
    if (!cts.outputTolerances.empty()) {
      json tolerances = json::array();
      for (const OutputTolerance& t : cts.outputTolerances) {
        tolerances.push_back({{"atol", t.atol}, {"rtol", t.rtol}});
      }
      model["nnhalOutputTolerances"] = std::move(tolerances);
    }
    return json{{"name", cts.name}, {"model", std::move(model)}};
  } catch (const json::exception& e) {
    return invalidArgument(std::string("CTS JSON: ") + e.what());
  }
}

Result<void> writeCtsFile(const std::filesystem::path& path, std::string_view spec,
                          std::string_view version, const std::vector<json>& tests) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  if (!stream) return invalidArgument("cannot write " + path.string());
  // One test per line, as the files of ../shared/cts are laid out.
  stream << "{\"spec\": " << json(spec).dump() << ", \"version\": " << json(version).dump()
         << ", \"tests\": [\n";
  for (size_t i = 0; i < tests.size(); ++i) {
    stream << tests[i].dump() << (i + 1 < tests.size() ? ",\n" : "\n");
  }
  stream << "]}\n";
  stream.close();
  if (!stream) return invalidArgument("cannot write " + path.string());
  return {};
}

std::vector<std::filesystem::path> ctsFiles(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  if (std::filesystem::is_regular_file(root, error)) return {root};
  for (std::filesystem::recursive_directory_iterator it(root, error), end; !error && it != end;
       it.increment(error)) {
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

/// A pool of `size` zero bytes of `kind` (ctsRequest).
Result<Memory> requestPool(size_t size, MemoryKind kind) {
  if (kind != MemoryKind::MMAP_FD) return Memory::create(size, kind);
  constexpr size_t kOffset = 4096 + 16;  // neither 0 nor page aligned
  const std::string folder = std::filesystem::temp_directory_path().string();
  const int fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot create a temporary file in " + folder);
  }
  Result<Memory> pool = fail(ErrorStatus::GENERAL_FAILURE, "cannot size the temporary file");
  if (::ftruncate(fd, static_cast<off_t>(kOffset + size)) == 0) {
    pool = Memory::fromFd(fd, size, kOffset, MemoryKind::MMAP_FD);
  }
  ::close(fd);  // the Memory holds its own duplicate
  return pool;
}

}  // namespace

Result<Request> ctsRequest(const CtsModel& cts, MemoryKind kind) {
  Request request;
  size_t total = 0;
  std::vector<size_t> inputOffsets;
  std::vector<size_t> outputOffsets;
  for (const auto& bytes : cts.inputs) {
    inputOffsets.push_back(total);
    total = alignUp(total + bytes.size());
  }
  for (const auto& bytes : cts.outputs) {
    outputOffsets.push_back(total);
    total = alignUp(total + std::max<size_t>(bytes.size(), 1));
  }
  NNHAL_ASSIGN_OR_RETURN(Memory pool, requestPool(std::max<size_t>(total, 1), kind));
  for (size_t i = 0; i < cts.inputs.size(); ++i) {
    RequestArgument argument;
    if (cts.inputs[i].empty()) {
      argument.hasNoValue = true;
    } else {
      std::copy(cts.inputs[i].begin(), cts.inputs[i].end(), pool.data() + inputOffsets[i]);
      argument.location = {0, static_cast<uint32_t>(inputOffsets[i]),
                           static_cast<uint32_t>(cts.inputs[i].size())};
    }
    request.inputs.push_back(std::move(argument));
  }
  for (size_t i = 0; i < cts.outputs.size(); ++i) {
    RequestArgument argument;
    argument.location = {0, static_cast<uint32_t>(outputOffsets[i]),
                         static_cast<uint32_t>(std::max<size_t>(cts.outputs[i].size(), 1))};
    request.outputs.push_back(std::move(argument));
  }
  request.pools.emplace_back(std::move(pool));
  return request;
}

}  // namespace nnhal::tools
