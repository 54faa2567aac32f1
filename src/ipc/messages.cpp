#include "ipc/messages.h"

#include <utility>

#include "hal/model_codec.h"
#include "ipc/message_fields.h"

namespace nnhal::ipc {

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
  out.payload.putString(m.device);
}

Hello decodeHello(ByteReader& in) {
  Hello m;
  m.protocolVersion = in.getU32();
  m.clientName = in.getString(kMaxWireString);
  // Older clients end here; the version check answers them.
  if (m.protocolVersion >= 6) m.device = in.getString(kMaxWireString);
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
  w.putU32(static_cast<uint32_t>(m.devices.size()));
  for (const std::string& name : m.devices) w.putString(name);
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
  m.devices.resize(in.readCount(kMaxWireCount, 4));
  for (std::string& name : m.devices) name = in.getString(kMaxWireString);
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

}  // namespace nnhal::ipc
