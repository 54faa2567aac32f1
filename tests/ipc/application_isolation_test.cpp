// nnhald serves applications, not connections (hal/application.h, docs/QOS.md): every process
// and connection of one uid is one application. Its quotas hold for all its connections
// together (more connections give it nothing more), the daemon's for everyone together, and
// errors name only what the caller reached. Burst memory slots count as pools, burst
// executions as requests, and the replies its connections do not read are bounded for all
// of them together. Another application (a child process under another uid, when the
// test runs as root) keeps its own quotas and its share of the driver: its priority-HIGH work
// does not hold back this application's MEDIUM work. Programs outside the daemon that keep
// every core busy do not keep a preparation that gives way waiting without end.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <algorithm>
#include <future>
#include <thread>

#include "child_process.h"
#include "common/busy_machine.h"
#include "ipc/frame.h"
#include "ipc/messages.h"
#include "ipc_test_util.h"
#include "nnhal/burst.h"
#include "raw_client.h"

namespace nnhal::ipc::testing {
namespace {

using namespace std::chrono_literals;

/// Runs child role `role` (child_process.h) with `args` as another application; its exit
/// code (-1 when the test does not run as root, else as ChildProcess::wait).
int asAnotherApplication(const char* role, const std::vector<std::string>& args) {
  if (::geteuid() != 0) return -1;
  ChildProcess child(role, args, true);
  return child.wait();
}

/// Child role "prepare" (args: socket, a count): connects and prepares the add model `count`
/// times, keeping each. Exit codes: 2 no connection, 3 a preparation refused.
int prepareModels(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  std::vector<std::shared_ptr<PreparedModel>> held;
  for (int i = 0; i < std::stoi(args.at(1)); ++i) {
    auto prepared = (*device)->prepareModel(addModel());
    if (!prepared) return 3;
    held.push_back(*prepared);
  }
  return 0;
}
[[maybe_unused]] const bool kPrepareRole = registerChildRole("prepare", &prepareModels);

std::shared_ptr<Device> connectOrFail(const Daemon& daemon) {
  auto device = connect(daemon.socket());
  EXPECT_TRUE(device) << device.error().message;
  return device ? *device : nullptr;
}

TEST(ApplicationQuota, PreparedModelsAreCountedForAllConnectionsOfAnApplication) {
  Daemon daemon({"--socket-mode", "0666", "--application-limit", "prepared-models=3"});
  ASSERT_TRUE(daemon.running());
  auto first = connectOrFail(daemon);
  auto second = connectOrFail(daemon);
  ASSERT_TRUE(first && second);
  std::vector<std::shared_ptr<PreparedModel>> held;
  for (auto* device : {&first, &first, &second}) {
    auto prepared = (*device)->prepareModel(addModel());
    ASSERT_TRUE(prepared) << prepared.error().message;
    held.push_back(*prepared);
  }
  // A third connection of the same uid gets nothing more.
  auto third = connectOrFail(daemon);
  ASSERT_TRUE(third);
  auto refused = third->prepareModel(addModel());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(refused.error().message.find("an application"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("at most 3 prepared models"), std::string::npos)
      << refused.error().message;
  // Another application has its own quota.
  const int other = asAnotherApplication("prepare", {daemon.socket().string(), "3"});
  if (other != -1) {
    EXPECT_EQ(other, 0);
  }
  // Releasing one gives the application room again.
  held.pop_back();
  std::this_thread::sleep_for(50ms);  // the release travels without a reply
  EXPECT_TRUE(third->prepareModel(addModel()));
}

TEST(ApplicationQuota, ConnectionsAreCountedPerApplication) {
  Daemon daemon({"--socket-mode", "0666", "--application-limit", "connections=3"});
  ASSERT_TRUE(daemon.running());
  std::vector<std::shared_ptr<Device>> devices;
  for (int i = 0; i < 3; ++i) {
    auto device = connect(daemon.socket());
    ASSERT_TRUE(device) << device.error().message;
    devices.push_back(*device);
  }
  auto fourth = connect(daemon.socket());
  EXPECT_FALSE(fourth) << "a fourth connection of one uid was served";
  // Another uid still connects and is served.
  const int other = asAnotherApplication("prepare", {daemon.socket().string(), "1"});
  if (other != -1) {
    EXPECT_EQ(other, 0);
  }
  devices.pop_back();
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(connect(daemon.socket()));
}

TEST(ApplicationQuota, TheDaemonsLimitNamesNoOneElsesHoldings) {
  Daemon daemon({"--daemon-limit", "prepared-models=2"});
  ASSERT_TRUE(daemon.running());
  auto device = connectOrFail(daemon);
  ASSERT_TRUE(device);
  auto a = device->prepareModel(addModel());
  auto b = device->prepareModel(addModel());
  ASSERT_TRUE(a && b);
  auto refused = device->prepareModel(addModel());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(refused.error().message.find("the daemon keeps at most 2 prepared models"),
            std::string::npos)
      << refused.error().message;
}

// Burst memory slots are client memories the daemon keeps mapped: they count as pools of the
// application, beyond one burst's own bound; burst executions count as its requests.
TEST(ApplicationQuota, BurstSlotsCountAsPoolsOfTheApplication) {
  Daemon daemon({"--application-limit", "pools=4"});
  ASSERT_TRUE(daemon.running());
  auto device = connectOrFail(daemon);
  ASSERT_TRUE(device);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  auto burst = (*prepared)->configureExecutionBurst();
  ASSERT_TRUE(burst) << burst.error().message;
  std::vector<AddRequest> requests;
  for (int i = 0; i < 5; ++i) requests.push_back(addRequest(16, static_cast<float>(i)));
  for (int i = 0; i < 4; ++i) {
    auto ran = (*burst)->execute(requests[i].request, MeasureTiming::NO);
    ASSERT_TRUE(ran) << ran.error().message;
  }
  auto refused = (*burst)->execute(requests[4].request, MeasureTiming::NO);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  // A second burst of the same application finds no room either.
  auto second = (*prepared)->configureExecutionBurst();
  ASSERT_TRUE(second);
  auto alsoRefused = (*second)->execute(requests[4].request, MeasureTiming::NO);
  ASSERT_FALSE(alsoRefused);
  // Freeing a slot makes room.
  (*burst)->freeMemory(requests[0].pool);
  std::this_thread::sleep_for(50ms);
  auto ran = (*burst)->execute(requests[4].request, MeasureTiming::NO);
  EXPECT_TRUE(ran) << ran.error().message;
}

// Replies its connections do not read count for the application, all connections together:
// each connection stays under its own bound (its requests stop being read at a quarter of
// it), but past the application's bound the connection whose reply does not fit is closed,
// so more connections do not multiply what the daemon keeps for one application.
TEST(ApplicationQuota, UnreadRepliesAreBoundedPerApplication) {
  Daemon daemon(
      {"--max-unread-reply-bytes", "1048576", "--application-limit", "reply-bytes=524288"});
  ASSERT_TRUE(daemon.running());
  std::vector<std::unique_ptr<RawClient>> readers;
  for (int i = 0; i < 6; ++i) {
    readers.push_back(std::make_unique<RawClient>(daemon.socket()));
    readers.back()->hello();
    ::fcntl(readers.back()->fd(), F_SETFL, O_NONBLOCK);
  }
  // GetStats: each reply is larger than its request; nobody reads.
  std::vector<uint8_t> frame(kFrameHeaderBytes);
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kGetStats);
  encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(frame.data(), kFrameHeaderBytes));
  const auto until = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < until) {
    bool anySent = false;
    for (auto& reader : readers) {
      anySent |= ::send(reader->fd(), frame.data(), frame.size(), MSG_NOSIGNAL) > 0;
    }
    if (!anySent) std::this_thread::sleep_for(1ms);  // the daemon stopped reading us all
  }
  int closed = 0;
  for (auto& reader : readers) closed += reader->closedByPeer(2s) ? 1 : 0;
  // Each connection alone stays under its own bound (its reads pause at 256 KiB), so only the
  // application's bound closes any; which ones depends on whose reply crossed it.
  EXPECT_GE(closed, 1) << "six connections queued more than the application's 512 KiB";
  // The daemon still serves (its quota given back by the closed connections).
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_TRUE((*device)->prepareModel(addModel()));
}

