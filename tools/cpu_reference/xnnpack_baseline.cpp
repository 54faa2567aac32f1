#include "tools/cpu_reference/xnnpack_baseline.h"

#include <xnnpack.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tools/cpu_reference/nnapi_params.h"
#include "tools/cpu_reference/xnnpack_operators.h"

namespace nnhal::cpu_reference {
namespace {

/// Activation buffers start on a cache line.
constexpr size_t kBufferAlignment = 64;
/// lastUse of a buffer that must outlive the plan (model inputs and outputs).
constexpr size_t kKeep = std::numeric_limits<size_t>::max();

struct FreeDeleter {
  void operator()(uint8_t* bytes) const { std::free(bytes); }
};
using Buffer = std::unique_ptr<uint8_t[], FreeDeleter>;

Result<size_t> tensorBytes(const Operand& operand, uint32_t index) {
  size_t elementSize = 0;
  switch (operand.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      elementSize = 1;
      break;
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
      elementSize = 4;
      break;
    default:
      return invalidArgument("operand " + std::to_string(index) + " has unsupported type " +
                             std::string(toString(operand.type)));
  }
  if (operand.dimensions.empty()) {
    return invalidArgument("operand " + std::to_string(index) + " has unknown rank");
  }
  size_t count = 1;
  for (const uint32_t d : operand.dimensions) {
    if (d == 0) {
      return invalidArgument("operand " + std::to_string(index) + " has an unknown dimension");
    }
    count *= d;
  }
  return count * elementSize;
}

std::string operationName(size_t index, OperationType type) {
  return "operation " + std::to_string(index) + " (" + std::string(toString(type)) + ")";
}

}  // namespace

struct XnnpackBaseline::Impl {
  /// Keeps the constants the operators were created from (the pools are shared).
  Model model;
  pthreadpool_t threadpool = nullptr;
  std::vector<Buffer> buffers;
  std::vector<size_t> bufferBytes;
  /// Per operand: the operand whose buffer it uses (itself, or the input of the RESHAPE or
  /// SQUEEZE it comes from).
  std::vector<uint32_t> root;
  /// Per root operand: its buffer, or -1.
  std::vector<int32_t> bufferOf;
  std::vector<XnnOperator> operators;
  /// Per operator: the index of its operation, for error messages.
  std::vector<size_t> operationOf;

  ~Impl() {
    operators.clear();
    if (threadpool != nullptr) pthreadpool_destroy(threadpool);
  }

  void* data(uint32_t index) {
    const Operand& operand = model.main.operands[index];
    if (operand.lifetime == OperandLifeTime::NO_VALUE) return nullptr;
    if (isConstant(operand)) {
      auto bytes = constantBytes(model, index);
      return bytes ? const_cast<uint8_t*>(bytes->data()) : nullptr;
    }
    const int32_t buffer = bufferOf[root[index]];
    return buffer < 0 ? nullptr : buffers[static_cast<size_t>(buffer)].get();
  }

  std::span<uint8_t> bytesOf(uint32_t index) {
    const size_t length = tensorBytes(model.main.operands[index], index).value_or(0);
    return {static_cast<uint8_t*>(data(index)), length};
  }

