// ipc/client/remote_burst.h — the client's Burst over nnhald's fast message queues.
//
// configureExecutionBurst sends ConfigureBurst; the daemon creates the request and result
// queues (sealed memfds) and starts a BurstListener. Each execute():
//  1. gives every Memory of the request a slot (Memory::id() -> slot; freed slots are
//     reused from a stack) and keeps the Memory alive in its slot;
//  2. writes the request packet (ipc/burst_packets.h) to the request queue in one write;
//  3. waits for the result packet: polls for kClientPollWindow, then sleeps on the
//     queue's futex in 50 ms slices, checking between them that the connection lives.
// The daemon asks for slots it does not know (getMemories) over the socket; the
// connection's reader thread answers from this burst's slot table. freeMemory releases the
// slot on the daemon with a round trip, so a slot is never reused before the daemon let go
// of its old memory.
//
// A request naming a MemoryDomainToken pool, or one whose packet does not fit the request
// queue, runs through executeSynchronously over the socket instead. The result packet
// carries only a status; for an error, the burst asks the daemon for the message it logged
// (one extra round trip, on the error path only).
//
// When the connection is lost, a waiting execute() returns DEVICE_UNAVAILABLE within one
// slice, and so does every later call.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "ipc/client/connection.h"
#include "ipc/client/remote_device.h"
#include "ipc/fmq.h"
#include "nnhal/burst.h"

namespace nnhal::ipc {

class RemoteBurst final : public Burst,
                          public BurstMemoryProvider,
                          public std::enable_shared_from_this<RemoteBurst> {
 public:
  /// How long execute() polls the result queue before sleeping on its futex.
  static constexpr std::chrono::microseconds kClientPollWindow{50};

  /// Configures a burst of `model` on the daemon. Errors: as configureExecutionBurst.
  static Result<std::shared_ptr<Burst>> configure(std::shared_ptr<Link> link,
                                                  std::shared_ptr<RemotePreparedModel> model,
                                                  uint32_t requestLength = kDefaultFmqLength,
                                                  uint32_t resultLength = kDefaultFmqLength);
  ~RemoteBurst() override;

  Result<ExecutionResult> execute(const Request& request, MeasureTiming measure,
                                  OptionalTimePoint deadline) override;
  void freeMemory(const Memory& memory) override;
  BurstMemories provideMemories(const std::vector<int32_t>& slots, OutMessage& out,
                                std::vector<Memory>& keep) override;

  uint64_t handle() const { return burst_; }

 private:
  RemoteBurst(std::shared_ptr<Link> link, std::shared_ptr<RemotePreparedModel> model,
              uint64_t burst, Fmq requests, Fmq results);
  /// The slot of `memory`, given a new one when it has none.
  int32_t slotOf(const Memory& memory);
  /// The message the daemon kept for the last failed execution of this burst.
  std::string lastErrorMessage(ErrorStatus status);

  std::shared_ptr<Link> link_;
  std::shared_ptr<RemotePreparedModel> model_;
  const uint64_t burst_;

  std::mutex executeMutex_;  // one execution at a time; guards the queues
  Fmq requests_;
  Fmq results_;
  std::vector<std::byte> resultBytes_;

  std::mutex slotsMutex_;  // guards the slot table (read by the connection's reader)
  std::unordered_map<uint64_t, int32_t> slotOfMemory_;
  std::vector<Memory> memories_;  // by slot; invalid = free
  std::vector<int32_t> freeSlots_;
};

}  // namespace nnhal::ipc