/// Median of `samples`.
std::chrono::microseconds median(std::vector<std::chrono::microseconds> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

/// Median time of `count` synchronous executions of a slow model on `device`.
std::chrono::microseconds victimMedian(Device& device, int count) {
  constexpr uint32_t kBytes = 128 * 256 * 4;  // [128, 256] float32
  auto prepared = device.prepareModel(slowModel(4, 128, 256));
  EXPECT_TRUE(prepared);
  if (!prepared) return {};
  Memory pool = *Memory::create(2 * kBytes);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, kBytes}, {}}};
  request.outputs = {{false, {0, kBytes, kBytes}, {}}};
  std::vector<std::chrono::microseconds> times;
  for (int i = 0; i < count; ++i) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_TRUE((*prepared)->executeSynchronously(request));
    times.push_back(std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start));
  }
  return median(times);
}

/// Child role "high-priority-aggressor" (args: socket, a pipe's write end): three
/// connections each prepare a slow model at HIGH priority; once all three have, a byte goes to
/// the pipe and each executes its model again and again until the child is killed. Exit
/// codes: 2 no connection, 3 not prepared.
int highPriorityAggressor(const std::vector<std::string>& args) {
  const int ready = std::stoi(args.at(1));
  std::vector<std::thread> threads;
  std::atomic<int> started{0};
  for (int c = 0; c < 3; ++c) {
    threads.emplace_back([&] {
      auto device = connect(args.at(0));
      if (!device) ::_exit(2);
      PrepareOptions options;
      options.priority = Priority::HIGH;
      auto prepared = (*device)->prepareModel(slowModel(32, 128, 512), options);
      if (!prepared) ::_exit(3);
      Memory pool = *Memory::create(2 * 128 * 512 * 4);
      Request request;
      request.pools = {pool};
      request.inputs = {{false, {0, 0, 128 * 512 * 4}, {}}};
      request.outputs = {{false, {0, 128 * 512 * 4, 128 * 512 * 4}, {}}};
      // All three prepare before any executes: the application's own executions would
      // otherwise hold its later preparations back (its priorities, its share).
      if (++started == 3) (void)!::write(ready, "x", 1);
      while (started.load() < 3) std::this_thread::sleep_for(1ms);
      for (;;) (void)(*prepared)->executeSynchronously(request);
    });
  }
  for (std::thread& t : threads) t.join();
  return 0;
}
[[maybe_unused]] const bool kAggressorRole =
    registerChildRole("high-priority-aggressor", &highPriorityAggressor);

