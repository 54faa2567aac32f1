// bench/onednn_operations.h — one NNAPI operation to oneDNN primitives (the oneDNN baseline's
// translation table; bench/onednn_baseline.h says what is supported and how it is computed).
//
// Thread safety: one thread at a time per Network.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "bench/onednn_network.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::bench::onednn {

/// An ADD computed by the CONV_2D that produces one of its inputs, as a sum post-op writing
/// over the ADD's other input.
struct FusedAdd {
  size_t add = 0;       ///< the ADD's operation index
  uint32_t other = 0;   ///< the ADD's other input: its buffer becomes the ADD's output
  uint32_t output = 0;  ///< the ADD's output operand
};

/// Per operation: the ADD fused into it (for CONV_2D operations), and whether it is an ADD
/// fused into an earlier convolution (then it has no steps of its own).
struct Fusions {
  std::vector<std::optional<FusedAdd>> intoConvolution;
  std::vector<bool> fusedAway;
};

/// Finds the ADDs that can run as their producing convolution's sum post-op: one input is a
/// CONV_2D output without fused activation that only this ADD reads; the other has the
/// output's shape and element type in the scheme, is produced by an operation other than an
/// alias, is neither a model input nor a model output, and is read by nothing at or after
/// the convolution but this ADD.
Fusions planFusions(const Network& network);

/// Adds the steps of operation `k` (network.begin(k) already called). Errors:
/// INVALID_ARGUMENT for unsupported operations, types and parameters.
Result<void> addOperation(Network& network, size_t k, const Fusions& fusions);

}  // namespace nnhal::bench::onednn
