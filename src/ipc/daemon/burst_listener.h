// ipc/daemon/burst_listener.h — the daemon's side of one burst (IBurstContext).
//
// An actor with a thread of its own: it reads request packets from the burst's request
// queue, resolves their memory slots, runs the request through the prepared model's own
// burst (nnhal/burst.h: inline, on its thread, with an arena of its own, as an embedded
// client's burst runs) and writes the result packet to the result queue in one write. Its state
// (the slot table, the last error) is its own; the session reaches it only through the
// methods below.
//
// Waiting for a packet, it polls for `pollWindow` (50 µs by default, 0 for models prepared
// for LOW_POWER) checking, pausing and yielding the core, then sleeps on the queue's futex
// in slices of kIdleSlice. So a burst in use answers in a few microseconds, and an idle one
// costs one wake-up a second; with client and daemon on one core, each yields to the other.
//
// Quotas (ipc/daemon/quota.h): the listener holds its application's burst charge, one pools
// charge per memory slot it keeps, and one requests charge while an execution runs; a slot
// or an execution beyond the application's or the daemon's quota fails that packet with
// RESOURCE_EXHAUSTED_TRANSIENT. Its executions run on the device's scheduler as its
// application, like any other (actors/scheduler.h).
//
// The client is untrusted: a packet that breaks the layout, names an unknown slot, or
// fails validation gets a result packet with an error status, no shapes and no timing,
// and the queue stays in step (every packet is read whole). Slots the listener does not
// know are asked from the client (getMemories), at most `maxSlots` per burst. A queue whose
// counters the client corrupted stops the listener (the burst then answers nothing more;
// other bursts and clients are not affected). A client that does not read its results only
// blocks its own listener.
//
// Stopping: stop() (any thread) ends the wait for a packet, for room in the result queue
// or for getMemories at once; an execution in progress finishes first. The destructor
// stops and joins the thread: destroy a listener off the io threads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "ipc/burst_packets.h"
#include "ipc/daemon/quota.h"
#include "ipc/fmq.h"
#include "ipc/messages.h"
#include "nnhal/burst.h"
#include "nnhal/prepared_model.h"

namespace nnhal::ipc {

struct ServerCounters;

class BurstListener {
 public:
  /// Asks the client for the memories of `slots` (one per slot, in order); `keepWaiting`
  /// returns false when the listener stops. Errors: as the client answered, or
  /// GENERAL_FAILURE when it did not answer.
  using GetMemories = std::function<Result<std::vector<Memory>>(
      const std::vector<int32_t>& slots, const std::function<bool()>& keepWaiting)>;

  struct Config {
    /// The prepared model's burst (PreparedModel::configureExecutionBurst), which keeps the
    /// model alive.
    std::shared_ptr<Burst> burst;
    /// Kept alive as long as the listener (the session's record of the prepared model).
    std::shared_ptr<const void> keepAlive;
    Fmq requests;  ///< the daemon reads
    Fmq results;   ///< the daemon writes
    std::chrono::nanoseconds pollWindow{std::chrono::microseconds(50)};
    uint32_t maxSlots = 256;
    GetMemories getMemories;
    std::shared_ptr<ServerCounters> counters;
    /// Charges one memory slot, or one execution while it runs (null: not counted).
    std::function<Result<Charge>()> chargeSlot;
    std::function<Result<Charge>()> chargeExecution;
    /// The bursts quota: held as long as the listener.
    Charge charge;
    /// Bytes of one request's arguments in client files staged on the listener's thread
    /// (hal/file_pool_staging.h: never read or written by a driver slot).
    uint64_t maxStagedBytes = uint64_t{1} << 30;
  };

  /// The longest sleep of an idle listener before it looks at its stop flag again (stop()
  /// also wakes it at once, unless the client overwrote the queue's wake-up word meanwhile).
  static constexpr std::chrono::seconds kIdleSlice{1};

  /// Starts the listener's thread.
  explicit BurstListener(Config config);
  ~BurstListener();
  BurstListener(const BurstListener&) = delete;
  BurstListener& operator=(const BurstListener&) = delete;

  int requestQueueFd() const { return requestFd_; }
  int resultQueueFd() const { return resultFd_; }

  /// IBurstContext::freeMemory: forgets the slot and unmaps its memory once no execution
  /// uses it. Unknown slots are ignored.
  void freeSlot(int32_t slot);
  /// The status and message of the last execution (NONE and "" when it succeeded).
  WireStatus lastError() const;
  /// Ends the waits (see above) and gives the bursts quota back; returns at once. Called by
  /// the session's strand (and the destructor), never concurrently.
  void stop();

 private:
  void run(std::stop_token stop);
  /// Executes one packet; the result to send, and the error's message in `message`.
  BurstResult handle(std::span<const FmqRequestDatum> packet,
                     std::chrono::steady_clock::time_point received,
                     const std::function<bool()>& keepWaiting, std::string& message);
  Result<std::vector<Memory>> resolveSlots(const std::vector<int32_t>& slots,
                                           const std::function<bool()>& keepWaiting);

  Config config_;
  const int requestFd_;
  const int resultFd_;
  mutable std::mutex mutex_;  // guards slots_ and lastError_
  struct Slot {
    Memory memory;
    Charge charge;  ///< the pools quota
  };
  std::unordered_map<int32_t, Slot> slots_;
  WireStatus lastError_;
  std::jthread thread_;  // last: started when everything else is ready
};

}  // namespace nnhal::ipc
