#include "ipc/daemon/burst_listener.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "common/clock.h"
#include "common/vlog.h"
#include "hal/file_pool_staging.h"
#include "ipc/daemon/server_counters.h"

namespace nnhal::ipc {
namespace {

using Clock = std::chrono::steady_clock;

/// A failed packet: the status, no shapes, no timing.
BurstResult failure(ErrorStatus status) {
  BurstResult result;
  result.status = status;
  return result;
}

}  // namespace

BurstListener::BurstListener(Config config)
    : config_(std::move(config)),
      requestFd_(config_.requests.fd()),
      resultFd_(config_.results.fd()) {
  ++config_.counters->bursts;
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

BurstListener::~BurstListener() {
  stop();
  if (thread_.joinable()) thread_.join();
  const size_t mapped = slots_.size();
  slots_.clear();
  config_.counters->burstMemories -= mapped;
  --config_.counters->bursts;
}

void BurstListener::stop() {
  // The burst is released: its quota is free at once, whenever the thread ends.
  config_.charge.reset();
  thread_.request_stop();
  // Only atomics of the shared segments are touched: safe beside the listener's thread.
  config_.requests.wake();
  config_.results.wake();
}

void BurstListener::freeSlot(int32_t slot) {
  Slot released;  // unmapped (and its charge given back) outside the lock
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = slots_.find(slot);
  if (found == slots_.end()) return;
  NNHAL_VLOG(Burst, "memory slot {} freed", slot);
  released = std::move(found->second);
  slots_.erase(found);
  --config_.counters->burstMemories;
}

WireStatus BurstListener::lastError() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lastError_;
}

Result<std::vector<Memory>> BurstListener::resolveSlots(const std::vector<int32_t>& slots,
                                                        const std::function<bool()>& keepWaiting) {
  std::vector<int32_t> unknown;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int32_t slot : slots) {
      if (slot < 0) {
        return invalidArgument("memory slot " + std::to_string(slot) + " is negative");
      }
      if (!slots_.contains(slot) &&
          std::find(unknown.begin(), unknown.end(), slot) == unknown.end()) {
        unknown.push_back(slot);
      }
    }
    if (slots_.size() + unknown.size() > config_.maxSlots) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "quota exceeded: a burst keeps at most " + std::to_string(config_.maxSlots) +
                      " memories (free some with freeMemory)");
    }
  }
  NNHAL_VLOG(Burst, "memory slots: {} cached, {} fetched from the client",
             slots.size() - unknown.size(), unknown.size());
  if (!unknown.empty()) {
    // Every new slot keeps a client memory (a descriptor): charged before it is asked for.
    std::vector<Charge> charges(unknown.size());
    if (config_.chargeSlot) {
      for (Charge& charge : charges) {
        NNHAL_ASSIGN_OR_RETURN(charge, config_.chargeSlot());
      }
    }
    NNHAL_ASSIGN_OR_RETURN(std::vector<Memory> fetched, config_.getMemories(unknown, keepWaiting));
    if (fetched.size() != unknown.size()) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "getMemories answered " + std::to_string(fetched.size()) + " memories for " +
                      std::to_string(unknown.size()) + " slots");
    }
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < unknown.size(); ++i) {
      if (slots_.emplace(unknown[i], Slot{std::move(fetched[i]), std::move(charges[i])}).second)
        ++config_.counters->burstMemories;
    }
  }
  std::vector<Memory> memories;
  memories.reserve(slots.size());
  std::lock_guard<std::mutex> lock(mutex_);
  for (int32_t slot : slots) {
    auto found = slots_.find(slot);
    if (found == slots_.end()) {  // freed by the client meanwhile
      return invalidArgument("memory slot " + std::to_string(slot) + " was freed");
    }
    memories.push_back(found->second.memory);
  }
  return memories;
}

