// One connection's work queue (ipc/daemon/work_queue.h): at most maxRunning jobs hold a
// driver slot, the rest wait in order up to maxQueued, and the counting is RAII: a ticket
// counts its request until answered or destroyed, a running job's slot is freed when it ends
// or is destroyed (on any thread), and a closed queue drops its waiting work with what it
// held.
#include "ipc/daemon/work_queue.h"

#include <gtest/gtest.h>

#include <array>
#include <boost/asio/post.hpp>
#include <optional>
#include <thread>
#include <vector>

namespace nnhal::ipc {
namespace {

constexpr hal::ApplicationId kApplication = 1000;

class WorkQueueTest : public ::testing::Test {
 protected:
  WorkQueueTest() {
    Limits perApplication{};
    perApplication[static_cast<size_t>(Resource::kRequests)] = kApplicationRequests;
    ledger_ = std::make_shared<Ledger>(Limits{}, perApplication, Limits{});
    account_ = ledger_->account(kApplication);
  }

  /// Runs `body` on the strand and waits until the io_context has nothing left to do.
  template <typename Body>
  void onStrand(Body body) {
    boost::asio::post(strand_, std::move(body));
    io_.restart();
    io_.run();
  }

  WorkQueue::Ticket admit(WorkQueue& queue) {
    auto ticket = queue.admit(*ledger_, account_);
    EXPECT_TRUE(ticket.has_value()) << (ticket ? "" : ticket.error().message);
    return ticket ? std::move(*ticket) : WorkQueue::Ticket();
  }

  uint64_t requestsHeld() const { return account_->usage().held(Resource::kRequests); }

