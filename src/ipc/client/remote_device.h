// ipc/client/remote_device.h — the client's Device and PreparedModel over a Connection to nnhald.
//
// Every call is a message to the daemon, whose embedded driver produces the statuses and
// messages; these classes only carry them back. Asynchronous calls (prepareModel,
// prepareModelFromCache, execute) wait for the daemon's Launched reply, which carries the
// status the driver's call returned, so the returned status is the embedded one; the
// callback then runs on the connection's reader thread when the outcome arrives.
//
// Lifetime: the Device and its PreparedModels share a Link; the connection closes when the
// last of them (and the last in-flight asynchronous call) is gone. Destroying a
// PreparedModel releases it on the daemon.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "ipc/client/connection.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/prepared_model.h"

namespace nnhal::ipc {

/// Shared by a remote Device and its PreparedModels; closes the connection when destroyed.
class Link {
 public:
  explicit Link(std::shared_ptr<Connection> connection) : connection_(std::move(connection)) {}
  ~Link() { connection_->close(); }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;
  Connection& connection() const { return *connection_; }

  /// The prepared models of this connection by address, so that the roles of a buffer
  /// (RemoteBuffer::allocate) find their daemon handles: a RemotePreparedModel adds itself
  /// when made and removes itself when destroyed. Thread-safe.
  void addPreparedModel(const PreparedModel* model, uint64_t handle);
  void removePreparedModel(const PreparedModel* model);
  /// The daemon's handle of `model`; nullopt when it is not a prepared model of this link.
  std::optional<uint64_t> handleOf(const PreparedModel* model) const;

 private:
  std::shared_ptr<Connection> connection_;
  mutable std::mutex mutex_;
  std::unordered_map<const PreparedModel*, uint64_t> handles_;
};

class RemotePreparedModel final : public PreparedModel,
                                  public std::enable_shared_from_this<RemotePreparedModel> {
 public:
  RemotePreparedModel(std::shared_ptr<Link> link, uint64_t handle);
  ~RemotePreparedModel() override;

  Result<ExecutionResult> executeSynchronously(const Request& request,
                                               const ExecuteOptions& options) override;
  ErrorStatus execute(Request request, const ExecuteOptions& options,
                      ExecutionCallback callback) override;
  /// The waitFor fences travel as descriptors; the daemon's driver waits for them and returns
  /// its own sync fence, whose descriptor comes back (signalled by the daemon's driver
  /// directly). Should the connection drop first, the client signals that fence itself and
  /// getExecutionInfo returns DEVICE_UNAVAILABLE, so no waiter hangs on a dead daemon.
  Result<FencedExecutionResult> executeFenced(const Request& request,
                                              const std::vector<SyncFence>& waitFor,
                                              const ExecuteOptions& options,
                                              OptionalDuration timeoutAfterFence) override;
  /// A RemoteBurst (ipc/client/remote_burst.h) with queues of kDefaultFmqLength elements.
  Result<std::shared_ptr<Burst>> configureExecutionBurst() override;
  /// The same with chosen queue lengths (elements; 0 = the default), for tests.
  Result<std::shared_ptr<Burst>> configureExecutionBurst(uint32_t requestLength,
                                                         uint32_t resultLength);
  using PreparedModel::executeSynchronously;

  uint64_t handle() const { return handle_; }
  const std::shared_ptr<Link>& link() const { return link_; }

 private:
  /// The Execute message for `request`; its pools are described into `out` (write lock held).
  Execute describeExecute(const Request& request, const ExecuteOptions& options,
                          OutMessage& out) const;
  Connection::Builder executeBuilder(const Request& request, const ExecuteOptions& options) const;

  std::shared_ptr<Link> link_;
  const uint64_t handle_;
};

class RemoteDevice final : public Device, public DaemonConnection {
 public:
  /// `devices`: the names of every device the daemon serves (HelloReply::devices).
  RemoteDevice(std::shared_ptr<Link> link, DeviceInfo info, std::vector<std::string> devices)
      : link_(std::move(link)), info_(std::move(info)), devices_(std::move(devices)) {}

  std::string getName() const override { return info_.name; }
  std::string getVersionString() const override { return info_.version; }
  DeviceType getType() const override { return info_.type; }
  Capabilities getCapabilities() const override { return info_.capabilities; }
  std::vector<Extension> getSupportedExtensions() const override { return info_.extensions; }
  NumberOfCacheFiles getNumberOfCacheFilesNeeded() const override { return info_.cacheFiles; }
  CompilationCaching getCompilationCaching() const override;
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override;
  Result<std::vector<std::string>> explainSupportedOperations(const Model& model) const override;
  ErrorStatus prepareModel(Model model, const PrepareOptions& options,
                           PrepareCallback callback) override;
  ErrorStatus prepareModelFromCache(const CacheFiles& cache, OptionalTimePoint deadline,
                                    PrepareCallback callback) override;
  Result<AllocatedBuffer> allocate(
      const BufferDesc& desc, const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
      const std::vector<BufferRole>& inputRoles,
      const std::vector<BufferRole>& outputRoles) override;
  using Device::prepareModel;
  using Device::prepareModelFromCache;

  /// Object counts (sessions, prepared models, pools, calls in flight) of this connection
  /// only; connected to nnhald's admin socket, of the whole daemon. Errors:
  /// DEVICE_UNAVAILABLE.
  Result<Stats> daemonStats() const;
  /// The counts with what they cover and the memory behind them (nnhal::getDaemonStats).
  Result<StatsReply> daemonStatsReply() const;
  /// Every device of the daemon, by name, the default first.
  const DaemonConnection* daemonConnection() const noexcept override { return this; }
  std::vector<std::string> devices() const override { return devices_; }
  Result<DaemonStats> stats() const override;
  /// The connection (for tests that forge calls).
  const std::shared_ptr<Link>& link() const { return link_; }

 private:
  /// Sends a preparation message and waits for its Launched reply; the callback receives
  /// the PrepareReply.
  ErrorStatus launchPreparation(MessageType type, const Connection::Builder& build,
                                PrepareCallback callback);

  std::shared_ptr<Link> link_;
  DeviceInfo info_;
  std::vector<std::string> devices_;
};

}  // namespace nnhal::ipc