  Result<void> plan();
};

/// Gives every tensor a buffer and creates the operators in order. A buffer returns to the
/// free list after the last operation reading any operand that uses it; outputs take the
/// smallest free buffer that fits (the inputs of an operation are released only after its
/// output is placed, so no operator writes over what it reads).
Result<void> XnnpackBaseline::Impl::plan() {
  const Subgraph& graph = model.main;
  const size_t operandCount = graph.operands.size();
  root.resize(operandCount);
  for (uint32_t i = 0; i < operandCount; ++i) root[i] = i;
  for (const Operation& operation : graph.operations) {
    if (isAlias(operation.type) && !operation.inputs.empty() && operation.outputs.size() == 1) {
      root[operation.outputs[0]] = root[operation.inputs[0]];
    }
  }
  std::vector<size_t> lastUse(operandCount, 0);
  std::vector<bool> used(operandCount, false);
  for (size_t k = 0; k < graph.operations.size(); ++k) {
    for (const uint32_t input : graph.operations[k].inputs) {
      lastUse[root[input]] = k;
      used[root[input]] = true;
    }
  }
  for (const uint32_t index : graph.inputIndexes) lastUse[root[index]] = kKeep;
  for (const uint32_t index : graph.outputIndexes) lastUse[root[index]] = kKeep;

  bufferOf.assign(operandCount, -1);
  std::vector<int32_t> freeBuffers;
  const auto allocate = [&](uint32_t index) -> Result<void> {
    NNHAL_ASSIGN_OR_RETURN(const size_t bytes, tensorBytes(graph.operands[index], index));
    int32_t best = -1;
    for (const int32_t candidate : freeBuffers) {
      const size_t capacity = bufferBytes[static_cast<size_t>(candidate)];
      if (capacity >= bytes && (best < 0 || capacity < bufferBytes[static_cast<size_t>(best)])) {
        best = candidate;
      }
    }
    if (best >= 0) {
      std::erase(freeBuffers, best);
      bufferOf[index] = best;
      return {};
    }
    // XNNPACK may read XNN_EXTRA_BYTES past the end of a tensor.
    const size_t size =
        (bytes + XNN_EXTRA_BYTES + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
    Buffer buffer(static_cast<uint8_t*>(std::aligned_alloc(kBufferAlignment, size)));
    if (!buffer) return fail(ErrorStatus::GENERAL_FAILURE, "out of memory for activations");
    bufferOf[index] = static_cast<int32_t>(buffers.size());
    buffers.push_back(std::move(buffer));
    bufferBytes.push_back(size);
    return {};
  };
  const auto release = [&](uint32_t index, size_t k) {
    const uint32_t r = root[index];
    if (lastUse[r] == kKeep || (used[r] && lastUse[r] > k) || bufferOf[r] < 0) return;
    if (std::find(freeBuffers.begin(), freeBuffers.end(), bufferOf[r]) == freeBuffers.end()) {
      freeBuffers.push_back(bufferOf[r]);
    }
  };

  for (const uint32_t index : graph.inputIndexes) NNHAL_TRY(allocate(index));
  const OperatorContext ctx{model, [this](uint32_t index) { return data(index); }, threadpool};
  for (size_t k = 0; k < graph.operations.size(); ++k) {
    const Operation& operation = graph.operations[k];
    const auto failAt = [&](const Error& error) {
      return std::unexpected(
          Error{error.status, operationName(k, operation.type) + ": " + error.message, {}});
    };
    for (const uint32_t input : operation.inputs) {
      const Operand& operand = graph.operands[input];
      if (!isConstant(operand) && operand.lifetime != OperandLifeTime::NO_VALUE &&
          bufferOf[root[input]] < 0) {
        return failAt(Error{ErrorStatus::INVALID_ARGUMENT,
                            "operand " + std::to_string(input) + " is read before it is written",
                            {}});
      }
    }
    if (isAlias(operation.type)) {
      if (auto checked = checkAlias(model, operation); !checked) return failAt(checked.error());
      if (isConstant(graph.operands[operation.inputs[0]])) {
        return failAt(
            Error{ErrorStatus::INVALID_ARGUMENT, "reshaping a constant is unsupported", {}});
      }
    } else {
      if (operation.outputs.size() != 1) {
        return failAt(Error{ErrorStatus::INVALID_ARGUMENT, "expected one output", {}});
      }
      if (auto placed = allocate(operation.outputs[0]); !placed) return failAt(placed.error());
      auto op = createOperator(ctx, operation);
      if (!op) return failAt(op.error());
      operators.push_back(std::move(*op));
      operationOf.push_back(k);
    }
    for (const uint32_t input : operation.inputs) release(input, k);
    for (const uint32_t output : operation.outputs) release(output, k);
  }
  return {};
}

XnnpackBaseline::XnnpackBaseline(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

XnnpackBaseline::~XnnpackBaseline() = default;

Result<std::unique_ptr<XnnpackBaseline>> XnnpackBaseline::create(const Model& model,
                                                                 unsigned threads) {
  if (const xnn_status status = xnn_initialize(nullptr); status != xnn_status_success) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("xnn_initialize returned ") + toString(status));
  }
  if (!model.referenced.empty()) {
    return invalidArgument("the XNNPACK baseline does not run referenced subgraphs");
  }
  auto impl = std::make_unique<Impl>();
  impl->model = model;
  impl->threadpool = pthreadpool_create(threads);
  if (impl->threadpool == nullptr) {
    return fail(ErrorStatus::GENERAL_FAILURE, "pthreadpool_create failed");
  }
  NNHAL_TRY(impl->plan());
  return std::unique_ptr<XnnpackBaseline>(new XnnpackBaseline(std::move(impl)));
}

std::span<uint8_t> XnnpackBaseline::input(size_t index) {
  return impl_->bytesOf(impl_->model.main.inputIndexes.at(index));
}

std::span<const uint8_t> XnnpackBaseline::output(size_t index) const {
  return impl_->bytesOf(impl_->model.main.outputIndexes.at(index));
}

Result<void> XnnpackBaseline::run() {
  for (size_t i = 0; i < impl_->operators.size(); ++i) {
    const xnn_status status = xnn_run_operator(impl_->operators[i].get(), impl_->threadpool);
    if (status != xnn_status_success) {
      const size_t k = impl_->operationOf[i];
      return fail(ErrorStatus::GENERAL_FAILURE,
                  operationName(k, impl_->model.main.operations[k].type) +
                      ": xnn_run_operator returned " + toString(status));
    }
  }
  return {};
}

}  // namespace nnhal::cpu_reference
