// The fast message queue (ipc/fmq.h) and the burst packets (ipc/burst_packets.h).
#include "ipc/fmq.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "ipc/burst_packets.h"

namespace nnhal::ipc {
namespace {

using namespace std::chrono_literals;

std::vector<std::byte> bytesOf(std::initializer_list<uint32_t> values) {
  std::vector<std::byte> bytes(values.size() * 4);
  std::memcpy(bytes.data(), std::data(values), bytes.size());
  return bytes;
}

/// A queue of 4-byte elements and a second mapping of it, as the peer process would have.
struct QueuePair {
  Fmq producer;
  Fmq consumer;
};

QueuePair makePair(uint32_t capacity) {
  auto created = Fmq::create({4, capacity});
  EXPECT_TRUE(created) << created.error().message;
  common::UniqueFd dup(::fcntl(created->fd(), F_DUPFD_CLOEXEC, 0));
  auto attached = Fmq::attach(std::move(dup), created->descriptor());
  EXPECT_TRUE(attached) << attached.error().message;
  return {std::move(*created), std::move(*attached)};
}

TEST(Fmq, WritesAndReadsWholePacketsAcrossTheWrap) {
  QueuePair q = makePair(5);
  std::vector<std::byte> out;
  FmqWaitPolicy now;
  now.pollWindow = 0ns;
  for (uint32_t round = 0; round < 20; ++round) {
    const auto packet = bytesOf({round, round + 1, round + 2});
    ASSERT_EQ(q.producer.write(packet), Fmq::Status::kOk);
    EXPECT_EQ(q.producer.availableToWrite(), 2u);
    EXPECT_EQ(q.consumer.availableToRead(), 3u);
    ASSERT_EQ(q.consumer.readAvailableBlocking(out, now), Fmq::Status::kOk);
    EXPECT_EQ(out, packet);
  }
}

TEST(Fmq, AWriteThatDoesNotFitWritesNothing) {
  QueuePair q = makePair(4);
  ASSERT_EQ(q.producer.write(bytesOf({1, 2, 3})), Fmq::Status::kOk);
  EXPECT_EQ(q.producer.write(bytesOf({4, 5})), Fmq::Status::kTimedOut);
  EXPECT_EQ(q.consumer.availableToRead(), 3u);
  std::vector<std::byte> two(8);
  EXPECT_EQ(q.consumer.read(std::span(two).first(8)), Fmq::Status::kOk);
  std::vector<std::byte> five(20);
  EXPECT_EQ(q.consumer.read(five), Fmq::Status::kTimedOut);  // only one is left
}

TEST(Fmq, RefusesBadGeometryAndUnsealedOrSmallSegments) {
  EXPECT_FALSE(Fmq::create({4, 0}));
  EXPECT_FALSE(Fmq::create({0, 16}));
  EXPECT_FALSE(Fmq::create({4, kMaxFmqLength + 1}));
  auto q = Fmq::create({4, 1024});
  ASSERT_TRUE(q);
  // A bigger geometry than the segment holds.
  auto big = Fmq::attach(common::UniqueFd(::fcntl(q->fd(), F_DUPFD_CLOEXEC, 0)), {4, 100000});
  ASSERT_FALSE(big);
  EXPECT_EQ(big.error().status, ErrorStatus::INVALID_ARGUMENT);
  // An unsealed memfd could shrink under the mapping.
  common::UniqueFd unsealed(::memfd_create("x", MFD_CLOEXEC));
  ASSERT_EQ(::ftruncate(unsealed.get(), 1 << 16), 0);
  auto refused = Fmq::attach(std::move(unsealed), {4, 16});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("sealed"), std::string::npos);
  // A pipe is no memory.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  EXPECT_FALSE(Fmq::attach(common::UniqueFd(fds[0]), {4, 16}));
}

TEST(Fmq, ImpossibleCountersFromThePeerBreakTheQueueInsteadOfOverrunning) {
  QueuePair q = makePair(8);
  // The peer claims to have written far more than the ring holds.
  auto* raw = reinterpret_cast<uint64_t*>(static_cast<std::byte*>(::mmap(
      nullptr, Fmq::segmentBytes({4, 8}), PROT_READ | PROT_WRITE, MAP_SHARED, q.consumer.fd(), 0)));
  ASSERT_NE(static_cast<void*>(raw), MAP_FAILED);
  raw[64 / 8] = 1'000'000;  // writeCount
  EXPECT_EQ(q.consumer.availableToRead(), 0u);
  EXPECT_TRUE(q.consumer.broken());
  std::vector<std::byte> out;
  EXPECT_EQ(q.consumer.readAvailableBlocking(out, {}), Fmq::Status::kBroken);
  // A read counter ahead of what was written breaks the producer's side.
  raw[128 / 8] = 5;  // readCount
  EXPECT_EQ(q.producer.write(bytesOf({1})), Fmq::Status::kBroken);
  ::munmap(raw, Fmq::segmentBytes({4, 8}));
}

TEST(Fmq, BlockingReadSleepsAndIsWokenByAWriteFromAnotherThread) {
  QueuePair q = makePair(16);
  std::vector<std::byte> out;
  std::thread writer([&] {
    std::this_thread::sleep_for(30ms);  // past the polling window: the reader sleeps
    EXPECT_EQ(q.producer.write(bytesOf({7, 8})), Fmq::Status::kOk);
  });
  FmqWaitPolicy policy;
  policy.slice = 10s;  // only the futex wake can end the wait in time
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(q.consumer.readAvailableBlocking(out, policy), Fmq::Status::kOk);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(out, bytesOf({7, 8}));
  writer.join();
}

TEST(Fmq, WaitsEndOnDeadlineAndOnStopAfterAWake) {
  QueuePair q = makePair(16);
  std::vector<std::byte> out;
  FmqWaitPolicy policy;
  policy.deadline = std::chrono::steady_clock::now() + 20ms;
  EXPECT_EQ(q.consumer.readAvailableBlocking(out, policy), Fmq::Status::kTimedOut);

  std::atomic<bool> stop{false};
  FmqWaitPolicy stoppable;
  stoppable.slice = 10s;
  stoppable.keepWaiting = [&] { return !stop.load(); };
  std::thread stopper([&] {
    std::this_thread::sleep_for(30ms);
    stop = true;
    q.consumer.wake();
  });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(q.consumer.readAvailableBlocking(out, stoppable), Fmq::Status::kStopped);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  stopper.join();
}

TEST(Fmq, BlockingWriteWaitsForRoom) {
  QueuePair q = makePair(4);
  ASSERT_EQ(q.producer.write(bytesOf({1, 2, 3})), Fmq::Status::kOk);
  std::thread reader([&] {
    std::this_thread::sleep_for(20ms);
    std::vector<std::byte> out;
    EXPECT_EQ(q.consumer.readAvailableBlocking(out, {}), Fmq::Status::kOk);
  });
  EXPECT_EQ(q.producer.writeBlocking(bytesOf({4, 5, 6}), {}), Fmq::Status::kOk);
  reader.join();
  EXPECT_EQ(q.consumer.availableToRead(), 3u);
}

TEST(Fmq, StreamsManyPacketsBetweenTwoThreadsInOrder) {
  QueuePair q = makePair(64);
  constexpr uint32_t kPackets = 20000;
  std::thread producer([&] {
    for (uint32_t i = 0; i < kPackets; ++i) {
      ASSERT_EQ(q.producer.writeBlocking(bytesOf({i, ~i}), {}), Fmq::Status::kOk);
    }
  });
  std::vector<std::byte> out;
  uint32_t next = 0;
  while (next < kPackets) {
    ASSERT_EQ(q.consumer.readAvailableBlocking(out, {}), Fmq::Status::kOk);
    ASSERT_EQ(out.size() % 8, 0u);
    for (size_t at = 0; at < out.size(); at += 8) {
      uint32_t pair[2];
      std::memcpy(pair, out.data() + at, 8);
      ASSERT_EQ(pair[0], next);
      ASSERT_EQ(pair[1], ~next);
      ++next;
    }
  }
  producer.join();
}

// --- packets -----------------------------------------------------------------------------

bool sameArguments(const std::vector<RequestArgument>& a, const std::vector<RequestArgument>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].hasNoValue != b[i].hasNoValue || a[i].dimensions != b[i].dimensions ||
        a[i].location.poolIndex != b[i].location.poolIndex ||
        a[i].location.offset != b[i].location.offset ||
        a[i].location.length != b[i].location.length) {
      return false;
    }
  }
  return true;
}

