#include "ipc/messages.h"

#include <utility>

#include "hal/model_codec.h"

namespace nnhal::ipc {
namespace {

constexpr uint64_t kMaxOperandValuesBytes = uint64_t{1} << 30;

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

}  // namespace

std::string toString(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return "Hello";
    case MessageType::kHelloReply:
      return "HelloReply";
    case MessageType::kSupportedOperations:
      return "SupportedOperations";
    case MessageType::kSupportedOperationsReply:
      return "SupportedOperationsReply";
    case MessageType::kPrepareModel:
      return "PrepareModel";
    case MessageType::kPrepareModelFromCache:
      return "PrepareModelFromCache";
    case MessageType::kLaunched:
      return "Launched";
    case MessageType::kPrepareReply:
      return "PrepareReply";
    case MessageType::kReleasePreparedModel:
      return "ReleasePreparedModel";
    case MessageType::kExecuteSynchronously:
      return "ExecuteSynchronously";
    case MessageType::kExecute:
      return "Execute";
    case MessageType::kExecutionReply:
      return "ExecutionReply";
    case MessageType::kReleasePools:
      return "ReleasePools";
    case MessageType::kGetStats:
      return "GetStats";
    case MessageType::kStatsReply:
      return "StatsReply";
    case MessageType::kExecuteFenced:
      return "ExecuteFenced";
    case MessageType::kFencedReply:
      return "FencedReply";
    case MessageType::kFencedInfoReply:
      return "FencedInfoReply";
    case MessageType::kGetFencedInfo:
      return "GetFencedInfo";
    case MessageType::kReleaseFenced:
      return "ReleaseFenced";
    case MessageType::kConfigureBurst:
      return "ConfigureBurst";
    case MessageType::kBurstConfigured:
      return "BurstConfigured";
    case MessageType::kReleaseBurst:
      return "ReleaseBurst";
    case MessageType::kBurstFreeMemory:
      return "BurstFreeMemory";
    case MessageType::kBurstReply:
      return "BurstReply";
    case MessageType::kBurstGetMemories:
      return "BurstGetMemories";
    case MessageType::kBurstMemories:
      return "BurstMemories";
    case MessageType::kAllocate:
      return "Allocate";
    case MessageType::kAllocated:
      return "Allocated";
    case MessageType::kBufferCopyTo:
      return "BufferCopyTo";
    case MessageType::kBufferCopyFrom:
      return "BufferCopyFrom";
    case MessageType::kReleaseBuffer:
      return "ReleaseBuffer";
    case MessageType::kBufferReply:
      return "BufferReply";
    case MessageType::kBurstLastError:
      return "BurstLastError";
  }
  return "MessageType(" + std::to_string(static_cast<uint16_t>(type)) + ")";
}

WirePool poolWithFd(const Memory& memory, OutMessage& out) {
  WirePool pool;
  if (!memory.valid()) {
    pool.source = WirePool::Source::kEmpty;
    return pool;
  }
  pool.source = WirePool::Source::kFd;
  pool.id = memory.id();
  pool.kind = static_cast<int32_t>(memory.kind());
  pool.size = memory.size();
  pool.offset = memory.offset();
  pool.writable = memory.writable();
  pool.desc = memory.hardwareBufferDesc();
  pool.fdIndex = out.addFd(memory.fd());
  return pool;
}

WireCacheFiles cacheFilesWithFds(const CacheFiles& files, OutMessage& out) {
  WireCacheFiles wire;
  wire.token = files.token;
  for (const CacheHandle& handle : files.modelCache) {
    auto& indexes = wire.modelCache.emplace_back();
    for (int fd : handle) indexes.push_back(out.addFd(fd));
  }
  for (const CacheHandle& handle : files.dataCache) {
    auto& indexes = wire.dataCache.emplace_back();
    for (int fd : handle) indexes.push_back(out.addFd(fd));
  }
  return wire;
}

void encode(const WireStatus& m, OutMessage& out) {
  out.payload.putI32(static_cast<int32_t>(m.status));
  out.payload.putString(m.message);
}

WireStatus decodeWireStatus(ByteReader& in) { return getStatusChecked(in); }

