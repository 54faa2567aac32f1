// kernels/gather.h — index-driven row copies of any element size: GATHER, EMBEDDING_LOOKUP
// (a GATHER along axis 0) and HASHTABLE_LOOKUP.
//
// Work items are documented per kernel; kernels process [begin, end) and may run
// concurrently on disjoint ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nnhal::kernels {

/// Returns the position of the first of `indices[0, count)` outside [0, limit), or nullopt
/// when all are inside.
std::optional<size_t> findIndexOutOfRange(const int32_t* indices, size_t count,
                                          size_t limit) noexcept;

/// What every device says of such an index: "<what> element <position> is <value>, outside
/// [0, <limit>)".
std::string indexOutOfRangeMessage(std::string_view what, size_t position, int64_t value,
                                   size_t limit);

/// GATHER: the input is viewed as [outer, axisSize, inner] (inner counted in bytes as
/// `innerBytes`), the output as [outer, indexCount, inner]; output block (o, k) is input block
/// (o, indices[k]). Work item = one output block o * indexCount + k. Every index must be in
/// [0, axisSize) (check with findIndexOutOfRange first).
void gatherBlocks(const void* src, size_t axisSize, size_t innerBytes, const int32_t* indices,
                  size_t indexCount, void* dst, size_t begin, size_t end) noexcept;

/// HASHTABLE_LOOKUP: `keys[0, keyCount)` sorted ascending; row r of `values` (rowBytes bytes)
/// belongs to keys[r]. For lookup i, output row i is the row of the key equal to lookups[i]
/// and hits[i] = 1, or zeros and hits[i] = 0 when no key matches. Work item = one lookup.
void hashtableLookup(const int32_t* lookups, const int32_t* keys, size_t keyCount,
                     const void* values, size_t rowBytes, void* dst, uint8_t* hits, size_t begin,
                     size_t end) noexcept;

}  // namespace nnhal::kernels
