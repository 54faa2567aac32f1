// VTS MemoryDomainTests: IDevice::allocate, IBuffer::copyFrom / copyTo, and executions that
// name driver-managed buffers by token, for TENSOR_FLOAT32, TENSOR_FLOAT16,
// TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED, on the embedded driver and through
// nnhald. Execution cases run on the synchronous, callback, fenced and burst paths. Where the
// VTS accepts INVALID_ARGUMENT or GENERAL_FAILURE from allocate, nnhal's rule is stricter:
// INVALID_ARGUMENT, and the message names the argument.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstring>
#include <functional>
#include <future>
#include <thread>

#include "nnhal/buffer.h"
#include "nnhal/burst.h"
#include "vts/vts_targets.h"

namespace nnhal::testing {
namespace {

const std::vector<uint32_t> kShape = {1, 32, 32, 8};
constexpr uint32_t kElements = 1 * 32 * 32 * 8;

struct DomainCase {
  Target target;
  OperandType type;
};

void PrintTo(const DomainCase& c, std::ostream* os) {
  *os << targetName(c.target) << " " << toString(c.type);
}

bool isQuant(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

size_t elementBytes(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
      return 4;
    case OperandType::TENSOR_FLOAT16:
      return 2;
    default:
      return 1;
  }
}

/// Parameters of the ADD models the cases build.
struct AddSpec {
  OperandType type = OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dims = kShape;  ///< of both inputs and the output
  float scale = 0.5f;                   ///< quantized types only
  int32_t zeroPoint = 0;                ///< quantized types only
  bool activationInput = false;         ///< the activation as a third (scalar) model input
};

/// out = in0 + in1 (ADD, no activation).
Model addModel(const AddSpec& spec) {
  Model model;
  auto tensor = [&](OperandLifeTime lifetime) {
    Operand operand;
    operand.type = spec.type;
    operand.dimensions = spec.dims;
    operand.lifetime = lifetime;
    if (isQuant(spec.type)) {
      operand.scale = spec.scale;
      operand.zeroPoint = spec.zeroPoint;
    }
    return operand;
  };
  Subgraph& g = model.main;
  g.operands.push_back(tensor(OperandLifeTime::SUBGRAPH_INPUT));
  g.operands.push_back(tensor(OperandLifeTime::SUBGRAPH_INPUT));
  Operand act;
  act.type = OperandType::INT32;
  act.lifetime =
      spec.activationInput ? OperandLifeTime::SUBGRAPH_INPUT : OperandLifeTime::CONSTANT_COPY;
  if (!spec.activationInput) {
    act.location = {0, 0, 4};
    model.operandValues.assign(4, 0);
  }
  g.operands.push_back(act);
  g.operands.push_back(tensor(OperandLifeTime::SUBGRAPH_OUTPUT));
  for (uint32_t i = 0; i < 3; ++i) g.operands[i].numberOfConsumers = 1;
  g.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  g.inputIndexes =
      spec.activationInput ? std::vector<uint32_t>{0, 1, 2} : std::vector<uint32_t>{0, 1};
  g.outputIndexes = {3};
  return model;
}

/// `count` elements of `type` holding the small integers value(0), value(1), ...: exact in
/// every type (quantized with scale 0.5 and zero point 0: q = 2 * value).
std::vector<uint8_t> encodeWith(OperandType type, size_t count,
                                const std::function<int(size_t)>& value) {
  std::vector<uint8_t> bytes(count * elementBytes(type));
  for (size_t i = 0; i < count; ++i) {
    const int v = value(i);
    switch (type) {
      case OperandType::TENSOR_FLOAT32: {
        const float f = static_cast<float>(v);
        std::memcpy(bytes.data() + i * 4, &f, 4);
        break;
      }
      case OperandType::TENSOR_FLOAT16: {
        const _Float16 h = static_cast<_Float16>(v);
        std::memcpy(bytes.data() + i * 2, &h, 2);
        break;
      }
      case OperandType::TENSOR_QUANT8_ASYMM:
        bytes[i] = static_cast<uint8_t>(2 * v);
        break;
      default:
        bytes[i] = static_cast<uint8_t>(static_cast<int8_t>(2 * v));
        break;
    }
  }
  return bytes;
}

/// The pattern base, base + 1, ..., base + 7, base, ... of `count` elements.
std::vector<uint8_t> encode(OperandType type, size_t count, int base) {
  return encodeWith(type, count, [base](size_t i) { return base + static_cast<int>(i % 8); });
}

/// The sum of the patterns of bases `a` and `b` (what ADD gives for them).
std::vector<uint8_t> sumOf(OperandType type, int a, int b) {
  return encodeWith(type, kElements,
                    [a, b](size_t i) { return a + b + 2 * static_cast<int>(i % 8); });
}

Memory memoryWith(const std::vector<uint8_t>& bytes) {
  Memory memory = *Memory::create(std::max<size_t>(bytes.size(), 1));
  std::memcpy(memory.data(), bytes.data(), bytes.size());
  return memory;
}

std::vector<uint8_t> bytesOf(const Memory& memory) {
  return {memory.data(), memory.data() + memory.size()};
}

/// A Request whose arguments live in shared memory (pool 0 grows as needed) or in
/// driver-managed buffers (one token pool per buffer).
class RequestBuilder {
 public:
  RequestBuilder& input(const std::vector<uint8_t>& bytes, std::vector<uint32_t> dims = {}) {
    request_.inputs.push_back({false, place(bytes), std::move(dims)});
    return *this;
  }
  RequestBuilder& inputToken(uint32_t token, std::vector<uint32_t> dims = {}) {
    request_.inputs.push_back({false, {tokenPool(token), 0, 0}, std::move(dims)});
    return *this;
  }
  RequestBuilder& output(size_t bytes) {
    outputOffsets_.push_back(shared_.size());
    request_.outputs.push_back({false, place(std::vector<uint8_t>(bytes)), {}});
    return *this;
  }
  RequestBuilder& outputToken(uint32_t token, std::vector<uint32_t> dims = {}) {
    outputOffsets_.push_back(SIZE_MAX);
    request_.outputs.push_back({false, {tokenPool(token), 0, 0}, std::move(dims)});
    return *this;
  }
  Request build() {
    Request request = request_;
    if (!shared_.empty()) {
      pool_ = memoryWith(shared_);
      request.pools[0] = pool_;
    } else {
      request.pools[0] = *Memory::create(1);
    }
    return request;
  }
  /// The bytes output `k` (in shared memory) received.
  std::vector<uint8_t> outputBytes(size_t k) const {
    const size_t at = outputOffsets_[k];
    const uint32_t length = request_.outputs[k].location.length;
    return {pool_.data() + at, pool_.data() + at + length};
  }