void encode(const Hello& m, OutMessage& out) {
  out.payload.putU32(m.protocolVersion);
  out.payload.putString(m.clientName);
}

Hello decodeHello(ByteReader& in) {
  Hello m;
  m.protocolVersion = in.getU32();
  m.clientName = in.getString(kMaxWireString);
  return m;
}

void encode(const HelloReply& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  encode(m.status, out);
  w.putU32(m.protocolVersion);
  const DeviceInfo& info = m.info;
  w.putString(info.name);
  w.putString(info.version);
  w.putI32(static_cast<int32_t>(info.type));
  const Capabilities& caps = info.capabilities;
  putPerformance(w, caps.relaxedFloat32toFloat16PerformanceScalar);
  putPerformance(w, caps.relaxedFloat32toFloat16PerformanceTensor);
  w.putU32(static_cast<uint32_t>(caps.operandPerformance.size()));
  for (const OperandPerformance& p : caps.operandPerformance) {
    w.putI32(static_cast<int32_t>(p.type));
    putPerformance(w, p.info);
  }
  putPerformance(w, caps.ifPerformance);
  putPerformance(w, caps.whilePerformance);
  w.putU32(static_cast<uint32_t>(info.extensions.size()));
  for (const Extension& ext : info.extensions) {
    w.putString(ext.name);
    w.putU32(static_cast<uint32_t>(ext.operandTypes.size()));
    for (const Extension::OperandTypeInformation& t : ext.operandTypes) {
      w.putU16(t.type);
      w.putU8(t.isTensor ? 1 : 0);
      w.putU32(t.byteSize);
    }
  }
  w.putU32(info.cacheFiles.modelCache);
  w.putU32(info.cacheFiles.dataCache);
  w.putString(info.cachingOff);
}

HelloReply decodeHelloReply(ByteReader& in) {
  HelloReply m;
  m.status = getStatusChecked(in);
  m.protocolVersion = in.getU32();
  DeviceInfo& info = m.info;
  info.name = in.getString(kMaxWireString);
  info.version = in.getString(kMaxWireString);
  info.type = static_cast<DeviceType>(in.getI32());
  Capabilities& caps = info.capabilities;
  caps.relaxedFloat32toFloat16PerformanceScalar = getPerformance(in);
  caps.relaxedFloat32toFloat16PerformanceTensor = getPerformance(in);
  caps.operandPerformance.resize(in.readCount(kMaxWireCount, 12));
  for (OperandPerformance& p : caps.operandPerformance) {
    p.type = static_cast<OperandType>(in.getI32());
    p.info = getPerformance(in);
  }
  caps.ifPerformance = getPerformance(in);
  caps.whilePerformance = getPerformance(in);
  info.extensions.resize(in.readCount(kMaxWireCount, 8));
  for (Extension& ext : info.extensions) {
    ext.name = in.getString(kMaxWireString);
    ext.operandTypes.resize(in.readCount(kMaxWireCount, 7));
    for (Extension::OperandTypeInformation& t : ext.operandTypes) {
      t.type = in.getU16();
      t.isTensor = getBool(in, "extension.isTensor");
      t.byteSize = in.getU32();
    }
  }
  info.cacheFiles.modelCache = in.getU32();
  info.cacheFiles.dataCache = in.getU32();
  info.cachingOff = in.getString(kMaxWireString);
  return m;
}

void encode(const WireModel& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  hal::putSubgraph(w, m.model.main);
  w.putU32(static_cast<uint32_t>(m.model.referenced.size()));
  for (const Subgraph& subgraph : m.model.referenced) hal::putSubgraph(w, subgraph);
  w.putBlob(m.model.operandValues);
  putPools(w, m.pools);
  w.putU8(m.model.relaxComputationFloat32toFloat16 ? 1 : 0);
  w.putU32(static_cast<uint32_t>(m.model.extensionNameToPrefix.size()));
  for (const ExtensionNameAndPrefix& ext : m.model.extensionNameToPrefix) {
    w.putString(ext.name);
    w.putU16(ext.prefix);
  }
}