void expectSameRequest(const BurstRequest& a, const BurstRequest& b) {
  EXPECT_TRUE(sameArguments(a.inputs, b.inputs));
  EXPECT_TRUE(sameArguments(a.outputs, b.outputs));
  EXPECT_EQ(a.slots, b.slots);
  EXPECT_EQ(a.measure, b.measure);
  EXPECT_EQ(a.deadline, b.deadline);
}

BurstRequest sampleRequest() {
  BurstRequest r;
  r.inputs = {{false, {0, 0, 16}, {4}}, {true, {}, {}}};
  r.outputs = {{false, {1, 8, 32}, {2, 0, 2}}};
  r.slots = {3, 0};
  r.measure = MeasureTiming::YES;
  return r;
}

TEST(BurstPackets, RequestsRoundTripInTheHalLayout) {
  BurstRequest r = sampleRequest();
  const auto packet = serialize(r);
  // info, in0 + 1 dim, in1, out0 + 3 dims, 2 pools, measure.
  ASSERT_EQ(packet.size(), 11u);
  EXPECT_EQ(packet[0].kind, RequestDatumKind::kPacketInformation);
  EXPECT_EQ(packet[0].packetInformation.packetSize, 11u);
  EXPECT_EQ(packet[0].packetInformation.numberOfInputOperands, 2u);
  EXPECT_EQ(packet[0].packetInformation.numberOfOutputOperands, 1u);
  EXPECT_EQ(packet[0].packetInformation.numberOfPools, 2u);
  EXPECT_EQ(packet[1].kind, RequestDatumKind::kInputOperandInformation);
  EXPECT_EQ(packet[2].kind, RequestDatumKind::kInputOperandDimensionValue);
  EXPECT_EQ(packet[4].kind, RequestDatumKind::kOutputOperandInformation);
  EXPECT_EQ(packet[8].poolIdentifier, 3);
  EXPECT_EQ(packet[10].kind, RequestDatumKind::kMeasureTiming);
  auto back = deserializeRequest(packet);
  ASSERT_TRUE(back) << back.error().message;
  expectSameRequest(*back, r);

  r.deadline = std::chrono::steady_clock::now() + 5s;
  auto withDeadline = deserializeRequest(serialize(r));
  ASSERT_TRUE(withDeadline) << withDeadline.error().message;
  expectSameRequest(*withDeadline, r);
}

