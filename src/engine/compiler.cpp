#include "engine/compiler.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "common/vlog.h"
#include "engine/arena_planner.h"
#include "engine/float16_adapter.h"
#include "engine/operation_registry.h"
#include "hal/model_constants.h"
#include "hal/operand_utils.h"

namespace nnhal::engine {
namespace {

std::string opName(size_t index, OperationType type, const Model& model) {
  return "operation " + std::to_string(index) + " (" + operationName(type, model) + ")";
}

std::string subgraphName(size_t index) {
  return index == 0 ? std::string("main") : "referenced[" + std::to_string(index - 1) + "]";
}

const Subgraph& subgraphAt(const Model& model, size_t index) {
  return index == 0 ? model.main : model.referenced[index - 1];
}

bool isControlFlow(OperationType type) {
  return type == OperationType::IF || type == OperationType::WHILE;
}

OperandInfo describe(const Model& model, const Operand& operand,
                     const std::vector<uint32_t>& dimensions) {
  OperandInfo info;
  info.type = operand.type;
  info.dimensions = dimensions;
  info.scale = operand.scale;
  info.zeroPoint = operand.zeroPoint;
  info.lifetime = operand.lifetime;
  if (const auto* channel = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams)) {
    info.channelQuant = channel;
  }
  info.constantData = hal::constantBytes(model, operand);
  info.constantLength = info.constantData != nullptr ? operand.location.length : 0;
  info.hasNoValue = operand.lifetime == OperandLifeTime::NO_VALUE;
  return info;
}

bool shapeKnown(const Operand& operand, const std::vector<uint32_t>& dims) {
  if (operand.lifetime == OperandLifeTime::NO_VALUE ||
      operand.lifetime == OperandLifeTime::SUBGRAPH) {
    return true;
  }
  return hal::hasFullySpecifiedShape(operand.type, dims);
}

/// What compiling one operation found.
struct StepOutcome {
  StepKind kind = StepKind::kStatic;
  std::unique_ptr<Kernel> kernel;
  size_t scratchBytes = 0;
  /// Why the engine cannot run a valid operation (no implementation); empty otherwise.
  std::string unsupported;
};

/// Walks one subgraph in operation order, propagating shapes and preparing kernels.
class SubgraphCompiler {
 public:
  SubgraphCompiler(const Model& model, const Subgraph& subgraph, size_t index = 0,
                   PreparedStateStore* state = nullptr, bool checksOnly = false,
                   YieldPoint* yield = nullptr)
      : model_(model),
        subgraph_(subgraph),
        index_(index),
        state_(state),
        checksOnly_(checksOnly),
        yield_(yield) {
    for (const Operand& operand : subgraph.operands) {
      dims_.push_back(operand.dimensions);
      known_.push_back(shapeKnown(operand, operand.dimensions));
    }
    // Operands written by operations are unknown until their producer says otherwise.
    for (const Operation& operation : subgraph.operations) {
      for (uint32_t out : operation.outputs) known_[out] = false;
    }
  }

  /// Compiles operation `k`. Errors: INVALID_ARGUMENT (invalid); an operation without an
  /// implementation is reported in StepOutcome::unsupported.
  Result<StepOutcome> step(size_t k) {
    const Operation& operation = subgraph_.operations[k];
    StepOutcome outcome;
    if (isControlFlow(operation.type)) {
      outcome.kind = operation.type == OperationType::IF ? StepKind::kIf : StepKind::kWhile;
      markOutputsUnknown(operation);
      return outcome;
    }
    const OperationDef* def = findOperation(operation.type, model_);
    if (def == nullptr) {
      outcome.unsupported = unsupportedReason(operation.type, model_);
      markOutputsUnknown(operation);
      return outcome;
    }
    for (uint32_t in : operation.inputs) {
      if (!known_[in]) {
        outcome.kind = StepKind::kDynamic;
        markOutputsUnknown(operation);
        return outcome;
      }
    }
    PrepareContext ctx = contextFor(operation);
    if (static_cast<uint32_t>(operation.type) > 0xFFFFu) {
      ctx.setName(operationName(operation.type, model_));
    }
    ctx.setChecksOnly(checksOnly_);
    ctx.bindYield(yield_);
    ctx.bindState(state_, StateKey{static_cast<uint32_t>(index_), static_cast<uint32_t>(k)});
    auto kernel = prepareOperation(*def, ctx);
    if (!kernel) {
      if (ctx.valuesMissing()) {
        outcome.kind = StepKind::kDynamic;
        markOutputsUnknown(operation);
        return outcome;
      }
      return std::unexpected(std::move(kernel).error());
    }
    // After a successful prepare every output dimension is an actual value (0 = empty).
    for (size_t o = 0; o < operation.outputs.size(); ++o) {
      const uint32_t out = operation.outputs[o];
      dims_[out] = ctx.outputs()[o].dimensions;
      known_[out] = true;
    }
    outcome.kernel = std::move(*kernel);
    outcome.scratchBytes = ctx.scratchBytes();
    return outcome;
  }

