// The device's run queue (actors/scheduler.h): priority order within an application when work
// is queued, the starvation bound, pausing at yield points for higher-priority work, the inline
// fast path, preparations on their own lower-priority threads within their own share of the
// slots; and between applications, fair share: priorities never cross, weights divide the
// slots, inline runs count, and a run over its share pauses for a waiting application.
#include "actors/scheduler.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/busy_machine.h"

namespace nnhal::actors {
namespace {

using nnhal::testing::BusyMachine;

using namespace std::chrono_literals;

/// A pool and a scheduler of `slots`, and a log of what ran.
class SchedulerTest : public ::testing::Test {
 protected:
  void make(uint32_t slots) {
    pool_ = std::make_unique<boost::asio::thread_pool>(2 * slots);
    scheduler_ = std::make_shared<Scheduler>(pool_->get_executor(), slots);
  }
  void TearDown() override {
    if (pool_) pool_->join();
  }
  void record(const std::string& what) {
    std::lock_guard lock(mutex_);
    log_.push_back(what);
    cv_.notify_all();
  }
  std::vector<std::string> log() {
    std::lock_guard lock(mutex_);
    return log_;
  }
  bool waitForLog(size_t entries) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, 10s, [&] { return log_.size() >= entries; });
  }
  /// Submits a job that holds its slot until `release` is set.
  std::shared_ptr<std::promise<void>> block(Priority priority) {
    auto release = std::make_shared<std::promise<void>>();
    auto started = std::make_shared<std::promise<void>>();
    auto startedFuture = started->get_future();
    scheduler_->submit(priority, Work::kExecution, [release, started](Lease) {
      started->set_value();
      release->get_future().wait();
    });
    startedFuture.wait();
    return release;
  }

  std::unique_ptr<boost::asio::thread_pool> pool_;
  std::shared_ptr<Scheduler> scheduler_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> log_;
};

TEST_F(SchedulerTest, QueuedWorkStartsHighBeforeMediumBeforeLow) {
  make(1);
  auto release = block(Priority::LOW);
  for (auto [name, priority] :
       std::vector<std::pair<std::string, Priority>>{{"low1", Priority::LOW},
                                                     {"high1", Priority::HIGH},
                                                     {"medium1", Priority::MEDIUM},
                                                     {"low2", Priority::LOW},
                                                     {"high2", Priority::HIGH}}) {
    scheduler_->submit(priority, Work::kExecution, [this, name = name](Lease) { record(name); });
  }
  EXPECT_EQ(scheduler_->queued(), 5u);
  release->set_value();
  ASSERT_TRUE(waitForLog(5));
  EXPECT_EQ(log(), (std::vector<std::string>{"high1", "high2", "medium1", "low1", "low2"}));
}

// Within a priority, an execution goes before queued preparations (compiling is background
// work next to an inference someone waits for); a higher priority still wins.
TEST_F(SchedulerTest, ExecutionsGoBeforePreparationsOfTheSamePriority) {
  make(1);
  auto release = block(Priority::LOW);
  scheduler_->submit(Priority::MEDIUM, Work::kPreparation, [this](Lease) { record("compile"); });
  scheduler_->submit(Priority::HIGH, Work::kPreparation, [this](Lease) { record("compileHigh"); });
  scheduler_->submit(Priority::MEDIUM, Work::kExecution, [this](Lease) { record("execute"); });
  release->set_value();
  ASSERT_TRUE(waitForLog(3));
  EXPECT_EQ(log(), (std::vector<std::string>{"compileHigh", "execute", "compile"}));
}

