// WorkQueue: admission, slots and RAII counting of one connection's requests
// (ipc/daemon/work_queue.h).
#include "ipc/daemon/work_queue.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <mutex>
#include <string>

namespace nnhal::ipc {

struct WorkQueue::Core : std::enable_shared_from_this<WorkQueue::Core> {
  Core(Strand s, uint32_t running, uint32_t queued, std::shared_ptr<std::atomic<uint64_t>> g)
      : strand(std::move(s)),
        maxRunning(std::max<uint32_t>(1, running)),
        maxQueued(queued),
        gauge(std::move(g)) {}

  /// One more job holds a slot (under mutex, or before the job runs).
  void slotTaken() {
    ++running;
    if (gauge) gauge->fetch_add(1, std::memory_order_relaxed);
  }

  /// Starts waiting jobs while slots are free. On the strand.
  void startWaiting();
  /// One slot is free again. On the strand.
  void freeSlot();

  const Strand strand;
  const uint32_t maxRunning;
  const uint32_t maxQueued;
  const std::shared_ptr<std::atomic<uint64_t>> gauge;
  std::atomic<size_t> inFlight{0};

  // Guarded by mutex: normally touched on the strand only, but the queue may be closed by
  // the destruction of its connection on another thread.
  mutable std::mutex mutex;
  uint32_t running = 0;
  std::deque<std::pair<Ticket, Job>> waiting;
  bool closed = false;
};

void WorkQueue::Core::startWaiting() {
  for (;;) {
    std::pair<Ticket, Job> next;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (closed || running >= maxRunning || waiting.empty()) return;
      next = std::move(waiting.front());
      waiting.pop_front();
      slotTaken();
    }
    // The job may schedule or end work itself: no lock is held while it runs.
    next.second(Running(shared_from_this(), std::move(next.first)));
  }
}

void WorkQueue::Core::freeSlot() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    --running;
    if (gauge) gauge->fetch_sub(1, std::memory_order_relaxed);
  }
  startWaiting();
}

WorkQueue::WorkQueue(Strand strand, uint32_t maxRunning, uint32_t maxQueued,
                     std::shared_ptr<std::atomic<uint64_t>> runningGauge)
    : core_(std::make_shared<Core>(std::move(strand), maxRunning, maxQueued,
                                   std::move(runningGauge))) {}

WorkQueue::~WorkQueue() { close(); }

Result<void> WorkQueue::checkRoom() const {
  std::lock_guard<std::mutex> lock(core_->mutex);
  if (core_->running >= core_->maxRunning && core_->waiting.size() >= core_->maxQueued) {
    return quotaExceeded(std::to_string(core_->running) +
                         " requests of this client are running and " +
                         std::to_string(core_->waiting.size()) + " waiting, the most allowed");
  }
  return {};
}

Result<WorkQueue::Ticket> WorkQueue::admit(Ledger& ledger,
                                           const std::shared_ptr<Account>& account) {
  NNHAL_TRY(checkRoom());
  NNHAL_ASSIGN_OR_RETURN(Charge charge, ledger.charge(nullptr, account, Resource::kRequests));
  return Ticket(core_, std::move(charge));
}

void WorkQueue::schedule(Ticket ticket, Job job) {
  {
    std::lock_guard<std::mutex> lock(core_->mutex);
    if (core_->closed) return;  // the ticket and the job are dropped
    if (core_->running >= core_->maxRunning) {
      core_->waiting.emplace_back(std::move(ticket), std::move(job));
      return;
    }
    core_->slotTaken();
  }
  job(Running(core_, std::move(ticket)));
}

void WorkQueue::close() {
  std::deque<std::pair<Ticket, Job>> dropped;
  {
    std::lock_guard<std::mutex> lock(core_->mutex);
    core_->closed = true;
    dropped.swap(core_->waiting);
  }
  // Destroyed without the lock: their tickets and captures give back what they hold.
}

size_t WorkQueue::inFlight() const { return core_->inFlight.load(std::memory_order_relaxed); }

uint32_t WorkQueue::running() const {
  std::lock_guard<std::mutex> lock(core_->mutex);
  return core_->running;
}

size_t WorkQueue::waiting() const {
  std::lock_guard<std::mutex> lock(core_->mutex);
  return core_->waiting.size();
}

WorkQueue::Ticket::Ticket(std::shared_ptr<Core> core, Charge charge)
    : core_(std::move(core)), charge_(std::move(charge)) {
  core_->inFlight.fetch_add(1, std::memory_order_relaxed);
}

WorkQueue::Ticket& WorkQueue::Ticket::operator=(Ticket&& other) noexcept {
  if (this != &other) {
    answered();
    core_ = std::move(other.core_);
    charge_ = std::move(other.charge_);
  }
  return *this;
}

void WorkQueue::Ticket::answered() {
  if (core_ == nullptr) return;
  charge_.reset();
  core_->inFlight.fetch_sub(1, std::memory_order_relaxed);
  core_.reset();
}

WorkQueue::Running::Running(std::shared_ptr<Core> core, Ticket ticket)
    : core_(std::move(core)), ticket_(std::move(ticket)) {}

WorkQueue::Running& WorkQueue::Running::operator=(Running&& other) noexcept {
  if (this != &other) {
    end();
    core_ = std::move(other.core_);
    ticket_ = std::move(other.ticket_);
  }
  return *this;
}

void WorkQueue::Running::end() {
  ticket_.answered();
  if (core_ == nullptr) return;
  std::shared_ptr<Core> core = std::move(core_);
  if (core->strand.running_in_this_thread()) {
    core->freeSlot();
    return;
  }
  boost::asio::post(core->strand, [core] { core->freeSlot(); });
}

}  // namespace nnhal::ipc
