// engine/operation_registry.h — which operation types the engine can run: the fundamental
// operations by code, and the operations of the vendor extensions it implements by extension
// name and type (an extension operation's code, (prefix << 16) | type, depends on the prefix
// each model gives the extension in Model::extensionNameToPrefix).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "engine/operation.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// Every fundamental operation the engine implements, sorted by operation code, one entry
/// per type (IF and WHILE, which the interpreter runs itself, are not among them).
std::span<const OperationDef> implementedOperations();

/// The registry entry of fundamental operation `type`, or null when the engine has no
/// implementation (and for every extension code).
const OperationDef* findOperation(OperationType type);

/// The registry entry of `type` in `model`: fundamental codes as above; an extension code
/// through the name model.extensionNameToPrefix gives its prefix. Null when the engine has no
/// implementation (an extension it does not support, or a type its extension does not define).
const OperationDef* findOperation(OperationType type, const Model& model);

/// `type` named for messages: "CONV_2D"; "GATHER_ND" for an extension operation the engine
/// implements; "extension operation 0x10007 (com.example.ext)" for any other extension code.
std::string operationName(OperationType type, const Model& model);

/// Why the engine cannot run `type` in `model` ("" when it can).
std::string unsupportedReason(OperationType type, const Model& model);

/// The input slots (bit i: input i) that the kernels of fundamental operation `type` read only
/// as plain values: never as an index, a size, a shape, a coordinate or a table position
/// derived from an earlier read, and never through a byte copy, so bytes that change while the
/// kernel runs, or an output that overlaps the input, change its results and nothing else. A
/// non-zero mask also says the kernels write their outputs as plain values. 0 for every other
/// operation (and every extension). The engine uses a model input in place only where every step
/// that reads it reads it at such a slot, and a model output in place only where such an operation
/// writes it and no step reads it (engine/request_staging.h).
uint32_t plainDataInputs(OperationType type);

/// The vendor extensions the engine implements, as IDevice::getSupportedExtensions lists them.
std::vector<Extension> supportedExtensions();

}  // namespace nnhal::engine