TEST_F(SchedulerTest, ALowJobRunsAfterAtMostTheBoundOfNewerHighOnes) {
  make(1);
  auto release = block(Priority::HIGH);
  scheduler_->submit(Priority::LOW, Work::kExecution, [this](Lease) { record("low"); });
  constexpr int kHigh = 20;
  for (int i = 0; i < kHigh; ++i) {
    scheduler_->submit(Priority::HIGH, Work::kExecution, [this](Lease) { record("high"); });
  }
  release->set_value();
  ASSERT_TRUE(waitForLog(kHigh + 1));
  const auto entries = log();
  const auto low = std::find(entries.begin(), entries.end(), "low") - entries.begin();
  EXPECT_LE(low, static_cast<long>(Scheduler::kStarvationBound));
  EXPECT_GT(low, 0) << "HIGH work should still go first while the bound allows";
}

// A LOW job between its steps pauses for a HIGH one, which then runs alone; the LOW job goes
// on where it stopped once the HIGH one is done.
TEST_F(SchedulerTest, ARunningLowJobPausesAtItsNextYieldPointForHighWork) {
  make(1);
  std::atomic<bool> highSubmitted{false};
  std::atomic<bool> highDone{false};
  std::atomic<int> lowStepsWhileHighPending{0};
  std::promise<void> lowStarted;
  std::promise<void> lowDone;
  scheduler_->submit(Priority::LOW, Work::kExecution, [&](Lease lease) {
    lowStarted.set_value();
    for (int step = 0; step < 200; ++step) {
      lease.yield();
      if (highSubmitted && !highDone) ++lowStepsWhileHighPending;
      std::this_thread::sleep_for(200us);
    }
    lowDone.set_value();
  });
  lowStarted.get_future().wait();
  std::promise<void> high;
  highSubmitted = true;
  scheduler_->submit(Priority::HIGH, Work::kExecution, [&](Lease) {
    std::this_thread::sleep_for(20ms);  // many LOW steps' worth
    highDone = true;
    high.set_value();
  });
  ASSERT_EQ(high.get_future().wait_for(10s), std::future_status::ready);
  ASSERT_EQ(lowDone.get_future().wait_for(10s), std::future_status::ready);
  // At most the step in progress when HIGH arrived.
  EXPECT_LE(lowStepsWhileHighPending.load(), 1);
}

