// The nnhald wire format: every message round-trips; every truncation of a valid frame and
// random bytes are rejected with a reason, never a crash.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include "ipc/frame.h"
#include "ipc/messages.h"

namespace nnhal::ipc {
namespace {

Model sampleModel() {
  Model model;
  Operand a;
  a.type = OperandType::TENSOR_FLOAT32;
  a.dimensions = {1, 4};
  a.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  a.numberOfConsumers = 1;
  Operand w = a;
  w.type = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  w.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  w.location = {0, 8, 4};
  w.extraParams = SymmPerChannelQuantParams{{0.5f, 0.25f}, 1};
  Operand c;
  c.type = OperandType::INT32;
  c.lifetime = OperandLifeTime::CONSTANT_COPY;
  c.location = {0, 0, 4};
  c.extraParams = std::vector<uint8_t>{1, 2, 3};
  Operand out = a;
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  out.numberOfConsumers = 0;
  model.main.operands = {a, w, c, out};
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {3};
  model.referenced.push_back(model.main);
  model.operandValues = {9, 8, 7, 6};
  model.relaxComputationFloat32toFloat16 = true;
  model.extensionNameToPrefix = {{"com.example", 7}};
  return model;
}

void expectSameSubgraph(const Subgraph& a, const Subgraph& b) {
  ASSERT_EQ(a.operands.size(), b.operands.size());
  for (size_t i = 0; i < a.operands.size(); ++i) {
    EXPECT_EQ(a.operands[i].type, b.operands[i].type);
    EXPECT_EQ(a.operands[i].dimensions, b.operands[i].dimensions);
    EXPECT_EQ(a.operands[i].lifetime, b.operands[i].lifetime);
    EXPECT_EQ(a.operands[i].location, b.operands[i].location);
    EXPECT_EQ(a.operands[i].extraParams, b.operands[i].extraParams);
  }
  ASSERT_EQ(a.operations.size(), b.operations.size());
  EXPECT_EQ(a.operations[0].inputs, b.operations[0].inputs);
  EXPECT_EQ(a.inputIndexes, b.inputIndexes);
  EXPECT_EQ(a.outputIndexes, b.outputIndexes);
}

WirePool samplePool(uint32_t fdIndex) {
  WirePool pool;
  pool.source = WirePool::Source::kFd;
  pool.id = 42;
  pool.kind = 2;
  pool.size = 4096;
  pool.offset = 100;
  pool.writable = false;
  pool.desc = {4096, 1, 1, 0x33};
  pool.fdIndex = fdIndex;
  return pool;
}

WireCacheFiles sampleCache() {
  WireCacheFiles files;
  files.modelCache = {{0}};
  files.dataCache = {{1}, {}};
  for (size_t i = 0; i < files.token.size(); ++i) files.token[i] = static_cast<uint8_t>(i * 3);
  return files;
}

template <typename T, typename Decoder>
T roundTrip(const T& message, MessageType type, Decoder decoder) {
  OutMessage out;
  encode(message, out);
  auto decoded = decodePayload(out.payload.buffer(), type, decoder);
  EXPECT_TRUE(decoded) << decoded.error().message;
  return decoded ? *decoded : T{};
}

TEST(WireCodec, HelloRoundTrips) {
  Hello hello{kProtocolVersion, "test-client", "nnhal-test"};
  Hello back = roundTrip(hello, MessageType::kHello, decodeHello);
  EXPECT_EQ(back.protocolVersion, kProtocolVersion);
  EXPECT_EQ(back.clientName, "test-client");
  EXPECT_EQ(back.device, "nnhal-test");
}

TEST(WireCodec, AnOlderHelloDecodesWithoutADeviceSoTheVersionCheckAnswersIt) {
  OutMessage out;
  out.payload.putU32(5);
  out.payload.putString("old-client");
  auto back = decodePayload(out.payload.buffer(), MessageType::kHello, decodeHello);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->protocolVersion, 5u);
  EXPECT_EQ(back->clientName, "old-client");
  EXPECT_EQ(back->device, "");
}

TEST(WireCodec, HelloReplyRoundTrips) {
  HelloReply reply;
  reply.status = {ErrorStatus::NONE, ""};
  reply.protocolVersion = kProtocolVersion;
  reply.info.name = "nnhal-cpu";
  reply.info.version = "v1";
  reply.info.type = DeviceType::ACCELERATOR;
  reply.info.capabilities.relaxedFloat32toFloat16PerformanceScalar = {0.5f, 0.25f};
  reply.info.capabilities.operandPerformance = {{OperandType::TENSOR_INT32, {1.0f, 2.0f}}};
  reply.info.capabilities.whilePerformance = {3.0f, 4.0f};
  reply.info.extensions = {{"ext", {{5, true, 12}}}};
  reply.info.cacheFiles = {1, 2};
  reply.info.cachingOff = "not really";
  reply.devices = {"nnhal-cpu", "nnhal-test"};
  HelloReply back = roundTrip(reply, MessageType::kHelloReply, decodeHelloReply);
  EXPECT_EQ(back.devices, reply.devices);
  EXPECT_EQ(back.info.name, "nnhal-cpu");
  EXPECT_EQ(back.info.version, "v1");
  EXPECT_EQ(back.info.type, DeviceType::ACCELERATOR);
  EXPECT_EQ(back.info.capabilities.relaxedFloat32toFloat16PerformanceScalar.powerUsage, 0.25f);
  ASSERT_EQ(back.info.capabilities.operandPerformance.size(), 1u);
  EXPECT_EQ(back.info.capabilities.operandPerformance[0].type, OperandType::TENSOR_INT32);
  EXPECT_EQ(back.info.capabilities.operandPerformance[0].info.powerUsage, 2.0f);
  EXPECT_EQ(back.info.capabilities.whilePerformance.execTime, 3.0f);
  ASSERT_EQ(back.info.extensions.size(), 1u);
  EXPECT_EQ(back.info.extensions[0].operandTypes[0].byteSize, 12u);
  EXPECT_TRUE(back.info.extensions[0].operandTypes[0].isTensor);
  EXPECT_EQ(back.info.cacheFiles.dataCache, 2u);
  EXPECT_EQ(back.info.cachingOff, "not really");
}

TEST(WireCodec, ModelRoundTrips) {
  WireModel model{sampleModel(), {samplePool(0)}};
  OutMessage out;
  encode(model, out);
  ByteReader in(out.payload.buffer());
  WireModel back = decodeWireModel(in, 1);
  ASSERT_TRUE(decodeDone(in, MessageType::kSupportedOperations));
  expectSameSubgraph(model.model.main, back.model.main);
  ASSERT_EQ(back.model.referenced.size(), 1u);
  expectSameSubgraph(model.model.main, back.model.referenced[0]);
  EXPECT_EQ(back.model.operandValues, model.model.operandValues);
  EXPECT_TRUE(back.model.relaxComputationFloat32toFloat16);
  ASSERT_EQ(back.model.extensionNameToPrefix.size(), 1u);
  EXPECT_EQ(back.model.extensionNameToPrefix[0].prefix, 7);
  ASSERT_EQ(back.pools.size(), 1u);
  EXPECT_EQ(back.pools[0], samplePool(0));
}

TEST(WireCodec, PrepareMessagesRoundTrip) {
  PrepareModel prepare;
  prepare.model = {sampleModel(), {samplePool(2)}};
  prepare.preference = 2;
  prepare.priority = 0;
  prepare.deadline = std::chrono::steady_clock::time_point(std::chrono::nanoseconds(123456789));
  prepare.cache = sampleCache();
  OutMessage out;
  encode(prepare, out);
  ByteReader in(out.payload.buffer());
  PrepareModel back = decodePrepareModel(in, 3);
  ASSERT_TRUE(decodeDone(in, MessageType::kPrepareModel)) << in.error();
  EXPECT_EQ(back.preference, 2);
  EXPECT_EQ(back.deadline, prepare.deadline);
  ASSERT_TRUE(back.cache.has_value());
  EXPECT_EQ(*back.cache, sampleCache());
  EXPECT_EQ(back.model.pools[0], samplePool(2));

  PrepareFromCache fromCache{sampleCache(), std::nullopt};
  OutMessage out2;
  encode(fromCache, out2);
  ByteReader in2(out2.payload.buffer());
  PrepareFromCache back2 = decodePrepareFromCache(in2, 2);
  ASSERT_TRUE(decodeDone(in2, MessageType::kPrepareModelFromCache));
  EXPECT_EQ(back2.cache, sampleCache());
  EXPECT_FALSE(back2.deadline.has_value());

  PrepareReply reply{{ErrorStatus::GENERAL_FAILURE, "bad cache"}, 77};
  PrepareReply back3 = roundTrip(reply, MessageType::kPrepareReply, decodePrepareReply);
  EXPECT_EQ(back3.status, reply.status);
  EXPECT_EQ(back3.handle, 77u);

  ReleasePreparedModel release{99};
  EXPECT_EQ(
      roundTrip(release, MessageType::kReleasePreparedModel, decodeReleasePreparedModel).handle,
      99u);
}

TEST(WireCodec, ExecutionMessagesRoundTrip) {
  Execute execute;
  execute.handle = 5;
  execute.request.inputs = {{false, {0, 0, 16}, {1, 4}}, {true, {}, {}}};
  execute.request.outputs = {{false, {1, 16, 16}, {}}};
  WirePool cached;
  cached.source = WirePool::Source::kCached;
  cached.id = 17;
  WirePool token;
  token.source = WirePool::Source::kToken;
  token.id = 0;
  token.token = 3;
  execute.request.pools = {samplePool(0), cached, token};
  execute.measure = 1;
  execute.loopTimeoutNs = 5'000'000;
  OutMessage out;
  encode(execute, out);
  ByteReader in(out.payload.buffer());
  Execute back = decodeExecute(in, 1);
  ASSERT_TRUE(decodeDone(in, MessageType::kExecute)) << in.error();
  EXPECT_EQ(back.handle, 5u);
  ASSERT_EQ(back.request.inputs.size(), 2u);
  EXPECT_EQ(back.request.inputs[0].dimensions, (std::vector<uint32_t>{1, 4}));
  EXPECT_TRUE(back.request.inputs[1].hasNoValue);
  EXPECT_EQ(back.request.outputs[0].location, (DataLocation{1, 16, 16}));
  ASSERT_EQ(back.request.pools.size(), 3u);
  EXPECT_EQ(back.request.pools[0], samplePool(0));
  EXPECT_EQ(back.request.pools[1], cached);
  EXPECT_EQ(back.request.pools[2], token);
  EXPECT_EQ(back.measure, 1);
  EXPECT_EQ(back.loopTimeoutNs, 5'000'000);

  ExecutionReply reply;
  reply.status = {ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, "output 0 too small"};
  reply.outputShapes = {{{2, 3}, false}, {{}, true}};
  reply.timing = {10, 20};
  ExecutionReply back2 = roundTrip(reply, MessageType::kExecutionReply, decodeExecutionReply);
  EXPECT_EQ(back2.status, reply.status);
  EXPECT_EQ(back2.outputShapes, reply.outputShapes);
  EXPECT_EQ(back2.timing, reply.timing);
}

TEST(WireCodec, SmallMessagesRoundTrip) {
  SupportedOperationsReply ops{{}, {"", "no CONV"}};
  EXPECT_EQ(roundTrip(ops, MessageType::kSupportedOperationsReply, decodeSupportedOperationsReply)
                .reasons,
            ops.reasons);
  ReleasePools pools{{1, 2, 3}};
  EXPECT_EQ(roundTrip(pools, MessageType::kReleasePools, decodeReleasePools).ids, pools.ids);
  StatsReply stats{{1, 2, 3, 4, 5, 6, 7, 8}, true, 4096, 1 << 20, 1234, {}};
  stats.applications.push_back({1000, 3, 2, 4, 1 << 20, 5, 6, 7, 8, 1 << 22, 123456});
  const StatsReply statsBack = roundTrip(stats, MessageType::kStatsReply, decodeStatsReply);
  EXPECT_EQ(statsBack.applications, stats.applications);
  EXPECT_EQ(statsBack.counts, stats.counts);
  EXPECT_TRUE(statsBack.wholeDaemon);
  EXPECT_EQ(statsBack.poolBytes, 4096u);
  EXPECT_EQ(statsBack.residentBytes, 1u << 20);
  EXPECT_EQ(statsBack.uptimeMs, 1234u);
  WireStatus status{ErrorStatus::INVALID_ARGUMENT, "x"};
  EXPECT_EQ(roundTrip(status, MessageType::kLaunched, decodeWireStatus), status);
}

TEST(WireCodec, FencedMessagesRoundTrip) {
  ExecuteFenced fenced;
  fenced.execute.handle = 3;
  fenced.execute.request.pools = {samplePool(0)};
  fenced.waitFor = {{true, 1}, {false, 0}, {true, 2}};
  fenced.timeoutAfterFenceNs = 12345;
  OutMessage out;
  encode(fenced, out);
  ByteReader in(out.payload.buffer());
  ExecuteFenced back = decodeExecuteFenced(in, 3);
  ASSERT_TRUE(decodeDone(in, MessageType::kExecuteFenced)) << in.error();
  EXPECT_EQ(back.execute.handle, 3u);
  EXPECT_EQ(back.waitFor, fenced.waitFor);
  EXPECT_EQ(back.timeoutAfterFenceNs, std::optional<int64_t>(12345));
  ByteReader tooFew(out.payload.buffer());
  (void)decodeExecuteFenced(tooFew, 2);
  EXPECT_FALSE(decodeDone(tooFew, MessageType::kExecuteFenced));

  FencedReply reply{{}, true, 0, 77};
  OutMessage out2;
  encode(reply, out2);
  ByteReader in2(out2.payload.buffer());
  FencedReply back2 = decodeFencedReply(in2, 1);
  ASSERT_TRUE(decodeDone(in2, MessageType::kFencedReply));
  EXPECT_TRUE(back2.hasFence);
  EXPECT_EQ(back2.handle, 77u);

  FencedInfoReply info{{}, ErrorStatus::MISSED_DEADLINE_TRANSIENT, {1, 2}, {3, 4}};
  FencedInfoReply back3 = roundTrip(info, MessageType::kFencedInfoReply, decodeFencedInfoReply);
  EXPECT_EQ(back3.executionStatus, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_EQ(back3.timingLaunched, (Timing{1, 2}));
  EXPECT_EQ(back3.timingFenced, (Timing{3, 4}));
  EXPECT_EQ(roundTrip(FencedHandle{5}, MessageType::kGetFencedInfo, decodeFencedHandle).handle, 5u);
}

TEST(WireCodec, BufferMessagesRoundTrip) {
  Allocate allocate{{1, 0, 3}, {4, 9}, {{0, 1, 0.5f}}, {{1, 0, 1.0f}, {0, 2, 0.25f}}};
  Allocate back = roundTrip(allocate, MessageType::kAllocate, decodeAllocate);
  EXPECT_EQ(back.dimensions, allocate.dimensions);
  EXPECT_EQ(back.models, allocate.models);
  ASSERT_EQ(back.inputRoles.size(), 1u);
  EXPECT_EQ(back.inputRoles[0].ioIndex, 1u);
  EXPECT_EQ(back.inputRoles[0].frequency, 0.5f);
  ASSERT_EQ(back.outputRoles.size(), 2u);
  EXPECT_EQ(back.outputRoles[1].ioIndex, 2u);
  EXPECT_EQ(back.outputRoles[1].frequency, 0.25f);
  Allocated allocated{{}, 7, 42};
  Allocated back2 = roundTrip(allocated, MessageType::kAllocated, decodeAllocated);
  EXPECT_EQ(back2.buffer, 7u);
  EXPECT_EQ(back2.token, 42u);
  BufferCopy copy{3, samplePool(0), {2, 2}};
  OutMessage out;
  encode(copy, out);
  ByteReader in(out.payload.buffer());
  BufferCopy back3 = decodeBufferCopy(in, 1);
  ASSERT_TRUE(decodeDone(in, MessageType::kBufferCopyFrom)) << in.error();
  EXPECT_EQ(back3.buffer, 3u);
  EXPECT_EQ(back3.pool, copy.pool);
  EXPECT_EQ(back3.dimensions, copy.dimensions);
  ByteReader noFd(out.payload.buffer());
  (void)decodeBufferCopy(noFd, 0);
  EXPECT_FALSE(decodeDone(noFd, MessageType::kBufferCopyFrom));
  EXPECT_EQ(roundTrip(BufferHandle{9}, MessageType::kReleaseBuffer, decodeBufferHandle).buffer, 9u);
}

TEST(WireCodec, RejectsDescriptorIndexBeyondTheFrame) {
  Execute execute;
  execute.request.pools = {samplePool(3)};
  OutMessage out;
  encode(execute, out);
  auto decoded = decodePayload(out.payload.buffer(), MessageType::kExecute,
                               [](ByteReader& in) { return decodeExecute(in, 3); });
  ASSERT_FALSE(decoded);
  EXPECT_NE(decoded.error().message.find("descriptor index 3"), std::string::npos)
      << decoded.error().message;
}

TEST(WireCodec, RejectsUnknownStatusAndTrailingBytes) {
  OutMessage out;
  out.payload.putI32(42);
  out.payload.putString("");
  auto bad = decodePayload(out.payload.buffer(), MessageType::kLaunched, decodeWireStatus);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown ErrorStatus 42"), std::string::npos);
  OutMessage out2;
  encode(WireStatus{}, out2);
  out2.payload.putU8(0);
  auto trailing = decodePayload(out2.payload.buffer(), MessageType::kLaunched, decodeWireStatus);
  ASSERT_FALSE(trailing);
  EXPECT_NE(trailing.error().message.find("1 bytes after"), std::string::npos);
}

/// Every proper prefix of each message's payload fails to decode with a reason.
TEST(WireCodec, EveryTruncationIsRejected) {
  std::vector<std::pair<OutMessage, std::function<Result<void>(std::span<const uint8_t>)>>> cases;
  auto add = [&](auto message, MessageType type, auto decoder) {
    OutMessage out;
    encode(message, out);
    cases.emplace_back(std::move(out), [type, decoder](std::span<const uint8_t> bytes) {
      auto decoded = decodePayload(bytes, type, decoder);
      if (decoded) return Result<void>{};
      return Result<void>(std::unexpected(decoded.error()));
    });
  };
  PrepareModel prepare;
  prepare.model = {sampleModel(), {samplePool(0)}};
  prepare.cache = sampleCache();
  add(prepare, MessageType::kPrepareModel,
      [](ByteReader& in) { return decodePrepareModel(in, 4); });
  Execute execute;
  execute.request.inputs = {{false, {0, 0, 16}, {1, 4}}};
  execute.request.pools = {samplePool(0)};
  add(execute, MessageType::kExecute, [](ByteReader& in) { return decodeExecute(in, 1); });
  add(ExecutionReply{{}, {{{1, 2}, true}}, {}}, MessageType::kExecutionReply, decodeExecutionReply);
  HelloReply hello;
  hello.info.name = "n";
  hello.info.capabilities.operandPerformance.resize(3);
  hello.info.extensions = {{"e", {{1, false, 4}}}};
  add(hello, MessageType::kHelloReply, decodeHelloReply);
  add(SupportedOperationsReply{{}, {"a", "bc"}}, MessageType::kSupportedOperationsReply,
      decodeSupportedOperationsReply);
  add(PrepareFromCache{sampleCache(), {}}, MessageType::kPrepareModelFromCache,
      [](ByteReader& in) { return decodePrepareFromCache(in, 2); });
  add(StatsReply{}, MessageType::kStatsReply, decodeStatsReply);
  add(ReleasePools{{1, 2}}, MessageType::kReleasePools, decodeReleasePools);
  add(Hello{kProtocolVersion, "c"}, MessageType::kHello, decodeHello);
  ExecuteFenced fenced;
  fenced.execute = execute;
  fenced.waitFor = {{true, 0}};
  fenced.timeoutAfterFenceNs = 5;
  add(fenced, MessageType::kExecuteFenced,
      [](ByteReader& in) { return decodeExecuteFenced(in, 1); });
  add(FencedReply{{}, true, 0, 1}, MessageType::kFencedReply,
      [](ByteReader& in) { return decodeFencedReply(in, 1); });
  add(FencedInfoReply{}, MessageType::kFencedInfoReply, decodeFencedInfoReply);
  add(Allocate{{1, 2}, {3}, {{0, 0, 1.0f}}, {}}, MessageType::kAllocate, decodeAllocate);
  add(Allocated{{}, 1, 2}, MessageType::kAllocated, decodeAllocated);
  add(BufferCopy{1, samplePool(0), {4}}, MessageType::kBufferCopyTo,
      [](ByteReader& in) { return decodeBufferCopy(in, 1); });
  add(BufferHandle{1}, MessageType::kReleaseBuffer, decodeBufferHandle);
  for (auto& [out, decode] : cases) {
    const std::vector<uint8_t>& bytes = out.payload.buffer();
    ASSERT_TRUE(decode(bytes));
    for (size_t cut = 0; cut < bytes.size(); ++cut) {
      auto result = decode(std::span<const uint8_t>(bytes.data(), cut));
      ASSERT_FALSE(result) << "a " << cut << "-byte prefix of " << bytes.size() << " decoded";
      EXPECT_NE(result.error().message.find("malformed"), std::string::npos);
    }
  }
}

TEST(WireCodec, RandomPayloadsNeverCrash) {
  std::mt19937 random(7);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::vector<uint8_t> bytes(random() % 200);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(random() % 4 == 0 ? random() : 0);
    accepted += decodePayload(bytes, MessageType::kExecute, [](ByteReader& in) {
                  return decodeExecute(in, 2);
                }).has_value();
    accepted += decodePayload(bytes, MessageType::kPrepareModel, [](ByteReader& in) {
                  return decodePrepareModel(in, 2);
                }).has_value();
    accepted += decodePayload(bytes, MessageType::kHelloReply, decodeHelloReply).has_value();
  }
  // Random bytes are occasionally a valid message (e.g. all zeros); most are not.
  EXPECT_LT(accepted, 3000);
}

// --- frames ---------------------------------------------------------------------------

std::vector<uint8_t> frameBytes(const FrameHeader& header, std::span<const uint8_t> payload) {
  std::vector<uint8_t> bytes(kFrameHeaderBytes);
  encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return bytes;
}

TEST(FrameParser, ParsesFramesSplitAnywhere) {
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5};
  FrameHeader header;
  header.type = 11;
  header.callId = 0x1122334455667788;
  header.payloadBytes = static_cast<uint32_t>(payload.size());
  std::vector<uint8_t> stream = frameBytes(header, payload);
  header.callId = 2;
  header.payloadBytes = 0;
  const std::vector<uint8_t> second = frameBytes(header, {});
  stream.insert(stream.end(), second.begin(), second.end());
  for (size_t split = 0; split <= stream.size(); ++split) {
    FrameParser parser;
    parser.append(std::span<const uint8_t>(stream.data(), split));
    std::vector<Frame> frames;
    while (true) {
      auto next = parser.next();
      ASSERT_TRUE(next) << next.error().message;
      if (!next->has_value()) break;
      frames.push_back(std::move(**next));
    }
    parser.append(std::span<const uint8_t>(stream.data() + split, stream.size() - split));
    while (true) {
      auto next = parser.next();
      ASSERT_TRUE(next) << next.error().message;
      if (!next->has_value()) break;
      frames.push_back(std::move(**next));
    }
    ASSERT_EQ(frames.size(), 2u) << "split at " << split;
    EXPECT_EQ(frames[0].header.callId, 0x1122334455667788u);
    EXPECT_EQ(frames[0].header.type, 11);
    EXPECT_EQ(frames[0].payload, payload);
    EXPECT_EQ(frames[1].header.callId, 2u);
    EXPECT_FALSE(parser.hasPartialFrame());
  }
}