 private:
  DataLocation place(const std::vector<uint8_t>& bytes) {
    const auto offset = static_cast<uint32_t>(shared_.size());
    shared_.insert(shared_.end(), bytes.begin(), bytes.end());
    shared_.resize((shared_.size() + 63) / 64 * 64);
    return {0, offset, static_cast<uint32_t>(bytes.size())};
  }
  uint32_t tokenPool(uint32_t token) {
    request_.pools.emplace_back(MemoryDomainToken{token});
    return static_cast<uint32_t>(request_.pools.size() - 1);
  }

  Request request_{{}, {}, {Memory()}};
  std::vector<uint8_t> shared_;
  std::vector<size_t> outputOffsets_;
  Memory pool_;
};

enum class Executor { kSync, kAsync, kFenced, kBurst };
constexpr Executor kExecutors[] = {Executor::kSync, Executor::kAsync, Executor::kFenced,
                                   Executor::kBurst};

const char* executorName(Executor e) {
  switch (e) {
    case Executor::kSync:
      return "sync";
    case Executor::kAsync:
      return "async";
    case Executor::kFenced:
      return "fenced";
    case Executor::kBurst:
      return "burst";
  }
  return "?";
}

/// Runs `request` on `executor` and returns the outcome, checking what every path must give:
/// no timing (measure NO), no shapes on failure, the launch status of the callback path equal
/// to its callback's.
Result<ExecutionResult> runOn(Executor executor, PreparedModel& prepared, const Request& request) {
  ExecuteOptions options;
  Result<ExecutionResult> result;
  switch (executor) {
    case Executor::kSync:
      result = prepared.executeSynchronously(request, options);
      break;
    case Executor::kAsync: {
      std::promise<Result<ExecutionResult>> promise;
      auto future = promise.get_future();
      const ErrorStatus launch = prepared.execute(
          request, options,
          [&promise](Result<ExecutionResult> r) { promise.set_value(std::move(r)); });
      if (future.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
        ADD_FAILURE() << "async: no callback within a minute";
        return fail(ErrorStatus::DEVICE_UNAVAILABLE, "hung");
      }
      result = future.get();
      const ErrorStatus status = result ? ErrorStatus::NONE : result.error().status;
      if (launch != ErrorStatus::NONE) {
        EXPECT_EQ(launch, status) << "async launch vs callback";
      }
      break;
    }
    case Executor::kFenced: {
      auto fenced = prepared.executeFenced(request, {}, options);
      if (!fenced) {
        result = std::unexpected(fenced.error());
        break;
      }
      auto info = fenced->callback->getExecutionInfo();
      if (!info) {
        result = std::unexpected(info.error());
      } else if (info->status != ErrorStatus::NONE) {
        EXPECT_EQ(info->timingFenced, Timing{});
        result = fail(info->status, "fenced execution failed");
      } else {
        result = ExecutionResult{{}, info->timingFenced};
      }
      break;
    }
    case Executor::kBurst: {
      auto burst = prepared.configureExecutionBurst();
      if (!burst) return std::unexpected(burst.error());
      result = (*burst)->execute(request, MeasureTiming::NO);
      break;
    }
  }
  if (result) {
    EXPECT_EQ(result->timing, Timing{}) << executorName(executor);
  } else {
    EXPECT_TRUE(result.error().outputShapes.empty()) << executorName(executor);
  }
  return result;
}

ErrorStatus statusOf(const Result<ExecutionResult>& result) {
  return result ? ErrorStatus::NONE : result.error().status;
}

std::vector<DomainCase> domainCases() {
  std::vector<DomainCase> cases;
  for (Target target : {Target::kEmbedded, Target::kRemote}) {
    for (OperandType type :
         {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16,
          OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
      cases.push_back({target, type});
    }
  }
  // The GPU device runs every one of these types too.
  for (OperandType type :
       {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_QUANT8_ASYMM,
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
    cases.push_back({Target::kGpu, type});
  }
  return cases;
}

std::string domainName(const ::testing::TestParamInfo<DomainCase>& info) {
  return std::string(targetName(info.param.target)) + "_" +
         testNameOf(std::string(toString(info.param.type)));
}

/// A PreparedModel no driver made (the VTS's InvalidPreparedModel).
class ForeignPreparedModel final : public PreparedModel {
 public:
  Result<ExecutionResult> executeSynchronously(const Request&, const ExecuteOptions&) override {
    return fail(ErrorStatus::GENERAL_FAILURE, "foreign");
  }
  ErrorStatus execute(Request, const ExecuteOptions&, ExecutionCallback callback) override {
    callback(fail(ErrorStatus::GENERAL_FAILURE, "foreign"));
    return ErrorStatus::GENERAL_FAILURE;
  }
  Result<FencedExecutionResult> executeFenced(const Request&, const std::vector<SyncFence>&,
                                              const ExecuteOptions&, OptionalDuration) override {
    return fail(ErrorStatus::GENERAL_FAILURE, "foreign");
  }
  Result<std::shared_ptr<Burst>> configureExecutionBurst() override {
    return fail(ErrorStatus::GENERAL_FAILURE, "foreign");
  }
};

class MemoryDomain : public ::testing::TestWithParam<DomainCase> {
 protected:
  void SetUp() override {
    device_ = deviceFor(GetParam().target);
    if (GetParam().target == Target::kGpu && device_ == nullptr) {
      GTEST_SKIP() << (ipc::testing::kUnderSanitizer
                           ? std::string("the sanitizer builds leave the GPU device out")
                           : "no Vulkan device: " + vulkanDeviceStatus().reason);
    }
    ASSERT_NE(device_, nullptr);
  }
  OperandType type() const { return GetParam().type; }
  size_t tensorBytes() const { return kElements * elementBytes(type()); }

  AddSpec spec() const { return AddSpec{type()}; }
  /// The prepared ADD of `spec`; null, with the test skipped, when the device reports an
  /// operation of it unsupported (the VTS rule: the GPU device runs TENSOR_FLOAT32 with
  /// inputs of known size only), which the caller checks with IsSkipped().
  std::shared_ptr<PreparedModel> prepare(const AddSpec& spec) {
    const Model model = addModel(spec);
    auto supported = device_->getSupportedOperations(model);
    if (supported && std::find(supported->begin(), supported->end(), false) != supported->end()) {
      skipUnsupported();
      return nullptr;
    }
    auto prepared = device_->prepareModel(model);
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }
  std::shared_ptr<PreparedModel> prepare() { return prepare(spec()); }
  void skipUnsupported() { GTEST_SKIP() << "the device reports the model's ADD unsupported"; }

  Result<AllocatedBuffer> allocate(const std::vector<std::shared_ptr<PreparedModel>>& models,
                                   const std::vector<BufferRole>& inputs,
                                   const std::vector<BufferRole>& outputs,
                                   std::vector<uint32_t> dims = {}) {
    return device_->allocate(BufferDesc{std::move(dims)}, models, inputs, outputs);
  }
  /// Asserts allocate refused the arguments with INVALID_ARGUMENT.
  void expectRefused(const Result<AllocatedBuffer>& allocated, const std::string& what) {
    ASSERT_FALSE(allocated) << what << ": allocated token " << allocated->token;
    EXPECT_EQ(allocated.error().status, ErrorStatus::INVALID_ARGUMENT)
        << what << ": " << allocated.error().message;
    EXPECT_FALSE(allocated.error().message.empty()) << what;
  }
  AllocatedBuffer allocateOk(const std::vector<std::shared_ptr<PreparedModel>>& models,
                             const std::vector<BufferRole>& inputs,
                             const std::vector<BufferRole>& outputs,
                             std::vector<uint32_t> dims = {}) {
    auto allocated = allocate(models, inputs, outputs, std::move(dims));
    EXPECT_TRUE(allocated) << allocated.error().message;
    if (!allocated) return {};
    EXPECT_NE(allocated->buffer, nullptr);
    EXPECT_GT(allocated->token, 0u);
    return *allocated;
  }

  std::shared_ptr<Device> device_;
};

// ---- allocate -----------------------------------------------------------------------------

TEST_P(MemoryDomain, AllocateSucceedsWithUniqueTokens) {
  auto model = prepare();
  ASSERT_NE(model, nullptr);
  std::vector<AllocatedBuffer> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back(allocateOk({model}, {{0, 0, 1.0f}}, {}));
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      EXPECT_NE(buffers[i].token, buffers[j].token);
    }
  }
  // Both inputs and the output of one model, and roles of two models.
  auto other = prepare();
  allocateOk({model, other}, {{0, 0, 0.5f}, {0, 1, 1.0f}, {1, 0, 1.0f}}, {{0, 0, 0.25f}});
}

TEST_P(MemoryDomain, AllocateEmptyRole) {
  expectRefused(allocate({}, {}, {}), "no model, no role");
  auto model = prepare();
  ASSERT_NE(model, nullptr);
  expectRefused(allocate({model}, {}, {}), "a model but no role");
}

TEST_P(MemoryDomain, AllocateNullptrPreparedModel) {
  expectRefused(allocate({nullptr}, {{0, 0, 1.0f}}, {}), "null prepared model");
  auto model = prepare();
  expectRefused(allocate({model, nullptr}, {{0, 0, 1.0f}}, {}), "a null among the models");
}

TEST_P(MemoryDomain, AllocateInvalidPreparedModel) {
  auto foreign = std::make_shared<ForeignPreparedModel>();
  expectRefused(allocate({foreign}, {{0, 0, 1.0f}}, {}), "a prepared model no driver made");
  // A model of the other target (embedded vs remote) is not this device's either.
  const Target other = GetParam().target == Target::kEmbedded ? Target::kRemote : Target::kEmbedded;
  auto otherDevice = deviceFor(other);
  ASSERT_NE(otherDevice, nullptr);
  auto prepared = otherDevice->prepareModel(addModel(spec()));
  ASSERT_TRUE(prepared);
  expectRefused(allocate({*prepared}, {{0, 0, 1.0f}}, {}), "another device's prepared model");
}

TEST_P(MemoryDomain, AllocateInvalidModelIndex) {
  auto model = prepare();
  expectRefused(allocate({model}, {{1, 0, 1.0f}}, {}), "input role of model 1 of 1");
  expectRefused(allocate({model}, {}, {{1, 0, 1.0f}}), "output role of model 1 of 1");
}

TEST_P(MemoryDomain, AllocateInvalidIOIndex) {
  auto model = prepare();
  expectRefused(allocate({model}, {{0, 2, 1.0f}}, {}), "input 2 of 2");
  expectRefused(allocate({model}, {}, {{0, 1, 1.0f}}), "output 1 of 1");
}

TEST_P(MemoryDomain, AllocateInvalidFrequency) {
  auto model = prepare();
  for (float frequency : {10.0f, 0.0f, -0.5f, std::numeric_limits<float>::quiet_NaN()}) {
    expectRefused(allocate({model}, {{0, 0, frequency}}, {}),
                  "input frequency " + std::to_string(frequency));
    expectRefused(allocate({model}, {}, {{0, 0, frequency}}),
                  "output frequency " + std::to_string(frequency));
  }
}

TEST_P(MemoryDomain, AllocateSameRoleSpecifiedTwice) {
  auto model = prepare();
  expectRefused(allocate({model}, {{0, 0, 1.0f}, {0, 0, 1.0f}}, {}), "input role twice");
  expectRefused(allocate({model}, {}, {{0, 0, 1.0f}, {0, 0, 1.0f}}), "output role twice");
  expectRefused(allocate({model, model}, {{0, 0, 1.0f}, {1, 0, 1.0f}}, {}),
                "one model passed twice, the same role through both");
}

TEST_P(MemoryDomain, AllocateConflictOperandType) {
  const OperandType other = [&] {
    switch (type()) {
      case OperandType::TENSOR_FLOAT32:
        return OperandType::TENSOR_FLOAT16;
      case OperandType::TENSOR_FLOAT16:
        return OperandType::TENSOR_FLOAT32;
      case OperandType::TENSOR_QUANT8_ASYMM:
        return OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      default:
        return OperandType::TENSOR_QUANT8_ASYMM;
    }
  }();
  auto a = prepare();
  auto b = prepare(AddSpec{other});
  if (IsSkipped()) return;
  ASSERT_NE(b, nullptr);
  expectRefused(allocate({a, b}, {{0, 0, 1.0f}, {1, 0, 1.0f}}, {}), "two operand types");
}

TEST_P(MemoryDomain, AllocateConflictScale) {
  if (!isQuant(type())) GTEST_SKIP() << "no scale";
  AddSpec other = spec();
  other.scale = 1.0f;
  auto a = prepare();
  auto b = prepare(other);
  expectRefused(allocate({a, b}, {{0, 0, 1.0f}}, {{1, 0, 1.0f}}), "two scales");
}

TEST_P(MemoryDomain, AllocateConflictZeroPoint) {
  if (!isQuant(type())) GTEST_SKIP() << "no zero point";
  AddSpec other = spec();
  other.zeroPoint = 10;
  auto a = prepare();
  auto b = prepare(other);
  expectRefused(allocate({a, b}, {{0, 0, 1.0f}}, {{1, 0, 1.0f}}), "two zero points");
}

TEST_P(MemoryDomain, AllocateConflictRankBetweenRoles) {
  AddSpec other = spec();
  other.dims = {32, 32, 8};
  auto a = prepare();
  auto b = prepare(other);
  expectRefused(allocate({a, b}, {{0, 0, 1.0f}, {1, 0, 1.0f}}, {}), "ranks 4 and 3");
}

TEST_P(MemoryDomain, AllocateConflictDimensionsBetweenRoles) {
  AddSpec other = spec();
  other.dims = {1, 32, 32, 4};
  auto a = prepare();
  auto b = prepare(other);
  expectRefused(allocate({a, b}, {{0, 0, 1.0f}}, {{1, 0, 1.0f}}), "8 vs 4 channels");
}

TEST_P(MemoryDomain, AllocateConflictRankBetweenRoleAndDesc) {
  auto model = prepare();
  expectRefused(allocate({model}, {{0, 0, 1.0f}}, {}, {1, 32}), "desc rank 2, role rank 4");
}

TEST_P(MemoryDomain, AllocateConflictDimensionsBetweenRoleAndDesc) {
  auto model = prepare();
  expectRefused(allocate({model}, {{0, 0, 1.0f}}, {}, {1, 32, 32, 4}), "desc 4 channels");
}

TEST_P(MemoryDomain, AllocateConflictRankWithScalarRole) {
  AddSpec withScalar = spec();
  withScalar.activationInput = true;
  auto model = prepare(withScalar);
  if (IsSkipped()) return;
  ASSERT_NE(model, nullptr);
  expectRefused(allocate({model}, {{0, 2, 1.0f}}, {}, {1}), "dimensions for a scalar role");
  allocateOk({model}, {{0, 2, 1.0f}}, {});  // a scalar buffer without dimensions is fine
}

// ---- copyFrom / copyTo --------------------------------------------------------------------

TEST_P(MemoryDomain, CopyFromInvalidMemorySize) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  for (size_t bytes : {tensorBytes() / 2, tensorBytes() * 2}) {
    auto copied = buffer.buffer->copyFrom(*Memory::create(bytes), {});
    ASSERT_FALSE(copied) << bytes;
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  EXPECT_TRUE(buffer.buffer->copyFrom(*Memory::create(tensorBytes()), {}));
}

TEST_P(MemoryDomain, CopyFromInvalidMemorySizeDynamicShape) {
  AddSpec dynamic = spec();
  dynamic.dims = {0, 32, 32, 8};
  auto model = prepare(dynamic);
  if (IsSkipped()) return;
  ASSERT_NE(model, nullptr);
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  for (size_t bytes : {tensorBytes() / 2, tensorBytes() * 2}) {
    auto copied = buffer.buffer->copyFrom(*Memory::create(bytes), kShape);
    ASSERT_FALSE(copied);
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  EXPECT_TRUE(buffer.buffer->copyFrom(*Memory::create(tensorBytes()), kShape));
  // Another batch size is another shape: the dimension is unknown to the buffer.
  EXPECT_TRUE(buffer.buffer->copyFrom(*Memory::create(tensorBytes() * 2), {2, 32, 32, 8}));
}

TEST_P(MemoryDomain, CopyFromInvalidDimensions) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  const Memory memory = *Memory::create(tensorBytes());
  for (const std::vector<uint32_t>& bad :
       std::vector<std::vector<uint32_t>>{{32, 32, 8}, {2, 32, 32, 8}, {0, 32, 32, 8}}) {
    auto copied = buffer.buffer->copyFrom(memory, bad);
    ASSERT_FALSE(copied) << ::testing::PrintToString(bad);
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  EXPECT_TRUE(buffer.buffer->copyFrom(memory, {}));
  EXPECT_TRUE(buffer.buffer->copyFrom(memory, kShape));
}

TEST_P(MemoryDomain, CopyFromInvalidDimensionsDynamicShape) {
  AddSpec dynamic = spec();
  dynamic.dims = {0, 32, 32, 8};
  auto model = prepare(dynamic);
  if (IsSkipped()) return;
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  const Memory memory = *Memory::create(tensorBytes());
  for (const std::vector<uint32_t>& bad :
       std::vector<std::vector<uint32_t>>{{32, 32, 8}, {1, 32, 32, 4}, {0, 32, 32, 8}, {}}) {
    auto copied = buffer.buffer->copyFrom(memory, bad);
    ASSERT_FALSE(copied) << ::testing::PrintToString(bad);
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  EXPECT_TRUE(buffer.buffer->copyFrom(memory, kShape));
}

TEST_P(MemoryDomain, CopyToUninitializedMemory) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  auto copied = buffer.buffer->copyTo(*Memory::create(tensorBytes()));
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().status, ErrorStatus::GENERAL_FAILURE) << copied.error().message;
}

TEST_P(MemoryDomain, CopyToInvalidMemorySize) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  const std::vector<uint8_t> data = encode(type(), kElements, 1);
  ASSERT_TRUE(buffer.buffer->copyFrom(memoryWith(data), {}));
  for (size_t bytes : {tensorBytes() / 2, tensorBytes() * 2}) {
    auto copied = buffer.buffer->copyTo(*Memory::create(bytes));
    ASSERT_FALSE(copied);
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  const Memory out = *Memory::create(tensorBytes());
  ASSERT_TRUE(buffer.buffer->copyTo(out));
  EXPECT_EQ(bytesOf(out), data);
}

TEST_P(MemoryDomain, CopyToInvalidMemorySizeDynamicShape) {
  AddSpec dynamic = spec();
  dynamic.dims = {0, 32, 32, 8};
  auto model = prepare(dynamic);
  if (IsSkipped()) return;
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  const std::vector<uint8_t> data = encode(type(), kElements, 2);
  ASSERT_TRUE(buffer.buffer->copyFrom(memoryWith(data), kShape));
  for (size_t bytes : {tensorBytes() / 2, tensorBytes() * 2}) {
    auto copied = buffer.buffer->copyTo(*Memory::create(bytes));
    ASSERT_FALSE(copied);
    EXPECT_EQ(copied.error().status, ErrorStatus::INVALID_ARGUMENT) << copied.error().message;
  }
  const Memory out = *Memory::create(tensorBytes());
  ASSERT_TRUE(buffer.buffer->copyTo(out));
  EXPECT_EQ(bytesOf(out), data);
}

TEST_P(MemoryDomain, CopiesThroughEveryPoolKind) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  ASSERT_NE(buffer.buffer, nullptr);
  const std::vector<uint8_t> data = encode(type(), kElements, 3);
  // mmap_fd: a regular file.
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(data.data(), 1, data.size(), file), data.size());
  std::fflush(file);
  auto fromFile = Memory::fromFd(fileno(file), data.size(), 0, MemoryKind::MMAP_FD);
  ASSERT_TRUE(fromFile) << fromFile.error().message;
  ASSERT_TRUE(buffer.buffer->copyFrom(*fromFile, {}));
  for (MemoryKind kind : {MemoryKind::ASHMEM, MemoryKind::HARDWARE_BUFFER_BLOB}) {
    const Memory out = *Memory::create(tensorBytes(), kind);
    ASSERT_TRUE(buffer.buffer->copyTo(out)) << toString(kind);
    EXPECT_EQ(bytesOf(out), data) << toString(kind);
  }
  std::fclose(file);
}

