#include "nnhal-stress/workload.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>

#include "nnhal/tflite_import.h"
#include "tools/common/tensor_io.h"

namespace nnhal::stress {

const char* toString(Path path) {
  switch (path) {
    case Path::kSync:
      return "sync";
    case Path::kAsync:
      return "async";
    case Path::kFenced:
      return "fenced";
    case Path::kBurst:
      return "burst";
  }
  return "?";
}

Result<std::vector<Workload>> loadWorkloads(const std::filesystem::path& folder, uint64_t seed) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".tflite") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  std::mt19937_64 random(seed);
  std::vector<Workload> workloads;
  for (const auto& file : files) {
    auto imported = importTfliteFile(file);
    if (!imported) continue;  // models the importer cannot take yet (issue 16)
    Workload w;
    w.name = file.stem().string();
    w.model = std::move(imported->model);
    size_t total = 0;
    for (const auto& in : imported->inputs) {
      w.inputBytes.push_back(static_cast<uint32_t>(tools::tensorBytes(in)));
      total += w.inputBytes.back();
    }
    for (const auto& out : imported->outputs) {
      w.outputBytes.push_back(static_cast<uint32_t>(tools::tensorBytes(out)));
    }
    std::vector<std::filesystem::path> inputs;
    for (const auto& entry : std::filesystem::directory_iterator(folder / "inputs", ec)) {
      const std::string n = entry.path().filename().string();
      if (n.rfind(w.name + "__", 0) == 0 && n.ends_with(".input.bin")) {
        inputs.push_back(entry.path());
      }
    }
    std::sort(inputs.begin(), inputs.end());
    for (const auto& path : inputs) {
      if (w.samples.size() >= 3) break;
      auto bytes = tools::readFile(path);
      if (bytes && bytes->size() == total) w.samples.push_back(std::move(*bytes));
    }
    while (w.samples.size() < 2) {
      std::vector<uint8_t> bytes(total);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(random());
      w.samples.push_back(std::move(bytes));
    }
    workloads.push_back(std::move(w));
  }
  if (workloads.empty()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "no model of " + folder.string() + " imports");
  }
  return workloads;
}

std::vector<uint8_t> SampleRequest::outputs() const {
  return {pool.data() + outputOffset, pool.data() + outputOffset + outputBytes};
}

SampleRequest makeRequest(const Workload& w, size_t sample) {
  const std::vector<uint8_t>& in = w.samples[sample];
  SampleRequest r;
  r.outputOffset = static_cast<uint32_t>((in.size() + 63) / 64 * 64);
  for (uint32_t bytes : w.outputBytes) r.outputBytes += bytes;
  r.pool = *Memory::create(r.outputOffset + r.outputBytes + 1);
  std::memcpy(r.pool.data(), in.data(), in.size());
  r.request.pools = {r.pool};
  uint32_t at = 0;
  for (uint32_t bytes : w.inputBytes) {
    r.request.inputs.push_back({false, {0, at, bytes}, {}});
    at += bytes;
  }
  at = r.outputOffset;
  for (uint32_t bytes : w.outputBytes) {
    r.request.outputs.push_back({false, {0, at, bytes}, {}});
    at += bytes;
  }
  return r;
}

Result<void> execute(PreparedModel& prepared, Path path, const Request& request, Burst* burst) {
  switch (path) {
    case Path::kSync: {
      NNHAL_TRY(prepared.executeSynchronously(request));
      return {};
    }
    case Path::kAsync: {
      std::promise<Result<ExecutionResult>> done;
      auto future = done.get_future();
      prepared.execute(request, {},
                       [&done](Result<ExecutionResult> r) { done.set_value(std::move(r)); });
      NNHAL_TRY(future.get());
      return {};
    }
    case Path::kFenced: {
      NNHAL_ASSIGN_OR_RETURN(FencedExecutionResult fenced, prepared.executeFenced(request, {}, {}));
      NNHAL_ASSIGN_OR_RETURN(FencedExecutionInfo info, fenced.callback->getExecutionInfo());
      if (info.status != ErrorStatus::NONE) return fail(info.status, "fenced execution failed");
      return {};
    }
    case Path::kBurst: {
      std::shared_ptr<Burst> own;
      if (burst == nullptr) {
        NNHAL_ASSIGN_OR_RETURN(own, prepared.configureExecutionBurst());
        burst = own.get();
      }
      NNHAL_TRY(burst->execute(request, MeasureTiming::NO));
      return {};
    }
  }
  return {};
}

Result<void> computeReferences(Device& device, std::vector<Workload>& workloads) {
  std::vector<Workload> usable;
  for (Workload& w : workloads) {
    auto prepared = device.prepareModel(w.model);
    if (!prepared) continue;  // imports, but the driver cannot run it yet (issue 16)
    w.references.clear();
    for (size_t s = 0; s < w.samples.size(); ++s) {
      SampleRequest r = makeRequest(w, s);
      NNHAL_TRY(execute(**prepared, Path::kSync, r.request));
      w.references.push_back(r.outputs());
    }
    usable.push_back(std::move(w));
  }
  workloads = std::move(usable);
  if (workloads.empty()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "the driver prepares none of the models");
  }
  return {};
}

Result<Model> withFileBackedPools(const Model& model, const std::filesystem::path& directory) {
  Model copy = model;
  for (Memory& pool : copy.pools) {
    const std::string path = (directory / "constants-XXXXXX").string();
    std::vector<char> name(path.begin(), path.end());
    name.push_back('\0');
    const int fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) return fail(ErrorStatus::GENERAL_FAILURE, "cannot create a constants file");
    ::unlink(name.data());  // gone with the last descriptor
    const uint8_t* bytes = pool.data();
    size_t left = pool.size();
    bool ok = true;
    while (ok && left > 0) {
      const ssize_t n = ::write(fd, bytes, left);
      ok = n > 0;
      if (ok) {
        bytes += n;
        left -= static_cast<size_t>(n);
      }
    }
    auto mapped = ok ? Memory::fromFd(fd, pool.size(), 0, MemoryKind::MMAP_FD, false)
                     : Result<Memory>(fail(ErrorStatus::GENERAL_FAILURE, "write failed"));
    ::close(fd);
    if (!mapped) return std::unexpected(mapped.error());
    pool = *mapped;
  }
  return copy;
}

}  // namespace nnhal::stress
