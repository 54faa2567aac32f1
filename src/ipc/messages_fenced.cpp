// The codec of the fenced-execution messages (ipc/messages.h).
#include "ipc/messages.h"

#include <utility>

#include "ipc/message_fields.h"

namespace nnhal::ipc {

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

}  // namespace nnhal::ipc
