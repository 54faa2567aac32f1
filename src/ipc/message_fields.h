// ipc/message_fields.h — the fields several nnhald messages share (time points, booleans,
// descriptor indexes, pools, request arguments, cache files, statuses), written and read with
// hal's bounds-checked ByteWriter / ByteReader. Internal to the message codec (messages*.cpp):
// a malformed field fails the reader with a message naming it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hal/serialization.h"
#include "ipc/messages.h"

namespace nnhal::ipc {

/// The largest operandValues a model message may carry (bytes).
inline constexpr uint64_t kMaxOperandValuesBytes = uint64_t{1} << 30;

void putTimePoint(ByteWriter& out, const OptionalTimePoint& time);
OptionalTimePoint getTimePoint(ByteReader& in);
/// A boolean byte; any other value fails the reader naming `what`.
bool getBool(ByteReader& in, const char* what);
/// A descriptor index below `fdCount`, else the reader fails naming `what`.
uint32_t getFdIndex(ByteReader& in, size_t fdCount, const char* what);
void putPerformance(ByteWriter& out, const PerformanceInfo& info);
PerformanceInfo getPerformance(ByteReader& in);
void putPool(ByteWriter& out, const WirePool& pool);
WirePool getPool(ByteReader& in, size_t fdCount);
void putPools(ByteWriter& out, const std::vector<WirePool>& pools);
std::vector<WirePool> getPools(ByteReader& in, size_t fdCount);
void putArguments(ByteWriter& out, const std::vector<RequestArgument>& args);
std::vector<RequestArgument> getArguments(ByteReader& in);
void putCacheFiles(ByteWriter& out, const WireCacheFiles& files);
WireCacheFiles getCacheFiles(ByteReader& in, size_t fdCount);
/// A status with a known ErrorStatus code, else the reader fails.
WireStatus getStatusChecked(ByteReader& in);

}  // namespace nnhal::ipc
