// Session: supported operations and preparations (ipc/daemon/session.h).
#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <new>

#include "hal/driver_control.h"
#include "hal/model_token.h"
#include "hal/pool_io.h"
#include "hal/validation.h"
#include "ipc/daemon/internal/session_detail.h"

namespace nnhal::ipc {
namespace {

/// Checks the kind and metadata of a pool described on the wire. Errors: GENERAL_FAILURE.
Result<MemoryKind> checkKind(const WirePool& pool, const std::string& name) {
  switch (pool.kind) {
    case static_cast<int32_t>(MemoryKind::ASHMEM):
    case static_cast<int32_t>(MemoryKind::MMAP_FD):
      return static_cast<MemoryKind>(pool.kind);
    case static_cast<int32_t>(MemoryKind::HARDWARE_BUFFER_BLOB):
      if (pool.desc.width != pool.size || pool.desc.height != 1 || pool.desc.layers != 1) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    name + ": hardware_buffer_blob of " + std::to_string(pool.desc.width) + "x" +
                        std::to_string(pool.desc.height) + "x" + std::to_string(pool.desc.layers) +
                        " does not describe a BLOB buffer of " + std::to_string(pool.size) +
                        " bytes");
      }
      return MemoryKind::HARDWARE_BUFFER_BLOB;
    default:
      return fail(ErrorStatus::GENERAL_FAILURE,
                  name + ": unknown memory kind " + std::to_string(pool.kind));
  }
}

CacheFiles cacheFiles(const WireCacheFiles& wire, const std::vector<UniqueFd>& fds) {
  CacheFiles files;
  files.token = wire.token;
  for (const auto& handle : wire.modelCache) {
    CacheHandle& out = files.modelCache.emplace_back();
    for (uint32_t index : handle) out.push_back(fds[index].get());
  }
  for (const auto& handle : wire.dataCache) {
    CacheHandle& out = files.dataCache.emplace_back();
    for (uint32_t index : handle) out.push_back(fds[index].get());
  }
  return files;
}

/// Prepares `message`'s model through nnhald's client cache: loaded from `cached` when it
/// holds something, else (or when the load fails: damaged, another build's, evicted from the
/// driver's token map) compiled with its files so that the driver saves it. `callback` is
/// called once.
ErrorStatus prepareThroughClientCache(const std::shared_ptr<hal::DeviceControl>& driver,
                                      hal::ApplicationId application,
                                      std::shared_ptr<PrepareModel> message, PrepareOptions options,
                                      ClientCacheEntry cached, PrepareCallback callback) {
  auto entry = std::make_shared<ClientCacheEntry>(std::move(cached));
  options.cache = entry->files;
  // The driver duplicates the descriptors it keeps at launch: the entry (held by this
  // lambda) need only outlive the calls.
  auto compile = [driver, application, message, options, entry](PrepareCallback done) {
    return driver->prepareChecked(std::move(message->model.model), options, application,
                                  std::move(done));
  };
  if (!entry->written) return compile(std::move(callback));
  // The driver calls the load's callback whatever its launch status (a refusal included), so
  // the compile always follows a failed load and the status to report is the compile's.
  driver->prepareFromCache(
      entry->files, options.deadline, application,
      [compile = std::move(compile),
       callback = std::move(callback)](Result<std::shared_ptr<PreparedModel>>&& loaded) mutable {
        if (loaded) {
          callback(std::move(loaded));
          return;
        }
        spdlog::debug("client cache: not loaded ({}); compiling", loaded.error().message);
        compile(std::move(callback));
      });
  return ErrorStatus::NONE;
}

}  // namespace

Result<Memory> mapClientPool(const WirePool& pool, const std::vector<UniqueFd>& fds,
                             const std::string& name) {
  NNHAL_ASSIGN_OR_RETURN(MemoryKind kind, checkKind(pool, name));
  return hal::adoptClientPool(fds[pool.fdIndex].get(), kind, pool.size, pool.offset, pool.writable,
                              name);
}

