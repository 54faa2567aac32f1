#include "backend/fault_injecting_backend.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>

namespace nnhal::backend {
namespace {

constexpr const char* kRefused = "refused by the test device's fault plan";

bool refused(const FaultPlan& plan, OperationType type) {
  return std::find(plan.refuse.begin(), plan.refuse.end(), type) != plan.refuse.end();
}

/// The wrapped backend's compiled model, with the execution faults of the plan.
class FaultyCompiledModel final : public CompiledModel {
 public:
  FaultyCompiledModel(std::unique_ptr<CompiledModel> inner,
                      std::shared_ptr<FaultInjectingBackend::State> state)
      : inner_(std::move(inner)), state_(std::move(state)) {}

  const CompiledModel& inner() const { return *inner_; }

  const Model& model() const override { return inner_->model(); }
  uint64_t executionBytes() const override { return inner_->executionBytes(); }
  /// False for a hanging device: its executions' length cannot be predicted, so nnhald never
  /// runs one inline on an io thread, where no cancellation could end it.
  bool dataIndependent() const override {
    return state_->plan.hangAfterExecutions == 0 && inner_->dataIndependent();
  }
  std::vector<size_t> outputBytes() const override { return inner_->outputBytes(); }
  Result<std::unique_ptr<ExecutionMemory>> createMemory(
      engine::ArenaBudget* budget, hal::ApplicationId application) const override {
    return inner_->createMemory(budget, application);
  }
  Result<std::vector<OutputShape>> execute(const Request& request, ExecutionMemory& memory,
                                           const RunOptions& options) const override {
    const FaultPlan& plan = state_->plan;
    const uint64_t n = state_->executions.fetch_add(1) + 1;
    if (plan.failExecuteEvery != 0 && n % plan.failExecuteEvery == 0) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "execution " + std::to_string(n) + " failed by the test device's fault plan");
    }
    if (plan.leakMappingPerExecution) leakMapping();
    if (plan.hangAfterExecutions != 0 && n > plan.hangAfterExecutions) return hang(options);
    NNHAL_TRY(delay(options));
    return inner_->execute(request, memory, options);
  }
  std::string operationName(OperationType type) const override {
    return inner_->operationName(type);
  }

 private:
  /// Maps one page of a memfd of its own (the kernel cannot merge it with a neighbour) and
  /// forgets it.
  static void leakMapping() {
    const int fd = memfd_create("nnhal-test-leak", MFD_CLOEXEC);
    if (fd < 0) return;
    if (ftruncate(fd, 4096) == 0) (void)mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, 0);
    ::close(fd);
  }

  /// Waits, yielding every millisecond, until the execution is cancelled.
  static Result<std::vector<OutputShape>> hang(const RunOptions& options) {
    while (options.cancelled == nullptr || !options.cancelled->load()) {
      if (options.yield != nullptr) options.yield->yield();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the hanging execution was cancelled");
  }

  /// Waits executeDelay in steps of at most 1 ms, yielding between them.
  Result<void> delay(const RunOptions& options) const {
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + state_->plan.executeDelay;
    while (Clock::now() < until) {
      if (options.cancelled != nullptr && options.cancelled->load()) {
        return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled");
      }
      if (options.deadline && Clock::now() > *options.deadline) {
        return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the execution deadline passed");
      }
      if (options.yield != nullptr) options.yield->yield();
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(1)));
    }
    return {};
  }

  std::unique_ptr<CompiledModel> inner_;
  std::shared_ptr<FaultInjectingBackend::State> state_;
};

}  // namespace

FaultInjectingBackend::FaultInjectingBackend(std::shared_ptr<const Backend> inner, FaultPlan plan)
    : inner_(std::move(inner)), state_(std::make_shared<State>()) {
  state_->plan = std::move(plan);
}

Result<void> FaultInjectingBackend::checkModel(const Model& model) const {
  for (size_t i = 0; i < model.main.operations.size(); ++i) {
    const OperationType type = model.main.operations[i].type;
    if (refused(state_->plan, type)) {
      return invalidArgument("operation " + std::to_string(i) + " (" + std::string(toString(type)) +
                             "): " + kRefused);
    }
  }
  return inner_->checkModel(model);
}

Result<std::vector<std::string>> FaultInjectingBackend::explainSupport(const Model& model) const {
  NNHAL_ASSIGN_OR_RETURN(std::vector<std::string> reasons, inner_->explainSupport(model));
  for (size_t i = 0; i < reasons.size() && i < model.main.operations.size(); ++i) {
    if (reasons[i].empty() && refused(state_->plan, model.main.operations[i].type)) {
      reasons[i] = kRefused;
    }
  }
  return reasons;
}

Result<void> FaultInjectingBackend::countCompilation() const {
  const uint64_t n = state_->compilations.fetch_add(1) + 1;
  const uint32_t every = state_->plan.failCompileEvery;
  if (every != 0 && n % every == 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "compilation " + std::to_string(n) + " failed by the test device's fault plan");
  }
  return {};
}

Result<Compiled> FaultInjectingBackend::compile(Model model, const CompileOptions& options) const {
  NNHAL_TRY(countCompilation());
  NNHAL_ASSIGN_OR_RETURN(Compiled compiled, inner_->compile(std::move(model), options));
  compiled.model = std::make_unique<FaultyCompiledModel>(std::move(compiled.model), state_);
  return compiled;
}

Result<std::unique_ptr<CompiledModel>> FaultInjectingBackend::compileFromCache(
    const CacheImages& images, const CacheSettings& settings) const {
  NNHAL_TRY(countCompilation());
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<CompiledModel> compiled,
                         inner_->compileFromCache(images, settings));
  return std::unique_ptr<CompiledModel>(
      std::make_unique<FaultyCompiledModel>(std::move(compiled), state_));
}

Result<cache::EncodedCache> FaultInjectingBackend::encodeCache(
    const CompiledModel& model, const CacheSettings& settings) const {
  // The plumbing hands a backend only the models it compiled (backend.h).
  return inner_->encodeCache(static_cast<const FaultyCompiledModel&>(model).inner(), settings);
}

}  // namespace nnhal::backend
