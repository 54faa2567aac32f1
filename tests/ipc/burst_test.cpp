// Bursts through nnhald: the VTS ValidateBurst checks on raw packets, a result queue too
// small for the result, memory slots, a hostile queue, and liveness in both directions.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/futex.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cstring>
#include <limits>
#include <mutex>
#include <thread>

#include "child_process.h"
#include "ipc/burst_packets.h"
#include "ipc/client/remote_device.h"
#include "ipc/daemon/client_limits.h"
#include "ipc/fmq.h"
#include "ipc_test_util.h"
#include "nnhal/burst.h"

namespace nnhal::ipc {

/// Every count, for failure messages.
void PrintTo(const Stats& s, std::ostream* os) {
  *os << "{sessions " << s.sessions << ", models " << s.preparedModels << ", pools " << s.pools
      << ", calls " << s.callsInFlight << ", bursts " << s.bursts << ", listeners "
      << s.burstListeners << ", burst memories " << s.burstMemories << ", buffers " << s.buffers
      << "}";
}

namespace {

using namespace testing;
using namespace std::chrono_literals;

/// Polls until `check(stats)` holds; returns how long it took, or nullopt after `limit`.
template <typename Check>
std::optional<std::chrono::milliseconds> statsSettle(const std::shared_ptr<Device>& observer,
                                                     Check check, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < limit) {
    if (check(statsOf(observer))) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
    }
    std::this_thread::sleep_for(5ms);
  }
  return std::nullopt;
}

/// Polls until the daemon's burst, listener and burst-memory counts are back to `before`.
std::optional<std::chrono::milliseconds> burstsSettle(const std::shared_ptr<Device>& observer,
                                                      const Stats& before) {
  return statsSettle(
      observer,
      [&](const Stats& s) {
        return s.bursts == before.bursts && s.burstListeners == before.burstListeners &&
               s.burstMemories == before.burstMemories;
      },
      std::chrono::seconds(5));
}

/// The daemon's counts once the bursts of earlier tests (released asynchronously when their
/// connection closed) are gone: the baseline a test compares with.
Stats quietStats(const std::shared_ptr<Device>& observer) {
  EXPECT_TRUE(burstsSettle(observer, Stats{})) << "bursts of earlier tests were not released";
  return statsOf(observer);
}

/// A burst driven by hand: the test writes raw request packets into the daemon's queue and
/// answers getMemories itself (slot i = memories[i]).
class RawBurst : public BurstMemoryProvider {
 public:
  static std::shared_ptr<RawBurst> open(RemoteDevice& device, RemotePreparedModel& model,
                                        uint32_t resultLength = kDefaultFmqLength) {
    Connection& connection = device.link()->connection();
    auto frame = connection.roundTrip(MessageType::kConfigureBurst, [&](OutMessage& out) {
      encode(ConfigureBurst{model.handle(), kDefaultFmqLength, resultLength}, out);
    });
    EXPECT_TRUE(frame);
    if (!frame) return nullptr;
    const size_t fdCount = frame->fds.size();
    auto reply = decodePayload(frame->payload, MessageType::kBurstConfigured,
                               [&](ByteReader& in) { return decodeBurstConfigured(in, fdCount); });
    EXPECT_TRUE(reply && reply->status.status == ErrorStatus::NONE);
    if (!reply || reply->status.status != ErrorStatus::NONE) return nullptr;
    auto burst = std::make_shared<RawBurst>();
    burst->handle = reply->burst;
    burst->requests = *Fmq::attach(
        common::UniqueFd(::fcntl(frame->fds[reply->requestFdIndex].get(), F_DUPFD_CLOEXEC, 0)),
        {sizeof(FmqRequestDatum), reply->requestLength});
    burst->results = *Fmq::attach(
        common::UniqueFd(::fcntl(frame->fds[reply->resultFdIndex].get(), F_DUPFD_CLOEXEC, 0)),
        {sizeof(FmqResultDatum), reply->resultLength});
    connection.registerBurst(burst->handle, burst);
    return burst;
  }

  /// The memories of slots 0, 1, ... (read by the connection's reader thread).
  void setMemories(std::vector<Memory> slots) {
    std::lock_guard<std::mutex> lock(mutex);
    memories = std::move(slots);
  }