WireModel decodeWireModel(ByteReader& in, size_t fdCount) {
  WireModel m;
  m.model.main = hal::getSubgraph(in);
  m.model.referenced.resize(in.readCount(kMaxWireCount, 16));
  for (Subgraph& subgraph : m.model.referenced) {
    if (!in.ok()) break;
    subgraph = hal::getSubgraph(in);
  }
  const uint64_t valueBytes = in.readLength(kMaxOperandValuesBytes);
  const std::span<const uint8_t> values = in.getBytes(valueBytes);
  m.model.operandValues.assign(values.begin(), values.end());
  m.pools = getPools(in, fdCount);
  m.model.relaxComputationFloat32toFloat16 = getBool(in, "relaxComputationFloat32toFloat16");
  m.model.extensionNameToPrefix.resize(in.readCount(kMaxWireCount, 6));
  for (ExtensionNameAndPrefix& ext : m.model.extensionNameToPrefix) {
    ext.name = in.getString(kMaxWireString);
    ext.prefix = in.getU16();
  }
  return m;
}

void encode(const SupportedOperationsReply& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putU32(static_cast<uint32_t>(m.reasons.size()));
  for (const std::string& reason : m.reasons) out.payload.putString(reason);
}

SupportedOperationsReply decodeSupportedOperationsReply(ByteReader& in) {
  SupportedOperationsReply m;
  m.status = getStatusChecked(in);
  m.reasons.resize(in.readCount(kMaxWireCount, 4));
  for (std::string& reason : m.reasons) reason = in.getString(kMaxWireString);
  return m;
}

void encode(const PrepareModel& m, OutMessage& out) {
  encode(m.model, out);
  out.payload.putI32(m.preference);
  out.payload.putI32(m.priority);
  putTimePoint(out.payload, m.deadline);
  out.payload.putU8(m.cache ? 1 : 0);
  if (m.cache) putCacheFiles(out.payload, *m.cache);
}

PrepareModel decodePrepareModel(ByteReader& in, size_t fdCount) {
  PrepareModel m;
  m.model = decodeWireModel(in, fdCount);
  m.preference = in.getI32();
  m.priority = in.getI32();
  m.deadline = getTimePoint(in);
  if (getBool(in, "cache presence")) m.cache = getCacheFiles(in, fdCount);
  return m;
}

void encode(const PrepareFromCache& m, OutMessage& out) {
  putCacheFiles(out.payload, m.cache);
  putTimePoint(out.payload, m.deadline);
}

PrepareFromCache decodePrepareFromCache(ByteReader& in, size_t fdCount) {
  PrepareFromCache m;
  m.cache = getCacheFiles(in, fdCount);
  m.deadline = getTimePoint(in);
  return m;
}

void encode(const PrepareReply& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putU64(m.handle);
}

PrepareReply decodePrepareReply(ByteReader& in) {
  PrepareReply m;
  m.status = getStatusChecked(in);
  m.handle = in.getU64();
  return m;
}

void encode(const ReleasePreparedModel& m, OutMessage& out) { out.payload.putU64(m.handle); }

ReleasePreparedModel decodeReleasePreparedModel(ByteReader& in) { return {in.getU64()}; }

void encode(const Execute& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  w.putU64(m.handle);
  putArguments(w, m.request.inputs);
  putArguments(w, m.request.outputs);
  putPools(w, m.request.pools);
  w.putI32(m.measure);
  putTimePoint(w, m.deadline);
  w.put<int64_t>(m.loopTimeoutNs);
}

Execute decodeExecute(ByteReader& in, size_t fdCount) {
  Execute m;
  m.handle = in.getU64();
  m.request.inputs = getArguments(in);
  m.request.outputs = getArguments(in);
  m.request.pools = getPools(in, fdCount);
  m.measure = in.getI32();
  m.deadline = getTimePoint(in);
  m.loopTimeoutNs = in.get<int64_t>();
  return m;
}

