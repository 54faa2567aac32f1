// hal/operation_signatures.h — the shape of every fundamental NN HAL 1.3 operation: how many
// inputs and outputs it takes and which operand types may appear where.
//
// The table encodes the operation definitions of hardware/interfaces/neuralnetworks/1.3/
// types.hal at the level the HAL validation needs: input and output counts (including the
// optional trailing inputs, e.g. the NCHW flag and the dilation factors of CONV_2D), the
// types allowed for input 0 (the "primary" operand, which also selects the operation's
// performance class), and the types of the parameter operands whose type is fixed by the
// definition (fused activation = INT32, layout flag = BOOL, ...). Couplings between operand
// types (a TENSOR_FLOAT16 input wants FLOAT16 scalars, bias scale = input scale * filter
// scale, ...) and all value checks are left to the engine's per-operation preparation.
//
// Thread safety: the table is immutable; every function here may be called concurrently.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// A set of fundamental operand types (codes 0..15), as a bit mask.
class OperandTypeSet {
 public:
  constexpr OperandTypeSet() = default;
  constexpr OperandTypeSet(std::initializer_list<OperandType> types) {
    for (OperandType t : types) bits_ |= bit(t);
  }
  /// True if `type` is one of the set. Never true for OEM or extension types.
  constexpr bool contains(OperandType type) const { return (bits_ & bit(type)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr OperandTypeSet operator|(OperandTypeSet other) const {
    OperandTypeSet s;
    s.bits_ = bits_ | other.bits_;
    return s;
  }
  constexpr bool operator==(const OperandTypeSet&) const = default;
  /// "{TENSOR_FLOAT16, TENSOR_FLOAT32}".
  std::string toString() const;

 private:
  static constexpr uint32_t bit(OperandType type) {
    const auto code = static_cast<int32_t>(type);
    return (code >= 0 && code <= kOperandTypeFundamentalMax) ? (1u << code) : 0u;
  }
  uint32_t bits_ = 0;
};

/// A set of allowed operand counts: some exact counts (each < 64) and/or every count from
/// `atLeast` on.
struct CountSet {
  static constexpr uint32_t kNoMinimum = UINT32_MAX;
  uint64_t exact = 0;             ///< bit n set: exactly n is allowed
  uint32_t atLeast = kNoMinimum;  ///< every count >= atLeast is allowed

  /// Exactly the listed counts (counts >= 64 cannot be listed and are ignored).
  static CountSet of(std::initializer_list<uint32_t> counts);
  /// Every count >= minimum.
  static CountSet from(uint32_t minimum);
  bool contains(size_t count) const;
  /// "{7, 8, 10, 11, 13}" or ">= 2".
  std::string toString() const;
};

/// When an OperandRule applies, depending on the type of the operation's input 0.
enum class RuleCondition : uint8_t {
  kAlways,
  kInput0Float,     ///< only when input 0 is TENSOR_FLOAT16 or TENSOR_FLOAT32
  kInput0NotFloat,  ///< only when it is not (the quantized variants)
};

/// A constraint on a range of an operation's inputs or outputs.
/// `first` and `last` (inclusive) are positions in Operation::inputs (or ::outputs);
/// a negative position counts from the end (-1 = the last one). Positions beyond the
/// actual count are ignored, so rules may name optional trailing operands (an omitted
/// optional operand still has the type the definition gives it).
/// The operands in range must have a type in `types` (when not empty) and, when `sameAs` is
/// an input position, exactly the type of that input (e.g. the weights of a float RNN have
/// the input's type; the values of SELECT the type of input 1).
struct OperandRule {
  static constexpr int32_t kNoCoupling = -1;
  int32_t first = 0;
  int32_t last = 0;
  OperandTypeSet types;
  int32_t sameAs = kNoCoupling;
  RuleCondition when = RuleCondition::kAlways;
};

/// The signature of one fundamental operation.
struct OperationSignature {
  OperationType type = OperationType::ADD;
  CountSet inputCounts;
  CountSet outputCounts;
  /// Allowed types of inputs[0].
  OperandTypeSet primaryTypes;
  std::vector<OperandRule> inputRules;
  std::vector<OperandRule> outputRules;
};

/// The signature of `type`; nullptr for OEM_OPERATION, extension and unknown codes.
const OperationSignature* findSignature(OperationType type);

/// Checks one operation of `subgraph` against its signature: every operand index in range,
/// input and output counts allowed, input 0 of an allowed type, parameter operands of their
/// fixed types. Extension operations are accepted (their signature is unknown here).
/// Errors: INVALID_ARGUMENT, the message naming the input/output position and operand
/// index, e.g. "input 9 (operand 12) has type FLOAT32, expected {INT32}". OEM_OPERATION
/// and unknown fundamental codes are INVALID_ARGUMENT.
Result<void> validateOperationSignature(const Operation& operation, const Subgraph& subgraph);

}  // namespace nnhal::hal
