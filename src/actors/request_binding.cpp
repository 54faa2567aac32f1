#include "actors/request_binding.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "hal/operand_utils.h"
#include "hal/process_memory.h"

namespace nnhal::actors {
namespace {

std::string argumentName(bool input, size_t k) {
  return fmt::format("request.{}[{}]", input ? "inputs" : "outputs", k);
}

}  // namespace

bool usesDeviceBuffers(const Request& request) {
  return std::any_of(request.pools.begin(), request.pools.end(), [](const RequestMemoryPool& p) {
    return std::holds_alternative<MemoryDomainToken>(p);
  });
}

Result<void> BoundRequest::allocateOutput(Output& output, size_t capacity) {
  auto content = std::make_shared<BufferContent>(capacity);
  if (content->capacity < capacity) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                fmt::format("cannot allocate {} bytes for output {}", capacity, output.index));
  }
  const Memory pool =
      hal::writableBorrowedPool(content->bytes.get(), std::max<size_t>(capacity, 1), content);
  if (output.pool == UINT32_MAX) {
    output.pool = static_cast<uint32_t>(request_.pools.size());
    request_.pools.emplace_back(pool);
  } else {
    request_.pools[output.pool] = pool;
  }
  request_.outputs[output.index].location = {output.pool, 0, static_cast<uint32_t>(capacity)};
  output.content = std::move(content);
  return {};
}

Result<BoundRequest> BoundRequest::bind(const Request& request, uint64_t modelId,
                                        const BufferTable& table,
                                        const std::vector<size_t>& outputCapacity) {
  return bindImpl(request, modelId, table, outputCapacity, /*allocate=*/true);
}

Result<void> BoundRequest::check(const Request& request, uint64_t modelId,
                                 const BufferTable& table) {
  NNHAL_TRY(bindImpl(request, modelId, table, {}, /*allocate=*/false));
  return {};
}

Result<BoundRequest> BoundRequest::bindImpl(const Request& request, uint64_t modelId,
                                            const BufferTable& table,
                                            const std::vector<size_t>& outputCapacity,
                                            bool allocate) {
  BoundRequest bound;
  bound.request_ = request;
  std::vector<std::shared_ptr<DeviceBuffer>> buffers(request.pools.size());
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const auto* token = std::get_if<MemoryDomainToken>(&request.pools[i]);
    if (token == nullptr) continue;
    buffers[i] = table.find(token->value);
    if (!buffers[i]) {
      return invalidArgument(fmt::format(
          "request.pools[{}]: token {} names no live buffer of this device", i, token->value));
    }
  }
  // Roles and locations first (INVALID_ARGUMENT), then content (GENERAL_FAILURE), as the
  // HAL's sample driver orders them.
  struct Use {
    bool input = false;
    bool output = false;
  };
  std::unordered_map<const DeviceBuffer*, Use> uses;
  for (const bool input : {true, false}) {
    const std::vector<RequestArgument>& args = input ? request.inputs : request.outputs;
    for (size_t k = 0; k < args.size(); ++k) {
      const RequestArgument& arg = args[k];
      if (arg.hasNoValue) continue;
      const DeviceBuffer* buffer = buffers[arg.location.poolIndex].get();
      if (buffer == nullptr) continue;
      const std::string name = argumentName(input, k);
      if (arg.location.offset != 0 || arg.location.length != 0) {
        return invalidArgument(fmt::format(
            "{}.location: an argument in a driver-managed buffer (pools[{}]) takes offset 0 and "
            "length 0, not {} and {}",
            name, arg.location.poolIndex, arg.location.offset, arg.location.length));
      }
      if (!buffer->hasRole(modelId, input, static_cast<uint32_t>(k))) {
        return invalidArgument(
            fmt::format("{}: the buffer of token {} was not allocated for {} {} of this prepared "
                        "model",
                        name, buffer->token(), input ? "input" : "output", k));
      }
      Use& use = uses[buffer];
      if (!input && (use.input || use.output)) {
        return invalidArgument(fmt::format(
            "{}: the buffer of token {} is written by this request and also used in another role",
            name, buffer->token()));
      }
      (input ? use.input : use.output) = true;
    }
  }
  for (size_t k = 0; k < request.inputs.size(); ++k) {
    RequestArgument& arg = bound.request_.inputs[k];
    if (arg.hasNoValue || !buffers[arg.location.poolIndex]) continue;
    const DeviceBuffer& buffer = *buffers[arg.location.poolIndex];
    std::shared_ptr<const BufferContent> content = buffer.content();
    if (!content) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  fmt::format("{}: the buffer of token {} is uninitialized", argumentName(true, k),
                              buffer.token()));
    }
    const auto dims = hal::combineDimensions(content->dimensions, arg.dimensions);
    if (!dims) {
      return invalidArgument(fmt::format("{}.dimensions: [{}] conflict with the buffer's [{}]",
                                         argumentName(true, k), fmt::join(arg.dimensions, ", "),
                                         fmt::join(content->dimensions, ", ")));
    }
    arg.dimensions = *dims;
    arg.location = {static_cast<uint32_t>(bound.request_.pools.size()), 0,
                    static_cast<uint32_t>(content->size)};
    bound.request_.pools.emplace_back(
        hal::borrowedPool(content->bytes.get(), std::max<size_t>(content->size, 1), content));
    bound.readContents_.push_back(std::move(content));
  }
  for (size_t k = 0; k < request.outputs.size(); ++k) {
    const RequestArgument& arg = request.outputs[k];
    if (arg.hasNoValue || !buffers[arg.location.poolIndex]) continue;
    std::shared_ptr<DeviceBuffer> buffer = buffers[arg.location.poolIndex];
    const auto dims = hal::combineDimensions(buffer->shape().dimensions, arg.dimensions);
    if (!dims) {
      return invalidArgument(fmt::format("{}.dimensions: [{}] conflict with the buffer's [{}]",
                                         argumentName(false, k), fmt::join(arg.dimensions, ", "),
                                         fmt::join(buffer->shape().dimensions, ", ")));
    }
    size_t capacity = k < outputCapacity.size() ? outputCapacity[k] : 0;
    if (hal::hasFullySpecifiedShape(buffer->shape().type, *dims)) {
      capacity = hal::byteSize(buffer->shape().type, *dims).value_or(0);
    }
    if (!allocate) continue;
    Output output;
    output.index = k;
    output.buffer = std::move(buffer);
    NNHAL_TRY(bound.allocateOutput(output, capacity));
    bound.outputs_.push_back(std::move(output));
  }
  return bound;
}

