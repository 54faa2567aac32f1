// nnhald against hostile clients (docs/IPC_PROTOCOL.md, "Untrusted clients"). Every test
// runs a real nnhald, attacks it from one connection, and checks three things: the daemon
// lives, the attacker gets an error or a closed connection, and a well-behaved client on
// another connection is served within kServedWithin the whole time (a watchdog executes on
// it every few milliseconds).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <thread>

#include "child_process.h"
#include "common/hostile_models.h"
#include "ipc/client/remote_device.h"
#include "ipc_test_util.h"
#include "raw_client.h"

namespace nnhal::ipc {
namespace {

using namespace testing;
using namespace nnhal::testing;
using namespace std::chrono_literals;

/// Longest a good client's tiny execution may take while an attack runs. Generous for the
/// sanitizer build on 2 busy cores; docs/IPC_PROTOCOL.md gives the measured numbers.
constexpr auto kServedWithin = 1500ms;

bool alive(const Daemon& daemon) {
  int status = 0;
  return daemon.running() && ::waitpid(daemon.pid(), &status, WNOHANG) == 0;
}

size_t openDescriptors(pid_t pid) {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry :
       fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd")) {
    ++count;
  }
  return count;
}

/// Resident memory of `pid` in KiB.
size_t residentKib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

/// A well-behaved client executing a tiny model every few milliseconds, recording its
/// slowest call and any failure.
class Watchdog {
 public:
  explicit Watchdog(const Daemon& daemon) {
    auto device = connect(daemon.socket());
    EXPECT_TRUE(device) << device.error().message;
    if (!device) return;
    device_ = *device;
    auto prepared = device_->prepareModel(addModel());
    EXPECT_TRUE(prepared) << prepared.error().message;
    if (!prepared) return;
    prepared_ = *prepared;
    thread_ = std::thread([this] { run(); });
  }
  ~Watchdog() { stop(); }

  /// Stops and checks: every call succeeded, none took longer than kServedWithin.
  void stop() {
    if (!thread_.joinable()) return;
    // At least a few calls, so that even a quick attack is checked while it ends.
    const auto until = std::chrono::steady_clock::now() + 2s;
    while (calls_.load() < 3 && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(1ms);
    }
    stop_ = true;
    thread_.join();
    EXPECT_GT(calls_, 0u);
    std::printf("[ watchdog ] %llu calls of the good client, slowest %lld us\n",
                static_cast<unsigned long long>(calls_.load()),
                static_cast<long long>(slowest_.count()));
    EXPECT_EQ(failures_, 0u) << "last failure: " << lastFailure_;
    EXPECT_LT(slowest_, kServedWithin)
        << "the good client waited "
        << std::chrono::duration_cast<std::chrono::milliseconds>(slowest_).count() << " ms";
  }
  const std::shared_ptr<Device>& device() const { return device_; }

