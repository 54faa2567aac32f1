// nnhald as a process: handshake, isolation between clients, release of what a dead client
// held, clients of a dead daemon, malformed traffic, and a graceful shutdown.
#include <gtest/gtest.h>
#include <poll.h>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <random>

#include "child_process.h"
#include "ipc/client/remote_device.h"
#include "ipc/frame.h"
#include "ipc/messages.h"
#include "ipc_test_util.h"
#include "nnhal/sync_fence.h"
#include "nnhal/version.h"
#include "raw_client.h"

namespace nnhal::ipc {
namespace {

using namespace testing;
using namespace std::chrono_literals;

std::shared_ptr<Device> connectOrDie(const Daemon& daemon) {
  auto device = connect(daemon.socket());
  EXPECT_TRUE(device) << device.error().message;
  return device ? *device : nullptr;
}

/// Polls the daemon's stats until `want` holds or 10 s passed.
/// A regular file of 4,096 zero bytes, already unlinked: a client's mmap_fd pool.
UniqueFd unlinkedFile(const std::string& prefix) {
  const auto path = std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()));
  { std::ofstream(path) << std::string(4096, '\0'); }
  UniqueFd file(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  std::filesystem::remove(path);
  return file;
}

bool statsReach(const std::shared_ptr<Device>& observer, const Stats& want) {
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < until) {
    if (statsOf(observer) == want) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

TEST(Daemon, PrintsHelpWithItsOptions) {
  TempDir dir;
  const std::string out = (dir.path() / "help.txt").string();
  const std::string command = std::string(NNHALD_PATH) + " --help > " + out;
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream file(out);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const char* option :
       {"--socket", "--cache-dir", "--threads", "--kernel-threads", "--log-level"}) {
    EXPECT_NE(text.find(option), std::string::npos) << option;
  }
}

TEST(Daemon, PrintsItsVersion) {
  TempDir dir;
  const std::string out = (dir.path() / "version.txt").string();
  const std::string command = std::string(NNHALD_PATH) + " --version > " + out;
  ASSERT_EQ(std::system(command.c_str()), 0);
  std::ifstream file(out);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "nnhald " + std::string(kVersion) + "\n");
}

