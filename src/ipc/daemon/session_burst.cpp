// Session: bursts (ipc/daemon/session.h, ipc/daemon/burst_listener.h).
#include <spdlog/spdlog.h>

#include <condition_variable>

#include "ipc/daemon/burst_listener.h"
#include "ipc/daemon/internal/session_detail.h"

namespace nnhal::ipc {

/// A getMemories call of a listener waiting for the client's answer.
struct Session::MemoryCall {
  std::mutex mutex;
  std::condition_variable cv;
  size_t slots = 0;
  std::optional<Result<std::vector<Memory>>> answer;

  void set(Result<std::vector<Memory>> result) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (answer) return;
      answer = std::move(result);
    }
    cv.notify_all();
  }
};

bool Session::handleConfigureBurst(const Frame& frame) {
  auto m = decodePayload(frame.payload, MessageType::kConfigureBurst, decodeConfigureBurst);
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [&](const Error& error) {
    BurstConfigured configured;
    configured.status = toWireStatus(error);
    OutMessage out;
    encode(configured, out);
    send(MessageType::kBurstConfigured, frame.header.callId, out);
    return true;
  };
  auto model = models_.find(m->handle);
  if (model == models_.end()) {
    return reply(
        Error{ErrorStatus::INVALID_ARGUMENT,
              "prepared model " + std::to_string(m->handle) + " is unknown to this connection",
              {}});
  }
  auto charged = charge(Resource::kBursts);
  if (!charged) return reply(charged.error());
  // The executions run through the model's own burst path, as an embedded client's do.
  auto burst = model->second->model->configureExecutionBurst();
  if (!burst) return reply(burst.error());
  const uint32_t requestLength = m->requestLength != 0 ? m->requestLength : kDefaultFmqLength;
  const uint32_t resultLength = m->resultLength != 0 ? m->resultLength : kDefaultFmqLength;
  auto requests = Fmq::create({sizeof(FmqRequestDatum), requestLength});
  if (!requests) return reply(requests.error());
  auto results = Fmq::create({sizeof(FmqResultDatum), resultLength});
  if (!results) return reply(results.error());

  // The handle first: the listener's getMemories names it. Filled once the listener runs.
  const uint64_t handle = bursts_.add(nullptr);
  BurstListener::Config config;
  config.burst = std::move(*burst);
  config.keepAlive = model->second;
  config.requests = std::move(*requests);
  config.results = std::move(*results);
  config.pollWindow = model->second->lowPower ? std::chrono::nanoseconds::zero()
                                              : std::chrono::nanoseconds(limits_.burstPollWindow);
  config.maxSlots = limits_.maxBurstMemories;
  config.counters = config_->counters;
  config.charge = std::move(*charged);
  config.maxStagedBytes = limits_.maxStagedBytes;
  // Slots and running executions count for the application and the daemon (a burst's own
  // bound is maxSlots; its executions are one at a time).
  config.chargeSlot = [ledger = config_->ledger, account = account_] {
    return ledger->charge(nullptr, account, Resource::kPools);
  };
  config.chargeExecution = [ledger = config_->ledger, account = account_] {
    return ledger->charge(nullptr, account, Resource::kRequests);
  };
  config.getMemories = [weak = weak_from_this(), handle](const std::vector<int32_t>& slots,
                                                         const std::function<bool()>& keepWaiting) {
    return askMemories(weak, handle, slots, keepWaiting);
  };
  std::shared_ptr<BurstListener> listener;
  try {
    listener = std::make_shared<BurstListener>(std::move(config));
  } catch (const std::system_error& e) {
    bursts_.erase(handle);
    return reply(Error{ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                       std::string("cannot start a burst listener: ") + e.what(),
                       {}});
  }
  bursts_.find(handle)->second = listener;
  BurstConfigured configured;
  configured.burst = handle;
  OutMessage out;
  configured.requestFdIndex = out.addFd(listener->requestQueueFd());
  configured.requestLength = requestLength;
  configured.resultFdIndex = out.addFd(listener->resultQueueFd());
  configured.resultLength = resultLength;
  encode(configured, out);
  // The descriptors belong to the listener's queues: it stays alive until they are sent.
  send(MessageType::kBurstConfigured, frame.header.callId, out, listener);
  return true;
}

void Session::releaseBurst(uint64_t burst) {
  auto found = bursts_.find(burst);
  if (found == bursts_.end()) return;
  disposeBurst(std::move(found->second));
  bursts_.erase(found);
}

void Session::disposeBurst(std::shared_ptr<BurstListener> listener) {
  if (listener == nullptr) return;
  listener->stop();
  // Joining waits for an execution in progress: never on an io thread; on the application's
  // lane, so that a slow one delays no one else.
  config_->runIntake(application_,
                     [listener = std::move(listener)]() mutable { listener.reset(); });
}

