// TFLite flatbuffer -> nnhal Model (see include/nnhal/tflite_import.h).
//
// Steps: verify the flatbuffer; check every operator code (unsupported operators are
// reported before anything else) and every tensor index; convert each tensor that an
// operator or the graph's input/output lists refer to into an operand (in tensor order, so
// the operand indexes of a typical model equal its tensor indexes; variable tensors, the
// state of recurrent operators, become constants holding their initial value); walk the
// operators in execution order checking that each reads only values that exist by then and
// writes each tensor once, and map each to its NNAPI operation(s); finally lay out the
// constant pool.

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/vlog.h"
#include "hal/operand_utils.h"
#include "hal/tflite/model_builder.h"
#include "hal/tflite/operator_mapping.h"
#include "hal/tflite/tensor_conversion.h"
#include "nnhal/tflite_import.h"
#include "tflite_schema_generated.h"

namespace nnhal {
namespace hal::tfl {
namespace {

using TensorIndexList = flatbuffers::Vector<int32_t>;

/// What the importer knows about one TFLite tensor while walking the graph.
enum class TensorState : uint8_t {
  kUnused,     ///< no operator or graph list refers to it: left out of the model
  kPending,    ///< an operator will write it
  kAvailable,  ///< constant, graph input, or already written
};

/// Verifies the flatbuffer and returns its root. `bytes` is aligned to 8.
Result<const ::tflite::Model*> verifiedRoot(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return invalidArgument("TFLite model is empty (0 bytes)");
  if (bytes.size() < 8) {
    return invalidArgument("TFLite model is " + std::to_string(bytes.size()) +
                           " bytes; a flatbuffer needs at least 8");
  }
  if (!::tflite::ModelBufferHasIdentifier(bytes.data())) {
    std::string found;
    for (size_t i = 4; i < 8; ++i) {
      const char ch = static_cast<char>(bytes[i]);
      found += (ch >= 0x20 && ch < 0x7f) ? ch : '?';
    }
    return invalidArgument("not a TFLite model: file identifier is '" + found +
                           "', expected 'TFL3'");
  }
  // The flatbuffer itself is below 2 GiB; buffers of larger files follow it in the file.
  const size_t verifiedSize =
      std::min<size_t>(bytes.size(), static_cast<size_t>(FLATBUFFERS_MAX_BUFFER_SIZE) - 1);
  flatbuffers::Verifier verifier(bytes.data(), verifiedSize);
  if (!::tflite::VerifyModelBuffer(verifier)) {
    return invalidArgument("TFLite model failed flatbuffer verification (corrupt or truncated, " +
                           std::to_string(bytes.size()) + " bytes)");
  }
  return ::tflite::GetModel(bytes.data());
}

/// The builtin code of an OperatorCode: the larger of builtin_code and the byte-sized
/// deprecated_builtin_code (files from before builtin_code existed only set the latter).
int32_t builtinCodeOf(const ::tflite::OperatorCode& code) {
  return std::max(static_cast<int32_t>(code.builtin_code()),
                  static_cast<int32_t>(code.deprecated_builtin_code()));
}

/// For a builtin that imports as an extension operation when the device reports the
/// extension: " (an operation of extension NAME, which the device does not report)".
std::string extensionHint(int32_t builtin) {
  const std::string_view extension = extensionFor(builtin);
  if (extension.empty()) return {};
  return " (an operation of extension " + std::string(extension) +
         ", which the device does not report)";
}

class Importer {
 public:
  Importer(const ::tflite::Model& model, std::span<const uint8_t> file,
           const ImportOptions& options)
      : model_(model), file_(file), options_(options) {
    builder_.setAvailableExtensions(options.extensions);
  }

  Result<ImportedModel> run();

 private:
  Result<void> checkOperators();
  Result<void> checkTensorList(const TensorIndexList* list, std::string_view what, bool isInput);
  Result<void> addTensors();
  Result<void> mapOperators();
  Result<void> checkDataflow(const ::tflite::Operator& op, uint32_t index, std::string_view name);
  TensorDescription describe(uint32_t operandIndex, int32_t tensor) const;
  std::string operatorName(const ::tflite::Operator& op) const;

