// libFuzzer target: the burst packet stream -> a BurstListener (the daemon's side of a
// burst) over real message queues, executing on an embedded prepared model (one ADD of two
// float32 [4] tensors). Slots 0-3 name 64-byte pools; the listener asks for them as it would
// ask a client (getMemories), other slots are unknown. Every packet must get a well-formed
// result packet within 20 s, and afterwards a valid packet must still succeed (the queue
// stays in step); anything else aborts.
//
// Input (fuzz/fuzz_input.h): up to 8 parts, each one request packet of 24-byte datums (a
// trailing partial datum is dropped; at most the queue's 1,024 datums).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "ipc/burst_packets.h"
#include "ipc/daemon/burst_listener.h"
#include "ipc/daemon/server_counters.h"
#include "ipc/fmq.h"
#include "nnhal/device.h"

namespace {

using namespace nnhal;
using namespace nnhal::ipc;

Model addModel() {
  Model model;
  Operand tensor;
  tensor.type = OperandType::TENSOR_FLOAT32;
  tensor.dimensions = {4};
  tensor.numberOfConsumers = 1;
  tensor.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  Operand activation;
  activation.type = OperandType::INT32;
  activation.lifetime = OperandLifeTime::CONSTANT_COPY;
  activation.location = {0, 0, 4};
  activation.numberOfConsumers = 1;
  Operand out = tensor;
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  out.numberOfConsumers = 0;
  model.main.operands = {tensor, tensor, activation, out};
  model.operandValues.resize(4, 0);
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3};
  return model;
}

Fmq peerOf(const Fmq& queue) {
  auto attached =
      Fmq::attach(common::UniqueFd(::fcntl(queue.fd(), F_DUPFD_CLOEXEC, 0)), queue.descriptor());
  if (!attached) std::abort();
  return std::move(*attached);
}

/// One listener for the whole process (never torn down, like fuzz_session's daemon).
struct Harness {
  Harness() {
    spdlog::set_level(spdlog::level::critical);
    DeviceOptions options;
    options.kernelThreads = 1;
    device = *createDevice(options);
    model = *device->prepareModel(addModel());
    for (int i = 0; i < 4; ++i) pools.push_back(*Memory::create(64));
    auto requestQueue = Fmq::create({sizeof(FmqRequestDatum), kDefaultFmqLength});
    auto resultQueue = Fmq::create({sizeof(FmqResultDatum), kDefaultFmqLength});
    if (!requestQueue || !resultQueue) std::abort();
    requests = peerOf(*requestQueue);
    results = peerOf(*resultQueue);
    BurstListener::Config config;
    config.burst = *model->configureExecutionBurst();
    config.requests = std::move(*requestQueue);
    config.results = std::move(*resultQueue);
    config.pollWindow = std::chrono::microseconds(5);
    config.counters = std::make_shared<ServerCounters>();
    config.getMemories = [this](const std::vector<int32_t>& slots,
                                const std::function<bool()>&) -> Result<std::vector<Memory>> {
      std::vector<Memory> found;
      for (int32_t slot : slots) {
        if (slot < 0 || slot >= static_cast<int32_t>(pools.size())) {
          return invalidArgument("unknown slot");
        }
        found.push_back(pools[static_cast<size_t>(slot)]);
      }
      return found;
    };
    listener = new BurstListener(std::move(config));  // leaked on purpose, see above
  }

  /// Sends one packet and returns its result; aborts on a hang or a malformed result.
  BurstResult send(std::span<const FmqRequestDatum> packet) {
    if (requests.write(std::as_bytes(packet)) != Fmq::Status::kOk) std::abort();
    FmqWaitPolicy policy;
    policy.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    std::vector<std::byte> bytes;
    if (results.readAvailableBlocking(bytes, policy) != Fmq::Status::kOk) std::abort();
    std::vector<FmqResultDatum> datums(bytes.size() / sizeof(FmqResultDatum));
    std::memcpy(datums.data(), bytes.data(), datums.size() * sizeof(FmqResultDatum));
    auto result = deserializeResult(datums);
    if (!result) std::abort();
    if (result->status != ErrorStatus::NONE &&
        result->status != ErrorStatus::OUTPUT_INSUFFICIENT_SIZE &&
        (!result->outputShapes.empty() || result->timing != Timing{})) {
      std::abort();  // a failed packet carries no shapes and no timing
    }
    return *result;
  }

  std::shared_ptr<Device> device;
  std::shared_ptr<PreparedModel> model;
  std::vector<Memory> pools;
  Fmq requests;
  Fmq results;
  BurstListener* listener = nullptr;
};

Harness& harness() {
  static Harness* instance = new Harness();
  return *instance;
}

std::vector<FmqRequestDatum> validPacket() {
  BurstRequest request;
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  request.slots = {0};
  return serialize(request);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness& h = harness();
  for (std::span<const uint8_t> part : nnhal::fuzz::splitParts({data, size}, 8)) {
    const size_t count = std::min<size_t>(part.size() / sizeof(FmqRequestDatum), kDefaultFmqLength);
    if (count == 0) continue;
    std::vector<FmqRequestDatum> packet(count);
    std::memcpy(static_cast<void*>(packet.data()), part.data(), count * sizeof(FmqRequestDatum));
    (void)h.send(packet);
  }
  const auto valid = validPacket();
  if (h.send(valid).status != ErrorStatus::NONE) std::abort();
  return 0;
}