bool Session::handleBurstFreeMemory(const Frame& frame) {
  auto m = decodePayload(frame.payload, MessageType::kBurstFreeMemory, decodeBurstSlot);
  if (!m) {
    close(m.error().message);
    return false;
  }
  replyAboutBurst(frame.header.callId, m->burst, [&](BurstListener& listener) {
    listener.freeSlot(m->slot);
    return WireStatus{};
  });
  return true;
}

bool Session::handleBurstLastError(const Frame& frame) {
  auto m = decodePayload(frame.payload, MessageType::kBurstLastError, decodeBurstHandle);
  if (!m) {
    close(m.error().message);
    return false;
  }
  replyAboutBurst(frame.header.callId, m->burst,
                  [](BurstListener& listener) { return listener.lastError(); });
  return true;
}

void Session::replyAboutBurst(uint64_t callId, uint64_t burst,
                              const std::function<WireStatus(BurstListener&)>& answer) {
  WireStatus status;
  if (auto found = bursts_.find(burst); found != bursts_.end()) {
    status = answer(*found->second);
  } else {
    status = {ErrorStatus::INVALID_ARGUMENT,
              "burst " + std::to_string(burst) + " is unknown to this connection"};
  }
  OutMessage out;
  encode(status, out);
  send(MessageType::kBurstReply, callId, out);
}

bool Session::handleBurstMemories(const Frame& frame) {
  const size_t fdCount = frame.fds.size();
  auto m = decodePayload(frame.payload, MessageType::kBurstMemories,
                         [fdCount](ByteReader& in) { return decodeBurstMemories(in, fdCount); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto found = memoryCalls_.find(frame.header.callId);
  if (found == memoryCalls_.end()) return true;  // answered too late: the listener gave up
  std::shared_ptr<MemoryCall> call = std::move(found->second);
  memoryCalls_.erase(found);
  if (m->status.status != ErrorStatus::NONE) {
    const ErrorStatus status = m->status.status == ErrorStatus::INVALID_ARGUMENT
                                   ? ErrorStatus::INVALID_ARGUMENT
                                   : ErrorStatus::GENERAL_FAILURE;
    call->set(fail(status, "getMemories: " + m->status.message));
    return true;
  }
  if (m->pools.size() != call->slots) {
    call->set(fail(ErrorStatus::GENERAL_FAILURE, "getMemories: " + std::to_string(m->pools.size()) +
                                                     " memories for " +
                                                     std::to_string(call->slots) + " slots"));
    return true;
  }
  std::vector<Memory> memories;
  for (size_t i = 0; i < m->pools.size(); ++i) {
    const std::string name = "burst memory " + std::to_string(i);
    if (m->pools[i].source != WirePool::Source::kFd) {
      call->set(fail(ErrorStatus::INVALID_ARGUMENT, name + ": must travel with its descriptor"));
      return true;
    }
    auto memory = mapClientPool(m->pools[i], frame.fds, name);
    if (!memory) {
      call->set(std::unexpected(memory.error()));
      return true;
    }
    memories.push_back(std::move(*memory));
  }
  call->set(std::move(memories));
  return true;
}

Result<std::vector<Memory>> Session::askMemories(std::weak_ptr<Session> weak, uint64_t burst,
                                                 const std::vector<int32_t>& slots,
                                                 const std::function<bool()>& keepWaiting) {
  auto call = std::make_shared<MemoryCall>();
  call->slots = slots.size();
  std::chrono::milliseconds timeout;
  {
    std::shared_ptr<Session> self = weak.lock();
    if (self == nullptr) return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the client is gone");
    timeout = self->limits_.getMemoriesTimeout;
    self->onStrand([self, call, burst, slots] {
      if (self->closed_) {
        call->set(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the client is gone"));
        return;
      }
      const uint64_t id = self->memoryCalls_.add(call);
      OutMessage out;
      encode(BurstGetMemories{burst, slots}, out);
      self->send(MessageType::kBurstGetMemories, id, out);
    });
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(call->mutex);
  while (!call->answer) {
    if (!keepWaiting()) return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the burst is stopping");
    if (std::chrono::steady_clock::now() >= deadline) {
      lock.unlock();
      if (auto self = weak.lock()) {
        self->onStrand([self, call] {
          self->memoryCalls_.eraseIf([&](const auto& entry) { return entry.second == call; });
        });
      }
      return fail(ErrorStatus::GENERAL_FAILURE, "the client did not answer getMemories within " +
                                                    std::to_string(timeout.count()) + " ms");
    }
    call->cv.wait_for(lock, std::chrono::milliseconds(50));
  }
  return std::move(*call->answer);
}

}  // namespace nnhal::ipc