Result<std::optional<Frame>> parseOne(const FrameHeader& header, std::span<const uint8_t> payload,
                                      uint32_t limit = kDefaultMaxPayloadBytes) {
  FrameParser parser(limit);
  parser.append(frameBytes(header, payload));
  return parser.next();
}

TEST(FrameParser, RejectsBadMagic) {
  FrameHeader header;
  header.magic = 0x12345678;
  auto result = parseOne(header, {});
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("bad frame magic 0x12345678"), std::string::npos);
}

TEST(FrameParser, RejectsOversizedPayloadBeforeReadingIt) {
  FrameHeader header;
  header.payloadBytes = 1000;
  auto result = parseOne(header, {}, 999);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("exceeds the limit of 999"), std::string::npos);
}

TEST(FrameParser, RejectsTooManyOrMissingDescriptors) {
  FrameHeader header;
  header.fdCount = 254;
  auto many = parseOne(header, {});
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("at most 253"), std::string::npos);
  header.fdCount = 2;
  auto missing = parseOne(header, {});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("announces 2 descriptors, 0 arrived"), std::string::npos);
}

TEST(FrameParser, RejectsDescriptorsNoFrameAnnounced) {
  FrameParser parser;
  FrameHeader header;
  parser.append(frameBytes(header, {}));
  std::vector<UniqueFd> fds;
  fds.emplace_back(::dup(0));
  parser.appendFds(std::move(fds));
  auto result = parser.next();
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("more than the frame announced"), std::string::npos);
}