  BurstMemories provideMemories(const std::vector<int32_t>& slots, OutMessage& out,
                                std::vector<Memory>& keep) override {
    std::lock_guard<std::mutex> lock(mutex);
    BurstMemories answer;
    for (int32_t slot : slots) {
      if (slot < 0 || static_cast<size_t>(slot) >= memories.size()) {
        return {{ErrorStatus::INVALID_ARGUMENT, "unknown slot " + std::to_string(slot)}, {}};
      }
      keep.push_back(memories[static_cast<size_t>(slot)]);
      answer.pools.push_back(poolWithFd(memories[static_cast<size_t>(slot)], out));
    }
    return answer;
  }

  /// Writes one raw packet and reads the result packet.
  std::optional<BurstResult> send(const std::vector<FmqRequestDatum>& packet) {
    if (requests.write(std::as_bytes(std::span(packet))) != Fmq::Status::kOk) return std::nullopt;
    std::vector<std::byte> bytes;
    FmqWaitPolicy policy;
    policy.deadline = std::chrono::steady_clock::now() + 20s;
    if (results.readAvailableBlocking(bytes, policy) != Fmq::Status::kOk) return std::nullopt;
    std::vector<FmqResultDatum> datums(bytes.size() / sizeof(FmqResultDatum));
    std::memcpy(datums.data(), bytes.data(), bytes.size());
    auto result = deserializeResult(datums);
    EXPECT_TRUE(result) << result.error().message;
    if (!result) return std::nullopt;
    return *result;
  }

  uint64_t handle = 0;
  Fmq requests;
  Fmq results;

 private:
  std::mutex mutex;
  std::vector<Memory> memories;
};

/// The request packet of `r`, its one pool in slot 0.
std::vector<FmqRequestDatum> packetOf(const AddRequest& r) {
  BurstRequest request;
  request.inputs = r.request.inputs;
  request.outputs = r.request.outputs;
  request.slots = {0};
  return serialize(request);
}

class BurstTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { daemon_ = new Daemon(); }
  static void TearDownTestSuite() { delete daemon_; }
  void SetUp() override {
    ASSERT_TRUE(daemon_->running());
    auto device = connect(daemon_->socket());
    ASSERT_TRUE(device) << device.error().message;
    device_ = *device;
  }
  std::shared_ptr<RemotePreparedModel> prepare(Model model) {
    auto prepared = device_->prepareModel(std::move(model));
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? std::dynamic_pointer_cast<RemotePreparedModel>(*prepared) : nullptr;
  }
  RemoteDevice& remote() { return dynamic_cast<RemoteDevice&>(*device_); }

  static Daemon* daemon_;
  std::shared_ptr<Device> device_;
};

Daemon* BurstTest::daemon_ = nullptr;

void expectFailedPacket(const std::optional<BurstResult>& result, const std::string& what) {
  ASSERT_TRUE(result.has_value()) << what << ": no result packet";
  EXPECT_NE(result->status, ErrorStatus::NONE) << what;
  EXPECT_TRUE(result->outputShapes.empty()) << what;
  EXPECT_EQ(result->timing, Timing{}) << what;
}