  const ::tflite::Model& model_;
  std::span<const uint8_t> file_;
  const ImportOptions& options_;
  const ::tflite::SubGraph* subgraph_ = nullptr;
  size_t tensorCount_ = 0;
  std::vector<TensorState> states_;
  std::vector<uint8_t> isGraphInput_;
  std::vector<uint8_t> unitScale_;
  std::vector<std::optional<uint32_t>> tensorOperands_;
  std::vector<std::string> tensorNames_;
  std::vector<uint8_t> isInt64_;  ///< the TFLite tensor is INT64 (computed as INT32)
  std::vector<OperatorMapping> mappings_;
  ModelBuilder builder_;
};

std::string Importer::operatorName(const ::tflite::Operator& op) const {
  const auto* codes = model_.operator_codes();
  const ::tflite::OperatorCode* code = codes->Get(op.opcode_index());
  const int32_t builtin = builtinCodeOf(*code);
  if (builtin == ::tflite::BuiltinOperator_CUSTOM && code->custom_code() != nullptr) {
    return code->custom_code()->str();
  }
  return std::string(builtinOperatorName(builtin));
}

Result<void> Importer::checkOperators() {
  const auto* operators = subgraph_->operators();
  if (operators == nullptr) return {};
  const auto* codes = model_.operator_codes();
  const size_t codeCount = codes != nullptr ? codes->size() : 0;
  std::vector<std::pair<std::string, std::vector<uint32_t>>> unsupported;
  for (flatbuffers::uoffset_t k = 0; k < operators->size(); ++k) {
    const ::tflite::Operator* op = operators->Get(k);
    if (op == nullptr) return invalidArgument("TFLite operator " + std::to_string(k) + " is null");
    if (op->opcode_index() >= codeCount) {
      return invalidArgument("TFLite operator " + std::to_string(k) + ": opcode_index " +
                             std::to_string(op->opcode_index()) + " is out of range (" +
                             std::to_string(codeCount) + " operator codes)");
    }
    const ::tflite::OperatorCode* code = codes->Get(op->opcode_index());
    if (code == nullptr) {
      return invalidArgument("TFLite operator code " + std::to_string(op->opcode_index()) +
                             " is null");
    }
    const int32_t builtin = builtinCodeOf(*code);
    const bool isCustom = builtin == ::tflite::BuiltinOperator_CUSTOM;
    const std::string custom =
        isCustom && code->custom_code() ? code->custom_code()->str() : std::string();
    OperatorMapping mapping =
        isCustom ? findCustomOperatorMapping(custom) : findOperatorMapping(builtin);
    if (mapping == nullptr && !isCustom) {
      mapping = findExtensionMapping(builtin, options_.extensions);
    }
    if (mapping == nullptr) {
      // Collected, so that the error lists every operator the model cannot run with.
      const std::string what =
          isCustom ? "unsupported custom TFLite operator '" + custom + "'"
                   : "unsupported TFLite operator " + std::string(builtinOperatorName(builtin)) +
                         " (builtin code " + std::to_string(builtin) + ")" + extensionHint(builtin);
      auto found = std::find_if(unsupported.begin(), unsupported.end(),
                                [&](const auto& entry) { return entry.first == what; });
      if (found == unsupported.end()) found = unsupported.insert(unsupported.end(), {what, {}});
      found->second.push_back(k);
      continue;
    }
    mappings_.push_back(mapping);

    // Index ranges; -1 marks an omitted optional input (never an output).
    for (const bool isInput : {true, false}) {
      const TensorIndexList* list = isInput ? op->inputs() : op->outputs();
      if (list == nullptr) continue;
      for (const int32_t t : *list) {
        if (isInput && t == -1) continue;
        if (t < 0 || static_cast<size_t>(t) >= tensorCount_) {
          return invalidArgument("TFLite operator " + std::to_string(k) + " (" + operatorName(*op) +
                                 "): " + (isInput ? "input" : "output") + " tensor index " +
                                 std::to_string(t) + " is out of range (" +
                                 std::to_string(tensorCount_) + " tensors)");
        }
        states_[static_cast<size_t>(t)] = TensorState::kPending;
      }
    }
    // HASHTABLE_LOOKUP's hits output holds 0/1 flags as UINT8 without quantization; NNAPI
    // wants TENSOR_QUANT8_ASYMM with scale 1.
    if (builtin == ::tflite::BuiltinOperator_HASHTABLE_LOOKUP && op->outputs() != nullptr &&
        op->outputs()->size() >= 2) {
      unitScale_[static_cast<size_t>(op->outputs()->Get(1))] = 1;
    }
    // CAST converts values, not real numbers: an 8-bit tensor it reads or writes without
    // quantization (MoveNet's raw uint8 image input) gets scale 1, as the delegate gives every
    // 8-bit tensor of scale 0.
    if (builtin == ::tflite::BuiltinOperator_CAST) {
      for (const TensorIndexList* list : {op->inputs(), op->outputs()}) {
        if (list == nullptr) continue;
        for (const int32_t t : *list) {
          if (t >= 0) unitScale_[static_cast<size_t>(t)] = 1;
        }
      }
    }
  }
  if (!unsupported.empty()) {
    std::string message;
    for (const auto& [what, indexes] : unsupported) {
      if (!message.empty()) message += "; ";
      message += what + (indexes.size() == 1 ? " at operator " : " at operators ");
      for (size_t i = 0; i < indexes.size(); ++i) {
        message += (i ? ", " : "") + std::to_string(indexes[i]);
      }
    }
    return invalidArgument(message);
  }
  return {};
}

Result<void> Importer::checkTensorList(const TensorIndexList* list, std::string_view what,
                                       bool isInput) {
  if (list == nullptr) return {};
  std::vector<uint8_t> seen(tensorCount_, 0);
  for (const int32_t t : *list) {
    if (t < 0 || static_cast<size_t>(t) >= tensorCount_) {
      return invalidArgument("TFLite subgraph " + std::string(what) + ": tensor index " +
                             std::to_string(t) + " is out of range (" +
                             std::to_string(tensorCount_) + " tensors)");
    }
    const auto i = static_cast<size_t>(t);
    if (seen[i]) {
      return invalidArgument("TFLite subgraph " + std::string(what) + ": tensor " +
                             std::to_string(t) + " is listed twice");
    }
    seen[i] = 1;
    if (!isInput && isGraphInput_[i]) {
      return invalidArgument("TFLite subgraph: tensor " + std::to_string(t) +
                             " is both an input and an output");
    }
    if (isInput) isGraphInput_[i] = 1;
    states_[i] = TensorState::kPending;
  }
  return {};
}

Result<void> Importer::addTensors() {
  const auto* tensors = subgraph_->tensors();
  for (size_t t = 0; t < tensorCount_; ++t) {
    const ::tflite::Tensor* tensor = tensors->Get(static_cast<flatbuffers::uoffset_t>(t));
    if (tensor == nullptr)
      return invalidArgument("TFLite tensor " + std::to_string(t) + " is null");
    NNHAL_ASSIGN_OR_RETURN(ConvertedTensor converted,
                           convertTensor(*tensor, static_cast<uint32_t>(t), model_.buffers(), file_,
                                         unitScale_[t] != 0));
    tensorNames_[t] = std::move(converted.name);
    isInt64_[t] = converted.isInt64 ? 1 : 0;
    if (states_[t] == TensorState::kUnused) continue;

    Operand& operand = converted.operand;
    const bool isConstant = !converted.data.empty() && !isGraphInput_[t];
    // A variable tensor without data is state starting at zero, as TFLite's
    // ResetVariableTensor leaves it: real 0, that is the zero point for int8 tensors (their
    // bytes), 0 for every other type (uint8 included: TFLite fills it with 0, whatever its
    // zero point).
    const bool isZeroState = converted.isVariable && converted.data.empty() && !isGraphInput_[t];
    const uint8_t zeroStateByte = operand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED
                                      ? static_cast<uint8_t>(static_cast<int8_t>(operand.zeroPoint))
                                      : 0;
    if (isZeroState && !hasFullySpecifiedShape(operand.type, operand.dimensions)) {
      return invalidArgument("TFLite tensor " + std::to_string(t) + " ('" + tensorNames_[t] +
                             "'): a variable tensor needs a fully specified shape");
    }
    const std::optional<uint32_t> zeroBytes =
        isZeroState ? byteSize(operand.type, operand.dimensions) : std::optional<uint32_t>(0);
    if (!zeroBytes) {
      return invalidArgument("TFLite tensor " + std::to_string(t) + " ('" + tensorNames_[t] +
                             "'): the variable tensor is larger than 4 GiB");
    }
    operand.lifetime =
        isGraphInput_[t] ? OperandLifeTime::SUBGRAPH_INPUT : OperandLifeTime::TEMPORARY_VARIABLE;
    const uint32_t index = builder_.addOperand(std::move(operand));
    if (isConstant && !converted.narrowed.empty()) {
      builder_.setConstantOwned(index, std::move(converted.narrowed));
    } else if (isConstant) {
      builder_.setConstantView(index, converted.data);
    }
    if (isZeroState) {
      builder_.setConstantOwned(index, std::vector<uint8_t>(*zeroBytes, zeroStateByte));
    }
    tensorOperands_[t] = index;
    if (isConstant || isZeroState || isGraphInput_[t]) states_[t] = TensorState::kAvailable;
  }
  if (const auto* outputs = subgraph_->outputs()) {
    for (const int32_t t : *outputs) {
      Operand& operand = builder_.operand(*tensorOperands_[static_cast<size_t>(t)]);
      if (operand.lifetime != OperandLifeTime::TEMPORARY_VARIABLE) {
        return invalidArgument("TFLite subgraph output tensor " + std::to_string(t) + " ('" +
                               tensorNames_[static_cast<size_t>(t)] +
                               "') is a constant; no operator writes it");
      }
      operand.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    }
  }
  return {};
}

Result<void> Importer::checkDataflow(const ::tflite::Operator& op, uint32_t index,
                                     std::string_view name) {
  const auto prefix = [&] {
    return "TFLite operator " + std::to_string(index) + " (" + std::string(name) + "): ";
  };
  if (op.inputs() != nullptr) {
    for (const int32_t t : *op.inputs()) {
      if (t < 0) continue;
      if (states_[static_cast<size_t>(t)] != TensorState::kAvailable) {
        return invalidArgument(prefix() + "reads tensor " + std::to_string(t) + " ('" +
                               tensorNames_[static_cast<size_t>(t)] +
                               "') before any operator writes it");
      }
    }
  }
  if (op.outputs() != nullptr) {
    for (const int32_t t : *op.outputs()) {
      if (states_[static_cast<size_t>(t)] != TensorState::kPending) {
        return invalidArgument(prefix() + "writes tensor " + std::to_string(t) + " ('" +
                               tensorNames_[static_cast<size_t>(t)] +
                               "'), which is a constant, a graph input or already written");
      }
      states_[static_cast<size_t>(t)] = TensorState::kAvailable;
    }
  }
  return {};
}

Result<void> Importer::mapOperators() {
  const auto* operators = subgraph_->operators();
  if (operators == nullptr) return {};
  for (flatbuffers::uoffset_t k = 0; k < operators->size(); ++k) {
    const ::tflite::Operator& op = *operators->Get(k);
    const std::string name = operatorName(op);
    NNHAL_TRY(checkDataflow(op, k, name));
    OperatorContext context(op, k, name, tensorOperands_, builder_, subgraph_);
    NNHAL_TRY(mappings_[k](context));
  }
  return {};
}

TensorDescription Importer::describe(uint32_t operandIndex, int32_t tensor) const {
  const Operand& operand = builder_.operand(operandIndex);
  return {.name = tensorNames_[static_cast<size_t>(tensor)],
          .type = operand.type,
          .dimensions = operand.dimensions,
          .scale = operand.scale,
          .zeroPoint = operand.zeroPoint,
          .int64 = isInt64_[static_cast<size_t>(tensor)] != 0};
}

Result<ImportedModel> Importer::run() {
  const auto* subgraphs = model_.subgraphs();
  if (subgraphs == nullptr || subgraphs->size() == 0) {
    return invalidArgument("TFLite model has no subgraphs");
  }
  subgraph_ = subgraphs->Get(0);
  if (subgraph_ == nullptr) return invalidArgument("TFLite subgraph 0 is null");
  tensorCount_ = subgraph_->tensors() != nullptr ? subgraph_->tensors()->size() : 0;
  states_.assign(tensorCount_, TensorState::kUnused);
  isGraphInput_.assign(tensorCount_, 0);
  unitScale_.assign(tensorCount_, 0);
  tensorOperands_.assign(tensorCount_, std::nullopt);
  tensorNames_.assign(tensorCount_, std::string());
  isInt64_.assign(tensorCount_, 0);

  NNHAL_TRY(checkOperators());
  NNHAL_TRY(checkTensorList(subgraph_->inputs(), "inputs", true));
  NNHAL_TRY(checkTensorList(subgraph_->outputs(), "outputs", false));
  NNHAL_TRY(addTensors());
  NNHAL_TRY(mapOperators());

  ImportedModel result;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
  if (const auto* inputs = subgraph_->inputs()) {
    for (const int32_t t : *inputs) {
      const uint32_t operand = *tensorOperands_[static_cast<size_t>(t)];
      inputIndexes.push_back(operand);
      result.inputs.push_back(describe(operand, t));
    }
  }
  if (const auto* outputs = subgraph_->outputs()) {
    for (const int32_t t : *outputs) {
      if (states_[static_cast<size_t>(t)] != TensorState::kAvailable) {
        return invalidArgument("TFLite subgraph output tensor " + std::to_string(t) + " ('" +
                               tensorNames_[static_cast<size_t>(t)] +
                               "') is never written by an operator");
      }
      const uint32_t operand = *tensorOperands_[static_cast<size_t>(t)];
      outputIndexes.push_back(operand);
      result.outputs.push_back(describe(operand, t));
    }
  }
  NNHAL_ASSIGN_OR_RETURN(
      result.model, std::move(builder_).finish(std::move(inputIndexes), std::move(outputIndexes)));
  return result;
}

}  // namespace
}  // namespace hal::tfl

Result<ImportedModel> importTfliteModel(std::span<const uint8_t> bytes,
                                        const ImportOptions& options) {
  // Flatbuffers reads scalars in place; give it storage aligned like the file would be.
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(uint64_t) != 0) {
    aligned.resize((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(aligned.data(), bytes.data(), bytes.size());
    bytes =
        std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size());
  }
  NNHAL_ASSIGN_OR_RETURN(const ::tflite::Model* root, hal::tfl::verifiedRoot(bytes));
  hal::tfl::Importer importer(*root, bytes, options);
  Result<ImportedModel> imported = importer.run();
  if (imported) {
    NNHAL_VLOG(Model, "TFLite import: {} operands, {} operations, {} inputs, {} outputs",
               imported->model.main.operands.size(), imported->model.main.operations.size(),
               imported->inputs.size(), imported->outputs.size());
  } else {
    NNHAL_VLOG(Model, "TFLite import failed: {}", imported.error().message);
  }
  return imported;
}

Result<ImportedModel> importTfliteFile(const std::filesystem::path& path,
                                       const ImportOptions& options) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return invalidArgument("cannot open TFLite file " + path.string() + ": no such file");
  }
  if (!std::filesystem::is_regular_file(status)) {
    return invalidArgument("cannot read TFLite file " + path.string() + ": not a regular file");
  }
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) {
    return invalidArgument("cannot read TFLite file " + path.string() + ": " + ec.message());
  }
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0 &&
      size > static_cast<uintmax_t>(pages) * static_cast<uintmax_t>(pageSize)) {
    return invalidArgument("TFLite file " + path.string() + " (" + std::to_string(size) +
                           " bytes) is larger than the memory of this machine");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument("cannot open TFLite file " + path.string() + " for reading");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 &&
      !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size))) {
    return invalidArgument("cannot read TFLite file " + path.string() + ": read " +
                           std::to_string(in.gcount()) + " of " + std::to_string(size) + " bytes");
  }
  auto result = importTfliteModel(bytes, options);
  if (!result) result.error().message = path.string() + ": " + result.error().message;
  return result;
}

