// The codec of the memory-domain buffer messages (ipc/messages.h).
#include "ipc/messages.h"

#include <utility>

#include "hal/model_codec.h"
#include "ipc/message_fields.h"

namespace nnhal::ipc {

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