 private:
  void run() {
    AddRequest r = addRequest(16, 1.0f);
    while (!stop_) {
      const auto start = std::chrono::steady_clock::now();
      auto result = prepared_->executeSynchronously(r.request);
      const auto took = std::chrono::steady_clock::now() - start;
      ++calls_;
      slowest_ = std::max(slowest_, std::chrono::duration_cast<std::chrono::microseconds>(took));
      if (!result || r.out()[2] != r.a()[2] + r.b()[2]) {
        ++failures_;
        lastFailure_ = result ? "wrong output" : result.error().message;
      }
      std::this_thread::sleep_for(5ms);
    }
  }
  std::shared_ptr<Device> device_;
  std::shared_ptr<PreparedModel> prepared_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> calls_{0};
  uint64_t failures_ = 0;
  std::string lastFailure_;
  std::chrono::microseconds slowest_{0};
};

std::shared_ptr<Device> connectTo(const Daemon& daemon) {
  auto device = connect(daemon.socket());
  EXPECT_TRUE(device) << device.error().message;
  return device ? *device : nullptr;
}

Stats adminStats(const Daemon& daemon) {
  auto admin = connect(daemon.adminSocket());
  EXPECT_TRUE(admin);
  if (!admin) return {};
  auto stats = dynamic_cast<RemoteDevice&>(**admin).daemonStats();
  EXPECT_TRUE(stats);
  return stats ? *stats : Stats{};
}

/// Waits up to `within` for the daemon's calls in flight to drop to 0.
bool callsDrain(const Daemon& daemon, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (adminStats(daemon).callsInFlight == 0) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

/// A memfd of `size` bytes with the given seals.
UniqueFd memfdOf(size_t size, unsigned seals = 0) {
  UniqueFd fd(memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_EQ(ftruncate(fd.get(), static_cast<off_t>(size)), 0);
  if (seals != 0) {
    EXPECT_EQ(fcntl(fd.get(), F_ADD_SEALS, seals), 0);
  }
  return fd;
}

/// A prepared add model on a raw connection: its handle.
uint64_t rawPrepare(RawClient& raw, Model model, std::vector<WirePool> pools = {},
                    std::vector<int> fds = {}) {
  PrepareModel m;
  m.model.model = std::move(model);
  m.model.pools = std::move(pools);
  m.preference = static_cast<int32_t>(ExecutionPreference::FAST_SINGLE_ANSWER);
  m.priority = static_cast<int32_t>(Priority::MEDIUM);
  OutMessage out;
  out.fds = std::move(fds);
  encode(m, out);
  EXPECT_TRUE(raw.send(MessageType::kPrepareModel, out, 7));
  auto launched = raw.readReply(7, 5s);
  EXPECT_TRUE(launched);
  auto reply = raw.readReply(7, 10s);
  if (!reply) return 0;
  ByteReader in(reply->payload);
  return decodePrepareReply(in).handle;
}

/// Executes synchronously on a raw connection with one pool described by `pool` (its
/// descriptor `fd`); returns the status of the reply (or DEVICE_UNAVAILABLE when none came).
WireStatus rawExecute(RawClient& raw, uint64_t handle, WirePool pool, int fd,
                      std::vector<RequestArgument> inputs, std::vector<RequestArgument> outputs) {
  Execute m;
  m.handle = handle;
  m.request.inputs = std::move(inputs);
  m.request.outputs = std::move(outputs);
  OutMessage out;
  pool.fdIndex = out.addFd(fd);
  m.request.pools = {pool};
  m.measure = 0;
  m.loopTimeoutNs = kDefaultLoopTimeout.count();
  encode(m, out);
  static std::atomic<uint64_t> calls{100};
  const uint64_t callId = calls++;
  if (!raw.send(MessageType::kExecuteSynchronously, out, callId)) {
    return {ErrorStatus::DEVICE_UNAVAILABLE, "send failed"};
  }
  auto reply = raw.readReply(callId, 10s);
  if (!reply) return {ErrorStatus::DEVICE_UNAVAILABLE, "no reply"};
  ByteReader in(reply->payload);
  return decodeExecutionReply(in).status;
}

WirePool describedPool(int32_t kind, uint64_t size, uint64_t offset, bool writable,
                       uint64_t id = 1) {
  WirePool pool;
  pool.source = WirePool::Source::kFd;
  pool.id = id;
  pool.kind = kind;
  pool.size = size;
  pool.offset = offset;
  pool.writable = writable;
  pool.desc.width = static_cast<uint32_t>(size);
  return pool;
}

const std::vector<RequestArgument> kAddInputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
const std::vector<RequestArgument> kAddOutputs = {{false, {0, 32, 16}, {}}};

// --- memory from a client --------------------------------------------------------------

TEST(HostileClient, OutputsInReadOnlyPoolsAreRefused) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  // Through the client library: a read-only view of a pool.
  auto attacker = connectTo(daemon);
  auto prepared = attacker->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = addRequest();
  auto readOnly = Memory::fromFd(r.pool.fd(), 64, 0, MemoryKind::MMAP_FD, false);
  ASSERT_TRUE(readOnly);
  r.request.pools = {*readOnly};
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(result.error().message.find("read-only"), std::string::npos);
  // Raw: a pool announced writable whose descriptor is read-only.
  RawClient raw(daemon.socket());
  raw.hello();
  const uint64_t handle = rawPrepare(raw, addModel());
  ASSERT_NE(handle, 0u);
  const auto path = fs::temp_directory_path() / ("nnhal-ro-" + std::to_string(getpid()));
  { std::ofstream(path) << std::string(64, '\0'); }
  UniqueFd readOnlyFile(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  fs::remove(path);
  const WireStatus status = rawExecute(raw, handle, describedPool(1, 64, 0, true),
                                       readOnlyFile.get(), kAddInputs, kAddOutputs);
  EXPECT_EQ(status.status, ErrorStatus::GENERAL_FAILURE) << status.message;
  EXPECT_NE(status.message.find("read-write"), std::string::npos) << status.message;
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, PoolsOnDevicesPipesAndSocketsAreRefused) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  RawClient raw(daemon.socket());
  raw.hello();
  const uint64_t handle = rawPrepare(raw, addModel());
  ASSERT_NE(handle, 0u);
  UniqueFd zero(open("/dev/zero", O_RDWR | O_CLOEXEC));
  UniqueFd null(open("/dev/null", O_RDWR | O_CLOEXEC));
  int pipeFds[2];
  ASSERT_EQ(pipe2(pipeFds, O_CLOEXEC), 0);
  UniqueFd pipeRead(pipeFds[0]), pipeWrite(pipeFds[1]);
  for (int kind = 0; kind < 3; ++kind) {
    for (int fd : {zero.get(), null.get(), pipeRead.get(), raw.fd()}) {
      for (uint64_t offset : {uint64_t{0}, uint64_t{4096}, uint64_t{1} << 40}) {
        const WireStatus status = rawExecute(raw, handle, describedPool(kind, 64, offset, true), fd,
                                             kAddInputs, kAddOutputs);
        EXPECT_EQ(status.status, ErrorStatus::GENERAL_FAILURE) << status.message;
      }
    }
  }
  // The same descriptors as model pools fail the preparation.
  Model model = convModel();
  model.pools.clear();
  const uint64_t refused =
      rawPrepare(raw, model, {describedPool(1, 64, 4096, false)}, {zero.get()});
  EXPECT_EQ(refused, 0u);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, PoolsThatShrinkNeverFaultTheDaemon) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  RawClient raw(daemon.socket());
  raw.hello();
  const uint64_t handle = rawPrepare(raw, addModel());
  ASSERT_NE(handle, 0u);
  // An unsealed memfd as ashmem: refused (it could shrink under a mapping).
  UniqueFd unsealed = memfdOf(4096);
  WireStatus status = rawExecute(raw, handle, describedPool(0, 4096, 0, true, 1), unsealed.get(),
                                 kAddInputs, kAddOutputs);
  EXPECT_EQ(status.status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(status.message.find("F_SEAL_SHRINK"), std::string::npos) << status.message;
  // The same memfd as mmap_fd: accepted, used without a mapping; shrinking it afterwards
  // fails executions instead of raising SIGBUS in the daemon.
  status = rawExecute(raw, handle, describedPool(1, 4096, 0, true, 2), unsealed.get(), kAddInputs,
                      kAddOutputs);
  EXPECT_EQ(status.status, ErrorStatus::NONE) << status.message;
  ASSERT_EQ(ftruncate(unsealed.get(), 8), 0);
  WirePool cached = describedPool(1, 4096, 0, true, 2);
  cached.source = WirePool::Source::kCached;  // the pool the daemon already holds
  status = rawExecute(raw, handle, cached, unsealed.get(), kAddInputs, kAddOutputs);
  EXPECT_EQ(status.status, ErrorStatus::GENERAL_FAILURE) << status.message;
  EXPECT_NE(status.message.find("shrank"), std::string::npos) << status.message;
  status = rawExecute(raw, handle, describedPool(1, 4096, 0, true, 3), unsealed.get(), kAddInputs,
                      kAddOutputs);  // sent again: now past the end of the file
  EXPECT_EQ(status.status, ErrorStatus::GENERAL_FAILURE) << status.message;
  // A regular file through the client library, truncated between executions.
  auto device = connectTo(daemon);
  auto prepared = device->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  const auto path = fs::temp_directory_path() / ("nnhal-shrink-" + std::to_string(getpid()));
  { std::ofstream(path) << std::string(4096, '\0'); }
  UniqueFd file(open(path.c_str(), O_RDWR | O_CLOEXEC));
  fs::remove(path);
  auto pool = Memory::fromFd(file.get(), 4096, 0, MemoryKind::MMAP_FD);
  ASSERT_TRUE(pool);
  AddRequest r = addRequest(*pool);
  ASSERT_TRUE((*prepared)->executeSynchronously(r.request));
  EXPECT_EQ(r.out()[3], r.a()[3] + r.b()[3]);
  ASSERT_EQ(ftruncate(file.get(), 20), 0);  // the client's own mapping would fault now
  auto shrunk = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(shrunk);
  EXPECT_EQ(shrunk.error().status, ErrorStatus::GENERAL_FAILURE);
  // A model pool shrunk after preparation: the daemon computes with its own copy.
  Model conv = convModel();
  UniqueFd weights = memfdOf(64);
  std::vector<float> ones(16, 1.0f);
  ASSERT_EQ(pwrite(weights.get(), ones.data(), 64, 0), 64);
  conv.pools = {*Memory::fromFd(weights.get(), 64, 0, MemoryKind::MMAP_FD)};
  auto convPrepared = device->prepareModel(conv);
  ASSERT_TRUE(convPrepared) << convPrepared.error().message;
  ASSERT_EQ(ftruncate(weights.get(), 0), 0);
  Memory io = *Memory::create(64);
  for (int i = 0; i < 9; ++i) reinterpret_cast<float*>(io.data())[i] = 1.0f;
  Request request;
  request.pools = {io};
  request.inputs = {{false, {0, 0, 36}, {}}};
  request.outputs = {{false, {0, 48, 16}, {}}};
  ASSERT_TRUE((*convPrepared)->executeSynchronously(request));
  EXPECT_EQ(reinterpret_cast<float*>(io.data() + 48)[0], 4.5f);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, IndicesRewrittenDuringExecutionNeverReadDaemonMemory) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto device = connectTo(daemon);
  auto prepared = device->prepareModel(gatherModel(256));
  ASSERT_TRUE(prepared);
  Memory pool = *Memory::create(2048);
  auto* indices = reinterpret_cast<int32_t*>(pool.data());
  for (int i = 0; i < 256; ++i) indices[i] = i % 16;
  const Request request = gatherRequest(pool);
  std::optional<IndexFlipper> flipper(std::in_place, pool);
  for (int run = 0; run < 500; ++run) {
    auto result = (*prepared)->executeSynchronously(request);
    if (!result) {
      ASSERT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE) << result.error().message;
      continue;
    }
    const auto* out = reinterpret_cast<const float*>(pool.data() + 1024);
    for (int i = 0; i < 256; ++i) {
      ASSERT_GE(out[i], 100.0f) << "run " << run << " index " << i;
      ASSERT_LE(out[i], 115.0f) << "run " << run << " index " << i;
    }
  }
  flipper.reset();
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

// --- models that would overflow or recurse ---------------------------------------------

TEST(HostileClient, OverflowingShapesAndDeepNestingAreInvalid) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto attacker = connectTo(daemon);
  for (const Model& model : {broadcastAddModel(), broadcastAddModel(65536, 65536, {65536, 65536}),
                             nestedIfModel(50000), nestedIfModel(kMaxSubgraphNesting + 1)}) {
    auto prepared = attacker->prepareModel(model);
    ASSERT_FALSE(prepared);
    EXPECT_EQ(prepared.error().status, ErrorStatus::INVALID_ARGUMENT) << prepared.error().message;
  }
  auto supported = attacker->getSupportedOperations(nestedIfModel(50000));
  ASSERT_FALSE(supported);
  EXPECT_EQ(supported.error().status, ErrorStatus::INVALID_ARGUMENT);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

// --- work that never ends --------------------------------------------------------------

/// Child role "endless-loops" (args: socket, "fenced" or "sync", a pipe's write end): starts
/// WHILE loops ending only by the 15 s loop timeout, writes a byte to the pipe, then sleeps:
/// from 4 threads synchronously and 8 asynchronous calls, or as 16 fenced executions.
/// Exit codes: 2 no connection, 3 not prepared, 4 a fenced launch refused.
int endlessLoops(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  auto prepared = (*device)->prepareModel(endlessWhileModel());
  if (!prepared) return 3;
  Memory pool = *Memory::create(64);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 4}, {}}};
  request.outputs = {{false, {0, 16, 4}, {}}};
  ExecuteOptions options;
  options.loopTimeout = kMaxLoopTimeout;
  std::vector<std::thread> threads;
  std::vector<FencedExecutionResult> launched;
  if (args.at(1) == "fenced") {
    // Launched at once (a chain of fences must not wait in a queue); their runs still wait
    // for the client's running slots.
    for (int i = 0; i < 16; ++i) {
      auto started = (*prepared)->executeFenced(request, {}, options);
      if (!started) return 4;
      launched.push_back(std::move(*started));
    }
  } else {
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] { (void)(*prepared)->executeSynchronously(request, options); });
    }
    for (int a = 0; a < 8; ++a) {
      (void)(*prepared)->execute(request, options, [](Result<ExecutionResult>) {});
    }
  }
  (void)!::write(std::stoi(args.at(2)), "x", 1);
  std::this_thread::sleep_for(100s);
  ::_exit(0);  // the threads still wait for their loops
}
[[maybe_unused]] const bool kEndlessLoopsRole = registerChildRole("endless-loops", &endlessLoops);