Result<uint64_t> attachModelPools(Model& model, const std::vector<WirePool>& pools,
                                  const std::vector<UniqueFd>& fds, uint64_t maxConstantBytes,
                                  const std::function<Result<void>(const Model&)>& check) {
  std::vector<Memory> memories;
  memories.reserve(pools.size());
  for (size_t i = 0; i < pools.size(); ++i) {
    const WirePool& pool = pools[i];
    if (pool.source == WirePool::Source::kEmpty) {
      memories.emplace_back();
      continue;
    }
    if (pool.source != WirePool::Source::kFd) {
      return invalidArgument("model.pools[" + std::to_string(i) +
                             "]: a model pool must be shared memory");
    }
    NNHAL_ASSIGN_OR_RETURN(Memory memory,
                           mapClientPool(pool, fds, "model.pools[" + std::to_string(i) + "]"));
    memories.push_back(std::move(memory));
  }
  model.pools = std::move(memories);
  // A model the driver refuses costs no copy (the checks see the client's pools; they run
  // again on the copy, which is what the driver compiles).
  if (check) NNHAL_TRY(check(model));
  // The client can rewrite or shrink its pools at any time: the driver compiles and runs
  // with its own copy of the constants they hold, except in pools sealed against writes.
  if (model.operandValues.size() > maxConstantBytes) {
    return quotaExceeded("the model's constants total more than " +
                         std::to_string(maxConstantBytes) + " bytes");
  }
  // Refused before a byte is copied when the pools alone exceed what is left of the quota
  // (+ 1: 0 would mean no limit; the exact quota is checked once the sizes are known).
  NNHAL_ASSIGN_OR_RETURN(
      const uint64_t poolConstants,
      hal::copyModelPoolsPrivately(model, maxConstantBytes - model.operandValues.size() + 1));
  return poolConstants + model.operandValues.size();
}

Result<Session::AdmittedPreparation> Session::admitPreparation() {
  NNHAL_TRY(queue_.checkRoom());
  auto charges = std::make_shared<PreparationCharges>();
  NNHAL_ASSIGN_OR_RETURN(charges->model, charge(Resource::kPreparedModels));
  NNHAL_ASSIGN_OR_RETURN(WorkQueue::Ticket ticket, admitRequest());
  return AdmittedPreparation{std::move(charges), std::move(ticket)};
}

void Session::releaseModel(uint64_t handle) {
  auto found = models_.find(handle);
  if (found == models_.end()) {
    spdlog::debug("session {}: release of unknown prepared model {}", id_, handle);
    return;
  }
  models_.erase(found);
}