TEST_F(SchedulerTest, EnterRunsInlineWhenNothingIsQueuedAndHoldsBackLowerWork) {
  make(1);
  {
    Lease inlineHigh = scheduler_->enter(Priority::HIGH);
    EXPECT_TRUE(inlineHigh.valid());
    // A LOW job finds a free slot but does not start while HIGH work runs.
    scheduler_->submit(Priority::LOW, Work::kExecution, [this](Lease) { record("low"); });
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(log().empty());
    EXPECT_EQ(scheduler_->queued(), 1u);
  }
  ASSERT_TRUE(waitForLog(1));
  // With work queued, a caller waits for its turn (here: after the MEDIUM job it queued
  // behind, before the LOW one).
  auto release = block(Priority::LOW);
  scheduler_->submit(Priority::LOW, Work::kExecution, [this](Lease) { record("low2"); });
  scheduler_->submit(Priority::MEDIUM, Work::kExecution, [this](Lease) { record("medium"); });
  std::thread caller([&] {
    Lease lease = scheduler_->enter(Priority::MEDIUM);
    record("caller");
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(log().size(), 1u) << "the caller must wait: the only slot is taken";
  release->set_value();
  caller.join();
  ASSERT_TRUE(waitForLog(4));
  EXPECT_EQ(log(), (std::vector<std::string>{"low", "medium", "caller", "low2"}));
}

constexpr hal::ApplicationId kAppA = 1000;
constexpr hal::ApplicationId kAppB = 1001;

/// Busy-waits `duration` (a job that holds its slot and the CPU).
void spin(std::chrono::microseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < until) {
  }
}

// The HAL scopes priority to one application: another application's HIGH work does not go
// before this one's LOW work; the two take turns.
TEST_F(SchedulerTest, PriorityDoesNotCrossApplications) {
  make(1);
  auto release = block(Priority::LOW);  // the embedded application holds the slot
  for (int i = 0; i < 6; ++i) {
    scheduler_->submit(kAppA, Priority::HIGH, Work::kExecution, [this](Lease) {
      spin(300us);
      record("A-high");
    });
  }
  scheduler_->submit(kAppB, Priority::LOW, Work::kExecution, [this](Lease) {
    spin(300us);
    record("B-low");
  });
  release->set_value();
  ASSERT_TRUE(waitForLog(7));
  const auto entries = log();
  const auto b = std::find(entries.begin(), entries.end(), "B-low") - entries.begin();
  EXPECT_LE(b, 1) << "B's LOW job waited behind A's HIGH ones";
}

// Two applications with many equal jobs on one slot alternate; with weights 3 and 1, the
// first gets about three times the starts.
TEST_F(SchedulerTest, ApplicationsShareTheSlotsByWeight) {
  make(1);
  scheduler_->setWeight(kAppA, 3);
  auto release = block(Priority::MEDIUM);
  std::atomic<bool> stop{false};
  for (int i = 0; i < 60; ++i) {
    for (auto [app, name] : {std::pair{kAppA, "A"}, std::pair{kAppB, "B"}}) {
      scheduler_->submit(app, Priority::MEDIUM, Work::kExecution,
                         [this, name = std::string(name), &stop](Lease) {
                           if (stop) return;
                           spin(500us);
                           record(name);
                         });
    }
  }
  release->set_value();
  ASSERT_TRUE(waitForLog(40));
  stop = true;
  const auto entries = log();
  const auto a = std::count(entries.begin(), entries.begin() + 40, "A");
  // The scheduler charges a run its wall time: a B job the OS preempts (the suites run two
  // at a time on CI's two cores) is charged more, and A gets a start or two more for it.
  EXPECT_GE(a, 26) << "weight 3 should give A about 30 of 40 starts";
  EXPECT_LE(a, 36);
  pool_->join();
}

// A run of one application pauses at its yield point when another application waits for the
// only slot and has been served less: the waiting job starts within a few milliseconds, not
// after the 60 ms the first one needs.
TEST_F(SchedulerTest, ARunOverItsShareYieldsToAWaitingApplication) {
  make(1);
  std::promise<void> longStarted;
  std::atomic<bool> longDone{false};
  scheduler_->submit(kAppA, Priority::HIGH, Work::kExecution, [&](Lease lease) {
    longStarted.set_value();
    for (int step = 0; step < 300; ++step) {
      spin(200us);
      lease.yield();
    }
    longDone = true;
  });
  longStarted.get_future().wait();
  const auto submitted = std::chrono::steady_clock::now();
  std::promise<std::chrono::steady_clock::duration> started;
  scheduler_->submit(kAppB, Priority::LOW, Work::kExecution, [&](Lease) {
    started.set_value(std::chrono::steady_clock::now() - submitted);
  });
  auto future = started.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_LT(future.get(), 20ms);
  EXPECT_FALSE(longDone.load());
  pool_->join();
  EXPECT_TRUE(longDone.load());
  const auto stats = scheduler_->applications();
  const auto a = std::find_if(stats.begin(), stats.end(),
                              [](const ApplicationStats& s) { return s.application == kAppA; });
  ASSERT_NE(a, stats.end());
  EXPECT_GE(a->pauses, 1u);
}

// An application that had nothing to do re-enters one slice behind the busy ones: a run that
// has held the only slot for longer than a slice pauses for it at its very next yield point
// (without the credit, the newcomer would have to fall a slice behind while waiting first).
TEST_F(SchedulerTest, AnApplicationThatWasIdleStartsAtTheNextYieldPoint) {
  make(1);
  Lease running = scheduler_->enter(kAppA, Priority::MEDIUM);
  spin(3 * Scheduler::kMinRunSlice);
  scheduler_->submit(kAppB, Priority::MEDIUM, Work::kExecution, [this](Lease) { record("B"); });
  running.yield();
  EXPECT_EQ(log(), std::vector<std::string>{"B"}) << "A's run did not pause for B";
  const auto stats = scheduler_->applications();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[stats[0].application == kAppA ? 0 : 1].pauses, 1u);
}

