#include "engine/interpreter.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "engine/float16_adapter.h"
#include "engine/operation_registry.h"
#include "hal/operand_utils.h"

namespace nnhal::engine {
namespace {

using Clock = std::chrono::steady_clock;

/// 64-byte aligned bytes (at least one, so that empty tensors still have an address),
/// taken from `budget` (when not null) until freed.
Result<std::shared_ptr<uint8_t[]>> allocate(size_t bytes,
                                            const std::shared_ptr<MemoryBudget>& budget) {
  const size_t rounded = std::max<size_t>((bytes + 63) / 64 * 64, 64);
  if (budget != nullptr) NNHAL_TRY(budget->take(rounded, "an operand"));
  void* memory = std::aligned_alloc(64, rounded);
  if (memory == nullptr) {
    if (budget != nullptr) budget->give(rounded);
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "cannot allocate " + std::to_string(bytes) + " bytes for an operand");
  }
  std::memset(memory, 0, std::min<size_t>(rounded, 64));
  return std::shared_ptr<uint8_t[]>(static_cast<uint8_t*>(memory), [budget, rounded](uint8_t* p) {
    std::free(p);
    if (budget != nullptr) budget->give(rounded);
  });
}

std::string dimsText(const std::vector<uint32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

/// One invocation of one subgraph.
class Frame {
 public:
  Frame(const ExecutionPlan& plan, size_t index, const Parallel& parallel,
        const InterpreterOptions& options)
      : plan_(plan),
        sp_(plan.subgraphs[index]),
        index_(index),
        parallel_(parallel),
        options_(options),
        stop_(options.deadline, options.cancelled),
        values_(sp_.operands.size()) {}

  Result<void> run(const std::vector<Value>& inputs, std::vector<Value>& outputs) {
    NNHAL_TRY(bindOperands(inputs, outputs));
    for (const PlannedStep& step : sp_.steps) {
      if (options_.yield != nullptr && &step != &sp_.steps.front()) options_.yield->yield();
      NNHAL_TRY(checkCancelled(options_.cancelled));
      if (options_.deadline && Clock::now() > *options_.deadline) {
        return fail(
            ErrorStatus::MISSED_DEADLINE_TRANSIENT,
            "the execution deadline passed before " + operationName(step.type, plan_.model));
      }
      Result<void> ran;
      switch (step.kind) {
        case StepKind::kStatic:
          ran = runStatic(step);
          break;
        case StepKind::kDynamic:
          ran = runDynamic(step);
          break;
        case StepKind::kIf:
          ran = runIf(step);
          break;
        case StepKind::kWhile:
          ran = runWhile(step);
          break;
      }
      if (ran && stop_.stopped()) {  // a kernel stopped midway: its outputs are incomplete
        return std::unexpected(stop_.error("during " + operationName(step.type, plan_.model)));
      }
      if (!ran) {
        Error error = std::move(ran).error();
        if (error.message.rfind(operationName(step.type, plan_.model), 0) != 0) {
          error.message = operationName(step.type, plan_.model) + ": " + error.message;
        }
        return std::unexpected(std::move(error));
      }
    }
    outputs.resize(sp_.outputOperands.size());
    for (size_t k = 0; k < sp_.outputOperands.size(); ++k) {
      outputs[k] = values_[sp_.outputOperands[k]];
    }
    return {};
  }

 private:
  Result<void> bindOperands(const std::vector<Value>& inputs, const std::vector<Value>& outputs) {
    if (inputs.size() != sp_.inputOperands.size()) {
      return fail(ErrorStatus::GENERAL_FAILURE, "subgraph " + std::to_string(index_) + " expects " +
                                                    std::to_string(sp_.inputOperands.size()) +
                                                    " inputs, got " +
                                                    std::to_string(inputs.size()));
    }
    if (sp_.arenaBytes > 0) {
      NNHAL_ASSIGN_OR_RETURN(arena_, allocate(sp_.arenaBytes, options_.budget));
    }
    for (size_t i = 0; i < sp_.operands.size(); ++i) {
      const PlannedOperand& p = sp_.operands[i];
      Value& v = values_[i];
      switch (p.storage) {
        case Storage::kConstant:
          v.data = const_cast<uint8_t*>(p.constant);
          v.dimensions = p.dimensions;
          v.bytes = v.capacity = p.source->location.length;
          break;
        case Storage::kNoValue:
          v.noValue = true;
          break;
        case Storage::kArena:
          v.data = arena_.get() + p.offset;
          v.dimensions = p.dimensions;
          v.bytes = v.capacity = p.byteSize;
          break;
        default:
          break;
      }
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      const uint32_t operand = sp_.inputOperands[k];
      const PlannedOperand& p = sp_.operands[operand];
      const Value& in = inputs[k];
      if (!in.noValue && p.shapeKnown && !p.dimensions.empty() && in.dimensions != p.dimensions) {
        return invalidArgument("input " + std::to_string(k) + " of subgraph " +
                               std::to_string(index_) + " has dimensions " +
                               dimsText(in.dimensions) + " but the model declares " +
                               dimsText(p.dimensions));
      }
      values_[operand] = in;
    }
    for (size_t k = 0; k < outputs.size() && k < sp_.outputOperands.size(); ++k) {
      Value& v = values_[sp_.outputOperands[k]];
      v.data = outputs[k].data;
      v.capacity = outputs[k].capacity;
    }
    return {};
  }

  /// Makes operand `index` writable with `dims`; returns its address.
  Result<uint8_t*> bindForWrite(uint32_t index, const std::vector<uint32_t>& dims) {
    const PlannedOperand& p = sp_.operands[index];
    Value& v = values_[index];
    const auto bytes = hal::byteSize(p.type, dims);
    if (!bytes) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "operand " + std::to_string(index) + " is too large: " + dimsText(dims));
    }
    v.dimensions = dims;
    v.bytes = *bytes;
    v.noValue = false;
    if (p.storage == Storage::kArena) return v.data;
    if (p.storage == Storage::kOutput && v.data != nullptr && v.capacity >= v.bytes &&
        v.storage == nullptr) {
      return v.data;
    }
    NNHAL_ASSIGN_OR_RETURN(v.storage, allocate(v.bytes, options_.budget));
    v.data = v.storage.get();
    v.capacity = v.bytes;
    return v.data;
  }

