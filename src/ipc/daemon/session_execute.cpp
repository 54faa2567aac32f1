// Session: executions, fenced executions, and the queue of work that runs on the driver's
// threads (ipc/daemon/session.h).
#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>

#include "hal/driver_control.h"
#include "hal/file_pool_staging.h"
#include "ipc/daemon/internal/session_detail.h"

namespace nnhal::ipc {
namespace {

ExecutionReply executionReply(const Result<ExecutionResult>& result) {
  ExecutionReply reply;
  if (result) {
    reply.outputShapes = result->outputShapes;
    reply.timing = result->timing;
  } else {
    reply.status = toWireStatus(result.error());
    reply.outputShapes = result.error().outputShapes;
  }
  return reply;
}

}  // namespace

ExecuteOptions Session::executeOptions(const Execute& m) const {
  ExecuteOptions options;
  options.measure = static_cast<MeasureTiming>(m.measure);
  options.deadline = m.deadline;
  // Negative values stay negative: the driver rejects them (INVALID_ARGUMENT).
  options.loopTimeout = std::min(std::chrono::nanoseconds(m.loopTimeoutNs), limits_.maxLoopTimeout);
  return options;
}

Result<WorkQueue::Ticket> Session::admitRequest() {
  return queue_.admit(*config_->ledger, account_);
}

Result<Charge> Session::charge(Resource resource, uint64_t amount) {
  return config_->ledger->charge(usage_, account_, resource, amount);
}

Result<Request> Session::requestFrom(WireRequest wire, const std::vector<UniqueFd>& fds) {
  Request request;
  request.inputs = std::move(wire.inputs);
  request.outputs = std::move(wire.outputs);
  request.pools.reserve(wire.pools.size());
  for (size_t i = 0; i < wire.pools.size(); ++i) {
    const WirePool& pool = wire.pools[i];
    switch (pool.source) {
      case WirePool::Source::kFd: {
        pools_.erase(pool.id);  // a new memory under a known id replaces the old one
        NNHAL_ASSIGN_OR_RETURN(Charge charged, charge(Resource::kPools));
        // A pool that cannot be used is remembered too: the client names it by id from now on
        // and must keep getting the same error.
        auto memory = mapClientPool(pool, fds, "request.pools[" + std::to_string(i) + "]");
        pools_[pool.id] =
            std::make_shared<TrackedPool>(memory, config_->counters, std::move(charged));
        if (!memory) return std::unexpected(memory.error());
        request.pools.emplace_back(*memory);
        break;
      }
      case WirePool::Source::kCached: {
        auto found = pools_.find(pool.id);
        if (found == pools_.end()) {
          return invalidArgument("request.pools[" + std::to_string(i) + "]: pool id " +
                                 std::to_string(pool.id) + " is unknown to this connection");
        }
        if (!found->second->memory) return std::unexpected(found->second->memory.error());
        request.pools.emplace_back(*found->second->memory);
        break;
      }
      case WirePool::Source::kToken:
        // Only this connection's buffers: another client's token is unknown here (token 0 is
        // left to the driver's own check).
        if (pool.token != 0 && !bufferTokens_.contains(pool.token)) {
          return invalidArgument("request.pools[" + std::to_string(i) + "]: token " +
                                 std::to_string(pool.token) +
                                 " names no buffer allocated on this connection");
        }
        request.pools.emplace_back(MemoryDomainToken{pool.token});
        break;
      case WirePool::Source::kEmpty:
        request.pools.emplace_back(Memory());
        break;
    }
  }
  return request;
}

bool Session::handleExecute(Frame& frame, bool async, bool moreWaiting) {
  const uint64_t callId = frame.header.callId;
  const MessageType type = async ? MessageType::kExecute : MessageType::kExecuteSynchronously;
  auto m = decodePayload(frame.payload, type,
                         [&](ByteReader& in) { return decodeExecute(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId](const Result<ExecutionResult>& result) {
    OutMessage out;
    encode(executionReply(result), out);
    send(MessageType::kExecutionReply, callId, out);
  };
  auto launched = [this, callId](const WireStatus& status) { sendLaunched(callId, status); };
  // Faults found here are reported as the driver would report them: INVALID_ARGUMENT (and a
  // quota) as the launch status, GENERAL_FAILURE (a pool it cannot use) as the outcome.
  auto refuse = [&](const Error& error) {
    if (!async) {
      reply(std::unexpected(error));
    } else if (error.status == ErrorStatus::GENERAL_FAILURE) {
      launched({});
      reply(std::unexpected(error));
    } else {
      launched(toWireStatus(error));
    }
    return true;
  };
  auto found = models_.find(m->handle);
  if (found == models_.end()) {
    return refuse(Error{ErrorStatus::INVALID_ARGUMENT,
                        "unknown prepared model handle " + std::to_string(m->handle),
                        {}});
  }
  std::shared_ptr<TrackedModel> tracked = found->second;
  auto request = requestFrom(std::move(m->request), frame.fds);
  if (!request) return refuse(request.error());
  hal::PreparedModelControl& control = *tracked->control;
  // The driver's argument checks now, so that Launched carries their status even when the
  // execution waits in the queue; the request then runs without being checked again.
  auto validated = control.validate(std::move(*request), executeOptions(*m));
  if (!validated) return refuse(validated.error());

  // Client files (mmap_fd pools the driver reads with pread/pwrite) are read and written on
  // the application's lane, never by an io thread or a driver slot (hal/file_pool_staging.h).
  const bool filePools = validated->hasFilePools();
  if (!async && !filePools && !moreWaiting && queue_.running() == 0 && queue_.waiting() == 0 &&
      control.runsQuickly()) {
    // The fast path: short by construction (ipc/daemon/session.h), so it may run on this thread.
    ++counters_.callsInFlight;
    auto result = control.executeValidated(*validated);
    --counters_.callsInFlight;
    reply(result);
    return true;
  }
  auto ticket = admitRequest();
  if (!ticket) return refuse(ticket.error());

  if (async) launched({});
  // Answers the request, frees its driver slot.
  auto deliver = [this, reply, tracked](WorkQueue::Running running,
                                        Result<ExecutionResult> result) {
    running.answered();
    if (closed_) return;
    reply(result);
    running.end();
    finishIfDrained();
  };
  using Staging = std::shared_ptr<hal::FilePoolStaging>;
  // Runs the (staged) request on the driver; once it ended, writes its outputs back to the
  // client's files on the lane, then replies.
  auto run = [this, tracked, deliver](WorkQueue::Running running, hal::ValidatedRequest staged,
                                      Staging staging) mutable {
    auto state = std::make_shared<LaunchState<ExecutionResult>>();
    // The driver may drop its callback without calling it: the slot is freed all the same.
    auto held = std::make_shared<WorkQueue::Running>(std::move(running));
    auto finish = [self = shared_from_this(), deliver, staging,
                   held](Result<ExecutionResult> result) mutable {
      if (!staging || staging->empty() || !result) {
        deliver(std::move(*held), std::move(result));
        return;
      }
      self->offIoThread(
          [staging]() -> Result<void> { return staging->writeBack(); },
          [deliver, held, result = std::move(result)](Result<void> written) mutable {
            deliver(std::move(*held),
                    written ? std::move(result)
                            : Result<ExecutionResult>(std::unexpected(std::move(written).error())));
          });
    };
    ExecutionCallback callback =
        [self = shared_from_this(), state, finish,
         work = boost::asio::make_work_guard(strand_)](Result<ExecutionResult> result) mutable {
          if (state->keepIfEarly(result)) return;
          // The work guard keeps the io_context running until the reply is written.
          self->onStrand([finish = std::move(finish), result = std::move(result),
                          work = std::move(work)]() mutable { finish(std::move(result)); });
        };
    const ErrorStatus status =
        tracked->control->executeCancellable(std::move(staged), std::move(callback), cancelled_);
    // A result that came before the call returned takes the same way as a later one: its
    // outputs go back to the client's files before the reply.
    if (auto early = state->markReturned()) {
      finish(std::move(*early));
    } else if (status != ErrorStatus::NONE) {
      deliver(std::move(*held), fail(status, "the execution could not start"));
    }
  };
  queue_.schedule(std::move(*ticket), [this, run, deliver, filePools,
                                       request = std::make_shared<hal::ValidatedRequest>(std::move(
                                           *validated))](WorkQueue::Running running) mutable {
    if (!filePools) {
      run(std::move(running), std::move(*request), nullptr);
      return;
    }
    offIoThread(
        [request, limit = limits_.maxStagedBytes]() -> Result<Staging> {
          NNHAL_ASSIGN_OR_RETURN(hal::FilePoolStaging staging, request->stageFilePools(limit));
          return std::make_shared<hal::FilePoolStaging>(std::move(staging));
        },
        [run, deliver, request, running = std::move(running)](Result<Staging> staging) mutable {
          if (!staging) {
            deliver(std::move(running), std::unexpected(std::move(staging).error()));
            return;
          }
          run(std::move(running), std::move(*request), std::move(*staging));
        });
  });
  return true;
}

void Session::whenSignalled(const SyncFence& fence, std::function<void()> then) {
  if (!fence.valid() || fence.state() != SyncFence::State::kActive) {
    then();
    return;
  }
  const int fd = ::fcntl(fence.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    then();
    return;
  }
  auto descriptor =
      std::make_shared<boost::asio::posix::stream_descriptor>(channel_.executor(), fd);
  const uint64_t waitId = fenceWaits_.add(descriptor);
  descriptor->async_wait(
      boost::asio::posix::stream_descriptor::wait_read,
      boost::asio::bind_executor(strand_, [self = shared_from_this(), waitId, descriptor,
                                           then = std::move(then)](boost::system::error_code ec) {
        self->fenceWaits_.erase(waitId);
        if (ec || self->closed_) return;
        then();
      }));
}

bool Session::handleExecuteFenced(Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kExecuteFenced,
                         [&](ByteReader& in) { return decodeExecuteFenced(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto refuse = [&](const Error& error) {
    FencedReply reply;
    reply.status = toWireStatus(error);
    OutMessage out;
    encode(reply, out);
    send(MessageType::kFencedReply, callId, out);
    return true;
  };
  auto found = models_.find(m->execute.handle);
  if (found == models_.end()) {
    return refuse(Error{ErrorStatus::INVALID_ARGUMENT,
                        "unknown prepared model handle " + std::to_string(m->execute.handle),
                        {}});
  }
  auto fencedCharge = charge(Resource::kFencedExecutions);
  if (!fencedCharge) return refuse(fencedCharge.error());
  std::shared_ptr<TrackedModel> tracked = found->second;
  auto request = requestFrom(std::move(m->execute.request), frame.fds);
  if (!request) return refuse(request.error());
  std::vector<SyncFence> waitFor;
  waitFor.reserve(m->waitFor.size());
  for (size_t i = 0; i < m->waitFor.size(); ++i) {
    if (!m->waitFor[i].valid) {
      waitFor.emplace_back();
      continue;
    }
    auto fence = SyncFence::fromFd(frame.fds[m->waitFor[i].fdIndex].get());
    if (!fence) {
      return refuse(Error{fence.error().status,
                          "waitFor[" + std::to_string(i) + "]: " + fence.error().message,
                          {}});
    }
    waitFor.push_back(std::move(*fence));
  }
  OptionalDuration timeoutAfterFence;
  if (m->timeoutAfterFenceNs) timeoutAfterFence = std::chrono::nanoseconds(*m->timeoutAfterFenceNs);
  // Launched at once: a fenced execution may wait for a fence the client signals only after
  // a later executeFenced returned, so queueing the launch could deadlock a chain. Once its
  // fences signalled, its run waits in this client's queue like any other work, so it takes
  // no more driver threads than the client's other requests. Their number is bounded too
  // (maxFencedExecutions).
  auto validated = tracked->control->validate(std::move(*request), executeOptions(m->execute));
  if (!validated) return refuse(validated.error());
  // Client files (mmap_fd pools): the driver runs on local copies. They are planned now (no
  // I/O), filled once the fences signalled and written back before the client's fence
  // signals, on the application's lane (hal/file_pool_staging.h): the driver's fence then
  // stays the daemon's, and the client gets one the daemon signals after the write-back.
  std::shared_ptr<FileBridge> bridge;
  if (validated->hasFilePools()) {
    auto planned = validated->planFilePools(limits_.maxStagedBytes);
    if (!planned) return refuse(planned.error());
    auto clientFence = SyncFence::create();
    if (!clientFence) return refuse(clientFence.error());
    bridge = std::make_shared<FileBridge>(
        FileBridge{std::move(*planned), std::move(*clientFence), std::nullopt});
  }
  auto launched = tracked->control->executeFencedAdmitted(
      *validated, waitFor, timeoutAfterFence,
      [weak = weak_from_this(), bridge](hal::FencedStart start) {
        auto self = weak.lock();
        if (self == nullptr) return;  // the client is gone: `start` ends it
        self->onStrand([self, bridge, start = std::move(start)]() mutable {
          if (self->closed_) return;
          // Not a request of its own (Launched was sent): no ticket, only a slot.
          self->queue_.schedule(WorkQueue::Ticket(), [self, bridge, start = std::move(start)](
                                                         WorkQueue::Running running) mutable {
            self->startFenced(std::move(running), bridge, std::move(start));
          });
        });
      },
      cancelled_);
  if (!launched) return refuse(launched.error());
  const SyncFence clientFence = bridge ? bridge->clientFence : launched->syncFence;
  if (bridge) {
    whenSignalled(launched->syncFence, [this, bridge, callback = launched->callback] {
      auto info = callback->getExecutionInfo();  // the driver's fence signalled: at once
      if (bridge->failure || !info || info->status != ErrorStatus::NONE) {
        (void)bridge->clientFence.signal();
        return;
      }
      offIoThread([bridge]() -> Result<void> { return bridge->staging.writeBack(); },
                  [bridge](Result<void> written) {
                    if (!written) bridge->failure = std::move(written).error();
                    (void)bridge->clientFence.signal();
                  });
    });
  }
  FencedReply reply;
  reply.handle =
      fenced_.add(Fenced{launched->callback, clientFence, std::move(*fencedCharge), bridge});
  OutMessage out;
  if (clientFence.valid()) {
    reply.hasFence = true;
    reply.fenceFdIndex = out.addFd(clientFence.fd());
  }
  encode(reply, out);
  // The fence's descriptor stays open until the frame is written.
  send(MessageType::kFencedReply, callId, out, std::make_shared<SyncFence>(clientFence));
  return true;
}

void Session::startFenced(WorkQueue::Running running, std::shared_ptr<FileBridge> bridge,
                          hal::FencedStart start) {
  auto run = [self = shared_from_this()](WorkQueue::Running running, hal::FencedStart start) {
    start([self, running = std::move(running)]() mutable {
      self->onStrand([running = std::move(running)]() mutable { running.end(); });
    });
  };
  if (!bridge) {
    run(std::move(running), std::move(start));
    return;
  }
  // The fences signalled: the client's inputs are ready in its files.
  offIoThread([bridge]() -> Result<void> { return bridge->staging.readInputs(); },
              [this, bridge, run, running = std::move(running),
               start = std::move(start)](Result<void> read) mutable {
                if (!read) {
                  bridge->failure = std::move(read).error();
                  { hal::FencedStart dropped = std::move(start); }  // ends it, fence signalled
                  running.end();
                  return;
                }
                run(std::move(running), std::move(start));
              });
}

bool Session::handleGetFencedInfo(const Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kGetFencedInfo, decodeFencedHandle);
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId](const Result<FencedExecutionInfo>& info) {
    FencedInfoReply r;
    if (info) {
      r.executionStatus = info->status;
      r.timingLaunched = info->timingLaunched;
      r.timingFenced = info->timingFenced;
    } else {
      r.status = toWireStatus(info.error());
    }
    OutMessage out;
    encode(r, out);
    send(MessageType::kFencedInfoReply, callId, out);
  };
  auto found = fenced_.find(m->handle);
  if (found == fenced_.end()) {
    reply(fail(ErrorStatus::INVALID_ARGUMENT,
               "unknown fenced execution handle " + std::to_string(m->handle)));
    return true;
  }
  // getExecutionInfo blocks until the fence signals: ask only once it has (the driver
  // completes the callback before it signals the fence).
  whenSignalled(found->second.fence,
                [reply, callback = found->second.callback, bridge = found->second.bridge] {
                  auto info = callback->getExecutionInfo();
                  if (info && bridge && bridge->failure) {
                    // Its files could not be read or written: the execution failed for the client.
                    spdlog::debug("fenced execution: {}", bridge->failure->message);
                    info->status = bridge->failure->status;
                    info->timingLaunched = info->timingFenced = Timing{};
                  }
                  reply(info);
                });
  return true;
}

}  // namespace nnhal::ipc