/// A child running "endless-loops" as another application (another uid) when the test runs
/// as root: it then gets its fair share of the driver, and the test's own clients theirs.
/// Killed with SIGKILL by the destructor (or kill()).
class EndlessLooper {
 public:
  EndlessLooper(const Daemon& daemon, bool fenced) {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    child_.emplace("endless-loops",
                   std::vector<std::string>{daemon.socket().string(), fenced ? "fenced" : "sync",
                                            std::to_string(ready[1])},
                   true);
    ::close(ready[1]);
    pollfd pfd{ready[0], POLLIN, 0};
    started_ = child_->started() && ::poll(&pfd, 1, 30000) == 1;
    ::close(ready[0]);
  }
  bool started() const { return started_; }
  void kill() { child_->kill(); }

 private:
  std::optional<ChildProcess> child_;
  bool started_ = false;
};

TEST(HostileClient, EndlessLoopsDelayNobodyAndStopWhenTheirClientLeaves) {
  Daemon daemon({"--socket-mode", "0666"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  EndlessLooper attacker(daemon, false);
  ASSERT_TRUE(attacker.started());
  std::this_thread::sleep_for(1500ms);  // the watchdog keeps being served meanwhile
  EXPECT_GE(adminStats(daemon).callsInFlight, 1u);
  attacker.kill();
  EXPECT_TRUE(callsDrain(daemon, 3s)) << "loops of a departed client kept running";
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, EndlessFencedLoopsTakeNoMoreThreadsThanOtherWork) {
  Daemon daemon({"--socket-mode", "0666"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  EndlessLooper attacker(daemon, true);
  ASSERT_TRUE(attacker.started());
  std::this_thread::sleep_for(1500ms);
  // At most --max-running (2) of its loops run; the rest wait for them. (The fewest calls in
  // flight of a few looks: the watchdog's own call may be in flight at one of them.)
  uint64_t running = UINT64_MAX;
  for (int look = 0; look < 5; ++look) {
    running = std::min(running, adminStats(daemon).callsInFlight);
    std::this_thread::sleep_for(7ms);
  }
  EXPECT_GE(running, 1u);
  EXPECT_LE(running, 2u);
  attacker.kill();
  EXPECT_TRUE(callsDrain(daemon, 3s)) << "fenced loops of a departed client kept running";
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, AFenceNeverSignalledBlocksNoThread) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto never = SyncFence::create();
  ASSERT_TRUE(never);
  {
    // Fenced executions waiting for a fence that never signals: bounded in number, refused
    // (not queued) beyond the quota.
    auto attacker = connectTo(daemon);
    auto prepared = attacker->prepareModel(addModel());
    ASSERT_TRUE(prepared);
    AddRequest r = addRequest();
    std::vector<std::shared_ptr<FencedExecutionCallback>> callbacks;
    ErrorStatus last = ErrorStatus::NONE;
    for (int i = 0; i < 40 && last == ErrorStatus::NONE; ++i) {
      auto launched = (*prepared)->executeFenced(r.request, {*never}, {});
      if (launched) {
        callbacks.push_back(launched->callback);
      } else {
        last = launched.error().status;
      }
    }
    EXPECT_EQ(last, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    EXPECT_EQ(callbacks.size(), 16u);
  }
  // GetFencedInfo for such an execution, asked again and again: every question waits in the
  // daemon without a thread.
  RawClient raw(daemon.socket());
  raw.hello();
  const uint64_t handle = rawPrepare(raw, addModel());
  ASSERT_NE(handle, 0u);
  AddRequest r = addRequest();
  ExecuteFenced m;
  m.execute.handle = handle;
  m.execute.request.inputs = kAddInputs;
  m.execute.request.outputs = kAddOutputs;
  m.execute.loopTimeoutNs = kDefaultLoopTimeout.count();
  OutMessage out;
  WirePool pool = describedPool(0, 64, 0, true, 1);
  pool.fdIndex = out.addFd(r.pool.fd());
  m.execute.request.pools = {pool};
  m.waitFor = {WireFence{true, out.addFd(never->fd())}};
  encode(m, out);
  ASSERT_TRUE(raw.send(MessageType::kExecuteFenced, out, 50));
  auto launched = raw.readReply(50, 5s);
  ASSERT_TRUE(launched);
  ByteReader in(launched->payload);
  const FencedReply reply = decodeFencedReply(in, launched->fds.size());
  ASSERT_EQ(reply.status.status, ErrorStatus::NONE) << reply.status.message;
  for (uint64_t call = 0; call < 200; ++call) {
    OutMessage ask;
    encode(FencedHandle{reply.handle}, ask);
    ASSERT_TRUE(raw.send(MessageType::kGetFencedInfo, ask, 1000 + call));
  }
  EXPECT_FALSE(raw.readFrame(1s)) << "an answer before the fence signalled";
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, ALockedCacheFileStallsOnlyItsOwner) {
  TempDir cacheDir;
  Daemon daemon({"--cache-dir", cacheDir.path().string()});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto cacheFilesIn = [](const fs::path& dir, uint8_t tokenByte) {
    fs::create_directories(dir);
    CacheFiles files;
    files.modelCache = {{open((dir / "model").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
    files.dataCache = {{open((dir / "data").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
    files.token.fill(tokenByte);
    return files;
  };
  auto attacker = connectTo(daemon);
  auto good = connectTo(daemon);
  CacheFiles attackerFiles = cacheFilesIn(cacheDir.path() / "attacker", 1);
  CacheFiles goodFiles = cacheFilesIn(cacheDir.path() / "good", 2);
  PrepareOptions saveAttacker, saveGood;
  saveAttacker.cache = attackerFiles;
  saveGood.cache = goodFiles;
  ASSERT_TRUE(attacker->prepareModel(convModel(), saveAttacker));
  ASSERT_TRUE(good->prepareModel(convModel(), saveGood));
  // The attacker keeps its model cache locked (through another open file description: the
  // daemon's descriptor shares the lock of the one it was sent) and asks for loads.
  UniqueFd locker(open((cacheDir.path() / "attacker" / "model").c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_EQ(flock(locker.get(), LOCK_EX), 0);
  std::vector<std::thread> loads;
  std::atomic<int> attackerFailed{0};
  for (int i = 0; i < 2; ++i) {
    loads.emplace_back([&] {
      auto loaded = attacker->prepareModelFromCache(attackerFiles);
      if (!loaded) ++attackerFailed;
    });
  }
  std::this_thread::sleep_for(100ms);
  for (int i = 0; i < 5; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto loaded = good->prepareModelFromCache(goodFiles);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  }
  for (std::thread& t : loads) t.join();
  EXPECT_EQ(attackerFailed.load(), 2);  // timed out waiting for its own lock
  for (CacheFiles* files : {&attackerFiles, &goodFiles}) {
    ::close(files->modelCache[0][0]);
    ::close(files->dataCache[0][0]);
  }
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

// --- exhaustion ------------------------------------------------------------------------

TEST(HostileClient, PreparedModelsConstantsAndPoolsAreBounded) {
  Daemon daemon(
      {"--max-prepared-models", "3", "--max-pools", "4", "--max-constant-bytes", "1000000"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto attacker = connectTo(daemon);
  std::vector<std::shared_ptr<PreparedModel>> held;
  for (int i = 0; i < 3; ++i) {
    auto prepared = attacker->prepareModel(addModel());
    ASSERT_TRUE(prepared);
    held.push_back(*prepared);
  }
  auto fourth = attacker->prepareModel(addModel());
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(fourth.error().message.find("prepared models"), std::string::npos);
  held.pop_back();  // released: room again
  auto again = attacker->prepareModel(addModel());
  ASSERT_TRUE(again) << again.error().message;
  held.push_back(*again);
  // Pools: each distinct Memory holds a descriptor in the daemon.
  const size_t fdsBefore = openDescriptors(daemon.pid());
  std::vector<AddRequest> requests;
  ErrorStatus status = ErrorStatus::NONE;
  for (int i = 0; i < 50 && status == ErrorStatus::NONE; ++i) {
    requests.push_back(addRequest());
    auto result = held[0]->executeSynchronously(requests.back().request);
    status = result ? ErrorStatus::NONE : result.error().status;
  }
  EXPECT_EQ(status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_EQ(requests.size(), 5u);
  EXPECT_LE(openDescriptors(daemon.pid()),
            fdsBefore + 4 + 2);  // 2: timers, sockets coming and going
  // Constants: a second client, fresh quotas, one model too large for them.
  auto other = connectTo(daemon);
  auto big = other->prepareModel(slowModel(1, 1, 512));  // 1 MiB of weights
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(big.error().message.find("constants"), std::string::npos);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, ModelsTooLargeForAnExecutionAreRefused) {
  Daemon daemon({"--max-execution-bytes", "1048576"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto attacker = connectTo(daemon);
  auto prepared = attacker->prepareModel(bigTemporaryModel(16384, 16384));  // 1 GiB temporary
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);
  auto dynamic = attacker->prepareModel(bigTemporaryModel(0, 0, false));
  ASSERT_TRUE(dynamic);
  const uint32_t rows = 1024, cols = 1024, bytes = rows * cols * 4;
  Memory pool = *Memory::create(3 * bytes);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, bytes}, {rows, cols}}, {false, {0, bytes, bytes}, {rows, cols}}};
  request.outputs = {{false, {0, 2 * bytes, bytes}, {rows, cols}}};
  auto result = (*dynamic)->executeSynchronously(request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

/// Child role "flood-and-leave" (args: socket): launches 4 slow executions and exits 200 ms
/// later without waiting for any. Exit codes: 2 no connection, 3 not prepared.
int floodAndLeave(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  auto slow = (*device)->prepareModel(slowModel(32, 512, 1024));
  if (!slow) return 3;
  Memory big = *Memory::create(2 * 512 * 1024 * 4);
  Request flood;
  flood.pools = {big};
  flood.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
  flood.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
  for (int i = 0; i < 4; ++i) (void)(*slow)->execute(flood, {}, [](Result<ExecutionResult>) {});
  std::this_thread::sleep_for(200ms);
  ::_exit(0);  // without waiting for anything
}
[[maybe_unused]] const bool kFloodAndLeaveRole =
    registerChildRole("flood-and-leave", &floodAndLeave);

TEST(HostileClient, QueuedWorkIsBoundedAndDroppedWhenItsClientDies) {
  Daemon daemon({"--max-running", "1", "--max-queued", "3"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto attacker = connectTo(daemon);
  // 16 layers of [512, 1024] x [1024, 1024]: 8.6 G multiply-adds, 150 ms at this machine's
  // 55 GMAC/s on 2 cores (stop 50). The six launches take about a millisecond; the first
  // execution must still run when the last arrives, also when the OS keeps the launching thread
  // off the cores (the execution's kernel threads hold both) for a few time slices.
  auto prepared = attacker->prepareModel(slowModel(16, 512, 1024));
  ASSERT_TRUE(prepared);
  Memory pool = *Memory::create(2 * 512 * 1024 * 4);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
  request.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
  std::atomic<int> callbacks{0};  // refused launches call back too, before returning
  std::vector<ErrorStatus> launched;
  const auto firstLaunch = std::chrono::steady_clock::now();
  for (int i = 0; i < 6; ++i) {
    launched.push_back(
        (*prepared)->execute(request, {}, [&](Result<ExecutionResult>) { ++callbacks; }));
  }
  const auto launching = std::chrono::steady_clock::now() - firstLaunch;
  // One runs, three wait, the rest are refused at launch.
  const auto said = [&] {
    std::string s =
        "launches took " +
        std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(launching).count()) +
        " ms; answers:";
    for (ErrorStatus status : launched) s += " " + std::string(toString(status));
    return s;
  };
  EXPECT_EQ(std::count(launched.begin(), launched.end(), ErrorStatus::NONE), 4) << said();
  EXPECT_EQ(std::count(launched.begin(), launched.end(), ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT),
            2)
      << said();
  // A child process floods the same way, then dies: its queue is dropped.
  ChildProcess child("flood-and-leave", {daemon.socket().string()});
  EXPECT_EQ(child.wait(), 0) << "2: no connection, 3: not prepared";
  const auto until = std::chrono::steady_clock::now() + 20s;
  while (callbacks.load() < 6 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(callbacks.load(), 6);
  EXPECT_TRUE(callsDrain(daemon, 10s)) << "calls in flight: " << adminStats(daemon).callsInFlight;
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, AFrameThatNeverFinishesClosesItsConnection) {
  Daemon daemon({"--frame-timeout-ms", "300"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  RawClient raw(daemon.socket());
  raw.hello();
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kExecute);
  header.payloadBytes = 100000;
  std::vector<uint8_t> bytes(kFrameHeaderBytes + 100);
  encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
  raw.sendBytes(bytes);
  EXPECT_TRUE(raw.closedByPeer(3s));
  // A header cut in the middle, too.
  RawClient half(daemon.socket());
  half.hello();
  half.sendBytes(std::span<const uint8_t>(bytes.data(), 10));
  EXPECT_TRUE(half.closedByPeer(3s));
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, RepliesNeverReadStopItsRequestsAndBoundTheDaemonsMemory) {
  Daemon daemon({"--max-unread-reply-bytes", "262144"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  const size_t rssBefore = residentKib(daemon.pid());
  RawClient raw(daemon.socket());
  raw.hello();
  // GetStats: each reply is larger than its request; the attacker reads nothing.
  std::vector<uint8_t> frame(kFrameHeaderBytes);
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kGetStats);
  encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(frame.data(), kFrameHeaderBytes));
  ::fcntl(raw.fd(), F_SETFL, O_NONBLOCK);
  size_t sent = 0;
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    const ssize_t n = ::send(raw.fd(), frame.data(), frame.size(), MSG_NOSIGNAL);
    if (n > 0) sent += static_cast<size_t>(n);
    if (n < 0) std::this_thread::sleep_for(1ms);  // the daemon stopped reading us
  }
  EXPECT_GT(sent, 0u);
  EXPECT_LT(residentKib(daemon.pid()), rssBefore + 64 * 1024) << "the daemon kept every reply";
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, AnOversizedSparseDataCacheIsRefusedWithoutReadingIt) {
  TempDir cacheDir;
  Daemon daemon({"--cache-dir", cacheDir.path().string(), "--max-data-cache-bytes", "1048576"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);
  auto attacker = connectTo(daemon);
  CacheFiles files;
  files.modelCache = {{open((cacheDir.path() / "m").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
  files.dataCache = {{open((cacheDir.path() / "d").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
  files.token.fill(9);
  PrepareOptions save;
  save.cache = files;
  ASSERT_TRUE(attacker->prepareModel(convModel(), save));
  ASSERT_EQ(ftruncate(files.dataCache[0][0], off_t{8} << 30), 0);  // 8 GiB, sparse
  const size_t rssBefore = residentKib(daemon.pid());
  const auto start = std::chrono::steady_clock::now();
  auto loaded = attacker->prepareModelFromCache(files);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_LT(residentKib(daemon.pid()), rssBefore + 16 * 1024);
  ::close(files.modelCache[0][0]);
  ::close(files.dataCache[0][0]);
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

/// Child role "connection-flood" (args: socket, a pipe's write end): opens 20 connections
/// to the daemon, each saying Hello, and writes to the pipe how many got no answer.
int connectionFlood(const std::vector<std::string>& args) {
  std::vector<std::unique_ptr<RawClient>> clients;
  int refused = 0;
  for (int i = 0; i < 20; ++i) {
    clients.push_back(std::make_unique<RawClient>(args.at(0)));
    OutMessage hello;
    encode(Hello{kProtocolVersion, "flood"}, hello);
    clients.back()->send(MessageType::kHello, hello);
    if (!clients.back()->readFrame(2s)) ++refused;
  }
  (void)!::write(std::stoi(args.at(1)), &refused, sizeof(refused));
  return 0;
}
[[maybe_unused]] const bool kConnectionFloodRole =
    registerChildRole("connection-flood", &connectionFlood);

TEST(HostileClient, ConnectionsAreBoundedPerProcess) {
  Daemon daemon({"--max-connections-per-process", "6"});
  ASSERT_TRUE(daemon.running());
  Watchdog watchdog(daemon);  // connected before the flood
  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  ChildProcess child("connection-flood", {daemon.socket().string(), std::to_string(report[1])});
  int refused = -1;
  ASSERT_EQ(::read(report[0], &refused, sizeof(refused)), static_cast<ssize_t>(sizeof(refused)));
  EXPECT_EQ(child.wait(), 0);
  ::close(report[0]);
  ::close(report[1]);
  EXPECT_EQ(refused, 14);
  // Another process (this one) still connects.
  EXPECT_TRUE(connect(daemon.socket()));
  watchdog.stop();
  EXPECT_TRUE(alive(daemon));
}

// --- nothing leaks between clients -----------------------------------------------------

TEST(HostileClient, StatisticsAndErrorsRevealNothingOfOtherClients) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto first = connectTo(daemon);
  auto second = connectTo(daemon);
  std::vector<std::shared_ptr<PreparedModel>> held;
  for (int i = 0; i < 3; ++i) held.push_back(*first->prepareModel(addModel()));
  auto own = dynamic_cast<RemoteDevice&>(*second).daemonStats();
  ASSERT_TRUE(own);
  EXPECT_EQ(*own, (Stats{1, 0, 0, 0}));
  auto firstStats = dynamic_cast<RemoteDevice&>(*first).daemonStats();
  ASSERT_TRUE(firstStats);
  EXPECT_EQ(firstStats->preparedModels, 3u);
  EXPECT_EQ(adminStats(daemon).preparedModels, 3u);
  // Handle 2 exists on the first connection, 99 nowhere: a raw client gets one answer.
  RawClient raw(daemon.socket());
  raw.hello();
  AddRequest r = addRequest();
  UniqueFd poolFd(fcntl(r.pool.fd(), F_DUPFD_CLOEXEC, 0));
  const WireStatus taken =
      rawExecute(raw, 2, describedPool(0, 64, 0, true, 1), poolFd.get(), kAddInputs, kAddOutputs);
  const WireStatus unknown =
      rawExecute(raw, 99, describedPool(0, 64, 0, true, 2), poolFd.get(), kAddInputs, kAddOutputs);
  EXPECT_EQ(taken.status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(unknown.status, taken.status);
  EXPECT_EQ(unknown.message.substr(0, unknown.message.rfind(' ')),
            taken.message.substr(0, taken.message.rfind(' ')));
  EXPECT_TRUE(alive(daemon));
}

TEST(HostileClient, CacheTokensOfOtherClientsCannotBeProbed) {
  TempDir cacheDir;
  Daemon daemon({"--cache-dir", cacheDir.path().string()});
  ASSERT_TRUE(daemon.running());
  auto owner = connectTo(daemon);
  auto prober = connectTo(daemon);
  auto filesAt = [&](const std::string& name, uint8_t token) {
    CacheFiles files;
    files.modelCache = {
        {open((cacheDir.path() / (name + ".m")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
    files.dataCache = {
        {open((cacheDir.path() / (name + ".d")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)}};
    files.token.fill(token);
    return files;
  };
  CacheFiles saved = filesAt("owner", 5);
  PrepareOptions save;
  save.cache = saved;
  ASSERT_TRUE(owner->prepareModel(addModel(), save));
  // The prober's own files under the owner's token, and under a token nobody used.
  CacheFiles mine = filesAt("prober", 5);
  auto underTaken = prober->prepareModelFromCache(mine);
  mine.token.fill(6);
  auto underUnknown = prober->prepareModelFromCache(mine);
  ASSERT_FALSE(underTaken);
  ASSERT_FALSE(underUnknown);
  EXPECT_EQ(underTaken.error().status, underUnknown.error().status);
  EXPECT_EQ(underTaken.error().message, underUnknown.error().message);
  for (CacheFiles* files : {&saved, &mine}) {
    ::close(files->modelCache[0][0]);
    ::close(files->dataCache[0][0]);
  }
  EXPECT_TRUE(alive(daemon));
}

}  // namespace
}  // namespace nnhal::ipc
