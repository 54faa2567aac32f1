// ipc/daemon/burst_listener.h — the daemon's side of one burst (IBurstContext).
//
// An actor with a thread of its own: it reads request packets from the burst's request
// queue, resolves their memory slots, runs the request on the prepared model (inline, on
// its thread) and writes the result packet to the result queue in one write. Its state
// (the slot table, the last error) is its own; the session reaches it only through the
// methods below.
//
// Waiting for a packet, it polls for `pollWindow` (50 µs by default, 0 for models prepared
// for LOW_POWER) checking, pausing and yielding the core, then sleeps on the queue's futex
// in 50 ms slices. So a burst in use answers in a few microseconds, and an idle one costs
// nothing; with client and daemon on one core, each yields to the other.
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
#include "ipc/fmq.h"
#include "ipc/messages.h"
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
    std::shared_ptr<PreparedModel> model;
    /// Kept alive as long as the listener (the session's record of the prepared model).
    std::shared_ptr<const void> keepAlive;
    Fmq requests;  ///< the daemon reads
    Fmq results;   ///< the daemon writes
    std::chrono::nanoseconds pollWindow{std::chrono::microseconds(50)};
    uint32_t maxSlots = 256;
    GetMemories getMemories;
    std::shared_ptr<ServerCounters> counters;
  };

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
  /// Ends the waits (see above); returns at once.
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
  std::unordered_map<int32_t, Memory> slots_;
  WireStatus lastError_;
  std::jthread thread_;  // last: started when everything else is ready
};

}  // namespace nnhal::ipc
