// The codec of the burst messages (ipc/messages.h).
#include "ipc/messages.h"

#include <utility>

#include "ipc/message_fields.h"

namespace nnhal::ipc {

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

}  // namespace nnhal::ipc
