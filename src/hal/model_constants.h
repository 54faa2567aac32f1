// hal/model_constants.h — where a constant operand's bytes lie in its Model.
//
// Thread safety: a pure function.
#pragma once

#include <cstdint>

#include "nnhal/types.h"

namespace nnhal::hal {

/// The bytes of `operand` of `model`: in operandValues (CONSTANT_COPY) or in its pool
/// (CONSTANT_REFERENCE, which must be mapped: validated models have process-local pools,
/// hal::copyModelPoolsPrivately); null for every other lifetime. The location must have been
/// validated against the model (hal::validateModel).
inline const uint8_t* constantBytes(const Model& model, const Operand& operand) {
  switch (operand.lifetime) {
    case OperandLifeTime::CONSTANT_COPY:
      return model.operandValues.data() + operand.location.offset;
    case OperandLifeTime::CONSTANT_REFERENCE:
      return model.pools[operand.location.poolIndex].data() + operand.location.offset;
    default:
      return nullptr;
  }
}

}  // namespace nnhal::hal