  /// Gives operand `index` the contents of `src` (outputs of IF/WHILE).
  Result<void> assign(uint32_t index, const Value& src) {
    const PlannedOperand& p = sp_.operands[index];
    Value& v = values_[index];
    const bool prebound = p.storage == Storage::kOutput && v.data != nullptr &&
                          v.storage == nullptr && v.capacity >= src.bytes;
    if (p.storage == Storage::kArena || prebound) {
      if (p.storage == Storage::kArena && src.bytes > v.capacity) {
        return fail(ErrorStatus::GENERAL_FAILURE, "operand " + std::to_string(index) +
                                                      " produced " + dimsText(src.dimensions) +
                                                      " which does not fit its planned shape");
      }
      if (src.bytes > 0) std::memmove(v.data, src.data, src.bytes);
      v.dimensions = src.dimensions;
      v.bytes = src.bytes;
      v.noValue = false;
      return {};
    }
    // Temporaries adopt the bytes; a request output too small for them keeps them here
    // and the caller reports it as insufficient.
    v = src;
    return {};
  }

  std::vector<const void*> inputPointers(const PlannedStep& step) const {
    std::vector<const void*> pointers;
    pointers.reserve(step.inputs.size());
    for (uint32_t in : step.inputs) {
      const Value& v = values_[in];
      pointers.push_back(v.noValue ? nullptr : v.data);
    }
    return pointers;
  }

  Result<void> runStatic(const PlannedStep& step) {
    // The kernel was prepared with its inputs present; an omitted one (a request or
    // subgraph input without a value) needs the operation prepared again without it.
    for (uint32_t in : step.inputs) {
      if (values_[in].noValue && sp_.operands[in].storage != Storage::kNoValue) {
        return runDynamic(step);
      }
    }
    std::vector<void*> outputs;
    for (uint32_t out : step.outputs) {
      NNHAL_ASSIGN_OR_RETURN(uint8_t * address, bindForWrite(out, sp_.operands[out].dimensions));
      outputs.push_back(address);
    }
    const auto inputs = inputPointers(step);
    void* scratch = step.scratchBytes > 0 ? arena_.get() + step.scratchOffset : nullptr;
    return step.kernel->run(
        RunContext(inputs, outputs, scratch,
                   {parallel_, &stop_, stepWidth(parallel_, options_.yield, options_.preference)}));
  }

  OperandInfo describe(uint32_t index, bool output) const {
    const PlannedOperand& p = sp_.operands[index];
    const Value& v = values_[index];
    OperandInfo info;
    info.type = p.type;
    info.scale = p.source->scale;
    info.zeroPoint = p.source->zeroPoint;
    info.lifetime = p.source->lifetime;
    if (const auto* channel = std::get_if<SymmPerChannelQuantParams>(&p.source->extraParams)) {
      info.channelQuant = channel;
    }
    if (output) {
      info.dimensions = p.source->dimensions;
      return info;
    }
    info.dimensions = v.dimensions;
    info.hasNoValue = v.noValue;
    if (!v.noValue) {
      // At execution every input's value is known.
      static constexpr uint8_t kEmpty[1] = {0};  // address for empty tensors
      info.constantData = v.data != nullptr ? v.data : kEmpty;
      info.constantLength = v.bytes;
    }
    return info;
  }