// VTS ValidateBurst.validateBurstSerialization: remove, add and mutate every datum.
TEST_F(BurstTest, EveryMalformedPacketFailsAndTheQueueStaysInStep) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  auto raw = RawBurst::open(remote(), *prepared);
  ASSERT_NE(raw, nullptr);
  AddRequest r = addRequest();
  raw->setMemories({r.pool});
  const auto packet = packetOf(r);
  auto ok = raw->send(packet);
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->status, ErrorStatus::NONE);
  ASSERT_EQ(ok->outputShapes.size(), 1u);

  // The VTS's bad entries.
  std::vector<FmqRequestDatum> bad;
  FmqRequestDatum info = requestDatum(RequestDatumKind::kPacketInformation);
  info.packetInformation = {10, 10, 10, 10};
  bad.push_back(info);
  for (auto kind :
       {RequestDatumKind::kInputOperandInformation, RequestDatumKind::kOutputOperandInformation}) {
    FmqRequestDatum operand = requestDatum(kind);
    operand.operandInformation.numberOfDimensions = 10;
    bad.push_back(operand);
  }
  bad.push_back(requestDatum(RequestDatumKind::kInputOperandDimensionValue));
  bad.push_back(requestDatum(RequestDatumKind::kOutputOperandDimensionValue));
  FmqRequestDatum pool = requestDatum(RequestDatumKind::kPoolIdentifier);
  pool.poolIdentifier = std::numeric_limits<int32_t>::max();
  bad.push_back(pool);
  FmqRequestDatum measure = requestDatum(RequestDatumKind::kMeasureTiming);
  measure.measureTiming = static_cast<int32_t>(MeasureTiming::YES);
  bad.push_back(measure);

  size_t cases = 0;
  for (size_t i = 0; i < packet.size(); ++i) {
    auto removed = packet;
    removed.erase(removed.begin() + static_cast<ptrdiff_t>(i));
    expectFailedPacket(raw->send(removed), "remove datum " + std::to_string(i));
    ++cases;
  }
  for (size_t i = 0; i <= packet.size(); ++i) {
    for (size_t b = 0; b < bad.size(); ++b) {
      auto added = packet;
      added.insert(added.begin() + static_cast<ptrdiff_t>(i), bad[b]);
      expectFailedPacket(raw->send(added),
                         "add bad datum " + std::to_string(b) + " at " + std::to_string(i));
      ++cases;
    }
  }
  for (size_t i = 0; i < packet.size(); ++i) {
    for (size_t b = 0; b < bad.size(); ++b) {
      // Skipped as the VTS skips it: turning measureTiming NO into YES is a valid request.
      if (packet[i].kind == RequestDatumKind::kMeasureTiming &&
          bad[b].kind == RequestDatumKind::kMeasureTiming) {
        continue;
      }
      auto mutated = packet;
      mutated[i] = bad[b];
      expectFailedPacket(raw->send(mutated), "mutate datum " + std::to_string(i) +
                                                 " to bad datum " + std::to_string(b));
      ++cases;
    }
  }
  // Every removal, every addition, every mutation but the one valid one.
  EXPECT_EQ(cases,
            packet.size() + (packet.size() + 1) * bad.size() + packet.size() * bad.size() - 1);
  // Still in step: the valid packet works and computes.
  std::memset(r.out(), 0, 16);
  auto again = raw->send(packet);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, ErrorStatus::NONE);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
}

/// Two outputs of rank 4: the result packet needs 1 + 2 x (1 + 4) + 1 = 12 datums.
Model twoOutputModel() {
  Model model;
  auto& ops = model.main.operands;
  ops.push_back(tensor({1, 1, 2, 2}, OperandLifeTime::SUBGRAPH_INPUT, 2));
  ops.push_back(tensor({1, 1, 2, 2}, OperandLifeTime::SUBGRAPH_INPUT, 2));
  ops.push_back(int32Constant(model, 0));
  ops.back().numberOfConsumers = 2;
  ops.push_back(tensor({1, 1, 2, 2}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));
  ops.push_back(tensor({1, 1, 2, 2}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));
  model.main.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  model.main.operations.push_back({OperationType::MUL, {0, 1, 2}, {4}});
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3, 4};
  return model;
}

// VTS ValidateBurst.validateBurstFmqLength.
TEST_F(BurstTest, AResultTooLongForASmallResultQueueFailsCleanly) {
  auto prepared = prepare(twoOutputModel());
  ASSERT_NE(prepared, nullptr);
  Memory pool = *Memory::create(64);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}, {false, {0, 48, 16}, {}}};
  auto normal = prepared->configureExecutionBurst();
  ASSERT_TRUE(normal) << normal.error().message;
  auto fine = (*normal)->execute(request, MeasureTiming::YES);
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->outputShapes.size(), 2u);

  auto small = prepared->configureExecutionBurst(kDefaultFmqLength, 8);
  ASSERT_TRUE(small) << small.error().message;
  auto failed = (*small)->execute(request, MeasureTiming::YES);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_TRUE(failed.error().outputShapes.empty());
  EXPECT_NE(failed.error().message.find("result queue"), std::string::npos)
      << failed.error().message;
  // A result that fits still works on the small burst.
  auto addPrepared = prepare(addModel());
  auto addSmall = addPrepared->configureExecutionBurst(kDefaultFmqLength, 8);
  ASSERT_TRUE(addSmall);
  AddRequest r = addRequest();
  EXPECT_TRUE((*addSmall)->execute(r.request, MeasureTiming::NO));
}

