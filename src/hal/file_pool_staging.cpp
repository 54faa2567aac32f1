#include "hal/file_pool_staging.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "hal/pool_io.h"
#include "hal/process_memory.h"

namespace nnhal::hal {
namespace {

/// Local offsets are kept 64-byte aligned, as the engine's own buffers are.
constexpr uint64_t kAlign = 64;

uint64_t alignUp(uint64_t value) { return (value + kAlign - 1) / kAlign * kAlign; }

const Memory* fileAt(const Request& request, size_t pool) {
  const auto* memory = std::get_if<Memory>(&request.pools[pool]);
  return memory != nullptr && memory->valid() && !isMapped(*memory) ? memory : nullptr;
}

}  // namespace

bool hasFilePools(const Request& request) {
  for (size_t i = 0; i < request.pools.size(); ++i) {
    if (fileAt(request, i) != nullptr) return true;
  }
  return false;
}

Result<FilePoolStaging> FilePoolStaging::plan(Request& request, uint64_t maxBytes) {
  FilePoolStaging staging;
  for (size_t pool = 0; pool < request.pools.size(); ++pool) {
    const Memory* file = fileAt(request, pool);
    if (file == nullptr) continue;
    const Memory original = *file;
    // The arguments in this file, packed one after the other.
    std::vector<std::pair<RequestArgument*, bool>> arguments;  // and whether an output
    uint64_t total = 0;
    for (auto* list : {&request.inputs, &request.outputs}) {
      for (RequestArgument& argument : *list) {
        if (argument.hasNoValue || argument.location.poolIndex != pool) continue;
        arguments.emplace_back(&argument, list == &request.outputs);
        total = alignUp(total) + argument.location.length;
      }
    }
    if ((maxBytes != 0 && total > maxBytes) || total > UINT32_MAX) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "request.pools[" + std::to_string(pool) + "]: the arguments in this file total " +
                      std::to_string(total) + " bytes, more than an execution may stage");
    }
    const size_t size = static_cast<size_t>(std::max<uint64_t>(total, 1));
    // Not zeroed: every byte an argument names is read from the file before the run.
    std::shared_ptr<uint8_t[]> bytes(new (std::nothrow) uint8_t[size]);
    if (bytes == nullptr) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "no memory to stage request.pools[" + std::to_string(pool) + "]");
    }
    uint64_t at = 0;
    for (auto [argument, output] : arguments) {
      at = alignUp(at);
      const DataLocation where = argument->location;
      uint8_t* local = bytes.get() + at;
      // Outputs are read too: what the execution does not write goes back unchanged.
      staging.ranges_.push_back(Range{original, where.offset, local, where.length});
      if (output && where.length > 0) staging.outputs_.push_back(staging.ranges_.back());
      argument->location.offset = static_cast<uint32_t>(at);
      at += where.length;
    }
    request.pools[pool] = writableBorrowedPool(bytes.get(), size, bytes);
    staging.holders_.push_back(std::move(bytes));
  }
  return staging;
}

Result<void> FilePoolStaging::readInputs() const {
  for (const Range& range : ranges_) {
    NNHAL_TRY(readPool(range.file, range.fileOffset, {range.local, range.length}));
  }
  return {};
}

Result<FilePoolStaging> FilePoolStaging::stage(Request& request, uint64_t maxBytes) {
  NNHAL_ASSIGN_OR_RETURN(FilePoolStaging staging, plan(request, maxBytes));
  NNHAL_TRY(staging.readInputs());
  return staging;
}

Result<void> FilePoolStaging::writeBack() const {
  for (const Range& output : outputs_) {
    NNHAL_TRY(writePool(output.file, output.fileOffset, {output.local, output.length}));
  }
  return {};
}

}  // namespace nnhal::hal