void encode(const ExecutionReply& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  encode(m.status, out);
  w.putU32(static_cast<uint32_t>(m.outputShapes.size()));
  for (const OutputShape& shape : m.outputShapes) {
    w.putU32Vector(shape.dimensions);
    w.putU8(shape.isSufficient ? 1 : 0);
  }
  w.putU64(m.timing.timeOnDevice);
  w.putU64(m.timing.timeInDriver);
}

ExecutionReply decodeExecutionReply(ByteReader& in) {
  ExecutionReply m;
  m.status = getStatusChecked(in);
  m.outputShapes.resize(in.readCount(kMaxWireCount, 5));
  for (OutputShape& shape : m.outputShapes) {
    shape.dimensions = in.getU32Vector(hal::kMaxCodecRank);
    shape.isSufficient = getBool(in, "outputShape.isSufficient");
  }
  m.timing.timeOnDevice = in.getU64();
  m.timing.timeInDriver = in.getU64();
  return m;
}

void encode(const ReleasePools& m, OutMessage& out) {
  out.payload.putU32(static_cast<uint32_t>(m.ids.size()));
  for (uint64_t id : m.ids) out.payload.putU64(id);
}

ReleasePools decodeReleasePools(ByteReader& in) {
  ReleasePools m;
  m.ids.resize(in.readCount(kMaxWireCount, 8));
  for (uint64_t& id : m.ids) id = in.getU64();
  return m;
}

void encode(const StatsReply& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  w.putU64(m.counts.sessions);
  w.putU64(m.counts.preparedModels);
  w.putU64(m.counts.pools);
  w.putU64(m.counts.callsInFlight);
  w.putU64(m.counts.bursts);
  w.putU64(m.counts.burstListeners);
  w.putU64(m.counts.burstMemories);
  w.putU64(m.counts.buffers);
  w.putU8(m.wholeDaemon ? 1 : 0);
  w.putU64(m.poolBytes);
  w.putU64(m.residentBytes);
  w.putU64(m.uptimeMs);
  w.putU32(static_cast<uint32_t>(m.applications.size()));
  for (const ApplicationUsage& a : m.applications) {
    w.putU32(a.uid);
    w.putU32(a.weight);
    for (uint64_t v : {a.connections, a.preparedModels, a.constantBytes, a.pools, a.requests,
                       a.bursts, a.buffers, a.arenaBytes, a.driverTimeUs}) {
      w.putU64(v);
    }
  }
}

StatsReply decodeStatsReply(ByteReader& in) {
  StatsReply m;
  m.counts.sessions = in.getU64();
  m.counts.preparedModels = in.getU64();
  m.counts.pools = in.getU64();
  m.counts.callsInFlight = in.getU64();
  m.counts.bursts = in.getU64();
  m.counts.burstListeners = in.getU64();
  m.counts.burstMemories = in.getU64();
  m.counts.buffers = in.getU64();
  m.wholeDaemon = getBool(in, "wholeDaemon");
  m.poolBytes = in.getU64();
  m.residentBytes = in.getU64();
  m.uptimeMs = in.getU64();
  m.applications.resize(in.readCount(kMaxWireCount, 80));
  for (ApplicationUsage& a : m.applications) {
    a.uid = in.getU32();
    a.weight = in.getU32();
    for (uint64_t* v : {&a.connections, &a.preparedModels, &a.constantBytes, &a.pools, &a.requests,
                        &a.bursts, &a.buffers, &a.arenaBytes, &a.driverTimeUs}) {
      *v = in.getU64();
    }
  }
  return m;
}

void encode(const ExecuteFenced& m, OutMessage& out) {
  encode(m.execute, out);
  ByteWriter& w = out.payload;
  w.putU32(static_cast<uint32_t>(m.waitFor.size()));
  for (const WireFence& fence : m.waitFor) {
    w.putU8(fence.valid ? 1 : 0);
    w.putU32(fence.fdIndex);
  }
  w.putU8(m.timeoutAfterFenceNs ? 1 : 0);
  w.put<int64_t>(m.timeoutAfterFenceNs.value_or(0));
}