// Runs on the caller's thread take a slot like any other: with the only slot held inline by
// one application, another application's job waits; inline starts count for the starvation
// bound of their application.
TEST_F(SchedulerTest, InlineRunsHoldASlot) {
  make(1);
  {
    Lease inlineRun = scheduler_->enter(kAppA, Priority::LOW);
    scheduler_->submit(kAppB, Priority::HIGH, Work::kExecution, [this](Lease) { record("B"); });
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(log().empty()) << "the only slot is held by the inline run";
  }
  ASSERT_TRUE(waitForLog(1));
  // A's LOW job queued behind its own HIGH work runs once 8 jobs of A started after it, and
  // inline starts count: three callers keep HIGH runs of A waiting.
  auto release = block(Priority::MEDIUM);
  scheduler_->submit(kAppA, Priority::LOW, Work::kExecution, [this](Lease) { record("A-low"); });
  std::vector<std::thread> callers;
  for (int t = 0; t < 3; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 6; ++i) {
        Lease lease = scheduler_->enter(kAppA, Priority::HIGH);
        spin(200us);
        record("A-inline");
      }
    });
  }
  std::this_thread::sleep_for(10ms);  // all three wait for the slot
  release->set_value();
  for (std::thread& caller : callers) caller.join();
  ASSERT_TRUE(waitForLog(1 + 18 + 1));
  const auto entries = log();
  const auto low = std::find(entries.begin(), entries.end(), "A-low") - entries.begin();
  EXPECT_LE(low, 1 + static_cast<long>(Scheduler::kStarvationBound));
  EXPECT_GT(low, 1) << "HIGH work should still go first while the bound allows";
}

/// A scheduler with a background pool for preparations (as the Runtime makes it).
class BackgroundSchedulerTest : public SchedulerTest {
 protected:
  void makeWithBackground(uint32_t slots, uint32_t preparationSlots, PreparationPolicy policy) {
    pool_ = std::make_unique<boost::asio::thread_pool>(2 * slots);
    background_ = std::make_unique<boost::asio::thread_pool>(slots + preparationSlots);
    scheduler_ = std::make_shared<Scheduler>(pool_->get_executor(), background_->get_executor(),
                                             slots, preparationSlots, policy);
  }
  /// The OS policy of threads that give way: SCHED_IDLE, or where this process could not give
  /// a thread its priority back, nice 10 under SCHED_OTHER (Scheduler::preparationPolicy).
  int givingWayPolicy() const {
    return scheduler_->preparationPolicy() == PreparationPolicy::kIdle ? SCHED_IDLE : SCHED_OTHER;
  }
  void TearDown() override {
    SchedulerTest::TearDown();
    if (background_) background_->join();
    if (fair_) fair_->join();
  }
  std::unique_ptr<boost::asio::thread_pool> background_;
  std::unique_ptr<boost::asio::thread_pool> fair_;
};

