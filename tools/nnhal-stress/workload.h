// nnhal-stress/workload.h — the real models a stress test runs, their requests, and one
// execution on any of the four paths.
//
// Models are the .tflite files of a folder that import (tools' TFLite importer); an input
// comes from inputs/<model>__*.input.bin when the folder has one, else random bytes. Every
// (model, sample) has a reference output computed once; stress executions must reproduce it
// bit for bit (the driver is deterministic), which catches corruption under load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nnhal/burst.h"
#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal::stress {

struct Workload {
  std::string name;  ///< file stem
  Model model;
  std::vector<uint32_t> inputBytes;              ///< per model input
  std::vector<uint32_t> outputBytes;             ///< per model output
  std::vector<std::vector<uint8_t>> samples;     ///< whole input sets (inputs concatenated)
  std::vector<std::vector<uint8_t>> references;  ///< outputs concatenated, per sample
};

/// Every model of `folder` that imports, with up to 3 samples each (no reference yet).
/// Errors: GENERAL_FAILURE when none does.
Result<std::vector<Workload>> loadWorkloads(const std::filesystem::path& folder, uint64_t seed);

/// Drops the models `device` cannot prepare, and computes each sample's reference output of
/// the others. Errors: GENERAL_FAILURE when none is left; those of a reference execution.
Result<void> computeReferences(Device& device, std::vector<Workload>& workloads);

enum class Path { kSync, kAsync, kFenced, kBurst };
const char* toString(Path path);

/// One request for `sample` of `workload` over a fresh shared pool: inputs then outputs.
struct SampleRequest {
  Request request;
  Memory pool;
  uint32_t outputOffset = 0;
  uint32_t outputBytes = 0;
  std::vector<uint8_t> outputs() const;
};
SampleRequest makeRequest(const Workload& workload, size_t sample);

/// Runs `request` on `path` (a burst is configured for it when `burst` is null) and returns
/// its outcome.
Result<void> execute(PreparedModel& prepared, Path path, const Request& request,
                     Burst* burst = nullptr);

/// Moves the model's constant pools into mmap_fd pools backed by unlinked files in
/// `directory` (the memory-mapped model load of the MLTS). Errors: GENERAL_FAILURE for file
/// errors.
Result<Model> withFileBackedPools(const Model& model, const std::filesystem::path& directory);

}  // namespace nnhal::stress