ExecuteFenced decodeExecuteFenced(ByteReader& in, size_t fdCount) {
  ExecuteFenced m;
  m.execute = decodeExecute(in, fdCount);
  m.waitFor.resize(in.readCount(kMaxWireCount, 5));
  for (WireFence& fence : m.waitFor) {
    fence.valid = getBool(in, "waitFor.valid");
    fence.fdIndex = fence.valid ? getFdIndex(in, fdCount, "waitFor") : in.getU32();
  }
  const bool hasTimeout = getBool(in, "timeoutAfterFence presence");
  const auto ns = in.get<int64_t>();
  if (hasTimeout) m.timeoutAfterFenceNs = ns;
  return m;
}

void encode(const FencedReply& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putU8(m.hasFence ? 1 : 0);
  out.payload.putU32(m.fenceFdIndex);
  out.payload.putU64(m.handle);
}

FencedReply decodeFencedReply(ByteReader& in, size_t fdCount) {
  FencedReply m;
  m.status = getStatusChecked(in);
  m.hasFence = getBool(in, "syncFence presence");
  m.fenceFdIndex = m.hasFence ? getFdIndex(in, fdCount, "syncFence") : in.getU32();
  m.handle = in.getU64();
  return m;
}

void encode(const FencedHandle& m, OutMessage& out) { out.payload.putU64(m.handle); }

FencedHandle decodeFencedHandle(ByteReader& in) { return {in.getU64()}; }

void encode(const FencedInfoReply& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putI32(static_cast<int32_t>(m.executionStatus));
  out.payload.putU64(m.timingLaunched.timeOnDevice);
  out.payload.putU64(m.timingLaunched.timeInDriver);
  out.payload.putU64(m.timingFenced.timeOnDevice);
  out.payload.putU64(m.timingFenced.timeInDriver);
}

FencedInfoReply decodeFencedInfoReply(ByteReader& in) {
  FencedInfoReply m;
  m.status = getStatusChecked(in);
  const int32_t code = in.getI32();
  if (in.ok() &&
      (code < 0 || code > static_cast<int32_t>(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT))) {
    in.failWith("executionStatus: unknown ErrorStatus " + std::to_string(code));
  }
  m.executionStatus = static_cast<ErrorStatus>(code);
  m.timingLaunched.timeOnDevice = in.getU64();
  m.timingLaunched.timeInDriver = in.getU64();
  m.timingFenced.timeOnDevice = in.getU64();
  m.timingFenced.timeInDriver = in.getU64();
  return m;
}

Result<void> decodeDone(const ByteReader& in, MessageType type) {
  if (!in.ok()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "malformed " + toString(type) + ": " + in.error());
  }
  if (!in.atEnd()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "malformed " + toString(type) + ": " +
                                                  std::to_string(in.remaining()) +
                                                  " bytes after the message");
  }
  return {};
}

Error toError(WireStatus status, std::vector<OutputShape> shapes) {
  return Error{status.status, std::move(status.message), std::move(shapes)};
}

WireStatus toWireStatus(const Error& error) { return WireStatus{error.status, error.message}; }

// --- bursts -----------------------------------------------------------------------------

void encode(const ConfigureBurst& m, OutMessage& out) {
  out.payload.putU64(m.handle);
  out.payload.putU32(m.requestLength);
  out.payload.putU32(m.resultLength);
}

ConfigureBurst decodeConfigureBurst(ByteReader& in) {
  ConfigureBurst m;
  m.handle = in.getU64();
  m.requestLength = in.getU32();
  m.resultLength = in.getU32();
  return m;
}

void encode(const BurstConfigured& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putU64(m.burst);
  out.payload.putU32(m.requestFdIndex);
  out.payload.putU32(m.requestLength);
  out.payload.putU32(m.resultFdIndex);
  out.payload.putU32(m.resultLength);
}

BurstConfigured decodeBurstConfigured(ByteReader& in, size_t fdCount) {
  BurstConfigured m;
  m.status = getStatusChecked(in);
  m.burst = in.getU64();
  const bool ok = m.status.status == ErrorStatus::NONE;  // queues travel only on success
  m.requestFdIndex = ok ? getFdIndex(in, fdCount, "request queue") : in.getU32();
  m.requestLength = in.getU32();
  m.resultFdIndex = ok ? getFdIndex(in, fdCount, "result queue") : in.getU32();
  m.resultLength = in.getU32();
  return m;
}