TEST_F(BurstTest, ErrorsCarryTheDaemonsMessage) {
  auto prepared = prepare(addModel());
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst);
  AddRequest r = addRequest();
  r.request.inputs[1].location.offset = 60;  // past the 64-byte pool
  auto result = (*burst)->execute(r.request, MeasureTiming::NO);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(result.error().message.find("inputs[1]"), std::string::npos) << result.error().message;
}

TEST_F(BurstTest, SlotsAreMappedOnceAndReleasedByFreeMemoryAndByTheBurstsEnd) {
  auto observerDevice = connect(daemon_->adminSocket());
  ASSERT_TRUE(observerDevice);
  auto observer = *observerDevice;
  const Stats before = quietStats(observer);
  auto prepared = prepare(addModel());
  {
    auto burst = prepared->configureExecutionBurst();
    ASSERT_TRUE(burst);
    std::vector<AddRequest> requests;
    for (int i = 0; i < 3; ++i) requests.push_back(addRequest(16, static_cast<float>(i)));
    for (int round = 0; round < 3; ++round) {
      for (AddRequest& r : requests) {
        auto result = (*burst)->execute(r.request, MeasureTiming::NO);
        ASSERT_TRUE(result) << result.error().message;
        for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
      }
    }
    Stats during = statsOf(observer);
    EXPECT_EQ(during.bursts, before.bursts + 1);
    EXPECT_EQ(during.burstListeners, before.burstListeners + 1);
    EXPECT_EQ(during.burstMemories, before.burstMemories + 3);
    (*burst)->freeMemory(requests[0].pool);
    EXPECT_EQ(statsOf(observer).burstMemories, before.burstMemories + 2);
    // Unknown and double frees break nothing.
    (*burst)->freeMemory(requests[0].pool);
    (*burst)->freeMemory(*Memory::create(64));
    (*burst)->freeMemory(Memory());
    // A freed slot is reused for another memory, which must then be the one used.
    AddRequest fresh = addRequest(16, 100.0f);
    auto result = (*burst)->execute(fresh.request, MeasureTiming::YES);
    ASSERT_TRUE(result) << result.error().message;
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(fresh.out()[i], fresh.a()[i] + fresh.b()[i]);
    EXPECT_NE(result->timing.timeInDriver, kNoTiming);
    EXPECT_LE(result->timing.timeOnDevice, result->timing.timeInDriver);
    // The freed memory can come back too.
    ASSERT_TRUE((*burst)->execute(requests[0].request, MeasureTiming::NO));
  }
  auto settled = burstsSettle(observer, before);
  EXPECT_TRUE(settled) << "the burst's objects were not released";
}

TEST_F(BurstTest, ACorruptedQueueStopsOnlyThatBurst) {
  auto prepared = prepare(addModel());
  auto raw = RawBurst::open(remote(), *prepared);
  ASSERT_NE(raw, nullptr);
  // Claim a billion elements were written.
  const size_t bytes = Fmq::segmentBytes(raw->requests.descriptor());
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, raw->requests.fd(), 0);
  ASSERT_NE(map, MAP_FAILED);
  reinterpret_cast<std::atomic<uint64_t>*>(static_cast<std::byte*>(map) + 64)->store(1'000'000'000);
  reinterpret_cast<std::atomic<uint32_t>*>(static_cast<std::byte*>(map) + 192)->fetch_add(1);
  syscall(SYS_futex, static_cast<std::byte*>(map) + 192, FUTEX_WAKE, 1, nullptr, nullptr, 0);
  ::munmap(map, bytes);
  std::this_thread::sleep_for(50ms);
  // The daemon and this connection still serve, bursts included.
  AddRequest r = addRequest();
  EXPECT_TRUE(prepared->executeSynchronously(r.request));
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst);
  EXPECT_TRUE((*burst)->execute(r.request, MeasureTiming::NO));
}

