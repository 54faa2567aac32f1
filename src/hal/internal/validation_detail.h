// hal/internal/validation_detail.h — the pieces validateModel is made of (private to
// src/hal). Each function checks one group of the ValidateHal rules and returns
// INVALID_ARGUMENT with a message naming the field ("main.operands[3].location: ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal::detail {

/// Highest value of a non-extension operand or operation type (types.hal BASE_MAX); values
/// above it are extension types: (prefix << 16) | type.
inline constexpr uint32_t kBaseMax = 0xFFFF;

/// "main" for index 0, "referenced[i-1]" for index i: subgraphs numbered with main first.
std::string subgraphName(size_t index);

/// The subgraph numbered as subgraphName numbers them.
const Subgraph& subgraphAt(const Model& model, size_t index);

/// Type names for messages; unknown codes print as "OperandType(12345)".
std::string operandTypeName(OperandType type);
std::string operationTypeName(OperationType type);

/// True if `code` is an extension value whose prefix is listed in extensionNameToPrefix.
bool isKnownExtension(uint32_t code, const Model& model);

/// Model::extensionNameToPrefix: every name lowercase [a-z0-9_.] with at least one '.',
/// names and prefixes unique, no prefix 0 (reserved: (0 << 16) | type is a base type).
Result<void> validateExtensionNames(const Model& model);

/// Every operand of subgraph number `subgraph` on its own: type, dimensions, scale and
/// zeroPoint, extraParams, lifetime and location.
Result<void> validateOperands(const Model& model, size_t subgraph);

/// inputIndexes / outputIndexes of subgraph number `subgraph`: in range, no duplicates, and
/// exactly the operands with lifetime SUBGRAPH_INPUT / SUBGRAPH_OUTPUT.
Result<void> validateInputsOutputs(const Model& model, size_t subgraph);

/// The operations of subgraph number `subgraph`: types, signatures, IF/WHILE branch
/// signatures, execution order (every operand written once, before it is read), every
/// TEMPORARY_VARIABLE / SUBGRAPH_OUTPUT written, numberOfConsumers. Requires operands and
/// input/output indexes of every subgraph to be valid.
Result<void> validateOperations(const Model& model, size_t subgraph);

/// Model::referenced: every subgraph referenced by some SUBGRAPH operand, no cycles.
/// Requires operands to be valid.
Result<void> validateSubgraphReferences(const Model& model);

}  // namespace nnhal::hal::detail
