// kernels/gather_nd.h — GATHER_ND of the org.nnhal.tflite_compat extension (TFLite's
// GATHER_ND), for elements of any size.
//
// params has dimensions [d0, ..., d(P-1)]; indices is viewed as `tupleCount` tuples of N
// int32 values (N = the last dimension of indices, N <= P). Tuple t selects the slice
// params[i0, ..., i(N-1), :, ..., :] of `sliceBytes` bytes (the product of d(N)..d(P-1)
// times the element size), which is copied to output block t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace nnhal::kernels {

/// Where the first index outside its dimension is: tuple `tuple`, component `component`.
struct GatherNdBadIndex {
  size_t tuple = 0;
  size_t component = 0;
};

/// Checks every component j of every tuple against [0, dims[j]) (dims = the first N
/// dimensions of params, N = dims.size()). Returns the first index out of range, or nullopt.
std::optional<GatherNdBadIndex> findGatherNdIndexOutOfRange(
    const int32_t* indices, size_t tupleCount, std::span<const uint32_t> dims) noexcept;

/// Copies output blocks [begin, end) (work item = one tuple). `dims` are the first N
/// dimensions of params; every index must be in range (findGatherNdIndexOutOfRange first).
void gatherNd(const void* params, std::span<const uint32_t> dims, size_t sliceBytes,
              const int32_t* indices, void* out, size_t begin, size_t end) noexcept;

}  // namespace nnhal::kernels