  const std::vector<uint32_t>& dims(size_t i) const { return dims_[i]; }
  bool known(size_t i) const { return known_[i]; }

 private:
  PrepareContext contextFor(const Operation& operation) const {
    std::vector<OperandInfo> inputs;
    std::vector<OperandInfo> outputs;
    for (uint32_t i : operation.inputs) {
      inputs.push_back(describe(model_, subgraph_.operands[i], dims_[i]));
    }
    for (uint32_t i : operation.outputs) {
      outputs.push_back(describe(model_, subgraph_.operands[i], dims_[i]));
    }
    return PrepareContext(operation.type, std::move(inputs), std::move(outputs),
                          model_.relaxComputationFloat32toFloat16);
  }

  void markOutputsUnknown(const Operation& operation) {
    for (uint32_t out : operation.outputs) known_[out] = false;
  }

  const Model& model_;
  const Subgraph& subgraph_;
  size_t index_;
  PreparedStateStore* state_;
  bool checksOnly_;
  YieldPoint* yield_;
  std::vector<std::vector<uint32_t>> dims_;
  std::vector<bool> known_;
};

// The request arguments whose kernels use them only as plain values (request_staging.h).
InPlaceArguments inPlaceArguments(const SubgraphPlan& sp) {
  std::vector<bool> plainReads(sp.operands.size(), true);
  std::vector<bool> plainWrite(sp.operands.size(), false);
  std::vector<bool> read(sp.operands.size(), false);
  for (const PlannedStep& step : sp.steps) {
    const uint32_t slots = step.kind == StepKind::kStatic ? plainDataInputs(step.type) : 0;
    for (size_t slot = 0; slot < step.inputs.size(); ++slot) {
      const uint32_t in = step.inputs[slot];
      read[in] = true;
      const bool plain =
          slot < 32 && (slots >> slot & 1u) != 0 && hal::isTensorType(sp.operands[in].type);
      if (!plain) plainReads[in] = false;
    }
    for (uint32_t out : step.outputs) plainWrite[out] = slots != 0;
  }
  InPlaceArguments inPlace;
  for (uint32_t operand : sp.inputOperands) inPlace.inputs.push_back(plainReads[operand]);
  for (uint32_t operand : sp.outputOperands) {
    inPlace.outputs.push_back(plainWrite[operand] && !read[operand]);
  }
  return inPlace;
}

Result<SubgraphPlan> compileSubgraph(ExecutionPlan& plan, size_t index, PreparedStateStore* state,
                                     const OptionalTimePoint& deadline, YieldPoint* yield) {
  const Model& m = plan.model;
  const Subgraph& subgraph = subgraphAt(m, index);
  SubgraphPlan sp;
  SubgraphCompiler compiler(m, subgraph, index, state, /*checksOnly=*/false, yield);

  for (size_t k = 0; k < subgraph.operations.size(); ++k) {
    const Operation& operation = subgraph.operations[k];
    if (yield != nullptr && k > 0) yield->yield();
    if (deadline && std::chrono::steady_clock::now() > *deadline) {
      return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                  "the preparation deadline passed after " + std::to_string(k) + " of " +
                      std::to_string(subgraph.operations.size()) + " operations of " +
                      subgraphName(index) + " were prepared");
    }
    auto outcome = compiler.step(k);
    if (!outcome) {
      NNHAL_VLOG(Compilation, "{} {}: rejected: {}", subgraphName(index),
                 opName(k, operation.type, m), outcome.error().message);
      return invalidArgument(subgraphName(index) + " " + opName(k, operation.type, m) + ": " +
                             outcome.error().message);
    }
    if (!outcome->unsupported.empty()) {
      return invalidArgument(subgraphName(index) + " " + opName(k, operation.type, m) + ": " +
                             outcome->unsupported);
    }
    PlannedStep step;
    step.type = operation.type;
    step.kind = outcome->kind;
    step.inputs = operation.inputs;
    step.outputs = operation.outputs;
    step.kernel = std::move(outcome->kernel);
    step.scratchBytes = outcome->scratchBytes;
    sp.fullyStatic &= step.kind == StepKind::kStatic;
    NNHAL_VLOG(Compilation, "{} {}: prepared ({})", subgraphName(index),
               opName(k, operation.type, m),
               step.kind == StepKind::kStatic ? "static shapes" : "shapes known at execution");
    sp.steps.push_back(std::move(step));
  }