// The HAL scopes priority to one application: an aggressor at HIGH keeping every slot busy
// from several connections does not hold a MEDIUM victim of another application back; the
// victim's median latency stays within 2x (+ a slice) of what it is alone.
TEST(ApplicationFairness, AnotherApplicationsHighPriorityWorkDoesNotStarveAMediumVictim) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run the aggressor as another uid";
  Daemon daemon({"--socket-mode", "0666", "--driver-threads", "2"});
  ASSERT_TRUE(daemon.running());
  auto victim = connectOrFail(daemon);
  ASSERT_TRUE(victim);
  const auto alone = victimMedian(*victim, 15);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  ChildProcess aggressor("high-priority-aggressor",
                         {daemon.socket().string(), std::to_string(ready[1])}, true);
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the aggressor did not start";
  ::close(ready[0]);
  std::this_thread::sleep_for(200ms);  // the aggressor keeps both slots busy
  const auto contended = victimMedian(*victim, 15);
  aggressor.kill();
  std::printf("[ fairness ] victim median alone %lld us, beside a HIGH aggressor %lld us\n",
              static_cast<long long>(alone.count()), static_cast<long long>(contended.count()));
  if (kUnderSanitizer) {
    EXPECT_LT(contended, 4 * alone + 20ms);
  } else {
    EXPECT_LT(contended, 2 * alone + 3ms);
  }
}

// A preparation that starts while no other application has work gives way (SCHED_IDLE: it
// must not slow its own application's executions). Programs outside the daemon that keep
// every core busy would then keep it waiting for as long as they run; kept off the cores for
// half a second, it runs at the daemon's own priority instead (actors/give_way_watch.h) and
// gets its share of the machine.
TEST(BusyMachine, ProgramsKeepingEveryCoreBusyDoNotStarveAPreparation) {
  Daemon daemon(std::vector<std::string>{});
  ASSERT_TRUE(daemon.running());
  auto client = connectOrFail(daemon);
  ASSERT_TRUE(client);
  // 64 FULLY_CONNECTED layers, each packing a 4 MiB weight matrix: about 0.3 s to compile.
  const Model model = slowModel(64, 1, 1024);
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(client->prepareModel(model));
  const auto alone = std::chrono::steady_clock::now() - start;
  nnhal::testing::BusyMachine spinners;  // this process stands for the other programs
  std::promise<std::chrono::steady_clock::duration> done;
  start = std::chrono::steady_clock::now();
  std::jthread preparing([&] {
    EXPECT_TRUE(client->prepareModel(model));
    done.set_value(std::chrono::steady_clock::now() - start);
  });
  // Without the bound, the preparation waits until the spinners stop.
  auto finished = done.get_future();
  const bool inTime = finished.wait_for(30s) == std::future_status::ready;
  spinners.stop();
  const auto busy = finished.get();
  const auto ms = [](auto d) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
  };
  std::printf("[ busy machine ] preparation alone %lld ms, beside %zu busy threads %lld ms\n",
              ms(alone), spinners.threads(), ms(busy));
  EXPECT_TRUE(inTime);
  // Its share: one thread of (spinners + 1) on the cores, after the bound.
  EXPECT_LT(busy, 4 * alone + 3s);
}

}  // namespace
}  // namespace nnhal::ipc::testing
