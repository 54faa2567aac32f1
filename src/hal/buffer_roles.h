// hal/buffer_roles.h — the checks of IDevice::allocate (HAL 1.3 memory domains) and the
// dimension arithmetic of driver-managed buffers.
//
// Pure functions: they see the prepared models only as {identity, Model} pairs, so that the
// embedded driver can run them over its own prepared models (actors/device_buffer.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "nnhal/buffer.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// A prepared model as allocate sees it: a process-unique identity (two handles to one
/// prepared model have the same) and the Model it was prepared from.
struct BufferModel {
  uint64_t id = 0;
  const Model* model = nullptr;
};

/// One role a buffer serves, with the prepared model resolved to its identity.
struct ResolvedRole {
  uint64_t modelId = 0;
  bool input = true;
  uint32_t ioIndex = 0;
  bool operator==(const ResolvedRole&) const = default;
};

/// What the roles and the descriptor agree on.
struct BufferShape {
  OperandType type = OperandType::TENSOR_FLOAT32;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  OperandExtraParams extraParams;
  /// Combined dimensions; 0 = unknown; empty for a scalar or a tensor of unknown rank.
  std::vector<uint32_t> dimensions;
  std::vector<ResolvedRole> roles;
};

/// Dimensions `a` and `b` merged (types.hal rules: an empty list is an unknown rank, 0 an
/// unknown dimension), or nullopt when they conflict (ranks or known values differ).
std::optional<std::vector<uint32_t>> combineDimensions(const std::vector<uint32_t>& a,
                                                       const std::vector<uint32_t>& b);

/// The checks of IDevice::allocate after the prepared models were resolved: at least one
/// model and one role, indexes in range, frequencies in (0, 1], no role given twice (by
/// identity: the same model passed twice is one model), one operand type, scale, zero point
/// and extra parameters across the roles, dimensions and ranks that combine between the
/// roles and with `desc` (a scalar takes none). Errors: INVALID_ARGUMENT naming the role;
/// GENERAL_FAILURE for a type without a fixed element size (extension and OEM types).
Result<BufferShape> validateBufferRoles(const BufferDesc& desc, std::span<const BufferModel> models,
                                        const std::vector<BufferRole>& inputRoles,
                                        const std::vector<BufferRole>& outputRoles);

}  // namespace nnhal::hal
