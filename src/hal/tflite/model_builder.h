// hal/tflite/model_builder.h — assembles an nnhal Model operand by operand, the way an
// NNAPI client does with ANeuralNetworksModel_addOperand / setOperandValue / addOperation.
//
// Constant values follow the NNAPI rule: values of at most kMaxImmediateBytes bytes are
// copied into Model::operandValues (CONSTANT_COPY, each value starting at a multiple of 4
// bytes); larger ones become CONSTANT_REFERENCE operands in one shared-memory pool,
// Model::pools[0], each value starting at a multiple of kPoolAlignment bytes. Large values
// are only recorded while building: finish() creates the pool once its size is known, copies
// them in and counts every operand's consumers.
//
// Thread safety: a builder is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal::tfl {

/// ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES: larger constants are referenced
/// from a pool instead of copied.
inline constexpr size_t kMaxImmediateBytes = 128;
/// Alignment in bytes of every CONSTANT_REFERENCE value inside the pool.
inline constexpr size_t kPoolAlignment = 64;
/// Alignment in bytes of every CONSTANT_COPY value inside operandValues.
inline constexpr size_t kOperandValueAlignment = 4;

/// IEEE 754 binary16 bits of `value`, rounded to nearest even (for FLOAT16 scalars).
uint16_t floatToHalfBits(float value);

class ModelBuilder {
 public:
  /// Appends an operand and returns its index. The lifetime and location of constants are
  /// set by setConstant*().
  uint32_t addOperand(Operand operand);
  /// Appends an operand of `type` and `dimensions` (no quantization) and returns its index.
  uint32_t addOperand(OperandType type, std::vector<uint32_t> dimensions = {});

  size_t operandCount() const { return model_.main.operands.size(); }
  /// The operand at `index` (index < operandCount()).
  Operand& operand(uint32_t index) { return model_.main.operands[index]; }
  const Operand& operand(uint32_t index) const { return model_.main.operands[index]; }

  /// Makes operand `index` a constant holding `bytes`. `bytes` must stay alive and unchanged
  /// until finish() returns (large values are copied into the pool only then).
  void setConstantView(uint32_t index, std::span<const uint8_t> bytes);
  /// Same as setConstantView for bytes the builder keeps itself.
  void setConstantOwned(uint32_t index, std::vector<uint8_t> bytes);

  /// New constant scalar operands (CONSTANT_COPY), returning their index.
  uint32_t addInt32Scalar(int32_t value);
  uint32_t addFloat32Scalar(float value);
  uint32_t addFloat16Scalar(float value);
  uint32_t addBoolScalar(bool value);
  /// New constant 1-D TENSOR_INT32 operand of `values.size()` elements.
  uint32_t addInt32Vector(std::span<const int32_t> values);
  /// New operand of `type` with lifetime NO_VALUE: an omitted optional operation input.
  uint32_t addOmitted(OperandType type);

  /// The value of constant operand `index` (CONSTANT_COPY, or CONSTANT_REFERENCE still
  /// waiting for the pool); nullopt for any other operand. The bytes stay valid until the
  /// next call that adds or sets a constant.
  std::optional<std::span<const uint8_t>> constantBytes(uint32_t index) const;

  /// The extensions the device reports (ImportOptions::extensions), for the mappings that
  /// use one only when it is there.
  void setAvailableExtensions(std::vector<Extension> extensions) {
    available_ = std::move(extensions);
  }
  bool hasExtension(std::string_view name) const;

  /// The prefix of extension `name` in Model::extensionNameToPrefix, adding the extension
  /// with the next free prefix (1, 2, ...: 0 is reserved) on first use.
  uint16_t extensionPrefix(std::string_view name);

  /// Appends an operation; every index must be < operandCount().
  void addOperation(OperationType type, std::vector<uint32_t> inputs,
                    std::vector<uint32_t> outputs);

  /// Sets the subgraph inputs and outputs, lays out the pool, counts consumers and returns
  /// the model. Errors: RESOURCE_EXHAUSTED_PERSISTENT (from Memory::create) when the pool
  /// cannot be allocated; INVALID_ARGUMENT when the constants exceed 4 GiB.
  Result<Model> finish(std::vector<uint32_t> inputIndexes, std::vector<uint32_t> outputIndexes) &&;

 private:
  /// A large constant waiting for the pool: a view of caller-owned bytes, or owned bytes.
  struct PoolValue {
    uint32_t operand = 0;
    std::span<const uint8_t> view;
    std::vector<uint8_t> owned;
  };

  void copyImmediate(uint32_t index, std::span<const uint8_t> bytes);

  Model model_;
  std::vector<PoolValue> poolValues_;
  std::vector<Extension> available_;
};

}  // namespace nnhal::hal::tfl
