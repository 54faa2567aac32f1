// hal/model_codec.h — the binary form of a Subgraph (operands, operations, inputs and
// outputs), shared by the compilation cache (docs/CACHE_FORMAT.md) and the IPC wire format.
//
// Layout, little-endian, per subgraph: u32 operand count, then per operand {i32 type,
// u32 rank + u32 dims, u32 numberOfConsumers, f32 scale, i32 zeroPoint, i32 lifetime,
// u32 poolIndex, u32 offset, u32 length, u8 extra kind (0 none, 1 per-channel quant:
// u32 count + f32 scales + u32 channelDim, 2 extension: u64 length + bytes)}; u32 operation
// count, per operation {i32 type, u32 count + inputs, u32 count + outputs}; u32 count +
// input indexes; u32 count + output indexes.
//
// Decoding is bounds-checked (ByteReader) and bounded (kMaxCodecCount elements per list,
// kMaxCodecRank dimensions) but does not validate: enum values and indexes are checked
// later by hal::validateModel, which every decoded Model must pass before use.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>

#include "hal/serialization.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// Longest list (operands, operations, indexes, scales) a decoder accepts.
inline constexpr uint32_t kMaxCodecCount = uint32_t{1} << 24;
/// Highest operand rank a decoder accepts.
inline constexpr uint32_t kMaxCodecRank = 1024;

/// Appends `subgraph` in the layout above.
void putSubgraph(ByteWriter& out, const Subgraph& subgraph);

/// Reads one subgraph; on malformed input `in.ok()` turns false (its error says why) and
/// the returned Subgraph is partial and must be discarded.
Subgraph getSubgraph(ByteReader& in);

}  // namespace nnhal::hal
