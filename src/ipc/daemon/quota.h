// ipc/daemon/quota.h — what one connection, one application and the whole daemon may hold.
//
// A client is one connection of one application (hal/application.h: nnhald's clients of one
// uid are one application, whatever their processes and connections). Each countable thing a
// client makes the daemon keep (docs/IPC_PROTOCOL.md, "Quotas") is charged three times: to its
// connection, to its application and to the daemon, each against a limit of its own. So more
// connections or more processes give an application nothing more, and no application can
// take all of what the daemon has for everyone. A charge is an RAII object: what holds the
// resource holds the charge, and destroying it gives the amount back.
//
// Errors say what the caller exceeded, never what another application holds: "this
// connection holds 64 prepared models, the most a connection may"; "your application (uid
// 1000) holds ..."; "the daemon holds the most prepared models it keeps for all clients".
//
// Thread safety: Ledger, Account and Usage are thread-safe (atomics and a mutex for the
// account table); a Charge belongs to one owner at a time.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hal/application.h"
#include "nnhal/status.h"

namespace nnhal::ipc {

/// The status to reply when a quota is exceeded: RESOURCE_EXHAUSTED_TRANSIENT, "quota
/// exceeded: " + `what`.
inline std::unexpected<Error> quotaExceeded(const std::string& what) {
  return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "quota exceeded: " + what);
}

/// What is counted.
enum class Resource : uint8_t {
  kConnections,       ///< open connections (the daemon's limit is --max-connections)
  kPreparedModels,    ///< prepared models held, and preparations not finished
  kConstantBytes,     ///< bytes of model constants the daemon copied and keeps
  kPools,             ///< client memories mapped (request pools and burst memory slots)
  kRequests,          ///< requests running or waiting: preparations, executions of every path
  kBursts,            ///< bursts (each has a listener and two queues)
  kBuffers,           ///< driver-managed buffers (IDevice::allocate)
  kFencedExecutions,  ///< fenced executions started and not released
  kReplyBytes,        ///< bytes of replies queued for clients that have not read them
  kCount,
};

/// "prepared models", "constant bytes", ... (for messages).
std::string_view nameOf(Resource resource);

/// One limit per resource (0 = no limit).
using Limits = std::array<uint64_t, static_cast<size_t>(Resource::kCount)>;

/// What one holder (a connection, an application, the daemon) holds now.
class Usage {
 public:
  uint64_t held(Resource resource) const {
    return held_[static_cast<size_t>(resource)].load(std::memory_order_relaxed);
  }

 private:
  friend class Ledger;
  friend class Charge;
  std::array<std::atomic<uint64_t>, static_cast<size_t>(Resource::kCount)> held_{};
};

/// One application's usage; shared by its connections, kept while any holds it.
class Account {
 public:
  explicit Account(hal::ApplicationId application) : application_(application) {}
  hal::ApplicationId application() const { return application_; }
  const Usage& usage() const { return usage_; }
  Usage& usage() { return usage_; }

 private:
  hal::ApplicationId application_;
  Usage usage_;
};

/// An amount of a resource charged to a connection, its application and the daemon; given
/// back when destroyed (or reset). Movable, not copyable. It keeps the three holders alive,
/// so it may outlive the connection that took it (a burst listener joined later, say).
class Charge {
 public:
  Charge() = default;
  Charge(Charge&& other) noexcept;
  Charge& operator=(Charge&& other) noexcept;
  ~Charge() { reset(); }
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;

  void reset();
  /// Gives back `amount` of the charge (at most what it holds).
  void giveBack(uint64_t amount);
  uint64_t amount() const { return amount_; }
  bool valid() const { return amount_ != 0; }

 private:
  friend class Ledger;
  Resource resource_ = Resource::kConnections;
  uint64_t amount_ = 0;
  std::array<Usage*, 3> holders_{};
  std::shared_ptr<const void> connection_;  ///< keeps the holders alive
  std::shared_ptr<const void> account_;
  std::shared_ptr<const void> ledger_;
};

class Ledger : public std::enable_shared_from_this<Ledger> {
 public:
  Ledger(const Limits& perConnection, const Limits& perApplication, const Limits& daemon)
      : perConnection_(perConnection), perApplication_(perApplication), daemon_(daemon) {}

  /// The account of `application` (created on first use; shared while referenced).
  std::shared_ptr<Account> account(hal::ApplicationId application);

  /// Charges `amount` of `resource` to `connection` (may be null: not counted per connection),
  /// `account` and the daemon, when each stays within its limit. Errors:
  /// RESOURCE_EXHAUSTED_TRANSIENT naming the limit the caller reached ("quota exceeded: ...").
  /// The Ledger must be owned by a shared_ptr.
  Result<Charge> charge(const std::shared_ptr<Usage>& connection,
                        const std::shared_ptr<Account>& account, Resource resource,
                        uint64_t amount = 1);
  /// charge() added to `into` (one charge of a growing amount, given back piecewise with
  /// Charge::giveBack); `into` must be empty or of the same resource and holders.
  Result<void> extend(Charge& into, const std::shared_ptr<Usage>& connection,
                      const std::shared_ptr<Account>& account, Resource resource,
                      uint64_t amount = 1);

  /// What `connection`, `account` and the daemon may still take of `resource` (the least of
  /// the three; UINT64_MAX without limits). A hint: others may charge meanwhile.
  uint64_t remaining(const Usage* connection, const Account* account, Resource resource) const;

  const Usage& daemon() const { return daemonUsage_; }
  uint64_t limit(Resource resource, bool perApplication) const {
    return (perApplication ? perApplication_ : perConnection_)[static_cast<size_t>(resource)];
  }
  /// Per application seen and still referenced: its usage.
  std::vector<std::pair<hal::ApplicationId, std::shared_ptr<Account>>> accounts();

 private:
  const Limits perConnection_;
  const Limits perApplication_;
  const Limits daemon_;
  Usage daemonUsage_;
  std::mutex mutex_;
  std::unordered_map<hal::ApplicationId, std::weak_ptr<Account>> accounts_;
};

}  // namespace nnhal::ipc