TEST(Daemon, ConnectToNothingIsDeviceUnavailable) {
  TempDir dir;
  auto device = connect(dir.path() / "no-daemon.sock");
  ASSERT_FALSE(device);
  EXPECT_EQ(device.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(device.error().message.find("cannot reach nnhald"), std::string::npos);
}

TEST(Daemon, AHandshakeWithoutReplyTimesOut) {
  TempDir dir;
  const fs::path path = dir.path() / "mute.sock";
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(::listen(listener.get(), 4), 0);  // accepts (in the backlog), never answers
  ClientOptions options;
  options.handshakeTimeout = 200ms;
  const auto start = std::chrono::steady_clock::now();
  auto device = connect(path, options);
  ASSERT_FALSE(device);
  EXPECT_EQ(device.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(device.error().message.find("no reply in time"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(Daemon, AnOversizedMessageClosesOnlyThatConnection) {
  Daemon daemon({"--max-frame-bytes", "4096"});
  ASSERT_TRUE(daemon.running());
  auto big = connectOrDie(daemon);
  auto small = connectOrDie(daemon);
  Model model = addModel();
  model.operandValues.resize(10000);  // CONSTANT_COPY bytes travel in the message
  auto prepared = big->prepareModel(model);
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(big->prepareModel(addModel()).error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  auto fine = small->prepareModel(addModel());
  ASSERT_TRUE(fine) << fine.error().message;
  AddRequest r = addRequest();
  EXPECT_TRUE((*fine)->executeSynchronously(r.request));
}

TEST(Daemon, CallbacksMayCallBackAndReleaseEverything) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = addRequest();
  AddRequest nested = addRequest(16, 7.0f);
  std::promise<bool> done;
  std::shared_ptr<PreparedModel> model = *prepared;
  prepared->reset();
  ASSERT_EQ(model->execute(r.request, {},
                           [&, model](Result<ExecutionResult> outcome) mutable {
                             // A synchronous call from inside a callback, then the last
                             // references to the model and the device go here.
                             auto again = model->executeSynchronously(nested.request);
                             model.reset();
                             device.reset();
                             done.set_value(outcome.has_value() && again.has_value());
                           }),
            ErrorStatus::NONE);
  model.reset();
  auto future = done.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready) << "a callback deadlocked";
  EXPECT_TRUE(future.get());
  EXPECT_FLOAT_EQ(nested.out()[1], nested.a()[1] + nested.b()[1]);
}

TEST(Daemon, RefusesAnotherProtocolVersionWithAReason) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  RawClient raw(daemon.socket());
  ASSERT_TRUE(raw.connected());
  OutMessage out;
  encode(Hello{99, "future"}, out);
  raw.sendFrame(static_cast<uint16_t>(MessageType::kHello), out.payload.buffer(), 99);
  auto reply = raw.readFrame(2s);
  ASSERT_TRUE(reply.has_value());
  auto hello = decodePayload(reply->payload, MessageType::kHelloReply, decodeHelloReply);
  ASSERT_TRUE(hello) << hello.error().message;
  EXPECT_EQ(hello->status.status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(hello->status.message.find("protocol version " + std::to_string(kProtocolVersion) +
                                       ", not 99"),
            std::string::npos)
      << hello->status.message;
  EXPECT_TRUE(raw.closedByPeer(2s));

  // The same with the version only in the Hello payload.
  RawClient raw2(daemon.socket());
  OutMessage out2;
  encode(Hello{7, "other"}, out2);
  raw2.sendFrame(static_cast<uint16_t>(MessageType::kHello), out2.payload.buffer());
  auto reply2 = raw2.readFrame(2s);
  ASSERT_TRUE(reply2.has_value());
  auto hello2 = decodePayload(reply2->payload, MessageType::kHelloReply, decodeHelloReply);
  ASSERT_TRUE(hello2);
  EXPECT_EQ(hello2->status.status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(hello2->status.message.find("not 7"), std::string::npos);
  EXPECT_TRUE(raw2.closedByPeer(2s));
}

TEST(Daemon, ServesSeveralClientsAtOnce) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  constexpr int kClients = 3;
  std::atomic<int> failures{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto device = connect(daemon.socket());
      if (!device) {
        ++failures;
        return;
      }
      auto prepared = (*device)->prepareModel(addModel());
      if (!prepared) {
        ++failures;
        return;
      }
      std::vector<std::thread> threads;
      for (int t = 0; t < 2; ++t) {
        threads.emplace_back([&, t] {
          for (int i = 0; i < 50; ++i) {
            AddRequest r = addRequest(16, static_cast<float>(c * 1000 + t * 100 + i));
            auto result = (*prepared)->executeSynchronously(r.request);
            if (!result || r.out()[3] != r.a()[3] + r.b()[3]) ++failures;
          }
        });
      }
      for (std::thread& t : threads) t.join();
    });
  }
  for (std::thread& t : clients) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Daemon, AClientCannotUseAnotherClientsObjects) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto a = connectOrDie(daemon);
  auto b = connectOrDie(daemon);
  auto preparedA = a->prepareModel(addModel());
  ASSERT_TRUE(preparedA);
  const uint64_t handle = dynamic_cast<RemotePreparedModel&>(**preparedA).handle();
  // B names A's handle on B's own connection: the daemon does not know it there.
  RemotePreparedModel forged(dynamic_cast<RemoteDevice&>(*b).link(), handle);
  AddRequest r = addRequest();
  auto result = forged.executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(result.error().message.find("unknown prepared model handle"), std::string::npos);
  std::promise<ErrorStatus> callback;
  EXPECT_EQ(
      forged.execute(r.request, {},
                     [&](Result<ExecutionResult> outcome) {
                       callback.set_value(outcome ? ErrorStatus::NONE : outcome.error().status);
                     }),
      ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(callback.get_future().get(), ErrorStatus::INVALID_ARGUMENT);
  // A is unaffected.
  ASSERT_TRUE((*preparedA)->executeSynchronously(r.request));
  EXPECT_FLOAT_EQ(r.out()[2], r.a()[2] + r.b()[2]);
}

TEST(Daemon, PoolsOfAnUnknownKindFailWithGeneralFailure) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  Memory backing = *Memory::create(64);
  auto strange = Memory::fromFd(backing.fd(), 64, 0, static_cast<MemoryKind>(7));
  ASSERT_TRUE(strange);
  AddRequest r = addRequest(*strange);
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(result.error().message.find("unknown memory kind 7"), std::string::npos);
  std::promise<ErrorStatus> callback;
  EXPECT_EQ((*prepared)->execute(r.request, {},
                                 [&](Result<ExecutionResult> outcome) {
                                   callback.set_value(outcome ? ErrorStatus::NONE
                                                              : outcome.error().status);
                                 }),
            ErrorStatus::NONE);
  EXPECT_EQ(callback.get_future().get(), ErrorStatus::GENERAL_FAILURE);

  Model model = convModel();
  model.pools[0] = *Memory::fromFd(model.pools[0].fd(), 64, 0, static_cast<MemoryKind>(9));
  auto preparation = device->prepareModel(model);
  ASSERT_FALSE(preparation);
  EXPECT_EQ(preparation.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(Daemon, ErrorsCarryTheEmbeddedDriversMessages) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto remote = connectOrDie(daemon);
  auto embedded = createDevice({});
  ASSERT_TRUE(embedded);
  Model bad = addModel();
  bad.main.operands[2].location.offset = 100;
  auto remoteOps = remote->getSupportedOperations(bad);
  auto embeddedOps = (*embedded)->getSupportedOperations(bad);
  ASSERT_FALSE(remoteOps);
  ASSERT_FALSE(embeddedOps);
  EXPECT_EQ(remoteOps.error().message, embeddedOps.error().message);
  EXPECT_EQ(remote->prepareModel(bad).error().message,
            (*embedded)->prepareModel(bad).error().message);

  auto remotePrepared = remote->prepareModel(addModel());
  auto embeddedPrepared = (*embedded)->prepareModel(addModel());
  ASSERT_TRUE(remotePrepared && embeddedPrepared);
  AddRequest r = addRequest();
  r.request.outputs[0].dimensions = {5};
  auto remoteRun = (*remotePrepared)->executeSynchronously(r.request);
  auto embeddedRun = (*embeddedPrepared)->executeSynchronously(r.request);
  ASSERT_FALSE(remoteRun);
  ASSERT_FALSE(embeddedRun);
  EXPECT_EQ(remoteRun.error().status, embeddedRun.error().status);
  EXPECT_EQ(remoteRun.error().message, embeddedRun.error().message);
}

TEST(Daemon, ReleasesModelsAndPoolsTheClientDrops) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  EXPECT_EQ(statsOf(device), (Stats{1, 0, 0, 0}));
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  {
    AddRequest r = addRequest();
    ASSERT_TRUE((*prepared)->executeSynchronously(r.request));
    ASSERT_TRUE((*prepared)->executeSynchronously(r.request));
    EXPECT_EQ(statsOf(device), (Stats{1, 1, 1, 0}));  // the pool was mapped once
  }
  // The pool's last Memory copy is gone: released before the next call.
  EXPECT_EQ(statsOf(device), (Stats{1, 1, 0, 0}));
  prepared->reset();
  EXPECT_EQ(statsOf(device), (Stats{1, 0, 0, 0}));
}

/// Child role "executions-until-killed" (args: socket, a pipe's write end): launches 4 slow
/// executions, writes a byte to the pipe and sleeps until killed. Exit codes: 2 no
/// connection, 3 not prepared.
int executionsUntilKilled(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  auto prepared = (*device)->prepareModel(slowModel());
  if (!prepared) return 3;
  std::vector<Memory> pools;
  for (int i = 0; i < 4; ++i) {
    Memory pool = *Memory::create(2 * 512 * 1024 * 4);
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
    request.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
    (*prepared)->execute(request, {}, [](Result<ExecutionResult>) {});
    pools.push_back(pool);
  }
  (void)!::write(std::stoi(args.at(1)), "x", 1);
  std::this_thread::sleep_for(100s);
  ::_exit(0);
}
[[maybe_unused]] const bool kExecutionsUntilKilledRole =
    registerChildRole("executions-until-killed", &executionsUntilKilled);

TEST(Daemon, ReleasesEverythingOfAClientKilledMidExecution) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto observerDevice = connect(daemon.adminSocket());  // sees every client's objects
  ASSERT_TRUE(observerDevice);
  auto observer = *observerDevice;
  // The connection that found the daemon ready may still be closing: only the observer's own
  // session is the baseline.
  ASSERT_TRUE(statsReach(observer, Stats{1, 0, 0, 0}));
  const Stats baseline = statsOf(observer);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  ChildProcess child("executions-until-killed",
                     {daemon.socket().string(), std::to_string(ready[1])});
  ::close(ready[1]);
  pollfd pfd{ready[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 30000), 1) << "the child did not start its executions";
  std::this_thread::sleep_for(20ms);
  const Stats during = statsOf(observer);
  EXPECT_EQ(during.sessions, baseline.sessions + 1);
  EXPECT_EQ(during.preparedModels, 1u);
  EXPECT_GE(during.pools, 1u);
  child.kill();
  ::close(ready[0]);
  EXPECT_TRUE(statsReach(observer, baseline))
      << "stats now: sessions " << statsOf(observer).sessions << ", models "
      << statsOf(observer).preparedModels << ", pools " << statsOf(observer).pools;
  // And the daemon still serves.
  auto prepared = observer->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = addRequest();
  EXPECT_TRUE((*prepared)->executeSynchronously(r.request));
}