// ---- executions ---------------------------------------------------------------------------

TEST_P(MemoryDomain, ExecutionInvalidToken) {
  auto model = prepare();
  ASSERT_NE(model, nullptr);
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  for (Executor e : kExecutors) {
    for (uint32_t token : {0u, 100000u}) {
      RequestBuilder asInput;
      asInput.inputToken(token).input(x).output(tensorBytes());
      EXPECT_EQ(statusOf(runOn(e, *model, asInput.build())), ErrorStatus::INVALID_ARGUMENT)
          << executorName(e) << " input token " << token;
      RequestBuilder asOutput;
      asOutput.input(x).input(x).outputToken(token);
      EXPECT_EQ(statusOf(runOn(e, *model, asOutput.build())), ErrorStatus::INVALID_ARGUMENT)
          << executorName(e) << " output token " << token;
    }
  }
}

TEST_P(MemoryDomain, ExecutionInvalidPreparedModel) {
  auto a = prepare();
  auto b = prepare();
  ASSERT_NE(b, nullptr);
  AllocatedBuffer in = allocateOk({a}, {{0, 0, 1.0f}}, {});
  AllocatedBuffer out = allocateOk({a}, {}, {{0, 0, 1.0f}});
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  ASSERT_TRUE(in.buffer->copyFrom(memoryWith(x), {}));
  for (Executor e : kExecutors) {
    RequestBuilder asInput;
    asInput.inputToken(in.token).input(x).output(tensorBytes());
    EXPECT_EQ(statusOf(runOn(e, *b, asInput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
    RequestBuilder asOutput;
    asOutput.input(x).input(x).outputToken(out.token);
    EXPECT_EQ(statusOf(runOn(e, *b, asOutput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
  }
}

TEST_P(MemoryDomain, ExecutionInvalidIOIndex) {
  auto model = prepare();
  AllocatedBuffer in0 = allocateOk({model}, {{0, 0, 1.0f}}, {});
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  ASSERT_TRUE(in0.buffer->copyFrom(memoryWith(x), {}));
  for (Executor e : kExecutors) {
    RequestBuilder asInput1;
    asInput1.input(x).inputToken(in0.token).output(tensorBytes());
    EXPECT_EQ(statusOf(runOn(e, *model, asInput1.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
  }
}

TEST_P(MemoryDomain, ExecutionInvalidIOType) {
  auto model = prepare();
  AllocatedBuffer in = allocateOk({model}, {{0, 0, 1.0f}}, {});
  AllocatedBuffer out = allocateOk({model}, {}, {{0, 0, 1.0f}});
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  ASSERT_TRUE(in.buffer->copyFrom(memoryWith(x), {}));
  ASSERT_TRUE(out.buffer->copyFrom(memoryWith(x), {}));
  for (Executor e : kExecutors) {
    RequestBuilder inputAsOutput;
    inputAsOutput.input(x).input(x).outputToken(in.token);
    EXPECT_EQ(statusOf(runOn(e, *model, inputAsOutput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
    RequestBuilder outputAsInput;
    outputAsInput.inputToken(out.token).input(x).output(tensorBytes());
    EXPECT_EQ(statusOf(runOn(e, *model, outputAsInput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
  }
}

TEST_P(MemoryDomain, ExecutionUninitializedMemory) {
  auto model = prepare();
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  const std::vector<uint8_t> y = encode(type(), kElements, 2);
  for (Executor e : kExecutors) {
    // One buffer serving input 0 and the output.
    AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {{0, 0, 1.0f}});
    RequestBuilder readFirst;
    readFirst.inputToken(buffer.token).input(y).output(tensorBytes());
    EXPECT_EQ(statusOf(runOn(e, *model, readFirst.build())), ErrorStatus::GENERAL_FAILURE)
        << executorName(e);
    RequestBuilder write;
    write.input(x).input(y).outputToken(buffer.token);
    ASSERT_EQ(statusOf(runOn(e, *model, write.build())), ErrorStatus::NONE) << executorName(e);
    RequestBuilder read;
    read.inputToken(buffer.token).input(y).output(tensorBytes());
    ASSERT_EQ(statusOf(runOn(e, *model, read.build())), ErrorStatus::NONE) << executorName(e);
    // (x + y) + y, exactly.
    EXPECT_EQ(
        read.outputBytes(0),
        encodeWith(type(), kElements, [](size_t i) { return 5 + 3 * static_cast<int>(i % 8); }))
        << executorName(e);
    const Memory copied = *Memory::create(tensorBytes());
    ASSERT_TRUE(buffer.buffer->copyTo(copied));
    EXPECT_EQ(bytesOf(copied), sumOf(type(), 1, 2)) << executorName(e);
  }
}

TEST_P(MemoryDomain, ExecutionSameRequestMultipleRoles) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}, {0, 1, 1.0f}}, {{0, 0, 1.0f}});
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  ASSERT_TRUE(buffer.buffer->copyFrom(memoryWith(x), {}));
  for (Executor e : kExecutors) {
    RequestBuilder inputAndOutput;
    inputAndOutput.inputToken(buffer.token).input(x).outputToken(buffer.token);
    EXPECT_EQ(statusOf(runOn(e, *model, inputAndOutput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
    RequestBuilder twoInputs;
    twoInputs.inputToken(buffer.token).inputToken(buffer.token).output(tensorBytes());
    ASSERT_EQ(statusOf(runOn(e, *model, twoInputs.build())), ErrorStatus::NONE) << executorName(e);
    EXPECT_EQ(twoInputs.outputBytes(0), sumOf(type(), 1, 1)) << executorName(e);
  }
  // Two outputs: a model with two outputs (ADD twice).
  Model twoOutputs = addModel(spec());
  Subgraph& g = twoOutputs.main;
  g.operands.push_back(g.operands[3]);
  g.operands[0].numberOfConsumers = 2;
  g.operands[1].numberOfConsumers = 2;
  g.operands[2].numberOfConsumers = 2;
  g.operations.push_back({OperationType::ADD, {0, 1, 2}, {4}});
  g.outputIndexes = {3, 4};
  auto prepared = device_->prepareModel(twoOutputs);
  ASSERT_TRUE(prepared) << prepared.error().message;
  AllocatedBuffer both = allocateOk({*prepared}, {}, {{0, 0, 1.0f}, {0, 1, 1.0f}});
  for (Executor e : kExecutors) {
    RequestBuilder twoOuts;
    twoOuts.input(x).input(x).outputToken(both.token).outputToken(both.token);
    EXPECT_EQ(statusOf(runOn(e, **prepared, twoOuts.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
  }
}

TEST_P(MemoryDomain, ExecutionInvalidDimensions) {
  AddSpec dynamic = spec();
  dynamic.dims = {0, 32, 32, 8};
  auto model = prepare(dynamic);
  if (IsSkipped()) return;
  ASSERT_NE(model, nullptr);
  AllocatedBuffer in = allocateOk({model}, {{0, 0, 1.0f}}, {});
  AllocatedBuffer out = allocateOk({model}, {}, {{0, 0, 1.0f}}, kShape);
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  ASSERT_TRUE(in.buffer->copyFrom(memoryWith(x), kShape));
  std::vector<uint8_t> x2 = x;
  x2.insert(x2.end(), x.begin(), x.end());
  for (Executor e : {Executor::kSync, Executor::kAsync, Executor::kBurst}) {
    // The request's dimensions conflict with the buffer's content.
    RequestBuilder conflicting;
    conflicting.inputToken(in.token, {2, 32, 32, 8})
        .input(x2, {2, 32, 32, 8})
        .output(2 * tensorBytes());
    EXPECT_EQ(statusOf(runOn(e, *model, conflicting.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
    RequestBuilder conflictingOutput;
    conflictingOutput.input(x2, {2, 32, 32, 8})
        .input(x2, {2, 32, 32, 8})
        .outputToken(out.token, {2, 32, 32, 8});
    EXPECT_EQ(statusOf(runOn(e, *model, conflictingOutput.build())), ErrorStatus::INVALID_ARGUMENT)
        << executorName(e);
    // The output's real shape [2, 32, 32, 8] does not fit the buffer's [1, 32, 32, 8].
    ASSERT_TRUE(out.buffer->copyFrom(memoryWith(x), {}));
    RequestBuilder realShape;
    realShape.input(x2, {2, 32, 32, 8}).input(x2, {2, 32, 32, 8}).outputToken(out.token);
    EXPECT_EQ(statusOf(runOn(e, *model, realShape.build())), ErrorStatus::GENERAL_FAILURE)
        << executorName(e);
    // ... and the failed execution left the buffer uninitialized.
    auto copied = out.buffer->copyTo(*Memory::create(tensorBytes()));
    ASSERT_FALSE(copied) << executorName(e);
    EXPECT_EQ(copied.error().status, ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_P(MemoryDomain, DynamicOutputTakesTheShapeOfEachExecution) {
  AddSpec dynamic = spec();
  dynamic.dims = {0, 32, 32, 8};
  auto model = prepare(dynamic);
  if (IsSkipped()) return;
  ASSERT_NE(model, nullptr);
  AllocatedBuffer out = allocateOk({model}, {{0, 0, 1.0f}}, {{0, 0, 1.0f}});
  const std::vector<uint8_t> x = encode(type(), kElements, 1);
  for (uint32_t batch : {1u, 3u, 2u}) {
    std::vector<uint8_t> xs;
    for (uint32_t b = 0; b < batch; ++b) xs.insert(xs.end(), x.begin(), x.end());
    const std::vector<uint32_t> dims = {batch, 32, 32, 8};
    RequestBuilder write;
    write.input(xs, dims).input(xs, dims).outputToken(out.token);
    auto written = runOn(Executor::kSync, *model, write.build());
    ASSERT_TRUE(written) << written.error().message;
    ASSERT_EQ(written->outputShapes.size(), 1u);
    EXPECT_EQ(written->outputShapes[0].dimensions, dims);
    const Memory copied = *Memory::create(batch * tensorBytes());
    ASSERT_TRUE(out.buffer->copyTo(copied)) << batch;
    std::vector<uint8_t> expected;
    for (uint32_t b = 0; b < batch; ++b) {
      const auto one = sumOf(type(), 1, 1);
      expected.insert(expected.end(), one.begin(), one.end());
    }
    EXPECT_EQ(bytesOf(copied), expected) << batch;
    // The same buffer read back as input 0, with its new shape.
    RequestBuilder read;
    read.inputToken(out.token).input(xs, dims).output(batch * tensorBytes());
    auto ran = runOn(Executor::kSync, *model, read.build());
    ASSERT_TRUE(ran) << ran.error().message;
  }
}

// Many readers of one buffer while a writer replaces its content: every read sees one whole
// content or the other, nothing crashes, nothing waits forever.
TEST_P(MemoryDomain, ReadersAndAWriterAtOnce) {
  auto model = prepare();
  AllocatedBuffer buffer = allocateOk({model}, {{0, 0, 1.0f}}, {});
  const std::vector<uint8_t> a = encode(type(), kElements, 1);
  const std::vector<uint8_t> b = encode(type(), kElements, 3);
  const std::vector<uint8_t> zero = encode(type(), kElements, 0);
  ASSERT_TRUE(buffer.buffer->copyFrom(memoryWith(a), {}));
  std::atomic<bool> stop{false};
  std::jthread writer([&] {
    for (int i = 0; !stop.load(); ++i) {
      ASSERT_TRUE(buffer.buffer->copyFrom(memoryWith(i % 2 ? a : b), {}));
    }
  });
  std::vector<std::jthread> readers;
  std::atomic<int> torn{0};
  std::atomic<int> failed{0};
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        RequestBuilder read;
        read.inputToken(buffer.token).input(zero).output(tensorBytes());
        auto ran = runOn(Executor::kSync, *model, read.build());
        if (!ran) {
          ++failed;
          continue;
        }
        const auto out = read.outputBytes(0);
        if (out != sumOf(type(), 1, 0) && out != sumOf(type(), 3, 0)) ++torn;
      }
    });
  }
  readers.clear();
  stop = true;
  writer.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(torn.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Vts, MemoryDomain, ::testing::ValuesIn(domainCases()), domainName);

}  // namespace
}  // namespace nnhal::testing
