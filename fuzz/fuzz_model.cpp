// libFuzzer target: model + request -> getSupportedOperations, prepareModel and
// executeSynchronously on the embedded driver, the way a client's bytes reach it through
// nnhald (the daemon's wire decoders build the Model and the Request). Every outcome is
// fine except a crash, a sanitizer report, a hang or a leak.
//
// Input (fuzz/fuzz_input.h): [WireModel payload][Execute payload][pool bytes]. Pools described
// with a descriptor become fresh shared memory of the declared size (at most 1 MiB each),
// filled with the pool bytes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>

#include <spdlog/spdlog.h>

#include "fuzz/fuzz_input.h"
#include "ipc/messages.h"
#include "nnhal/device.h"

namespace {

using namespace nnhal;

constexpr size_t kMaxDescriptors = 16;

std::shared_ptr<Device> fuzzDevice() {
  static const std::shared_ptr<Device> device = [] {
    spdlog::set_level(spdlog::level::critical);  // before the device: it outlives it
    DeviceOptions options;
    options.runtimeThreads = 2;
    options.kernelThreads = 1;
    options.maxExecutionBytes = 64 << 20;  // fuzzed shapes must not exhaust the machine
    return *createDevice(options);
  }();
  return device;
}

/// Shared memory for one wire pool (empty Memory for anything else), filled from `fill`.
Memory poolFor(const ipc::WirePool& pool, std::span<const uint8_t> fill) {
  if (pool.source != ipc::WirePool::Source::kFd || pool.size == 0 ||
      pool.size > fuzz::kMaxFuzzPoolBytes) {
    return {};
  }
  auto memory = Memory::create(static_cast<size_t>(pool.size));
  if (!memory) return {};
  if (!fill.empty()) {
    for (size_t at = 0; at < pool.size; at += fill.size()) {
      std::memcpy(memory->data() + at, fill.data(), std::min<size_t>(fill.size(), pool.size - at));
    }
  }
  return *memory;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = fuzz::splitParts({data, size}, 3);
  ipc::ByteReader modelReader(parts[0]);
  ipc::WireModel wire = ipc::decodeWireModel(modelReader, kMaxDescriptors);
  if (!modelReader.ok()) return 0;
  ipc::ByteReader executeReader(parts[1]);
  ipc::Execute execute = ipc::decodeExecute(executeReader, kMaxDescriptors);
  if (!executeReader.ok()) return 0;

  Model model = std::move(wire.model);
  for (const ipc::WirePool& pool : wire.pools) model.pools.push_back(poolFor(pool, parts[2]));
  Request request;
  request.inputs = std::move(execute.request.inputs);
  request.outputs = std::move(execute.request.outputs);
  for (const ipc::WirePool& pool : execute.request.pools) {
    if (pool.source == ipc::WirePool::Source::kToken) {
      request.pools.emplace_back(MemoryDomainToken{pool.token});
    } else {
      request.pools.emplace_back(poolFor(pool, parts[2]));
    }
  }

  const std::shared_ptr<Device> device = fuzzDevice();
  (void)device->getSupportedOperations(model);
  PrepareOptions prepareOptions;
  prepareOptions.preference = static_cast<ExecutionPreference>(execute.measure & 3);
  prepareOptions.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto prepared = device->prepareModel(std::move(model), prepareOptions);
  if (!prepared) return 0;
  ExecuteOptions options;
  options.measure = static_cast<MeasureTiming>(execute.measure & 1);
  options.loopTimeout = std::chrono::milliseconds(1);
  options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  (void)(*prepared)->executeSynchronously(request, options);
  return 0;
}
