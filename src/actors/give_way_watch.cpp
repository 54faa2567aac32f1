#include "actors/give_way_watch.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <utility>

#include "common/thread_priority.h"

namespace nnhal::actors {
namespace {

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct GiveWayWatch::Run {
  hal::ApplicationId application;
  pid_t tid;
  int64_t lastCheckNs;
  uint64_t lastOnCpuNs;
  int64_t keptOffNs = 0;  ///< how long it has been kept off the cores, in a row
  bool promoted = false;
};

GiveWayWatch::GiveWayWatch(OwnExecutionsSince ownExecutionsSince)
    : ownExecutionsSince_(std::move(ownExecutionsSince)),
      thread_([this](std::stop_token stop) { watch(std::move(stop)); }) {}

GiveWayWatch::~GiveWayWatch() {
  thread_.request_stop();
  // The jthread joins when destroyed; wake_ wakes it through the stop token.
}

GiveWayWatch::Registration::Registration(Registration&& other) noexcept
    : watch_(std::exchange(other.watch_, nullptr)), run_(other.run_) {}

GiveWayWatch::Registration& GiveWayWatch::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (watch_ != nullptr) watch_->leave(run_);
    watch_ = std::exchange(other.watch_, nullptr);
    run_ = other.run_;
  }
  return *this;
}

GiveWayWatch::Registration::~Registration() {
  if (watch_ != nullptr) watch_->leave(run_);
}

GiveWayWatch::Registration GiveWayWatch::enter(hal::ApplicationId application) {
  const pid_t tid = gettid();
  const auto stat = common::readSchedStat(tid);
  Registration registration;
  if (!stat) return registration;  // no accounting: nothing to watch with
  {
    std::lock_guard lock(mutex_);
    runs_.push_back(Run{application, tid, nowNs(), stat->onCpuNs});
    registration.watch_ = this;
    registration.run_ = std::prev(runs_.end());
  }
  wake_.notify_one();
  return registration;
}

void GiveWayWatch::leave(std::list<Run>::iterator run) {
  std::lock_guard lock(mutex_);
  runs_.erase(run);
}

uint64_t GiveWayWatch::promotions() const {
  std::lock_guard lock(mutex_);
  return promotions_;
}

void GiveWayWatch::watch(std::stop_token stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    if (runs_.empty()) {
      wake_.wait(lock, stop, [&] { return !runs_.empty(); });
      continue;
    }
    if (wake_.wait_for(lock, stop, kCheckInterval, [] { return false; })) continue;
    if (stop.stop_requested()) return;
    checkLocked(nowNs());
  }
}

void GiveWayWatch::checkLocked(int64_t now) {
  constexpr int64_t kBoundNs =
      std::chrono::duration_cast<std::chrono::nanoseconds>(kGiveWayBound).count();
  for (Run& run : runs_) {
    if (run.promoted) continue;
    const auto stat = common::readSchedStat(run.tid);
    if (!stat) continue;
    const int64_t since = run.lastCheckNs;
    const int64_t elapsed = now - since;
    const uint64_t ran = stat->onCpuNs - run.lastOnCpuNs;
    run.lastCheckNs = now;
    run.lastOnCpuNs = stat->onCpuNs;
    if (elapsed <= 0) continue;
    // Kept off: ready to run, yet it ran for less than a quarter of the interval (a thread
    // sharing a core evenly with one other gets half; one giving way to a busy core, ~0).
    // Its own application's executions keeping it waiting do not count: executions first is
    // that application's priority.
    if (stat->runnable && 4 * ran < static_cast<uint64_t>(elapsed) &&
        !ownExecutionsSince_(run.application, since)) {
      run.keptOffNs += elapsed;
    } else {
      run.keptOffNs = 0;
    }
    if (run.keptOffNs < kBoundNs || refused_) continue;
    if (!common::restoreProcessPriority(run.tid)) {
      refused_ = true;
      spdlog::warn(
          "a preparation that gives way was kept off the cores for {} ms, and the OS refused "
          "it the process's priority back (needs RLIMIT_NICE 20, e.g. systemd LimitNICE=20, or "
          "CAP_SYS_NICE): preparations may wait for the cores as long as others want them",
          run.keptOffNs / 1'000'000);
      continue;
    }
    run.promoted = true;
    ++promotions_;
    spdlog::info(
        "a preparation of application {} that gives way was kept off the cores for {} ms: it "
        "runs at the process's priority now",
        run.application, run.keptOffNs / 1'000'000);
  }
}

}  // namespace nnhal::actors