  Result<void> runDynamic(const PlannedStep& step) {
    const OperationDef* def = findOperation(step.type, plan_.model);
    if (def == nullptr) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "no implementation of " + operationName(step.type, plan_.model));
    }
    std::vector<OperandInfo> inputs;
    std::vector<OperandInfo> outputs;
    for (uint32_t in : step.inputs) inputs.push_back(describe(in, false));
    for (uint32_t out : step.outputs) outputs.push_back(describe(out, true));
    PrepareContext ctx(step.type, std::move(inputs), std::move(outputs), plan_.relaxed());
    if (static_cast<uint32_t>(step.type) > 0xFFFFu) {
      ctx.setName(operationName(step.type, plan_.model));
    }
    ctx.setAtExecution(true);
    NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, prepareOperation(*def, ctx));
    std::vector<void*> outputPointers;
    for (size_t o = 0; o < step.outputs.size(); ++o) {
      NNHAL_ASSIGN_OR_RETURN(uint8_t * address,
                             bindForWrite(step.outputs[o], ctx.outputs()[o].dimensions));
      outputPointers.push_back(address);
    }
    std::shared_ptr<uint8_t[]> scratch;
    if (ctx.scratchBytes() > 0) {
      NNHAL_ASSIGN_OR_RETURN(scratch, allocate(ctx.scratchBytes(), options_.budget));
    }
    const auto inputPtrs = inputPointers(step);
    return kernel->run(
        RunContext(inputPtrs, outputPointers, scratch.get(),
                   {parallel_, &stop_, stepWidth(parallel_, options_.yield, options_.preference)}));
  }

  size_t subgraphOf(uint32_t operand) const { return sp_.operands[operand].subgraph; }

  Result<bool> condition(const Value& v) const {
    if (v.noValue || v.data == nullptr || v.bytes < 1) {
      return fail(ErrorStatus::GENERAL_FAILURE, "the condition has no value");
    }
    return v.data[0] != 0;
  }

  Result<void> runIf(const PlannedStep& step) {
    NNHAL_ASSIGN_OR_RETURN(const bool cond, condition(values_[step.inputs[0]]));
    const size_t branch = subgraphOf(step.inputs[cond ? 1 : 2]);
    std::vector<Value> inputs;
    for (size_t i = 3; i < step.inputs.size(); ++i) inputs.push_back(values_[step.inputs[i]]);
    std::vector<Value> outputs;
    NNHAL_TRY(runSubgraph(plan_, branch, inputs, outputs, parallel_, options_));
    for (size_t o = 0; o < step.outputs.size(); ++o) NNHAL_TRY(assign(step.outputs[o], outputs[o]));
    return {};
  }

  Result<void> runWhile(const PlannedStep& step) {
    const size_t condGraph = subgraphOf(step.inputs[0]);
    const size_t bodyGraph = subgraphOf(step.inputs[1]);
    const size_t m = step.outputs.size();
    const size_t bodyOutputs = plan_.subgraphs[bodyGraph].outputOperands.size();
    const size_t operands = step.inputs.size() - 2;
    if (bodyOutputs < m || bodyOutputs > operands) {
      return fail(ErrorStatus::GENERAL_FAILURE, "WHILE body has " + std::to_string(bodyOutputs) +
                                                    " outputs for " + std::to_string(m) +
                                                    " loop outputs");
    }
    // state = input-output operands and state-only operands; the rest are input-only.
    std::vector<Value> state;
    for (size_t i = 0; i < operands; ++i) state.push_back(values_[step.inputs[2 + i]]);
    const auto start = Clock::now();
    const auto timeout = std::min(options_.loopTimeout, kMaxLoopTimeout);
    for (uint64_t iteration = 0;; ++iteration) {
      // Between iterations too: a loop of one-operation subgraphs has no other yield point.
      if (options_.yield != nullptr && iteration > 0) options_.yield->yield();
      if (Clock::now() - start > timeout) {
        return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                    "WHILE loop did not finish within the loop timeout (" +
                        std::to_string(timeout.count()) + " ns, " + std::to_string(iteration) +
                        " iterations)");
      }
      if (options_.deadline && Clock::now() > *options_.deadline) {
        return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the execution deadline passed");
      }
      NNHAL_TRY(checkCancelled(options_.cancelled));
      std::vector<Value> condOut;
      NNHAL_TRY(runSubgraph(plan_, condGraph, state, condOut, parallel_, options_));
      if (condOut.empty())
        return fail(ErrorStatus::GENERAL_FAILURE, "WHILE condition has no output");
      NNHAL_ASSIGN_OR_RETURN(const bool again, condition(condOut[0]));
      if (!again) break;
      std::vector<Value> bodyOut;
      NNHAL_TRY(runSubgraph(plan_, bodyGraph, state, bodyOut, parallel_, options_));
      for (size_t i = 0; i < bodyOutputs; ++i) state[i] = std::move(bodyOut[i]);
    }
    for (size_t o = 0; o < m; ++o) NNHAL_TRY(assign(step.outputs[o], state[o]));
    return {};
  }

  const ExecutionPlan& plan_;
  const SubgraphPlan& sp_;
  size_t index_;
  const Parallel& parallel_;
  const InterpreterOptions& options_;
  ExecutionStop stop_;  ///< lets long kernels of this invocation stop between chunks
  std::vector<Value> values_;
  std::shared_ptr<uint8_t[]> arena_;
};

}  // namespace

Result<void> runSubgraph(const ExecutionPlan& plan, size_t index, const std::vector<Value>& inputs,
                         std::vector<Value>& outputs, const Parallel& parallel,
                         const InterpreterOptions& options) {
  Frame frame(plan, index, parallel, options);
  return frame.run(inputs, outputs);
}

}  // namespace nnhal::engine