TEST(Daemon, PendingAndLaterCallsFailPromptlyWhenTheDaemonDies) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(slowModel());
  ASSERT_TRUE(prepared);
  Memory pool = *Memory::create(2 * 512 * 1024 * 4);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
  request.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
  std::vector<std::promise<ErrorStatus>> callbacks(4);
  for (auto& callback : callbacks) {
    ASSERT_EQ((*prepared)->execute(request, {},
                                   [&callback](Result<ExecutionResult> outcome) {
                                     callback.set_value(outcome ? ErrorStatus::NONE
                                                                : outcome.error().status);
                                   }),
              ErrorStatus::NONE);
  }
  auto pendingSync = std::async(std::launch::async, [&] {
    const auto start = std::chrono::steady_clock::now();
    auto result = (*prepared)->executeSynchronously(request);
    return std::make_pair(result ? ErrorStatus::NONE : result.error().status,
                          std::chrono::steady_clock::now() - start);
  });
  std::this_thread::sleep_for(20ms);
  const auto killedAt = std::chrono::steady_clock::now();
  EXPECT_EQ(daemon.stop(SIGKILL), -SIGKILL);
  ASSERT_EQ(pendingSync.wait_for(5s), std::future_status::ready) << "a pending call hangs";
  EXPECT_EQ(pendingSync.get().first, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_LT(std::chrono::steady_clock::now() - killedAt, 2s);
  int lost = 0;
  for (auto& callback : callbacks) {
    auto future = callback.get_future();
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    lost += future.get() == ErrorStatus::DEVICE_UNAVAILABLE;
  }
  EXPECT_GE(lost, 1);  // the last ones were still queued behind the first

  auto later = (*prepared)->executeSynchronously(request);
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  std::promise<ErrorStatus> prepareCallback;
  EXPECT_EQ(device->prepareModel(addModel(), {},
                                 [&](Result<std::shared_ptr<PreparedModel>> outcome) {
                                   prepareCallback.set_value(outcome ? ErrorStatus::NONE
                                                                     : outcome.error().status);
                                 }),
            ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(prepareCallback.get_future().get(), ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(device->getSupportedOperations(addModel()).error().status,
            ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(device->getName(), "nnhal-cpu");  // constant queries still answer
}

TEST(Daemon, FencesOfADeadDaemonAreSignalledByTheClient) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  auto never = SyncFence::create();
  ASSERT_TRUE(never);
  AddRequest r = addRequest();
  auto launched = (*prepared)->executeFenced(r.request, {*never}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  auto info =
      std::async(std::launch::async, [&] { return launched->callback->getExecutionInfo(); });
  EXPECT_EQ(daemon.stop(SIGKILL), -SIGKILL);
  EXPECT_TRUE(launched->syncFence.wait(2s)) << "the fence of a dead daemon never signals";
  ASSERT_EQ(info.wait_for(2s), std::future_status::ready);
  auto outcome = info.get();
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  auto later = (*prepared)->executeFenced(r.request, {}, {});
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
}

// Every synchronous and asynchronous execution over a client's regular file (an mmap_fd
// pool) has its outputs in the file when it returns, however fast it finished: an execution
// whose result arrived before the driver's execute call returned once skipped the write-back
// (about one run in six of a tiny ADD).
TEST(Daemon, OutputsInClientFilesAreWrittenBackBeforeEveryReply) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  UniqueFd file = unlinkedFile("nnhal-file-outputs-");
  auto pool = Memory::fromFd(file.get(), 4096, 0, MemoryKind::MMAP_FD);
  ASSERT_TRUE(pool) << pool.error().message;
  AddRequest r = addRequest(*pool);
  for (int round = 0; round < 200; ++round) {
    r.a()[3] = static_cast<float>(round);
    r.out()[3] = -1.0f;
    if (round % 2 == 0) {
      auto ran = (*prepared)->executeSynchronously(r.request);
      ASSERT_TRUE(ran) << ran.error().message;
    } else {
      std::promise<Result<ExecutionResult>> done;
      ASSERT_EQ((*prepared)->execute(
                    r.request, {},
                    [&](Result<ExecutionResult> result) { done.set_value(std::move(result)); }),
                ErrorStatus::NONE);
      auto ran = done.get_future().get();
      ASSERT_TRUE(ran) << ran.error().message;
    }
    ASSERT_EQ(r.out()[3], r.a()[3] + r.b()[3]) << "round " << round;
  }
}

// A fenced execution over a client's regular file (an mmap_fd pool the daemon reads and
// writes with pread/pwrite on the application's lane): its inputs are read once its fences
// signalled, its outputs are in the file when the returned fence signals, and a file that
// cannot be read fails the execution (GENERAL_FAILURE from getExecutionInfo).
TEST(Daemon, FencedExecutionsOverClientFilesReadAfterTheFencesAndWriteBeforeTheirOwn) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  UniqueFd file = unlinkedFile("nnhal-fenced-file-");
  auto pool = Memory::fromFd(file.get(), 4096, 0, MemoryKind::MMAP_FD);
  ASSERT_TRUE(pool) << pool.error().message;
  AddRequest r = addRequest(*pool);
  for (int round = 0; round < 2; ++round) {
    auto gate = SyncFence::create();
    ASSERT_TRUE(gate);
    auto launched = (*prepared)->executeFenced(r.request, {*gate}, {});
    ASSERT_TRUE(launched) << launched.error().message;
    // Written after the launch, before the fence: the execution must see it.
    r.a()[0] = 100.0f + static_cast<float>(round);
    std::this_thread::sleep_for(20ms);
    EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
    ASSERT_TRUE(gate->signal());
    ASSERT_TRUE(launched->syncFence.wait(5s));
    EXPECT_EQ(r.out()[0], r.a()[0] + r.b()[0]) << "round " << round;
    EXPECT_EQ(r.out()[3], r.a()[3] + r.b()[3]);
    auto info = launched->callback->getExecutionInfo();
    ASSERT_TRUE(info) << info.error().message;
    EXPECT_EQ(info->status, ErrorStatus::NONE);
  }
  // The file shrinks while the execution waits for its fence: the read fails, the fence
  // still signals, and the execution reports the failure.
  auto gate = SyncFence::create();
  ASSERT_TRUE(gate);
  r.out()[0] = -1.0f;
  auto launched = (*prepared)->executeFenced(r.request, {*gate}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  ASSERT_EQ(::ftruncate(file.get(), 8), 0);
  ASSERT_TRUE(gate->signal());
  ASSERT_TRUE(launched->syncFence.wait(5s));
  auto info = launched->callback->getExecutionInfo();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->status, ErrorStatus::GENERAL_FAILURE);
  // The daemon still serves this client.
  ASSERT_EQ(::ftruncate(file.get(), 4096), 0);
  auto again = (*prepared)->executeSynchronously(addRequest().request);
  EXPECT_TRUE(again) << again.error().message;
}

TEST(Daemon, FencedHandlesArePerClient) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = addRequest();
  auto launched = (*prepared)->executeFenced(r.request, {}, {});
  ASSERT_TRUE(launched);
  ASSERT_TRUE(launched->callback->getExecutionInfo());
  // Releasing the callback releases it on the daemon; a forged handle is unknown.
  launched->callback.reset();
  auto& remote = dynamic_cast<RemoteDevice&>(*device);
  auto frame = remote.link()->connection().roundTrip(
      MessageType::kGetFencedInfo, [](OutMessage& out) { encode(FencedHandle{1}, out); });
  ASSERT_TRUE(frame);
  auto reply = decodePayload(frame->payload, MessageType::kFencedInfoReply, decodeFencedInfoReply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status.status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(reply->status.message.find("unknown fenced execution handle 1"), std::string::npos);
}

TEST(Daemon, SurvivesMalformedTrafficAndKeepsServingOthers) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto good = connectOrDie(daemon);
  auto prepared = good->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  auto stillServes = [&] {
    AddRequest r = addRequest(16, 3.0f);
    auto result = (*prepared)->executeSynchronously(r.request);
    return result.has_value() && r.out()[1] == r.a()[1] + r.b()[1];
  };
  std::mt19937 random(1234);
  OutMessage hello;
  encode(Hello{kProtocolVersion, "fuzz"}, hello);
  FrameHeader helloHeader;
  helloHeader.type = static_cast<uint16_t>(MessageType::kHello);
  helloHeader.payloadBytes = static_cast<uint32_t>(hello.payload.size());
  std::vector<uint8_t> helloFrame(kFrameHeaderBytes);
  encodeHeader(helloHeader,
               std::span<uint8_t, kFrameHeaderBytes>(helloFrame.data(), kFrameHeaderBytes));
  helloFrame.insert(helloFrame.end(), hello.payload.buffer().begin(), hello.payload.buffer().end());

  // Random bytes, with and without a valid Hello first.
  for (int round = 0; round < 40; ++round) {
    RawClient raw(daemon.socket());
    ASSERT_TRUE(raw.connected());
    if (round % 2 == 1) raw.hello();
    std::vector<uint8_t> noise(1 + random() % 300);
    for (uint8_t& b : noise) b = static_cast<uint8_t>(random());
    raw.sendBytes(noise);
  }
  // Every truncation of a valid Hello frame, then hang-up.
  for (size_t cut = 1; cut < helloFrame.size(); ++cut) {
    RawClient raw(daemon.socket());
    raw.sendBytes(std::span<const uint8_t>(helloFrame.data(), cut));
  }
  // After a Hello: truncated and garbled payloads of every request type.
  for (uint16_t type = 0; type < 24; ++type) {
    RawClient raw(daemon.socket());
    raw.hello();
    std::vector<uint8_t> payload(3);  // too short or too long for every message
    for (uint8_t& b : payload) b = static_cast<uint8_t>(random() % 3);
    raw.sendFrame(type, payload);
    EXPECT_TRUE(raw.closedByPeer(2s)) << "type " << type;
  }
  {
    RawClient raw(daemon.socket());  // a request before Hello
    raw.sendFrame(static_cast<uint16_t>(MessageType::kGetStats), {});
    EXPECT_TRUE(raw.closedByPeer(2s));
  }
  {
    RawClient raw(daemon.socket());  // oversized payload announced
    raw.hello();
    FrameHeader huge;
    huge.type = static_cast<uint16_t>(MessageType::kExecute);
    huge.payloadBytes = 0xFFFFFFF0u;
    std::vector<uint8_t> bytes(kFrameHeaderBytes);
    encodeHeader(huge, std::span<uint8_t, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
    raw.sendBytes(bytes);
    EXPECT_TRUE(raw.closedByPeer(2s));
  }
  {
    RawClient raw(daemon.socket());  // descriptors announced but not sent
    raw.hello();
    raw.sendFrame(static_cast<uint16_t>(MessageType::kGetStats), {}, kProtocolVersion, 3);
    EXPECT_TRUE(raw.closedByPeer(2s));
  }
  EXPECT_TRUE(stillServes());
  EXPECT_TRUE(statsReach(good, Stats{1, 1, 0, 0}));
}

TEST(Daemon, ShutsDownGracefullyLettingInFlightExecutionsFinish) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectOrDie(daemon);
  auto prepared = device->prepareModel(slowModel());
  ASSERT_TRUE(prepared);
  Memory pool = *Memory::create(2 * 512 * 1024 * 4);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
  request.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
  std::vector<std::promise<ErrorStatus>> callbacks(3);
  for (auto& callback : callbacks) {
    ASSERT_EQ((*prepared)->execute(request, {},
                                   [&callback](Result<ExecutionResult> outcome) {
                                     callback.set_value(outcome ? ErrorStatus::NONE
                                                                : outcome.error().status);
                                   }),
              ErrorStatus::NONE);
  }
  EXPECT_EQ(daemon.stop(SIGTERM), 0);
  for (auto& callback : callbacks) {
    auto future = callback.get_future();
    ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
    EXPECT_EQ(future.get(), ErrorStatus::NONE);
  }
  auto later = (*prepared)->executeSynchronously(request);
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
}

}  // namespace
}  // namespace nnhal::ipc