  // Operand storage.
  sp.operands.resize(subgraph.operands.size());
  for (size_t i = 0; i < subgraph.operands.size(); ++i) {
    const Operand& operand = subgraph.operands[i];
    PlannedOperand& planned = sp.operands[i];
    planned.source = &operand;
    planned.type = operand.type;
    planned.dimensions = compiler.dims(i);
    planned.shapeKnown = compiler.known(i);
    if (planned.shapeKnown && hal::isTensorType(operand.type) &&
        !hal::byteSize(operand.type, planned.dimensions)) {
      return invalidArgument("operand " + std::to_string(i) +
                             ": its shape holds more than 2^32 - 1 bytes");
    }
    planned.byteSize =
        planned.shapeKnown ? hal::byteSize(operand.type, planned.dimensions).value_or(0) : 0;
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY:
      case OperandLifeTime::CONSTANT_REFERENCE: {
        planned.storage = Storage::kConstant;
        planned.shapeKnown = true;
        const uint8_t* bytes = hal::constantBytes(m, operand);
        const size_t length = operand.location.length;
        if (operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
            reinterpret_cast<uintptr_t>(bytes) % 16 != 0) {
          auto copy = std::make_unique<uint8_t[]>(std::max<size_t>(length, 1));
          if (length > 0) std::memcpy(copy.get(), bytes, length);
          bytes = copy.get();
          plan.constantStorage.push_back(std::move(copy));
        }
        planned.constant = bytes;
        break;
      }
      case OperandLifeTime::NO_VALUE:
        planned.storage = Storage::kNoValue;
        break;
      case OperandLifeTime::SUBGRAPH:
        planned.storage = Storage::kSubgraph;
        planned.subgraph = operand.location.offset + 1;
        break;
      default:
        planned.storage = Storage::kArena;
        break;
    }
  }
  for (size_t k = 0; k < subgraph.inputIndexes.size(); ++k) {
    PlannedOperand& planned = sp.operands[subgraph.inputIndexes[k]];
    planned.storage = Storage::kInput;
    planned.ioIndex = static_cast<uint32_t>(k);
    sp.fullyStatic &= planned.shapeKnown;
  }
  for (size_t k = 0; k < subgraph.outputIndexes.size(); ++k) {
    PlannedOperand& planned = sp.operands[subgraph.outputIndexes[k]];
    planned.storage = Storage::kOutput;
    planned.ioIndex = static_cast<uint32_t>(k);
  }
  // Outputs of dynamic and control-flow steps are allocated when produced.
  for (const PlannedStep& step : sp.steps) {
    if (step.kind == StepKind::kStatic) continue;
    for (uint32_t out : step.outputs) {
      if (sp.operands[out].storage == Storage::kArena) sp.operands[out].storage = Storage::kDynamic;
    }
  }
  sp.inputOperands = subgraph.inputIndexes;
  sp.outputOperands = subgraph.outputIndexes;
  sp.inPlace = inPlaceArguments(sp);

  // Arena: static temporaries live from the step that writes them to the last step that
  // reads them; each static step's scratch lives for that step only.
  ArenaPlanner planner(kArenaAlignment);
  std::vector<size_t> firstUse(sp.operands.size(), SIZE_MAX);
  std::vector<size_t> lastUse(sp.operands.size(), 0);
  for (size_t s = 0; s < sp.steps.size(); ++s) {
    for (uint32_t out : sp.steps[s].outputs) firstUse[out] = std::min(firstUse[out], s);
    for (uint32_t in : sp.steps[s].inputs) lastUse[in] = std::max(lastUse[in], s);
  }
  std::vector<size_t> bufferIds(sp.operands.size(), SIZE_MAX);
  for (size_t i = 0; i < sp.operands.size(); ++i) {
    if (sp.operands[i].storage != Storage::kArena || firstUse[i] == SIZE_MAX) continue;
    bufferIds[i] =
        planner.add(sp.operands[i].byteSize, firstUse[i], std::max(lastUse[i], firstUse[i]));
  }
  std::vector<size_t> scratchIds(sp.steps.size(), SIZE_MAX);
  for (size_t s = 0; s < sp.steps.size(); ++s) {
    if (sp.steps[s].scratchBytes > 0) scratchIds[s] = planner.add(sp.steps[s].scratchBytes, s, s);
  }
  sp.arenaBytes = planner.plan();
  for (size_t i = 0; i < sp.operands.size(); ++i) {
    if (bufferIds[i] != SIZE_MAX) sp.operands[i].offset = planner.offsetOf(bufferIds[i]);
  }
  for (size_t s = 0; s < sp.steps.size(); ++s) {
    if (scratchIds[s] != SIZE_MAX) sp.steps[s].scratchOffset = planner.offsetOf(scratchIds[s]);
  }
  return sp;
}

