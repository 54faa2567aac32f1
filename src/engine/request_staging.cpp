#include "engine/request_staging.h"

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

void StagedRequest::Free::operator()(uint8_t* bytes) const { std::free(bytes); }

Result<StagedRequest> StagedRequest::stage(const Request& request, uint64_t maxBytes) {
  StagedRequest staged;
  staged.request_ = &request;
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
  auto measure = [&](const std::vector<RequestArgument>& args, const char* what) -> Result<void> {
    for (size_t k = 0; k < args.size(); ++k) {
      if (args[k].hasNoValue) continue;
      NNHAL_ASSIGN_OR_RETURN(const Memory* memory, poolOf(args[k], what, k));
      if (hal::isShared(*memory)) storageBytes += alignUp(args[k].location.length);
    }
    return {};
  };
  NNHAL_TRY(measure(request.inputs, "inputs"));
  NNHAL_TRY(measure(request.outputs, "outputs"));
  if (maxBytes != 0 && storageBytes > maxBytes) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "staging the request's shared memory needs " + std::to_string(storageBytes) +
                    " bytes, more than the " + std::to_string(maxBytes) + " an execution may use");
  }
  staged.stagedBytes_ = storageBytes;
  if (storageBytes > 0) {
    staged.storage_.reset(static_cast<uint8_t*>(std::aligned_alloc(kArenaAlignment, storageBytes)));
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
    if (!hal::isShared(*memory)) {
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
    if (!hal::isShared(*memory)) {
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
