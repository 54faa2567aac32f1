// backend/fault_injecting_backend.h — a test Backend: another backend with faults injected.
//
// The second device of tests and of `nnhald --test-device`: it shows that a backend plugs
// into the HAL plumbing without touching it, and lets tests drive the plumbing's failure
// paths (a compilation or execution that fails, an operation a device does not support, a
// slow device) through the same code a real accelerator would use. Everything not named in
// its FaultPlan is the wrapped backend's: its capabilities, extensions, compiled models and
// cache images (a cache made by the wrapped backend's own device is not loaded here: the
// version differs).
//
// Thread safety: as Backend; the fault counters are atomic.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnhal::backend {

struct FaultPlan {
  /// getName of the device.
  std::string name = "nnhal-test";
  /// Operation types the device does not support: getSupportedOperations reports them
  /// unsupported ("refused by the test device's fault plan"), prepareModel refuses models
  /// using them (INVALID_ARGUMENT).
  std::vector<OperationType> refuse;
  /// Every Nth compilation (from a model or a cache) fails with GENERAL_FAILURE (0 = never).
  uint32_t failCompileEvery = 0;
  /// Every Nth execution fails with GENERAL_FAILURE (0 = never).
  uint32_t failExecuteEvery = 0;
  /// Each execution lasts at least this long, calling the yield point every millisecond and
  /// honouring the deadline and cancellation meanwhile.
  std::chrono::microseconds executeDelay{0};
  /// A leaking device: every execution maps one page of a new memfd and never unmaps it (what
  /// nnhal-soak must flag as "memory mappings grew").
  bool leakMappingPerExecution = false;
  /// A hanging device: executions after this many (0 = never) do not finish until they are
  /// cancelled (DEVICE_UNAVAILABLE); their deadline does not end them. Through nnhald an
  /// execution is cancelled when its client leaves or the daemon stops; an embedded
  /// synchronous execution is never cancelled, so it hangs for good (nnhald's
  /// --test-hang-after-executions).
  uint64_t hangAfterExecutions = 0;
};

class FaultInjectingBackend final : public Backend {
 public:
  FaultInjectingBackend(std::shared_ptr<const Backend> inner, FaultPlan plan);

  std::string name() const override { return state_->plan.name; }
  /// The wrapped backend's version with "+faults".
  std::string version() const override { return inner_->version() + "+faults"; }
  DeviceType type() const override { return inner_->type(); }
  Capabilities capabilities() const override { return inner_->capabilities(); }
  std::vector<Extension> supportedExtensions() const override {
    return inner_->supportedExtensions();
  }
  Result<void> checkModel(const Model& model) const override;
  Result<std::vector<std::string>> explainSupport(const Model& model) const override;
  Result<Compiled> compile(Model model, const CompileOptions& options) const override;
  Result<std::unique_ptr<CompiledModel>> compileFromCache(
      const CacheImages& images, const CacheSettings& settings) const override;
  Result<cache::EncodedCache> encodeCache(const CompiledModel& model,
                                          const CacheSettings& settings) const override;

  /// Compilations and executions started so far (tests).
  uint64_t compilations() const { return state_->compilations.load(); }
  uint64_t executions() const { return state_->executions.load(); }

  /// The plan and counters, shared by the backend and the models it compiled.
  struct State {
    FaultPlan plan;
    std::atomic<uint64_t> compilations{0};
    std::atomic<uint64_t> executions{0};
  };

 private:
  /// The fault of the next compilation, if any.
  Result<void> countCompilation() const;

  std::shared_ptr<const Backend> inner_;
  std::shared_ptr<State> state_;
};

}  // namespace nnhal::backend