TEST_F(BurstTest, AClientThatNeverReadsItsResultsBlocksOnlyItsOwnBurst) {
  auto observerDevice = connect(daemon_->adminSocket());
  ASSERT_TRUE(observerDevice);
  auto observer = *observerDevice;
  const Stats before = quietStats(observer);
  auto prepared = prepare(addModel());
  auto raw = RawBurst::open(remote(), *prepared, 8);
  ASSERT_NE(raw, nullptr);
  AddRequest r = addRequest();
  raw->setMemories({r.pool});
  const auto packet = packetOf(r);
  // Results of 4 datums: two fill the 8-element result queue, the third blocks the listener.
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(raw->requests.write(std::as_bytes(std::span(packet))), Fmq::Status::kOk);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(raw->results.availableToRead(), 8u);
  // Other work of the same client and the daemon go on.
  EXPECT_TRUE(prepared->executeSynchronously(r.request));
  auto other = prepared->configureExecutionBurst();
  ASSERT_TRUE(other);
  EXPECT_TRUE((*other)->execute(r.request, MeasureTiming::NO));
  other->reset();
  // Releasing the stuck burst stops its listener.
  ASSERT_TRUE(remote().link()->connection().call(
      MessageType::kReleaseBurst, [&](OutMessage& out) { encode(BurstHandle{raw->handle}, out); },
      {}));
  auto settled = burstsSettle(observer, before);
  ASSERT_TRUE(settled) << "the blocked listener did not stop";
  EXPECT_LT(*settled, 1000ms);
}

TEST_F(BurstTest, NegativeSlotsAndUnknownBurstsAreRefused) {
  auto prepared = prepare(addModel());
  auto raw = RawBurst::open(remote(), *prepared);
  ASSERT_NE(raw, nullptr);
  AddRequest r = addRequest();
  raw->setMemories({r.pool});
  auto packet = packetOf(r);
  for (auto& datum : packet) {
    if (datum.kind == RequestDatumKind::kPoolIdentifier) datum.poolIdentifier = -1;
  }
  expectFailedPacket(raw->send(packet), "slot -1");
  auto ok = raw->send(packetOf(r));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, ErrorStatus::NONE);
  // freeMemory and the last error of a burst this connection never configured.
  Connection& connection = remote().link()->connection();
  for (MessageType type : {MessageType::kBurstFreeMemory, MessageType::kBurstLastError}) {
    auto frame = connection.roundTrip(type, [&](OutMessage& out) {
      if (type == MessageType::kBurstFreeMemory) {
        encode(BurstSlot{raw->handle + 1000, 0}, out);
      } else {
        encode(BurstHandle{raw->handle + 1000}, out);
      }
    });
    ASSERT_TRUE(frame) << frame.error().message;
    auto reply = decodePayload(frame->payload, MessageType::kBurstReply, decodeWireStatus);
    ASSERT_TRUE(reply);
    EXPECT_EQ(reply->status, ErrorStatus::INVALID_ARGUMENT) << toString(type);
    EXPECT_NE(reply->message.find("unknown to this connection"), std::string::npos);
  }
}

TEST_F(BurstTest, QuotaOfBurstsPerClient) {
  auto prepared = prepare(addModel());
  std::vector<std::shared_ptr<Burst>> bursts;
  std::optional<Error> refused;
  for (int i = 0; i < 40 && !refused; ++i) {
    auto burst = prepared->configureExecutionBurst();
    if (burst) {
      bursts.push_back(*burst);
    } else {
      refused = burst.error();
    }
  }
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_EQ(bursts.size(), ClientLimits{}.maxBursts);
  bursts.pop_back();
  EXPECT_TRUE(prepared->configureExecutionBurst());
}

TEST_F(BurstTest, QueueLengthsOutOfRangeAreRefused) {
  auto prepared = prepare(addModel());
  auto tooLong = prepared->configureExecutionBurst(kMaxFmqLength + 1, 16);
  ASSERT_FALSE(tooLong);
  EXPECT_EQ(tooLong.error().status, ErrorStatus::INVALID_ARGUMENT);
}

// --- liveness ------------------------------------------------------------------------------

