#include "engine/executor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <variant>

#include "common/clock.h"
#include "common/vlog.h"
#include "engine/arena_budget.h"
#include "engine/interpreter.h"
#include "engine/operation_registry.h"
#include "engine/request_staging.h"
#include "hal/operand_utils.h"

namespace nnhal::engine {

ArenaPool::ArenaPool(size_t bytes, ArenaBudget* budget, hal::ApplicationId application)
    : BudgetedPool(bytes != 0 ? budget : nullptr, application),
      bytes_(bytes),
      rounded_((bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment) {}

Result<ArenaPool::Lease> ArenaPool::acquire() {
  if (bytes_ == 0) return Lease(nullptr, Release{this});
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      uint8_t* arena = free_.back().arena;
      free_.pop_back();
      return Lease(arena, Release{this});
    }
  }
  if (budget() != nullptr) NNHAL_TRY(budget()->charge(application(), rounded_));
  void* memory = std::aligned_alloc(kArenaAlignment, rounded_);
  if (memory == nullptr) {
    if (budget() != nullptr) budget()->give(application(), rounded_);
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "cannot allocate an execution arena of " + std::to_string(bytes_) + " bytes");
  }
  return Lease(static_cast<uint8_t*>(memory), Release{this});
}

void ArenaPool::warm() {
  if (bytes_ == 0 || freeArenas() != 0) return;
  auto arena = acquire();
  if (arena && *arena) std::memset(arena->get(), 0, rounded_);
}

void ArenaPool::release(uint8_t* arena) {
  if (arena == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back({arena, std::chrono::steady_clock::now()});
}

size_t ArenaPool::freeArenas() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return free_.size();
}

uint64_t ArenaPool::trim(TimePoint before) {
  std::vector<uint8_t*> freed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase_if(free_, [&](const FreeArena& entry) {
      if (entry.lastUsed >= before) return false;
      freed.push_back(entry.arena);
      return true;
    });
  }
  for (uint8_t* arena : freed) std::free(arena);
  return freed.size() * uint64_t{rounded_};
}

ArenaPool::~ArenaPool() {
  // Out of the budget's list first: it no longer trims this pool.
  leaveBudget();
  for (const FreeArena& entry : free_) std::free(entry.arena);
  if (budget() != nullptr && !free_.empty()) budget()->give(application(), free_.size() * rounded_);
}

namespace {

Result<std::vector<OutputShape>> executeStatic(const ExecutionPlan& plan, const Request& request,
                                               ArenaPool& arenas, const Parallel& parallel,
                                               const RunOptions& options) {
  const SubgraphPlan& main = plan.main();
  // Output shapes are known at compile time; report every insufficient buffer at once.
  std::vector<OutputShape> shapes(main.outputOperands.size());
  bool insufficient = false;
  for (size_t k = 0; k < main.outputOperands.size(); ++k) {
    const PlannedOperand& operand = main.operands[main.outputOperands[k]];
    shapes[k].dimensions = operand.dimensions;
    const RequestArgument& arg = request.outputs[k];
    shapes[k].isSufficient =
        arg.hasNoValue ? operand.byteSize == 0 : arg.location.length >= operand.byteSize;
    insufficient |= !shapes[k].isSufficient;
  }
  if (insufficient) {
    Error error{ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                "an output buffer is smaller than the output", std::move(shapes)};
    return std::unexpected(std::move(error));
  }
  NNHAL_ASSIGN_OR_RETURN(
      const StagedRequest staged,
      StagedRequest::stage(request, options.maxBytes, options.staging, &main.inPlace));
  const std::vector<uint8_t*>& inputs = staged.inputs();
  const std::vector<uint8_t*>& outputs = staged.outputs();
  NNHAL_ASSIGN_OR_RETURN(ArenaPool::Lease arena, arenas.acquire());

  auto address = [&](uint32_t index) -> void* {
    const PlannedOperand& operand = main.operands[index];
    switch (operand.storage) {
      case Storage::kArena:
        return arena.get() + operand.offset;
      case Storage::kConstant:
        return const_cast<uint8_t*>(operand.constant);
      case Storage::kInput:
        return inputs[operand.ioIndex];
      case Storage::kOutput:
        return outputs[operand.ioIndex];
      default:
        return nullptr;
    }
  };

  std::vector<const void*> stepInputs;
  std::vector<void*> stepOutputs;
  const ExecutionStop stop(options.deadline, options.cancelled);
  ExecutionProfile* const profile = options.profile;
  const auto profileStart = std::chrono::steady_clock::now();
  if (profile != nullptr) {
    profile->operations.reserve(main.steps.size());
  }
  for (const PlannedStep& step : main.steps) {
    if (options.yield != nullptr && &step != &main.steps.front()) options.yield->yield();
    NNHAL_TRY(checkCancelled(options.cancelled));
    if (options.deadline && std::chrono::steady_clock::now() > *options.deadline) {
      return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                  "the execution deadline passed before " + operationName(step.type, plan.model));
    }
    stepInputs.clear();
    stepOutputs.clear();
    for (uint32_t in : step.inputs) stepInputs.push_back(address(in));
    for (uint32_t out : step.outputs) stepOutputs.push_back(address(out));
    void* scratch = step.scratchBytes > 0 ? arena.get() + step.scratchOffset : nullptr;
    const bool vlogStep = common::vlogIsOn(common::VlogTag::kCpuexe);
    const auto stepStart =
        profile != nullptr || vlogStep ? std::chrono::steady_clock::now() : profileStart;
    auto ran = step.kernel->run(
        RunContext(stepInputs, stepOutputs, scratch,
                   {parallel, &stop, stepWidth(parallel, options.yield, options.preference)}));
    if (profile != nullptr) {
      const auto stepEnd = std::chrono::steady_clock::now();
      const auto ns = [](auto d) {
        return static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
      };
      profile->operations.push_back({static_cast<uint32_t>(profile->operations.size()), step.type,
                                     ns(stepStart - profileStart), ns(stepEnd - stepStart)});
    }
    if (vlogStep) {
      NNHAL_VLOG(Cpuexe, "operation {} ({} inputs, {} outputs): {} in {} us", toString(step.type),
                 step.inputs.size(), step.outputs.size(), ran ? "done" : "failed",
                 microsecondsSince(stepStart));
    }
    if (ran && stop.stopped()) {  // the kernel stopped midway: its outputs are incomplete
      return std::unexpected(stop.error("during " + operationName(step.type, plan.model)));
    }
    if (!ran) {
      Error error = std::move(ran).error();
      error.message = operationName(step.type, plan.model) + ": " + error.message;
      return std::unexpected(std::move(error));
    }
  }
  for (size_t k = 0; k < main.outputOperands.size(); ++k) {
    if (request.outputs[k].hasNoValue) continue;
    NNHAL_TRY(staged.commitOutput(k, main.operands[main.outputOperands[k]].byteSize));
  }
  return shapes;
}

