#include "ipc/message_fields.h"

#include <algorithm>
#include <string>

#include "hal/model_codec.h"

namespace nnhal::ipc {

void putTimePoint(ByteWriter& out, const OptionalTimePoint& time) {
  out.putU8(time.has_value() ? 1 : 0);
  out.put<int64_t>(
      time ? std::chrono::duration_cast<std::chrono::nanoseconds>(time->time_since_epoch()).count()
           : 0);
}

OptionalTimePoint getTimePoint(ByteReader& in) {
  const uint8_t has = in.getU8();
  const auto ns = in.get<int64_t>();
  if (has > 1) in.failWith("deadline: bad presence flag " + std::to_string(has));
  if (has != 1) return std::nullopt;
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::nanoseconds(ns)));
}

bool getBool(ByteReader& in, const char* what) {
  const uint8_t value = in.getU8();
  if (value > 1) in.failWith(std::string(what) + ": bad boolean " + std::to_string(value));
  return value == 1;
}

uint32_t getFdIndex(ByteReader& in, size_t fdCount, const char* what) {
  const uint32_t index = in.getU32();
  if (in.ok() && index >= fdCount) {
    in.failWith(std::string(what) + ": descriptor index " + std::to_string(index) +
                " but the frame carries " + std::to_string(fdCount));
  }
  return index;
}

void putPerformance(ByteWriter& out, const PerformanceInfo& info) {
  out.putF32(info.execTime);
  out.putF32(info.powerUsage);
}

PerformanceInfo getPerformance(ByteReader& in) {
  PerformanceInfo info;
  info.execTime = in.getF32();
  info.powerUsage = in.getF32();
  return info;
}

void putPool(ByteWriter& out, const WirePool& pool) {
  out.putU8(static_cast<uint8_t>(pool.source));
  out.putU64(pool.id);
  switch (pool.source) {
    case WirePool::Source::kFd:
      out.putI32(pool.kind);
      out.putU64(pool.size);
      out.putU64(pool.offset);
      out.putU8(pool.writable ? 1 : 0);
      out.putU32(pool.desc.width);
      out.putU32(pool.desc.height);
      out.putU32(pool.desc.layers);
      out.putU64(pool.desc.usage);
      out.putU32(pool.fdIndex);
      break;
    case WirePool::Source::kCached:
    case WirePool::Source::kEmpty:
      break;
    case WirePool::Source::kToken:
      out.putU32(pool.token);
      break;
  }
}

WirePool getPool(ByteReader& in, size_t fdCount) {
  WirePool pool;
  const uint8_t source = in.getU8();
  pool.id = in.getU64();
  switch (source) {
    case static_cast<uint8_t>(WirePool::Source::kFd):
      pool.source = WirePool::Source::kFd;
      pool.kind = in.getI32();
      pool.size = in.getU64();
      pool.offset = in.getU64();
      pool.writable = getBool(in, "pool.writable");
      pool.desc.width = in.getU32();
      pool.desc.height = in.getU32();
      pool.desc.layers = in.getU32();
      pool.desc.usage = in.getU64();
      pool.fdIndex = getFdIndex(in, fdCount, "pool");
      break;
    case static_cast<uint8_t>(WirePool::Source::kCached):
      pool.source = WirePool::Source::kCached;
      break;
    case static_cast<uint8_t>(WirePool::Source::kToken):
      pool.source = WirePool::Source::kToken;
      pool.token = in.getU32();
      break;
    case static_cast<uint8_t>(WirePool::Source::kEmpty):
      pool.source = WirePool::Source::kEmpty;
      break;
    default:
      in.failWith("pool: unknown source " + std::to_string(source));
  }
  return pool;
}

void putPools(ByteWriter& out, const std::vector<WirePool>& pools) {
  out.putU32(static_cast<uint32_t>(pools.size()));
  for (const WirePool& pool : pools) putPool(out, pool);
}

std::vector<WirePool> getPools(ByteReader& in, size_t fdCount) {
  std::vector<WirePool> pools(in.readCount(kMaxWireCount, 9));
  for (WirePool& pool : pools) pool = getPool(in, fdCount);
  return pools;
}

void putArguments(ByteWriter& out, const std::vector<RequestArgument>& args) {
  out.putU32(static_cast<uint32_t>(args.size()));
  for (const RequestArgument& arg : args) {
    out.putU8(arg.hasNoValue ? 1 : 0);
    out.putU32(arg.location.poolIndex);
    out.putU32(arg.location.offset);
    out.putU32(arg.location.length);
    out.putU32Vector(arg.dimensions);
  }
}

std::vector<RequestArgument> getArguments(ByteReader& in) {
  std::vector<RequestArgument> args(in.readCount(kMaxWireCount, 17));
  for (RequestArgument& arg : args) {
    arg.hasNoValue = getBool(in, "argument.hasNoValue");
    arg.location.poolIndex = in.getU32();
    arg.location.offset = in.getU32();
    arg.location.length = in.getU32();
    arg.dimensions = in.getU32Vector(hal::kMaxCodecRank);
  }
  return args;
}

void putCacheFiles(ByteWriter& out, const WireCacheFiles& files) {
  for (const auto* list : {&files.modelCache, &files.dataCache}) {
    out.putU32(static_cast<uint32_t>(list->size()));
    for (const std::vector<uint32_t>& handle : *list) out.putU32Vector(handle);
  }
  out.putBytes(files.token);
}

WireCacheFiles getCacheFiles(ByteReader& in, size_t fdCount) {
  WireCacheFiles files;
  for (auto* list : {&files.modelCache, &files.dataCache}) {
    list->resize(in.readCount(kMaxWireCount, 4));
    for (std::vector<uint32_t>& handle : *list) {
      handle = in.getU32Vector(kMaxWireCount);
      for (uint32_t index : handle) {
        if (in.ok() && index >= fdCount) {
          in.failWith("cache handle: descriptor index " + std::to_string(index) +
                      " but the frame carries " + std::to_string(fdCount));
        }
      }
    }
  }
  const std::span<const uint8_t> token = in.getBytes(files.token.size());
  if (in.ok()) std::copy(token.begin(), token.end(), files.token.begin());
  return files;
}

WireStatus getStatusChecked(ByteReader& in) {
  WireStatus status;
  const int32_t code = in.getI32();
  if (in.ok() &&
      (code < 0 || code > static_cast<int32_t>(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT))) {
    in.failWith("status: unknown ErrorStatus " + std::to_string(code));
  }
  status.status = static_cast<ErrorStatus>(code);
  status.message = in.getString(kMaxWireString);
  return status;
}

}  // namespace nnhal::ipc