TEST(BurstPackets, EveryBrokenLayoutIsRefusedWithTheDatumNamed) {
  const auto packet = serialize(sampleRequest());
  for (size_t drop = 0; drop < packet.size(); ++drop) {
    auto shorter = packet;
    shorter.erase(shorter.begin() + static_cast<ptrdiff_t>(drop));
    auto result = deserializeRequest(shorter);
    ASSERT_FALSE(result) << "without datum " << drop;
    EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  }
  auto trailing = packet;
  trailing.push_back(requestDatum(RequestDatumKind::kPoolIdentifier));
  trailing[0].packetInformation.packetSize += 1;
  EXPECT_FALSE(deserializeRequest(trailing));
  auto unknownKind = packet;
  unknownKind[3].kind = static_cast<RequestDatumKind>(42);
  EXPECT_FALSE(deserializeRequest(unknownKind));
  auto notABool = packet;
  notABool[1].operandInformation.hasNoValue = 97;
  auto refused = deserializeRequest(notABool);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("hasNoValue 97"), std::string::npos)
      << refused.error().message;
  auto manyDims = packet;
  manyDims[1].operandInformation.numberOfDimensions = 0xffffffff;
  EXPECT_FALSE(deserializeRequest(manyDims));
  EXPECT_FALSE(deserializeRequest({}));
}

TEST(BurstPackets, ResultsRoundTripWithZeroedPadding) {
  BurstResult r;
  r.status = ErrorStatus::OUTPUT_INSUFFICIENT_SIZE;
  r.outputShapes = {{{1, 2, 3}, false}, {{}, true}};
  const auto packet = serialize(r, 1024);
  ASSERT_EQ(packet.size(), 1u + 4u + 1u + 1u);
  for (const FmqResultDatum& datum : packet) {
    if (datum.kind != ResultDatumKind::kOperandInformation) continue;
    EXPECT_EQ(datum.operandInformation.padding[0], 0);
    EXPECT_EQ(datum.operandInformation.padding[1], 0);
    EXPECT_EQ(datum.operandInformation.padding[2], 0);
  }
  auto back = deserializeResult(packet);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->status, r.status);
  EXPECT_EQ(back->outputShapes, r.outputShapes);
  EXPECT_EQ(back->timing, Timing{});
  auto notABool = packet;
  notABool[1].operandInformation.isSufficient = 2;
  EXPECT_FALSE(deserializeResult(notABool));
}

TEST(BurstPackets, AResultLongerThanTheQueueBecomesGeneralFailure) {
  BurstResult r;
  r.outputShapes = {{{1, 2, 3, 4}, true}, {{5, 6, 7, 8}, true}};
  r.timing = {10, 20};
  const auto packet = serialize(r, 8);
  ASSERT_EQ(packet.size(), 2u);
  auto back = deserializeResult(packet);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_TRUE(back->outputShapes.empty());
  EXPECT_EQ(back->timing, Timing{});
}

}  // namespace
}  // namespace nnhal::ipc
