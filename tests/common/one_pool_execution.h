// The simplest execution a test needs: a prepared model with one input and one output, run
// synchronously on one shared-memory pool that holds the input's bytes followed by the
// output's. Shared by the actors, gpu and tools tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "nnhal/device.h"

namespace nnhal::testing {

/// The output's `outBytes` bytes, or the execution's error.
inline Result<std::vector<uint8_t>> executeOnOnePool(PreparedModel& prepared,
                                                     const std::vector<uint8_t>& input,
                                                     uint32_t outBytes) {
  const auto inBytes = static_cast<uint32_t>(input.size());
  NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(inBytes + outBytes));
  std::memcpy(pool.data(), input.data(), inBytes);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, inBytes}, {}}};
  request.outputs = {{false, {0, inBytes, outBytes}, {}}};
  NNHAL_TRY(prepared.executeSynchronously(request));
  return std::vector<uint8_t>(pool.data() + inBytes, pool.data() + inBytes + outBytes);
}

/// The same for float32 tensors: the output's `outputCount` values.
inline Result<std::vector<float>> executeFloatsOnOnePool(PreparedModel& prepared,
                                                         const std::vector<float>& input,
                                                         size_t outputCount) {
  std::vector<uint8_t> bytes(input.size() * sizeof(float));
  std::memcpy(bytes.data(), input.data(), bytes.size());
  NNHAL_ASSIGN_OR_RETURN(
      const std::vector<uint8_t> out,
      executeOnOnePool(prepared, bytes, static_cast<uint32_t>(outputCount * sizeof(float))));
  std::vector<float> values(outputCount);
  std::memcpy(values.data(), out.data(), out.size());
  return values;
}

}  // namespace nnhal::testing
