// hal/tflite/operator_mapping.h — how each TFLite builtin operator becomes an NNAPI
// operation.
//
// One small mapping function per builtin operator (declared in mappings.h, defined in the
// map_*.cpp files by family) reads the operator's tensors and builtin options and adds the
// NNAPI operation(s) for it: usually one operation whose inputs are the operator's tensors
// followed by its options as constant operands, in the input order types.hal defines (e.g.
// CONV_2D: input, filter, bias, padding code, stride w, stride h, fused activation [, layout,
// dilation w, dilation h]); a few operators become several operations (PACK, UNPACK,
// SPLIT_V) the way TFLite's NNAPI delegate lowers them. To support another operator, write
// its mapping function and add it to the kMappings table in operator_mapping.cpp.
//
// Thread safety: pure functions over the context they are given.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hal/tflite/model_builder.h"
#include "nnhal/status.h"
#include "tflite_schema_generated.h"

namespace nnhal::hal::tfl {

/// Everything a mapping function needs to know about one TFLite operator.
class OperatorContext {
 public:
  /// `tensorOperands[t]` is the operand of TFLite tensor t (nullopt for tensors no operator
  /// or graph input/output refers to, which the importer leaves out).
  OperatorContext(const ::tflite::Operator& op, uint32_t index, std::string_view name,
                  std::span<const std::optional<uint32_t>> tensorOperands, ModelBuilder& builder,
                  const ::tflite::SubGraph* subgraph = nullptr)
      : op_(op),
        index_(index),
        name_(name),
        tensorOperands_(tensorOperands),
        builder_(builder),
        subgraph_(subgraph) {}

  const ::tflite::Operator& op() const { return op_; }
  /// The subgraph the operator belongs to (its intermediate tensors live there); null when
  /// the context was made without one.
  const ::tflite::SubGraph* subgraph() const { return subgraph_; }
  ModelBuilder& builder() { return builder_; }
  const ModelBuilder& builder() const { return builder_; }
  std::string_view name() const { return name_; }

  size_t inputCount() const { return op_.inputs() ? op_.inputs()->size() : 0; }
  size_t outputCount() const { return op_.outputs() ? op_.outputs()->size() : 0; }
  /// True if input `i` exists and is not the omitted-optional marker -1.
  bool hasInput(size_t i) const;
  /// Operand of input / output `i`. Error if it is missing or omitted.
  Result<uint32_t> input(size_t i) const;
  Result<uint32_t> output(size_t i) const;
  /// Operand of input `i`, which must be a TENSOR_INT32 (axes, shapes, paddings); the error
  /// says "the <what> tensor must be INT32".
  Result<uint32_t> int32TensorInput(size_t i, std::string_view what) const;
  /// Operand of input `i`; nullopt when the input is missing or omitted.
  std::optional<uint32_t> optionalInput(size_t i) const;
  /// Operands of every output, in order.
  Result<std::vector<uint32_t>> outputs() const;
  const Operand& operand(uint32_t index) const { return builder_.operand(index); }

  /// Error unless the operator has between `minInputs` and `maxInputs` inputs and exactly
  /// `outputs` outputs.
  Result<void> expectCounts(size_t minInputs, size_t maxInputs, size_t outputs) const;

  /// The builtin options as `T`; nullptr when absent or of another type.
  template <typename T>
  const T* options() const {
    return op_.template builtin_options_as<T>();
  }
  /// Same, but an error names the missing table when they are absent.
  template <typename T>
  Result<const T*> requiredOptions(std::string_view tableName) const {
    const T* table = options<T>();
    if (table == nullptr) return error("missing builtin options " + std::string(tableName));
    return table;
  }

  /// NNAPI fused activation code (0..3) for a TFLite activation; error for TANH and
  /// SIGN_BIT, which NNAPI cannot fuse.
  Result<int32_t> fusedActivation(::tflite::ActivationFunctionType activation) const;
  /// NNAPI implicit padding code (1 = SAME, 2 = VALID) for a TFLite padding.
  Result<int32_t> paddingCode(::tflite::Padding padding) const;

  /// INVALID_ARGUMENT "TFLite operator K (NAME): <message>".
  std::unexpected<Error> error(std::string_view message) const;

  /// Adds the NNAPI operation.
  void addOperation(OperationType type, std::vector<uint32_t> inputs,
                    std::vector<uint32_t> outputs) {
    builder_.addOperation(type, std::move(inputs), std::move(outputs));
  }

 private:
  Result<uint32_t> tensorOperand(const flatbuffers::Vector<int32_t>* list, size_t i,
                                 std::string_view what) const;

  const ::tflite::Operator& op_;
  uint32_t index_;
  std::string_view name_;
  std::span<const std::optional<uint32_t>> tensorOperands_;
  ModelBuilder& builder_;
  const ::tflite::SubGraph* subgraph_;
};

/// A mapping function: adds the NNAPI operation(s) for one TFLite operator.
using OperatorMapping = Result<void> (*)(OperatorContext& context);

/// The mapping of a builtin operator code, or nullptr when NNAPI has no equivalent (yet).
OperatorMapping findOperatorMapping(int32_t builtinCode);

/// The mapping of a custom operator by its custom_code ("TFLite_Detection_PostProcess"), or
/// nullptr for custom operators without an NN HAL equivalent.
OperatorMapping findCustomOperatorMapping(std::string_view customCode);
/// The mapping of a builtin operator code to an operation of a vendor extension in
/// `extensions` (the device's getSupportedExtensions), or nullptr when none applies
/// (map_extension.cpp: FLOOR_DIV, GATHER_ND -> org.nnhal.tflite_compat).
OperatorMapping findExtensionMapping(int32_t builtinCode, std::span<const Extension> extensions);
/// The extension a builtin operator code would import as, when the device reported it; empty
/// when there is none.
std::string_view extensionFor(int32_t builtinCode);
/// `base` (RESHAPE or CONCATENATION), or the org.nnhal.tflite_compat operation of the same
/// name when operand `input` is TENSOR_INT32, which the base operation refuses, and the device
/// reports the extension (ModelBuilder::hasExtension).
OperationType int32Variant(OperatorContext& c, OperationType base, uint32_t input);

/// Name of a builtin operator code as schema.fbs spells it ("CONV_2D"); "UNKNOWN" for codes
/// the schema does not know.
std::string_view builtinOperatorName(int32_t builtinCode);

}  // namespace nnhal::hal::tfl
