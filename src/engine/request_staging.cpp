#include "engine/request_staging.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <variant>

#include "engine/execution_plan.h"
#include "hal/pool_io.h"

namespace nnhal::engine {
namespace {

size_t alignUp(size_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

}  // namespace

StagingPool::~StagingPool() {
  for (const Kept& kept : kept_) std::free(kept.bytes);
}

uint8_t* StagingPool::acquire(size_t bytes, size_t& capacity) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // The smallest kept buffer that is large enough.
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->capacity >= bytes && (best == kept_.end() || it->capacity < best->capacity))
        best = it;
    }
    if (best != kept_.end()) {
      uint8_t* buffer = best->bytes;
      capacity = best->capacity;
      kept_.erase(best);
      return buffer;
    }
  }
  capacity = alignUp(bytes);
  return static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, capacity));
}

void StagingPool::release(uint8_t* buffer, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.size() < kKept) {
    kept_.push_back({buffer, capacity});
    return;
  }
  // Full: keep the larger buffers.
  auto smallest = std::min_element(kept_.begin(), kept_.end(), [](const Kept& a, const Kept& b) {
    return a.capacity < b.capacity;
  });
  if (smallest->capacity < capacity)
    std::swap(smallest->bytes, buffer), std::swap(smallest->capacity, capacity);
  std::free(buffer);
}

void StagedRequest::Free::operator()(uint8_t* bytes) const {
  if (pool != nullptr) {
    pool->release(bytes, capacity);
  } else {
    std::free(bytes);
  }
}

Result<StagedRequest> StagedRequest::stage(const Request& request, uint64_t maxBytes,
                                           StagingPool* pool, const InPlaceArguments* inPlace) {
  StagedRequest staged;
  staged.request_ = &request;
  // Staged: a shared pool, unless the plan lets the kernels use this argument where it lies,
  // the pool allows it, and it starts on the alignment staged and arena operands have (the
  // kernels' vector loads may rely on it).
  auto mustStage = [&](const Memory& memory, const RequestArgument& arg, bool input, size_t k) {
    if (!hal::isShared(memory)) return false;
    if (inPlace == nullptr) return true;
    const std::vector<bool>& plain = input ? inPlace->inputs : inPlace->outputs;
    const auto address = reinterpret_cast<uintptr_t>(memory.data()) + arg.location.offset;
    return !(k < plain.size() && plain[k] && address % kArenaAlignment == 0 &&
             hal::usableInPlace(memory));
  };
  // First pass: which arguments are staged, and how many bytes they need.
  size_t storageBytes = 0;
  auto poolOf = [&](const RequestArgument& arg, const char* what,
                    size_t k) -> Result<const Memory*> {
    const auto* memory = std::get_if<Memory>(&request.pools[arg.location.poolIndex]);
    if (memory == nullptr) {
      return invalidArgument(std::string(what) + "[" + std::to_string(k) +
                             "]: memory domain tokens are not supported yet");
    }
    return memory;
  };
  auto measure = [&](const std::vector<RequestArgument>& args, bool input) -> Result<void> {
    for (size_t k = 0; k < args.size(); ++k) {
      if (args[k].hasNoValue) continue;
      NNHAL_ASSIGN_OR_RETURN(const Memory* memory,
                             poolOf(args[k], input ? "inputs" : "outputs", k));
      if (mustStage(*memory, args[k], input, k)) storageBytes += alignUp(args[k].location.length);
    }
    return {};
  };
  NNHAL_TRY(measure(request.inputs, true));
  NNHAL_TRY(measure(request.outputs, false));
  if (maxBytes != 0 && storageBytes > maxBytes) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "staging the request's shared memory needs " + std::to_string(storageBytes) +
                    " bytes, more than the " + std::to_string(maxBytes) + " an execution may use");
  }
  staged.stagedBytes_ = storageBytes;
  if (storageBytes > 0) {
    size_t capacity = storageBytes;
    uint8_t* buffer =
        pool != nullptr ? pool->acquire(storageBytes, capacity)
                        : static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, storageBytes));
    staged.storage_ = std::unique_ptr<uint8_t, Free>(buffer, Free{pool, capacity});
    if (!staged.storage_) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "cannot allocate " + std::to_string(storageBytes) +
                      " bytes to stage the request's shared memory");
    }
  }
  uint8_t* next = staged.storage_.get();
  staged.inputs_.assign(request.inputs.size(), nullptr);
  for (size_t k = 0; k < request.inputs.size(); ++k) {
    const RequestArgument& arg = request.inputs[k];
    if (arg.hasNoValue) continue;
    const Memory* memory = *poolOf(arg, "inputs", k);
    if (!mustStage(*memory, arg, true, k)) {
      staged.inputs_[k] = memory->data() + arg.location.offset;
      continue;
    }
    auto read =
        hal::readPool(*memory, arg.location.offset, std::span<uint8_t>(next, arg.location.length));
    if (!read) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "inputs[" + std::to_string(k) + "]: " + read.error().message);
    }
    staged.inputs_[k] = next;
    next += alignUp(arg.location.length);
  }
  staged.outputs_.assign(request.outputs.size(), nullptr);
  staged.stagedOutputs_.assign(request.outputs.size(), Staged{});
  for (size_t k = 0; k < request.outputs.size(); ++k) {
    const RequestArgument& arg = request.outputs[k];
    if (arg.hasNoValue) continue;
    const Memory* memory = *poolOf(arg, "outputs", k);
    if (!mustStage(*memory, arg, false, k)) {
      staged.outputs_[k] = memory->data() + arg.location.offset;
      continue;
    }
    staged.outputs_[k] = next;
    staged.stagedOutputs_[k] = Staged{memory, arg.location.offset};
    next += alignUp(arg.location.length);
  }
  return staged;
}

Result<void> StagedRequest::commitOutput(size_t k, size_t bytes) const {
  const Staged& staged = stagedOutputs_[k];
  if (staged.pool == nullptr || bytes == 0) return {};
  auto written =
      hal::writePool(*staged.pool, staged.offset, std::span<const uint8_t>(outputs_[k], bytes));
  if (!written) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "outputs[" + std::to_string(k) + "]: " + written.error().message);
  }
  return {};
}

}  // namespace nnhal::engine