Result<void> BoundRequest::checkWritten(const Output& output, const std::vector<uint32_t>& dims) {
  const hal::BufferShape& shape = output.buffer->shape();
  const auto combined = hal::combineDimensions(shape.dimensions, dims);
  // The written shape is real: a 0 in it is a zero-sized dimension, not an unknown one.
  const bool rankKnown = !dims.empty() || hal::isScalarType(shape.type);
  if (!combined || *combined != dims || !rankKnown || !hal::byteSize(shape.type, dims)) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                fmt::format("output {} has shape [{}], which the buffer of token {} (dimensions "
                            "[{}]) cannot hold",
                            output.index, fmt::join(dims, ", "), output.buffer->token(),
                            fmt::join(shape.dimensions, ", ")));
  }
  return {};
}

Result<bool> BoundRequest::growForRetry(const std::vector<OutputShape>& shapes) {
  bool grew = false;
  for (size_t k = 0; k < shapes.size(); ++k) {
    if (shapes[k].isSufficient) continue;
    auto it = std::find_if(outputs_.begin(), outputs_.end(),
                           [k](const Output& o) { return o.index == k; });
    if (it == outputs_.end()) return false;  // a client buffer is too small: its error
    NNHAL_TRY(checkWritten(*it, shapes[k].dimensions));
    const size_t needed = *hal::byteSize(it->buffer->shape().type, shapes[k].dimensions);
    if (needed <= it->content->capacity) return false;
    NNHAL_TRY(allocateOutput(*it, needed));
    grew = true;
  }
  return grew;
}

Result<void> BoundRequest::finish(bool succeeded, const std::vector<OutputShape>& shapes) {
  Result<void> written;
  if (succeeded) {
    for (const Output& output : outputs_) {
      const std::vector<uint32_t>& dims = shapes.at(output.index).dimensions;
      written = checkWritten(output, dims);
      if (!written) break;
      const size_t bytes = *hal::byteSize(output.buffer->shape().type, dims);
      if (bytes > output.content->capacity) {
        written = fail(ErrorStatus::GENERAL_FAILURE,
                       fmt::format("output {} wrote {} bytes into {}", output.index, bytes,
                                   output.content->capacity));
        break;
      }
      output.content->size = bytes;
      output.content->dimensions = dims;
    }
  }
  for (const Output& output : outputs_) {
    output.buffer->publish(succeeded && written ? output.content : nullptr);
  }
  return written;
}

}  // namespace nnhal::actors
