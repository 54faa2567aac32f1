// ipc/daemon/work_queue.h — one connection's requests on their way to the driver: admitted,
// waiting for one of the connection's driver slots, running.
//
// A connection runs at most `maxRunning` jobs at once on the driver's threads (a preparation,
// an execution, a supported-operations check, a buffer copy); the others wait here, in
// order, at most `maxQueued` (ClientLimits, docs/IPC_PROTOCOL.md "Quotas"). The counting is
// RAII, so that work which is dropped (a closed connection's queue, a callback the driver
// destroyed without calling it, an exception) gives back what it held:
//  - a Ticket is one admitted request: it holds the request's charge (Resource::kRequests,
//    to the application and the daemon) and counts in inFlight() until it is answered or
//    destroyed;
//  - a Running job holds its Ticket and its driver slot; ending it (end(), or destroying
//    it) frees the slot, and the next waiting job starts.
//
// Threading: the queue belongs to its connection's strand: admit, schedule and close run
// there, and jobs start there. A Ticket or a Running job may be destroyed on any thread; a
// slot freed off the strand is handed back on the strand.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>

#include "ipc/daemon/quota.h"
#include "nnhal/status.h"

namespace nnhal::ipc {

class WorkQueue {
 public:
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;
  class Ticket;
  class Running;
  using Job = std::move_only_function<void(Running)>;

  /// `maxRunning` (at least 1) jobs run at once; `maxQueued` more may wait. `runningGauge`
  /// (may be null), shared with other queues: counts the jobs that hold a slot (the daemon's
  /// calls in flight).
  WorkQueue(Strand strand, uint32_t maxRunning, uint32_t maxQueued,
            std::shared_ptr<std::atomic<uint64_t>> runningGauge = nullptr);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  /// Whether one more request may be accepted: the slots are free or the queue has room.
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT ("quota exceeded: N requests of this client are
  /// running and M waiting, the most allowed").
  Result<void> checkRoom() const;
  /// checkRoom(), then one request charged to `account` and the daemon (`ledger`'s kRequests
  /// limits). Errors: those of checkRoom and Ledger::charge.
  Result<Ticket> admit(Ledger& ledger, const std::shared_ptr<Account>& account);
  /// Starts `job` now (on this thread, which must be the strand) when a slot is free, else
  /// queues it. After close(), `job` is dropped (with its ticket).
  void schedule(Ticket ticket, Job job);
  /// Drops the waiting jobs (and their tickets) and starts nothing more. Running jobs keep
  /// their slots until they end.
  void close();

  /// Requests admitted and not answered: waiting, running, or between the two.
  size_t inFlight() const;
  uint32_t running() const;
  size_t waiting() const;

 private:
  struct Core;
  std::shared_ptr<Core> core_;
};

/// One admitted request. Movable; answered() or destruction gives the charge back.
class WorkQueue::Ticket {
 public:
  Ticket() = default;
  Ticket(Ticket&& other) noexcept = default;
  Ticket& operator=(Ticket&& other) noexcept;
  ~Ticket() { answered(); }
  Ticket(const Ticket&) = delete;
  Ticket& operator=(const Ticket&) = delete;

  /// The request is answered (call it before sending the reply, so that a client that reads
  /// its reply finds its request no longer counted). Idempotent.
  void answered();
  bool valid() const { return core_ != nullptr; }

 private:
  friend class WorkQueue;
  Ticket(std::shared_ptr<Core> core, Charge charge);
  std::shared_ptr<Core> core_;
  Charge charge_;
};

/// A job that holds a driver slot of its connection, and its request's ticket.
class WorkQueue::Running {
 public:
  Running() = default;
  Running(Running&& other) noexcept = default;
  Running& operator=(Running&& other) noexcept;
  ~Running() { end(); }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

  /// The request is answered: Ticket::answered. The slot stays held.
  void answered() { ticket_.answered(); }
  /// The job's work ended: the ticket is answered and the slot freed; the next waiting job
  /// starts (now, when called on the strand; else posted to it). Idempotent.
  void end();

 private:
  friend class WorkQueue;
  Running(std::shared_ptr<Core> core, Ticket ticket);
  std::shared_ptr<Core> core_;
  Ticket ticket_;
};

}  // namespace nnhal::ipc