TEST(FrameParser, EveryTruncationWaitsAndRandomStreamsFailCleanly) {
  Execute execute;
  execute.request.inputs = {{false, {0, 0, 16}, {}}};
  OutMessage out;
  encode(execute, out);
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kExecute);
  header.payloadBytes = static_cast<uint32_t>(out.payload.size());
  const std::vector<uint8_t> bytes = frameBytes(header, out.payload.buffer());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    FrameParser parser;
    parser.append(std::span<const uint8_t>(bytes.data(), cut));
    auto next = parser.next();
    ASSERT_TRUE(next);
    EXPECT_FALSE(next->has_value()) << "a frame from " << cut << " bytes";
  }
  std::mt19937 random(11);
  int failures = 0;
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> noise(random() % 100);
    for (uint8_t& b : noise) b = static_cast<uint8_t>(random());
    FrameParser parser(1 << 20);
    parser.append(noise);
    for (int i = 0; i < 10; ++i) {
      auto next = parser.next();
      if (!next) {
        ++failures;
        break;
      }
      if (!next->has_value()) break;
    }
  }
  EXPECT_GT(failures, 0);
}

TEST(FrameIo, SendsAndReceivesDescriptorsOverASocketPair) {
  int pair[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd a(pair[0]), b(pair[1]);
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  UniqueFd readEnd(pipeFds[0]), writeEnd(pipeFds[1]);
  std::vector<uint8_t> payload(200000, 0xab);  // larger than one socket buffer chunk
  FrameHeader header;
  header.type = 3;
  header.callId = 9;
  header.payloadBytes = static_cast<uint32_t>(payload.size());
  header.fdCount = 1;
  const int fds[] = {writeEnd.get()};
  std::thread sender([&] { ASSERT_TRUE(sendFrame(a.get(), header, payload, fds)); });
  FrameParser parser;
  std::optional<Frame> frame;
  while (!frame) {
    auto status = receiveSome(b.get(), parser, false);
    ASSERT_TRUE(status) << status.error().message;
    ASSERT_EQ(*status, ReceiveStatus::kData);
    auto next = parser.next();
    ASSERT_TRUE(next) << next.error().message;
    frame = std::move(*next);
  }
  sender.join();
  EXPECT_EQ(frame->payload, payload);
  ASSERT_EQ(frame->fds.size(), 1u);
  // The received descriptor is the pipe's write end: what it writes comes out of readEnd.
  ASSERT_EQ(::write(frame->fds[0].get(), "x", 1), 1);
  char c = 0;
  ASSERT_EQ(::read(readEnd.get(), &c, 1), 1);
  EXPECT_EQ(c, 'x');
  a.reset();
  auto closed = receiveSome(b.get(), parser, false);
  ASSERT_TRUE(closed);
  EXPECT_EQ(*closed, ReceiveStatus::kClosed);
}

}  // namespace
}  // namespace nnhal::ipc