BurstResult BurstListener::handle(std::span<const FmqRequestDatum> packet,
                                  Clock::time_point received,
                                  const std::function<bool()>& keepWaiting, std::string& message) {
  auto request = deserializeRequest(packet);
  if (!request) {
    message = request.error().message;
    return failure(request.error().status);
  }
  auto memories = resolveSlots(request->slots, keepWaiting);
  if (!memories) {
    message = memories.error().message;
    return failure(memories.error().status);
  }
  Request executed;
  executed.inputs = std::move(request->inputs);
  executed.outputs = std::move(request->outputs);
  executed.pools.reserve(memories->size());
  for (Memory& memory : *memories) executed.pools.emplace_back(std::move(memory));
  // Client files are read here, on the burst's own thread, not by a driver slot.
  hal::FilePoolStaging staging;
  if (hal::hasFilePools(executed)) {
    auto staged = hal::FilePoolStaging::stage(executed, config_.maxStagedBytes);
    if (!staged) {
      message = staged.error().message;
      return failure(staged.error().status);
    }
    staging = std::move(*staged);
  }
  Charge running;  // the execution counts as a request of its application while it runs
  if (config_.chargeExecution) {
    auto charged = config_.chargeExecution();
    if (!charged) {
      message = charged.error().message;
      return failure(charged.error().status);
    }
    running = std::move(*charged);
  }
  Result<ExecutionResult> result =
      config_.burst->execute(executed, request->measure, request->deadline);
  running.reset();
  if (result && !staging.empty()) {
    if (auto written = staging.writeBack(); !written) result = std::unexpected(written.error());
  }
  if (!result) message = result.error().message;
  BurstResult out = toBurstResult(result);
  if (result && request->measure == MeasureTiming::YES) {
    // A burst's timeInDriver runs from the dequeue of the request to the result.
    out.timing.timeInDriver = std::max(microsecondsSince(received), out.timing.timeOnDevice);
  }
  return out;
}

void BurstListener::run(std::stop_token stop) {
  ++config_.counters->burstListeners;
  NNHAL_VLOG(Burst, "burst listener starts: request queue {} records, result queue {} records",
             config_.requests.descriptor().capacity, config_.results.descriptor().capacity);
  FmqWaitPolicy waitForPacket;
  waitForPacket.pollWindow = config_.pollWindow;
  waitForPacket.slice = kIdleSlice;
  waitForPacket.keepWaiting = [&stop] { return !stop.stop_requested(); };
  FmqWaitPolicy waitForRoom;
  waitForRoom.pollWindow = std::chrono::nanoseconds::zero();
  waitForRoom.keepWaiting = waitForPacket.keepWaiting;
  std::vector<std::byte> bytes;
  std::vector<FmqRequestDatum> packet;
  while (!stop.stop_requested()) {
    const Fmq::Status got = config_.requests.readAvailableBlocking(bytes, waitForPacket);
    if (got == Fmq::Status::kBroken) {
      spdlog::warn("burst: the client broke its request queue; the burst stops");
      break;
    }
    if (got != Fmq::Status::kOk) continue;
    const auto received = Clock::now();
    packet.resize(bytes.size() / sizeof(FmqRequestDatum));
    std::memcpy(packet.data(), bytes.data(), packet.size() * sizeof(FmqRequestDatum));
    std::string message;
    BurstResult result = handle(packet, received, waitForPacket.keepWaiting, message);
    const uint32_t capacity = config_.results.descriptor().capacity;
    const std::vector<FmqResultDatum> datums = serialize(result, capacity);
    if (datums.front().packetInformation.errorStatus != static_cast<int32_t>(result.status)) {
      message = "the result packet is longer than the result queue (" + std::to_string(capacity) +
                " elements)";
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lastError_ = {static_cast<ErrorStatus>(datums.front().packetInformation.errorStatus),
                    std::move(message)};
    }
    const Fmq::Status sent =
        config_.results.writeBlocking(std::as_bytes(std::span(datums)), waitForRoom);
    if (sent == Fmq::Status::kBroken) {
      spdlog::warn("burst: the client broke its result queue; the burst stops");
      break;
    }
  }
  --config_.counters->burstListeners;
  NNHAL_VLOG(Burst, "burst listener stops ({})",
             stop.stop_requested() ? "released or the session ended" : "a queue broke");
}

}  // namespace nnhal::ipc