void encode(const BurstHandle& m, OutMessage& out) { out.payload.putU64(m.burst); }

BurstHandle decodeBurstHandle(ByteReader& in) { return {in.getU64()}; }

void encode(const BurstSlot& m, OutMessage& out) {
  out.payload.putU64(m.burst);
  out.payload.putI32(m.slot);
}

BurstSlot decodeBurstSlot(ByteReader& in) {
  BurstSlot m;
  m.burst = in.getU64();
  m.slot = in.getI32();
  return m;
}

void encode(const BurstGetMemories& m, OutMessage& out) {
  out.payload.putU64(m.burst);
  out.payload.putU32(static_cast<uint32_t>(m.slots.size()));
  for (int32_t slot : m.slots) out.payload.putI32(slot);
}

BurstGetMemories decodeBurstGetMemories(ByteReader& in) {
  BurstGetMemories m;
  m.burst = in.getU64();
  m.slots.resize(in.readCount(kMaxWireCount, 4));
  for (int32_t& slot : m.slots) slot = in.getI32();
  return m;
}

void encode(const BurstMemories& m, OutMessage& out) {
  encode(m.status, out);
  putPools(out.payload, m.pools);
}

BurstMemories decodeBurstMemories(ByteReader& in, size_t fdCount) {
  BurstMemories m;
  m.status = getStatusChecked(in);
  m.pools = getPools(in, fdCount);
  return m;
}

namespace {

void putRoles(ByteWriter& out, const std::vector<BufferRole>& roles) {
  out.putU32(static_cast<uint32_t>(roles.size()));
  for (const BufferRole& role : roles) {
    out.putU32(role.modelIndex);
    out.putU32(role.ioIndex);
    out.putF32(role.frequency);
  }
}

std::vector<BufferRole> getRoles(ByteReader& in) {
  std::vector<BufferRole> roles(in.readCount(kMaxWireCount, 12));
  for (BufferRole& role : roles) {
    role.modelIndex = in.getU32();
    role.ioIndex = in.getU32();
    role.frequency = in.getF32();
  }
  return roles;
}

}  // namespace

void encode(const Allocate& m, OutMessage& out) {
  ByteWriter& w = out.payload;
  w.putU32Vector(m.dimensions);
  w.putU32(static_cast<uint32_t>(m.models.size()));
  for (uint64_t model : m.models) w.putU64(model);
  putRoles(w, m.inputRoles);
  putRoles(w, m.outputRoles);
}

Allocate decodeAllocate(ByteReader& in) {
  Allocate m;
  m.dimensions = in.getU32Vector(hal::kMaxCodecRank);
  m.models.resize(in.readCount(kMaxWireCount, 8));
  for (uint64_t& model : m.models) model = in.getU64();
  m.inputRoles = getRoles(in);
  m.outputRoles = getRoles(in);
  return m;
}

void encode(const Allocated& m, OutMessage& out) {
  encode(m.status, out);
  out.payload.putU64(m.buffer);
  out.payload.putU32(m.token);
}

Allocated decodeAllocated(ByteReader& in) {
  Allocated m;
  m.status = getStatusChecked(in);
  m.buffer = in.getU64();
  m.token = in.getU32();
  return m;
}

void encode(const BufferCopy& m, OutMessage& out) {
  out.payload.putU64(m.buffer);
  putPool(out.payload, m.pool);
  out.payload.putU32Vector(m.dimensions);
}

BufferCopy decodeBufferCopy(ByteReader& in, size_t fdCount) {
  BufferCopy m;
  m.buffer = in.getU64();
  m.pool = getPool(in, fdCount);
  m.dimensions = in.getU32Vector(hal::kMaxCodecRank);
  return m;
}

void encode(const BufferHandle& m, OutMessage& out) { out.payload.putU64(m.buffer); }

BufferHandle decodeBufferHandle(ByteReader& in) {
  BufferHandle m;
  m.buffer = in.getU64();
  return m;
}

}  // namespace nnhal::ipc
