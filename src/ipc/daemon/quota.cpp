#include "ipc/daemon/quota.h"

#include <algorithm>
#include <utility>

namespace nnhal::ipc {

std::string_view nameOf(Resource resource) {
  switch (resource) {
    case Resource::kConnections:
      return "connections";
    case Resource::kPreparedModels:
      return "prepared models";
    case Resource::kConstantBytes:
      return "bytes of model constants";
    case Resource::kPools:
      return "memories (request pools and burst memory slots)";
    case Resource::kRequests:
      return "requests running or waiting";
    case Resource::kBursts:
      return "bursts";
    case Resource::kBuffers:
      return "driver-managed buffers";
    case Resource::kFencedExecutions:
      return "fenced executions";
    case Resource::kReplyBytes:
      return "bytes of replies not read";
    case Resource::kCount:
      break;
  }
  return "resources";
}

Charge::Charge(Charge&& other) noexcept
    : resource_(other.resource_),
      amount_(std::exchange(other.amount_, 0)),
      holders_(other.holders_),
      connection_(std::move(other.connection_)),
      account_(std::move(other.account_)),
      ledger_(std::move(other.ledger_)) {}

Charge& Charge::operator=(Charge&& other) noexcept {
  if (this != &other) {
    reset();
    resource_ = other.resource_;
    amount_ = std::exchange(other.amount_, 0);
    holders_ = other.holders_;
    connection_ = std::move(other.connection_);
    account_ = std::move(other.account_);
    ledger_ = std::move(other.ledger_);
  }
  return *this;
}

void Charge::reset() {
  if (amount_ == 0) return;
  const auto r = static_cast<size_t>(resource_);
  for (Usage* holder : holders_) {
    if (holder != nullptr) holder->held_[r].fetch_sub(amount_, std::memory_order_relaxed);
  }
  amount_ = 0;
  connection_.reset();
  account_.reset();
  ledger_.reset();
}

void Charge::giveBack(uint64_t amount) {
  amount = std::min(amount, amount_);
  if (amount == 0) return;
  if (amount == amount_) {
    reset();
    return;
  }
  const auto r = static_cast<size_t>(resource_);
  for (Usage* holder : holders_) {
    if (holder != nullptr) holder->held_[r].fetch_sub(amount, std::memory_order_relaxed);
  }
  amount_ -= amount;
}

Result<void> Ledger::extend(Charge& into, const std::shared_ptr<Usage>& connection,
                            const std::shared_ptr<Account>& account, Resource resource,
                            uint64_t amount) {
  NNHAL_ASSIGN_OR_RETURN(Charge more, charge(connection, account, resource, amount));
  if (!into.valid()) {
    into = std::move(more);
    return {};
  }
  into.amount_ += std::exchange(more.amount_, 0);
  return {};
}

uint64_t Ledger::remaining(const Usage* connection, const Account* account,
                           Resource resource) const {
  const auto r = static_cast<size_t>(resource);
  uint64_t left = UINT64_MAX;
  auto bound = [&](const Usage* usage, uint64_t limit) {
    if (usage == nullptr || limit == 0) return;
    const uint64_t held = usage->held(resource);
    left = std::min(left, held >= limit ? 0 : limit - held);
  };
  bound(connection, perConnection_[r]);
  bound(account != nullptr ? &account->usage() : nullptr, perApplication_[r]);
  bound(&daemonUsage_, daemon_[r]);
  return left;
}

std::shared_ptr<Account> Ledger::account(hal::ApplicationId application) {
  std::lock_guard lock(mutex_);
  std::weak_ptr<Account>& slot = accounts_[application];
  std::shared_ptr<Account> account = slot.lock();
  if (!account) {
    account = std::make_shared<Account>(application);
    slot = account;
  }
  // Forget the applications nobody refers to any more (amortized: the table stays small).
  if (accounts_.size() > 64) std::erase_if(accounts_, [](auto& e) { return e.second.expired(); });
  return account;
}

std::vector<std::pair<hal::ApplicationId, std::shared_ptr<Account>>> Ledger::accounts() {
  std::vector<std::pair<hal::ApplicationId, std::shared_ptr<Account>>> live;
  std::lock_guard lock(mutex_);
  for (const auto& [id, weak] : accounts_) {
    if (auto account = weak.lock()) live.emplace_back(id, std::move(account));
  }
  return live;
}

Result<Charge> Ledger::charge(const std::shared_ptr<Usage>& connection,
                              const std::shared_ptr<Account>& account, Resource resource,
                              uint64_t amount) {
  if (amount == 0) return Charge();
  const auto r = static_cast<size_t>(resource);
  const std::array<Usage*, 3> holders{connection.get(), account ? &account->usage() : nullptr,
                                      &daemonUsage_};
  const std::array<uint64_t, 3> limits{perConnection_[r], perApplication_[r], daemon_[r]};
  for (size_t k = 0; k < holders.size(); ++k) {
    if (holders[k] == nullptr) continue;
    const uint64_t before = holders[k]->held_[r].fetch_add(amount, std::memory_order_relaxed);
    if (limits[k] == 0 || (amount <= limits[k] && before <= limits[k] - amount)) continue;
    // Over this holder's limit: give back what was added so far, this one included.
    for (size_t j = 0; j <= k; ++j) {
      if (holders[j] != nullptr) holders[j]->held_[r].fetch_sub(amount, std::memory_order_relaxed);
    }
    const std::string what(nameOf(resource));
    const std::string limit = std::to_string(limits[k]);
    switch (k) {
      case 0:
        return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                    "quota exceeded: a connection holds at most " + limit + " " + what +
                        " (release some first)");
      case 1:
        return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                    "quota exceeded: an application (here uid " +
                        std::to_string(account->application()) + ", all its processes and " +
                        "connections together) holds at most " + limit + " " + what +
                        " (release some first)");
      default:
        return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                    "quota exceeded: the daemon keeps at most " + limit + " " + what +
                        " for all its clients; try again later");
    }
  }
  Charge charge;
  charge.resource_ = resource;
  charge.amount_ = amount;
  charge.holders_ = holders;
  charge.connection_ = connection;
  charge.account_ = account;
  charge.ledger_ = shared_from_this();
  return charge;
}

}  // namespace nnhal::ipc
