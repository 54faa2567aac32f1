// hal/validation.h — the ValidateHal rules: every field of a Model and a Request is
// checked before anything else touches them.
//
// Every rejection is INVALID_ARGUMENT with a message naming the field, e.g.
// "main.operands[3].location: CONSTANT_COPY range [120, 136) is outside operandValues (128
// bytes)". Operation-specific rules (which types and how many inputs an operation takes)
// are checked with the signature table of operation_signatures.h.
#pragma once

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// Checks a Model: operand types, dimensions, quantization parameters (scale/zeroPoint
/// legal for the type, per-channel parameters), lifetimes consistent with where operands
/// are used (inputs/outputs lists, CONSTANT_* locations inside operandValues or pools with
/// sizes matching type and dimensions, SUBGRAPH operands naming existing subgraphs),
/// numberOfConsumers, operation input/output counts and types, every operand written at
/// most once and before it is read (graph acyclic and in executable order), referenced
/// subgraphs reachable without cycles, pools valid.
/// IF/WHILE operations must match the input/output counts and operand types (type, scale,
/// zeroPoint) of the subgraphs they call. Extension operand and operation types are accepted
/// when their prefix is listed in extensionNameToPrefix; their shapes and sizes are not checked
/// here. OEM types and OEM_OPERATION are rejected.
Result<void> validateModel(const Model& model);

/// Checks a Request against a (validated) Model: argument counts, every location inside
/// its pool, outputs only in writable pools, dimensions compatible with the model
/// operand, inputs sized exactly, pools valid. Output buffers that are too small are not
/// an error here: execution reports them with OUTPUT_INSUFFICIENT_SIZE. Arguments in
/// driver-managed (token) pools are not range- or size-checked: the engine resolves the
/// token and checks them then.
Result<void> validateRequest(const Request& request, const Model& model);

}  // namespace nnhal::hal