// Compiling never takes every slot: beyond preparationSlots, preparations wait even with
// slots free, and an execution still starts at once.
TEST_F(BackgroundSchedulerTest, PreparationsHoldAtMostTheirSlots) {
  makeWithBackground(3, 1, PreparationPolicy::kNormal);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> preparing{0};
  std::atomic<int> mostAtOnce{0};
  for (int i = 0; i < 3; ++i) {
    scheduler_->submit(Priority::MEDIUM, Work::kPreparation, [&, i](Lease) {
      const int now = ++preparing;
      int seen = mostAtOnce.load();
      while (now > seen && !mostAtOnce.compare_exchange_weak(seen, now)) {
      }
      record("prep" + std::to_string(i));
      released.wait();
      --preparing;
    });
  }
  // Whatever an assertion finds, the jobs end before the pools are joined.
  struct Releaser {
    std::promise<void>& release;
    ~Releaser() { release.set_value(); }
  };
  {
    Releaser releaser{release};
    ASSERT_TRUE(waitForLog(1));
    EXPECT_EQ(scheduler_->queued(), 2u);  // two slots are free, but not for preparations
    scheduler_->submit(Priority::MEDIUM, Work::kExecution, [&](Lease) { record("exec"); });
    ASSERT_TRUE(waitForLog(2));
    EXPECT_EQ(log().back(), "exec");
  }
  ASSERT_TRUE(waitForLog(4));
  background_->join();  // every job done before the locals it uses go
  EXPECT_EQ(mostAtOnce.load(), 1);
}

// Preparations run on the background pool, whose threads took the policy that makes them
// give way (SCHED_IDLE); executions run on the foreground pool as the process does.
TEST_F(BackgroundSchedulerTest, PreparationsRunOnThreadsThatGiveWay) {
  makeWithBackground(2, 1, PreparationPolicy::kIdle);
  const int processPolicy = sched_getscheduler(0);
  std::promise<std::pair<bool, int>> prepared;
  scheduler_->submit(Priority::HIGH, Work::kPreparation, [&](Lease) {
    prepared.set_value(
        {background_->get_executor().running_in_this_thread(), sched_getscheduler(gettid())});
  });
  std::promise<std::pair<bool, int>> executed;
  scheduler_->submit(Priority::LOW, Work::kExecution, [&](Lease) {
    executed.set_value(
        {pool_->get_executor().running_in_this_thread(), sched_getscheduler(gettid())});
  });
  const auto [onBackground, preparationPolicy] = prepared.get_future().get();
  const auto [onForeground, executionPolicy] = executed.get_future().get();
  EXPECT_TRUE(onBackground);
  EXPECT_EQ(preparationPolicy, givingWayPolicy());
  EXPECT_TRUE(onForeground);
  EXPECT_EQ(executionPolicy, processPolicy);
}

// A preparation of an application without executions of its own, while another application
// has work, is that application's share of the machine: it runs on threads of normal priority
// (an idle-priority thread would wait for cores the other application keeps busy). One of an
// application whose own executions are active gives way.
TEST_F(BackgroundSchedulerTest, APreparationBesideAnotherApplicationsWorkRunsAtNormalPriority) {
  pool_ = std::make_unique<boost::asio::thread_pool>(4);
  background_ = std::make_unique<boost::asio::thread_pool>(3);
  fair_ = std::make_unique<boost::asio::thread_pool>(3);
  scheduler_ = std::make_shared<Scheduler>(pool_->get_executor(), background_->get_executor(),
                                           fair_->get_executor(), 2, 1, PreparationPolicy::kIdle);
  const int processPolicy = sched_getscheduler(0);
  auto release = std::make_shared<std::promise<void>>();
  std::promise<void> busy;
  scheduler_->submit(kAppA, Priority::MEDIUM, Work::kExecution, [&, release](Lease) {
    busy.set_value();
    release->get_future().wait();
  });
  busy.get_future().wait();
  std::promise<int> otherApp;
  scheduler_->submit(kAppB, Priority::MEDIUM, Work::kPreparation, [&](Lease) {
    otherApp.set_value(fair_->get_executor().running_in_this_thread() ? sched_getscheduler(gettid())
                                                                      : -1);
  });
  EXPECT_EQ(otherApp.get_future().get(), processPolicy);
  std::promise<int> sameApp;  // HIGH: a MEDIUM one would wait for A's MEDIUM execution
  scheduler_->submit(kAppA, Priority::HIGH, Work::kPreparation, [&](Lease) {
    sameApp.set_value(
        background_->get_executor().running_in_this_thread() ? sched_getscheduler(gettid()) : -1);
  });
  EXPECT_EQ(sameApp.get_future().get(), givingWayPolicy());
  release->set_value();
  pool_->join();
  background_->join();
  fair_->join();
}

