// nnhald/model_dumper.h — nnhald --dump-models DIR: each model a client asks to prepare,
// written for a bug report as a CTS JSON file (the model and its constants; `nnhal cts`
// loads it) and as a Graphviz graph (docs/DEBUGGING.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::daemon {

class ModelDumper {
 public:
  /// Writes into `folder` (created when missing, mode 0700: the models are the clients')
  /// at most `limit` models. Errors: INVALID_ARGUMENT when the folder cannot be created or
  /// is not one.
  static Result<std::unique_ptr<ModelDumper>> open(const std::filesystem::path& folder,
                                                   uint32_t limit);

  /// Writes `model` as model-N-uidU-connC.json and .dot (N counts from 1 over the daemon's
  /// life); the .json is left out for a model the format cannot hold (an extension
  /// operation). Safe to call from several threads at once; failures are logged, never
  /// thrown. Past the limit nothing is written (logged once).
  void write(const Model& model, uint64_t application, uint64_t connection);

  /// Models written so far (or attempted: the count the file names use).
  uint32_t count() const { return next_.load(); }

 private:
  ModelDumper(std::filesystem::path folder, uint32_t limit)
      : folder_(std::move(folder)), limit_(limit) {}

  const std::filesystem::path folder_;
  const uint32_t limit_;
  std::atomic<uint32_t> next_{0};
};

}  // namespace nnhal::daemon