Result<std::vector<OutputShape>> executeDynamic(const ExecutionPlan& plan, const Request& request,
                                                const Parallel& parallel,
                                                const RunOptions& options) {
  const SubgraphPlan& main = plan.main();
  auto budget = options.maxBytes != 0 ? std::make_shared<MemoryBudget>(options.maxBytes) : nullptr;
  NNHAL_ASSIGN_OR_RETURN(const StagedRequest staged,
                         StagedRequest::stage(request, options.maxBytes, options.staging));
  if (budget != nullptr) NNHAL_TRY(budget->take(staged.stagedBytes(), "staged request memory"));
  const std::vector<uint8_t*>& inputPtrs = staged.inputs();
  const std::vector<uint8_t*>& outputPtrs = staged.outputs();
  std::vector<Value> inputs(main.inputOperands.size());
  for (size_t k = 0; k < inputs.size(); ++k) {
    const RequestArgument& arg = request.inputs[k];
    const Operand& operand = *main.operands[main.inputOperands[k]].source;
    if (arg.hasNoValue) {
      inputs[k].noValue = true;
      continue;
    }
    inputs[k].data = inputPtrs[k];
    inputs[k].dimensions = arg.dimensions.empty() ? operand.dimensions : arg.dimensions;
    inputs[k].bytes = inputs[k].capacity = arg.location.length;
  }
  std::vector<Value> outputs(main.outputOperands.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (request.outputs[k].hasNoValue) continue;
    outputs[k].data = outputPtrs[k];
    outputs[k].capacity = request.outputs[k].location.length;
  }
  InterpreterOptions interpreterOptions{options.deadline, options.loopTimeout, options.cancelled,
                                        budget,           options.yield,       options.preference};
  NNHAL_TRY(runSubgraph(plan, 0, inputs, outputs, parallel, interpreterOptions));

  std::vector<OutputShape> shapes(outputs.size());
  bool insufficient = false;
  for (size_t k = 0; k < outputs.size(); ++k) {
    shapes[k].dimensions = outputs[k].dimensions;
    const RequestArgument& arg = request.outputs[k];
    const size_t length = arg.hasNoValue ? 0 : arg.location.length;
    shapes[k].isSufficient = outputs[k].bytes <= length;
    if (shapes[k].isSufficient && outputs[k].data != outputPtrs[k] && outputs[k].bytes > 0) {
      std::memcpy(outputPtrs[k], outputs[k].data, outputs[k].bytes);
    }
    insufficient |= !shapes[k].isSufficient;
  }
  if (insufficient) {
    Error error{ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                "an output buffer is smaller than the output", std::move(shapes)};
    return std::unexpected(std::move(error));
  }
  for (size_t k = 0; k < outputs.size(); ++k) {
    NNHAL_TRY(staged.commitOutput(k, outputs[k].bytes));
  }
  return shapes;
}

}  // namespace

Result<std::vector<OutputShape>> execute(const ExecutionPlan& plan, const Request& request,
                                         ArenaPool& arenas, const Parallel& parallel,
                                         const RunOptions& options) {
  // The static kernels were prepared with every model input present. A request that omits
  // one (hasNoValue) runs through the interpreter, which prepares each consumer again with
  // the input omitted: optional inputs take their default, required ones are refused.
  // A profile holds this execution's operations only: none when it fails early or runs on
  // the interpreter (not covered).
  if (options.profile != nullptr) options.profile->operations.clear();
  const bool omitsAnInput = std::any_of(request.inputs.begin(), request.inputs.end(),
                                        [](const RequestArgument& a) { return a.hasNoValue; });
  if (plan.main().fullyStatic && !omitsAnInput) {
    NNHAL_VLOG(Cpuexe, "running {} steps of the static plan", plan.main().steps.size());
    return executeStatic(plan, request, arenas, parallel, options);
  }
  NNHAL_VLOG(Cpuexe, "running on the interpreter ({})",
             omitsAnInput ? "an input is omitted" : "dynamic shapes or control flow");
  return executeDynamic(plan, request, parallel, options);
}

}  // namespace nnhal::engine