/// A preparation job that computes until its thread stops giving way (or `limit` passes);
/// `policy` gets the thread's policy then.
Scheduler::Job computeWhileGivingWay(std::promise<void>& started, std::promise<int>& policy,
                                     std::chrono::seconds limit = std::chrono::seconds(20)) {
  return [&started, &policy, limit](Lease) {
    started.set_value();
    const auto until = std::chrono::steady_clock::now() + limit;
    while (sched_getscheduler(gettid()) == SCHED_IDLE && std::chrono::steady_clock::now() < until) {
    }
    policy.set_value(sched_getscheduler(gettid()));
  };
}

// A preparation that gave way because nothing else had work does not wait for the cores
// without end once other threads (here outside the driver; another application that came
// later alike) take them all: kept off them for GiveWayWatch::kGiveWayBound, it gets the
// process's priority back.
TEST_F(BackgroundSchedulerTest, APreparationKeptOffTheCoresGetsTheProcessPriorityBack) {
  makeWithBackground(2, 1, PreparationPolicy::kIdle);
  if (scheduler_->preparationPolicy() != PreparationPolicy::kIdle) {
    GTEST_SKIP() << "this process cannot give a thread its priority back (RLIMIT_NICE under 20, "
                    "no CAP_SYS_NICE): preparations give way with nice 10 instead";
  }
  std::promise<void> started;
  std::promise<int> policy;
  scheduler_->submit(kAppA, Priority::MEDIUM, Work::kPreparation,
                     computeWhileGivingWay(started, policy));
  started.get_future().wait();
  const auto start = std::chrono::steady_clock::now();
  BusyMachine busy;
  EXPECT_EQ(policy.get_future().get(), SCHED_OTHER) << "still giving way after 20 s";
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(scheduler_->preparationsPromoted(), 1u);
  EXPECT_GE(took, GiveWayWatch::kGiveWayBound);
  EXPECT_LT(took, 10 * GiveWayWatch::kGiveWayBound);
}

// Its own application's executions keep a preparation giving way as long as they run
// (executions first is its application's priority), though the rest of the machine is busy
// too; once they stop and other threads keep the cores, the bound applies.
TEST_F(BackgroundSchedulerTest, APreparationGivesWayToItsOwnExecutionsForAsLongAsTheyRun) {
  makeWithBackground(2, 1, PreparationPolicy::kIdle);
  if (scheduler_->preparationPolicy() != PreparationPolicy::kIdle) {
    GTEST_SKIP() << "this process cannot give a thread its priority back";
  }
  std::atomic<bool> executing{true};
  std::promise<void> execution;
  scheduler_->submit(kAppA, Priority::MEDIUM, Work::kExecution, [&](Lease) {
    execution.set_value();
    while (executing.load(std::memory_order_relaxed)) {
    }
  });
  execution.get_future().wait();
  std::promise<void> started;
  std::promise<int> policy;  // HIGH: a MEDIUM one would wait for A's MEDIUM execution
  scheduler_->submit(kAppA, Priority::HIGH, Work::kPreparation,
                     computeWhileGivingWay(started, policy));
  started.get_future().wait();
  BusyMachine busy(std::max(1u, std::thread::hardware_concurrency() - 1));
  std::this_thread::sleep_for(4 * GiveWayWatch::kGiveWayBound);
  EXPECT_EQ(scheduler_->preparationsPromoted(), 0u);
  executing = false;
  BusyMachine takesTheExecutionsCore(1);
  EXPECT_EQ(policy.get_future().get(), SCHED_OTHER) << "still giving way 20 s on";
  EXPECT_EQ(scheduler_->preparationsPromoted(), 1u);
}

}  // namespace
}  // namespace nnhal::actors