  static constexpr uint64_t kApplicationRequests = 6;
  boost::asio::io_context io_;
  WorkQueue::Strand strand_ = boost::asio::make_strand(io_);
  std::shared_ptr<Ledger> ledger_;
  std::shared_ptr<Account> account_;
};

TEST_F(WorkQueueTest, RunsAtMostMaxRunningAndTheRestInOrder) {
  WorkQueue queue(strand_, 2, 8);
  std::vector<int> started;
  std::array<std::optional<WorkQueue::Running>, 5> held;
  onStrand([&] {
    for (int i = 0; i < 5; ++i) {
      queue.schedule(admit(queue), [&, i](WorkQueue::Running running) {
        started.push_back(i);
        held[static_cast<size_t>(i)] = std::move(running);
      });
    }
  });
  EXPECT_EQ(started, (std::vector<int>{0, 1}));
  EXPECT_EQ(queue.running(), 2u);
  EXPECT_EQ(queue.waiting(), 3u);
  EXPECT_EQ(queue.inFlight(), 5u);
  EXPECT_EQ(requestsHeld(), 5u);

  // Ending a job starts the next one, in order.
  onStrand([&] { held[0]->end(); });
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(queue.inFlight(), 4u);
  EXPECT_EQ(requestsHeld(), 4u);

  // Destroying a running job frees its slot too.
  onStrand([&] { held[1].reset(); });
  EXPECT_EQ(started, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(queue.running(), 2u);
  EXPECT_EQ(queue.waiting(), 1u);
}

TEST_F(WorkQueueTest, AnsweredGivesTheRequestBackButKeepsTheSlot) {
  WorkQueue queue(strand_, 1, 4);
  std::optional<WorkQueue::Running> first;
  bool secondStarted = false;
  onStrand([&] {
    queue.schedule(admit(queue), [&](WorkQueue::Running running) { first = std::move(running); });
    queue.schedule(admit(queue), [&](WorkQueue::Running) { secondStarted = true; });
  });
  ASSERT_TRUE(first.has_value());
  onStrand([&] { first->answered(); });
  EXPECT_EQ(queue.inFlight(), 1u);
  EXPECT_EQ(requestsHeld(), 1u);
  EXPECT_FALSE(secondStarted) << "the slot is held until the job ends";
  onStrand([&] { first->end(); });
  EXPECT_TRUE(secondStarted);
  EXPECT_EQ(queue.inFlight(), 0u);
  EXPECT_EQ(requestsHeld(), 0u);
  EXPECT_EQ(queue.running(), 0u);
}

TEST_F(WorkQueueTest, RefusesBeyondTheQueueWithAMessage) {
  WorkQueue queue(strand_, 1, 2);
  std::vector<WorkQueue::Running> held;
  onStrand([&] {
    for (int i = 0; i < 3; ++i) {
      queue.schedule(admit(queue),
                     [&](WorkQueue::Running running) { held.push_back(std::move(running)); });
    }
    const auto room = queue.checkRoom();
    ASSERT_FALSE(room.has_value());
    EXPECT_EQ(room.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    EXPECT_NE(room.error().message.find("1 requests of this client are running and 2 waiting"),
              std::string::npos)
        << room.error().message;
    EXPECT_FALSE(queue.admit(*ledger_, account_).has_value());
  });
  EXPECT_EQ(requestsHeld(), 3u) << "a refused request is not charged";
}

TEST_F(WorkQueueTest, TheApplicationsRequestQuotaHoldsAcrossQueues) {
  // Two connections of one application: the application's limit is shared.
  WorkQueue first(strand_, 8, 8);
  WorkQueue second(strand_, 8, 8);
  std::vector<WorkQueue::Ticket> tickets;
  for (uint64_t i = 0; i < kApplicationRequests; ++i) {
    tickets.push_back(admit(i % 2 == 0 ? first : second));
  }
  auto refused = second.admit(*ledger_, account_);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  tickets.pop_back();  // a destroyed ticket gives its request back
  EXPECT_TRUE(second.admit(*ledger_, account_).has_value());
}

TEST_F(WorkQueueTest, CloseDropsWaitingWorkWithItsTickets) {
  WorkQueue queue(strand_, 1, 4);
  std::optional<WorkQueue::Running> first;
  int laterStarted = 0;
  onStrand([&] {
    queue.schedule(admit(queue), [&](WorkQueue::Running running) { first = std::move(running); });
    for (int i = 0; i < 3; ++i) {
      queue.schedule(admit(queue), [&](WorkQueue::Running) { ++laterStarted; });
    }
  });
  EXPECT_EQ(queue.inFlight(), 4u);
  onStrand([&] { queue.close(); });
  EXPECT_EQ(queue.inFlight(), 1u) << "only the running job's ticket is left";
  EXPECT_EQ(requestsHeld(), 1u);
  onStrand([&] {
    first.reset();
    queue.schedule(admit(queue), [&](WorkQueue::Running) { ++laterStarted; });
  });
  EXPECT_EQ(laterStarted, 0) << "a closed queue starts nothing";
  EXPECT_EQ(queue.inFlight(), 0u);
  EXPECT_EQ(requestsHeld(), 0u);
}

TEST_F(WorkQueueTest, TheRunningGaugeCountsTheJobsHoldingASlotInEveryQueue) {
  auto gauge = std::make_shared<std::atomic<uint64_t>>(0);
  WorkQueue first(strand_, 1, 4, gauge);
  WorkQueue second(strand_, 2, 4, gauge);
  std::vector<WorkQueue::Running> held;
  held.reserve(8);  // jobs started while another ends append here: no reallocation
  // Ends the jobs held so far; those they start are kept.
  auto endHeld = [&] {
    std::vector<WorkQueue::Running> ending;
    ending.swap(held);
    held.reserve(8);
    ending.clear();
  };
  onStrand([&] {
    for (WorkQueue* queue : {&first, &first, &second, &second, &second}) {
      queue->schedule(admit(*queue),
                      [&](WorkQueue::Running running) { held.push_back(std::move(running)); });
    }
  });
  EXPECT_EQ(gauge->load(), 3u) << "1 of the first queue, 2 of the second";
  onStrand([&] { held[0].end(); });  // the first queue's waiting job takes the slot
  EXPECT_EQ(gauge->load(), 3u);
  onStrand(endHeld);
  EXPECT_EQ(gauge->load(), 1u) << "the second queue's waiting job started";
  onStrand(endHeld);
  EXPECT_EQ(gauge->load(), 0u);
}

TEST_F(WorkQueueTest, ASlotFreedOnAnotherThreadStartsTheNextJobOnTheStrand) {
  WorkQueue queue(strand_, 1, 4);
  std::optional<WorkQueue::Running> first;
  bool nextOnStrand = false;
  bool nextStarted = false;
  onStrand([&] {
    queue.schedule(admit(queue), [&](WorkQueue::Running running) { first = std::move(running); });
    queue.schedule(admit(queue), [&](WorkQueue::Running) {
      nextStarted = true;
      nextOnStrand = strand_.running_in_this_thread();
    });
  });
  // A driver thread drops the job's callback without calling it.
  std::thread([&] { first.reset(); }).join();
  EXPECT_FALSE(nextStarted) << "started off the strand";
  io_.restart();
  io_.run();
  EXPECT_TRUE(nextStarted);
  EXPECT_TRUE(nextOnStrand);
  EXPECT_EQ(queue.inFlight(), 0u);
}

}  // namespace
}  // namespace nnhal::ipc