std::vector<uint8_t> widenInt32ToInt64(std::span<const uint8_t> int32Bytes) {
  const size_t count = int32Bytes.size() / sizeof(int32_t);
  std::vector<uint8_t> wide(count * sizeof(int64_t));
  for (size_t i = 0; i < count; ++i) {
    int32_t value = 0;
    std::memcpy(&value, int32Bytes.data() + i * sizeof(int32_t), sizeof(value));
    const int64_t widened = value;
    std::memcpy(wide.data() + i * sizeof(int64_t), &widened, sizeof(widened));
  }
  return wide;
}

Result<std::vector<uint8_t>> narrowInt64ToInt32(std::span<const uint8_t> int64Bytes) {
  if (int64Bytes.size() % sizeof(int64_t) != 0) {
    return invalidArgument("int64 data of " + std::to_string(int64Bytes.size()) +
                           " bytes is not a whole number of values");
  }
  const size_t count = int64Bytes.size() / sizeof(int64_t);
  std::vector<uint8_t> narrow(count * sizeof(int32_t));
  for (size_t i = 0; i < count; ++i) {
    int64_t value = 0;
    std::memcpy(&value, int64Bytes.data() + i * sizeof(int64_t), sizeof(value));
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      return invalidArgument("int64 value " + std::to_string(value) + " at element " +
                             std::to_string(i) + " does not fit int32");
    }
    const auto narrowed = static_cast<int32_t>(value);
    std::memcpy(narrow.data() + i * sizeof(int32_t), &narrowed, sizeof(narrowed));
  }
  return narrow;
}

}  // namespace nnhal