bool Session::handleSupportedOperations(Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kSupportedOperations,
                         [&](ByteReader& in) { return decodeWireModel(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId](const SupportedOperationsReply& r) {
    OutMessage out;
    encode(r, out);
    send(MessageType::kSupportedOperationsReply, callId, out);
  };
  auto ticket = admitRequest();
  if (!ticket) {
    reply({toWireStatus(ticket.error()), {}});
    return true;
  }
  auto fds = std::make_shared<std::vector<UniqueFd>>(std::move(frame.fds));
  queue_.schedule(
      std::move(*ticket), [this, fds, reply, wire = std::make_shared<WireModel>(std::move(*m))](
                              WorkQueue::Running running) mutable {
        // The copy is bounded by what the client may still hold, though it is dropped after.
        const uint64_t room =
            config_->ledger->remaining(usage_.get(), account_.get(), Resource::kConstantBytes);
        offIoThread(
            [this, fds, wire, room]() -> Result<std::vector<std::string>> {
              NNHAL_TRY(attachModelPools(wire->model, wire->pools, *fds, room));
              return served_->device->explainSupportedOperations(wire->model);
            },
            [this, reply,
             running = std::move(running)](Result<std::vector<std::string>> reasons) mutable {
              running.answered();
              SupportedOperationsReply r;
              if (reasons) {
                r.reasons = std::move(*reasons);
              } else {
                r.status = toWireStatus(reasons.error());
              }
              reply(r);
              running.end();
              finishIfDrained();
            });
      });
  return true;
}

void Session::replyPrepared(WorkQueue::Running& running, uint64_t callId, Charges charges,
                            bool lowPower, Result<std::shared_ptr<PreparedModel>> result) {
  running.answered();
  if (closed_) return;
  PrepareReply reply;
  hal::PreparedModelControl* control = result ? served_->driver->controlOf(**result) : nullptr;
  if (result && control == nullptr) {
    // Every execution path goes through the driver's control; a model without one cannot run.
    result = fail(ErrorStatus::GENERAL_FAILURE, "the driver gave a model it does not control");
  }
  if (result) {
    auto tracked =
        std::make_shared<TrackedModel>(std::move(*result), config_->counters, std::move(*charges));
    tracked->lowPower = lowPower;
    tracked->control = control;
    reply.handle = models_.add(std::move(tracked));
  } else {
    reply.status = toWireStatus(result.error());
  }
  OutMessage out;
  encode(reply, out);
  send(MessageType::kPrepareReply, callId, out);
  finishIfDrained();
}

void Session::launchPreparation(WorkQueue::Running running, uint64_t callId, Charges charges,
                                bool lowPower,
                                const std::function<ErrorStatus(PrepareCallback)>& start) {
  using PreparedResult = Result<std::shared_ptr<PreparedModel>>;
  auto state = std::make_shared<LaunchState<std::shared_ptr<PreparedModel>>>();
  // The driver may drop its callback without calling it: the slot is freed all the same.
  auto held = std::make_shared<WorkQueue::Running>(std::move(running));
  const ErrorStatus status =
      start([self = shared_from_this(), state, held, callId, charges, lowPower,
             work = boost::asio::make_work_guard(strand_)](PreparedResult result) mutable {
        if (state->keepIfEarly(result)) return;
        self->onStrand([self, held, callId, charges, lowPower, result = std::move(result),
                        work = std::move(work)]() mutable {
          self->replyPrepared(*held, callId, std::move(charges), lowPower, std::move(result));
          held->end();
        });
      });
  auto early = state->markReturned();
  if (status != ErrorStatus::NONE) {
    const Error error = early && !*early ? early->error() : Error{status, "", {}};
    replyPrepared(*held, callId, std::move(charges), lowPower, std::unexpected(error));
    held->end();
    return;
  }
  if (early) {
    replyPrepared(*held, callId, std::move(charges), lowPower, std::move(*early));
    held->end();
  }
}

bool Session::handlePrepareModel(Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kPrepareModel,
                         [&](ByteReader& in) { return decodePrepareModel(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto admitted = admitPreparation();
  if (!admitted) {
    sendLaunched(callId, toWireStatus(admitted.error()));
    return true;
  }
  Charges charges = std::move(admitted->charges);
  auto fds = std::make_shared<std::vector<UniqueFd>>(std::move(frame.fds));
  auto message = std::make_shared<PrepareModel>(std::move(*m));
  PrepareOptions options;
  options.preference = static_cast<ExecutionPreference>(message->preference);
  options.priority = static_cast<Priority>(message->priority);
  options.deadline = message->deadline;
  if (message->cache) options.cache = cacheFiles(*message->cache, *fds);
  // The model's pools, its constants and the driver's own argument checks are read on the
  // application's lane; then Launched carries the driver's status, and the compilation starts.
  // A client that passes no cache files has its compilation cached by nnhald, when it can.
  auto cached = std::make_shared<std::optional<ClientCacheEntry>>();
  queue_.schedule(std::move(admitted->ticket), [this, callId, fds, message, charges, cached,
                                                options = std::move(options)](
                                                   WorkQueue::Running running) mutable {
    const uint64_t room =
        config_->ledger->remaining(usage_.get(), account_.get(), Resource::kConstantBytes);
    offIoThread(
        [this, fds, message, options, room, cached]() -> Result<uint64_t> {
          // The structure first (sizes, indexes, locations: no constant is read), so that a
          // malformed model costs no copy; then every check on the copy, which is what the
          // driver compiles.
          NNHAL_ASSIGN_OR_RETURN(
              const uint64_t constants,
              attachModelPools(message->model.model, message->model.pools, *fds, room,
                               [](const Model& model) { return hal::validateModel(model); }));
          if (config_->onModelReceived) {
            config_->onModelReceived(message->model.model, application_, id_);
          }
          NNHAL_TRY(served_->driver->checkPreparation(message->model.model, options));
          if (served_->clientCache && !options.cache) {
            auto entry = served_->clientCache->open(application_,
                                                    hal::modelToken(message->model.model, options));
            if (entry) {
              *cached = std::move(*entry);
            } else {
              spdlog::warn("session {}: client cache: {}", id_, entry.error().message);
            }
          }
          return constants;
        },
        [this, callId, fds, message, charges, options, cached,
         running = std::move(running)](Result<uint64_t> constants) mutable {
          // The client left while its model was read: nothing to compile (the ticket and
          // the slot go with `running`).
          if (closed_) return;
          auto refuse = [&](const Error& error, bool asOutcome) {
            running.answered();
            if (asOutcome) {
              // Like a pool the driver cannot use: the preparation itself fails.
              sendLaunched(callId, {});
              PrepareReply reply;
              reply.status = toWireStatus(error);
              OutMessage out;
              encode(reply, out);
              send(MessageType::kPrepareReply, callId, out);
            } else {
              sendLaunched(callId, toWireStatus(error));
            }
            running.end();
            finishIfDrained();
          };
          if (!constants) {
            refuse(constants.error(), constants.error().status == ErrorStatus::GENERAL_FAILURE);
            return;
          }
          auto charged = charge(Resource::kConstantBytes, *constants);
          if (!charged) {
            refuse(charged.error(), false);
            return;
          }
          charges->constants = std::move(*charged);
          // The driver's checks passed: Launched now, whenever the compilation starts.
          sendLaunched(callId, {});
          const bool lowPower = options.preference == ExecutionPreference::LOW_POWER;
          launchPreparation(
              std::move(running), callId, charges, lowPower, [&](PrepareCallback callback) {
                // Checked off the io thread already: not validated again here.
                if (cached->has_value()) {
                  return prepareThroughClientCache(served_->driver, application_, message, options,
                                                   std::move(**cached), std::move(callback));
                }
                return served_->driver->prepareChecked(std::move(message->model.model), options,
                                                       application_, std::move(callback));
              });
        });
  });
  return true;
}

bool Session::handlePrepareFromCache(Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kPrepareModelFromCache, [&](ByteReader& in) {
    return decodePrepareFromCache(in, frame.fds.size());
  });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto fds = std::make_shared<std::vector<UniqueFd>>(std::move(frame.fds));
  CacheFiles files = cacheFiles(m->cache, *fds);
  if (auto valid = served_->driver->checkPreparationFromCache(files); !valid) {
    sendLaunched(callId, toWireStatus(valid.error()));
    return true;
  }
  auto admitted = admitPreparation();
  if (!admitted) {
    sendLaunched(callId, toWireStatus(admitted.error()));
    return true;
  }
  sendLaunched(callId, {});
  queue_.schedule(std::move(admitted->ticket), [this, self = shared_from_this(), callId, fds,
                                                files = std::move(files),
                                                charges = std::move(admitted->charges),
                                                deadline = m->deadline](
                                                   WorkQueue::Running running) mutable {
    launchPreparation(std::move(running), callId, charges, false, [&](PrepareCallback callback) {
      return served_->driver->prepareFromCache(files, deadline, application_, std::move(callback));
    });
  });
  return true;
}

}  // namespace nnhal::ipc