/// Checks every operation of subgraph `index` in order. Returns, per operation, why the
/// engine cannot run it ("" when it can). Errors: INVALID_ARGUMENT for an invalid operation.
Result<std::vector<std::string>> checkSubgraph(const Model& model, size_t index) {
  const Subgraph& subgraph = subgraphAt(model, index);
  std::vector<std::string> reasons(subgraph.operations.size());
  SubgraphCompiler compiler(model, subgraph, index, nullptr, /*checksOnly=*/true);
  for (size_t k = 0; k < subgraph.operations.size(); ++k) {
    auto outcome = compiler.step(k);
    if (!outcome) {
      return invalidArgument(subgraphName(index) + " " +
                             opName(k, subgraph.operations[k].type, model) + ": " +
                             outcome.error().message);
    }
    reasons[k] = std::move(outcome->unsupported);
  }
  return reasons;
}

}  // namespace

Result<std::vector<std::string>> explainSupport(const Model& model) {
  // Referenced subgraphs must be supported as a whole for IF/WHILE to be.
  std::vector<std::string> referencedReasons(model.referenced.size());
  for (size_t r = 0; r < model.referenced.size(); ++r) {
    NNHAL_ASSIGN_OR_RETURN(std::vector<std::string> reasons, checkSubgraph(model, r + 1));
    for (size_t k = 0; k < reasons.size(); ++k) {
      if (reasons[k].empty()) continue;
      referencedReasons[r] = subgraphName(r + 1) + " " +
                             opName(k, model.referenced[r].operations[k].type, model) + ": " +
                             reasons[k];
      break;
    }
  }
  NNHAL_ASSIGN_OR_RETURN(std::vector<std::string> reasons, checkSubgraph(model, 0));
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    const Operation& operation = model.main.operations[k];
    if (!isControlFlow(operation.type)) continue;
    for (uint32_t in : operation.inputs) {
      const Operand& operand = model.main.operands[in];
      if (operand.lifetime != OperandLifeTime::SUBGRAPH) continue;
      const std::string& why = referencedReasons[operand.location.offset];
      if (!why.empty()) reasons[k] = why;
    }
  }
  // A subgraph referenced from a referenced subgraph propagates only one level here; the
  // preparation reports deeper failures.
  return reasons;
}

Result<void> checkModel(const Model& model) {
  for (size_t s = 0; s <= model.referenced.size(); ++s) {
    NNHAL_ASSIGN_OR_RETURN(std::vector<std::string> reasons, checkSubgraph(model, s));
    for (size_t k = 0; k < reasons.size(); ++k) {
      if (!reasons[k].empty()) {
        return invalidArgument(subgraphName(s) + " " +
                               opName(k, subgraphAt(model, s).operations[k].type, model) + ": " +
                               reasons[k]);
      }
    }
  }
  return {};
}

Result<std::unique_ptr<ExecutionPlan>> compile(Model model, const CompileOptions& options) {
  auto plan = std::make_unique<ExecutionPlan>();
  plan->model = std::move(model);
  PreparedStateStore* state = options.state;
  if (state != nullptr && state->mode() == PreparedStateStore::Mode::kRestore) {
    plan->retained = state->takeRetained();  // before any kernel can point into them
  }
  const size_t count = 1 + plan->model.referenced.size();
  const auto start = std::chrono::steady_clock::now();
  NNHAL_VLOG(Compilation, "compiling a model: {} subgraphs, {} operations in main{}", count,
             plan->model.main.operations.size(),
             state == nullptr ? ""
             : state->mode() == PreparedStateStore::Mode::kRestore
                 ? ", restoring prepared state from a cache"
                 : ", recording prepared state for a cache");
  plan->subgraphs.reserve(count);
  for (size_t s = 0; s < count; ++s) {
    NNHAL_ASSIGN_OR_RETURN(SubgraphPlan sp,
                           compileSubgraph(*plan, s, state, options.deadline, options.yield));
    plan->subgraphs.push_back(std::move(sp));
  }
  if (state != nullptr && state->mode() == PreparedStateStore::Mode::kRestore) {
    const std::vector<StateKey> missing = state->missingRequired();
    if (!missing.empty()) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "restored state of " + subgraphName(missing[0].subgraph) + " operation " +
                      std::to_string(missing[0].step) + " was rejected (" +
                      std::to_string(missing.size()) + " rejected in all)");
    }
  }
  NNHAL_VLOG(Compilation, "compiled: {} steps in main, arena {} bytes, {} in {} us",
             plan->main().steps.size(), plan->main().arenaBytes,
             plan->main().fullyStatic ? "static plan" : "interpreted", microsecondsSince(start));
  return plan;
}

}  // namespace nnhal::engine