/// Child role "bursts-until-killed" (args: socket, a pipe's write end): three bursts of the
/// add model each execute once, a byte goes to the pipe, and they execute on until the child
/// is killed. Exit codes: 2 no connection, 3 not prepared, 4 no burst, 5 a failed execution.
int burstsUntilKilled(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  auto prepared = (*device)->prepareModel(addModel());
  if (!prepared) return 3;
  std::vector<std::shared_ptr<Burst>> bursts;
  std::vector<AddRequest> requests;
  for (int i = 0; i < 3; ++i) {
    auto burst = (*prepared)->configureExecutionBurst();
    if (!burst) return 4;
    bursts.push_back(*burst);
    requests.push_back(addRequest());
    if (!bursts.back()->execute(requests.back().request, MeasureTiming::NO)) return 5;
  }
  (void)!::write(std::stoi(args.at(1)), "x", 1);
  for (;;) {  // executing when killed
    for (size_t i = 0; i < bursts.size(); ++i) {
      (void)bursts[i]->execute(requests[i].request, MeasureTiming::NO);
    }
  }
}
[[maybe_unused]] const bool kBurstsUntilKilledRole =
    registerChildRole("bursts-until-killed", &burstsUntilKilled);

TEST(BurstLiveness, AClientKilledMidBurstReleasesEverythingWithinASecond) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto observerDevice = connect(daemon.adminSocket());
  ASSERT_TRUE(observerDevice);
  auto observer = *observerDevice;
  const Stats baseline = statsOf(observer);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  ChildProcess child("bursts-until-killed", {daemon.socket().string(), std::to_string(ready[1])});
  ::close(ready[1]);
  pollfd pfd{ready[0], POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 30000), 1) << "the child did not start its bursts";
  ::close(ready[0]);
  std::this_thread::sleep_for(20ms);
  const Stats during = statsOf(observer);
  EXPECT_EQ(during.bursts, baseline.bursts + 3);
  EXPECT_EQ(during.burstListeners, baseline.burstListeners + 3);
  EXPECT_EQ(during.burstMemories, baseline.burstMemories + 3);
  child.kill();
  auto settled = statsSettle(
      observer, [&](const Stats& s) { return s == baseline; }, 5s);
  ASSERT_TRUE(settled) << "stats " << ::testing::PrintToString(statsOf(observer)) << ", baseline "
                       << ::testing::PrintToString(baseline);
  EXPECT_LT(*settled, 1000ms);
  // The daemon still serves bursts.
  auto prepared = observer->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  auto burst = (*prepared)->configureExecutionBurst();
  ASSERT_TRUE(burst);
  AddRequest r = addRequest();
  EXPECT_TRUE((*burst)->execute(r.request, MeasureTiming::NO));
}

TEST(BurstLiveness, AnExecutionWaitingOnADeadDaemonReturnsDeviceUnavailableWithinASecond) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device);
  // Slow enough that the daemon dies while the execution runs.
  auto prepared = (*device)->prepareModel(slowModel(64));
  ASSERT_TRUE(prepared) << prepared.error().message;
  auto burst = (*prepared)->configureExecutionBurst();
  ASSERT_TRUE(burst);
  Memory pool = *Memory::create(2 * 512 * 1024 * 4);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 512 * 1024 * 4}, {}}};
  request.outputs = {{false, {0, 512 * 1024 * 4, 512 * 1024 * 4}, {}}};
  std::atomic<bool> done{false};
  std::chrono::steady_clock::time_point returned;
  Result<ExecutionResult> result = std::unexpected(Error{});
  std::thread runner([&] {
    result = (*burst)->execute(request, MeasureTiming::NO);
    returned = std::chrono::steady_clock::now();
    done = true;
  });
  std::this_thread::sleep_for(200ms);
  ASSERT_FALSE(done.load()) << "the execution ended before the daemon was killed";
  daemon.stop(SIGKILL);
  const auto killed = std::chrono::steady_clock::now();
  runner.join();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_LT(returned - killed, 1000ms);
  // And later calls fail at once.
  auto later = (*burst)->execute(request, MeasureTiming::NO);
  ASSERT_FALSE(later);
  EXPECT_EQ(later.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
}

}  // namespace
}  // namespace nnhal::ipc
