// backend/backend.h — the device seam: what a device *is*, below what every device *gets*.
//
// A Backend is one compute engine (the CPU engine, a GPU, an NPU, a test double). The HAL
// plumbing above it (actors/: validation, compilation caching and its security rules, the
// token map, scheduling and QoS, memory domains and roles, bursts, fenced execution, timing,
// tracing; ipc/: nnhald) is written once and drives any Backend through this interface only.
// docs/ARCHITECTURE.md, "How to add a device", walks through the CPU backend as the example.
//
// What the plumbing guarantees a backend:
//  - every Model it is given passed hal::validateModel (operand and operation rules of the
//    HAL, the signature table); every Request passed hal::validateRequest against the
//    CompiledModel's model(), its driver-managed buffers already resolved to memory;
//  - compile() and execute() run on the scheduler's threads while holding a slot, with a
//    YieldPoint (engine/yield_point.h) to call between steps: the plumbing pauses or cancels
//    there, so a backend that calls it often keeps priorities and fair share precise;
//  - cache files are read, authenticated against the token map and written by the plumbing;
//    a backend only encodes its compiled model into the two byte images and decodes them.
//
// What a backend promises:
//  - no exception crosses the interface except std::bad_alloc (the plumbing turns it into
//    RESOURCE_EXHAUSTED_TRANSIENT); every other failure is an Error with a message;
//  - checkModel() refuses at preparation everything compile() would refuse for the model's
//    content (so a refusal is the launch status, as IDevice::prepareModel_1_3 requires);
//  - decoding a cache never trusts the data image beyond its bounds (docs/CACHE_FORMAT.md).
//
// Thread safety: every method may be called from any thread, concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/cache_format.h"
#include "cache/digest.h"
#include "cache/filling_buffer.h"
#include "engine/yield_point.h"
#include "hal/application.h"
#include "nnhal/device.h"
#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {
class ArenaBudget;
}

namespace nnhal::backend {

/// How the plumbing writes and reads cache files for this device: the version string the
/// images carry (cache::cacheVersion of the device's version) and the authentication option.
struct CacheSettings {
  std::string version;
  cache::CacheOptions options;
};

struct CompileOptions {
  /// The preparation's deadline: a compile that passes it may stop with
  /// MISSED_DEADLINE_TRANSIENT.
  OptionalTimePoint deadline;
  /// Called between steps (may be null).
  engine::YieldPoint* yield = nullptr;
  /// When set, compile() also encodes the cache images with these settings.
  const CacheSettings* cache = nullptr;
};

/// One execution's limits and hooks.
struct RunOptions {
  OptionalTimePoint deadline;
  /// Longest time one WHILE loop may run (ExecuteOptions::loopTimeout).
  std::chrono::nanoseconds loopTimeout{0};
  /// When set and true, the run stops before its next step (DEVICE_UNAVAILABLE).
  const std::atomic<bool>* cancelled = nullptr;
  /// Bytes the run may allocate besides its ExecutionMemory (0 = no limit); beyond it
  /// RESOURCE_EXHAUSTED_TRANSIENT.
  uint64_t maxBytes = 0;
  /// Called between steps (may be null).
  engine::YieldPoint* yield = nullptr;
  /// When set, one OperationTiming per operation run is appended (times in ns from the start).
  ExecutionProfile* profile = nullptr;
  /// PrepareOptions::preference of the model (how wide a run may go).
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  /// When set, a backend that measures its device's own time (a GPU's timestamps: the time
  /// from the first dispatch's start to the last one's end) writes it here after a run;
  /// others leave it as it is, and the plumbing reports how long execute() took.
  std::chrono::nanoseconds* timeOnDevice = nullptr;
};

/// Memory the executions of one compiled model reuse (arenas, staging): one per prepared
/// model, shared by its concurrent executions, and one per burst. Thread-safe.
class ExecutionMemory {
 public:
  virtual ~ExecutionMemory() = default;
};

/// What a backend made of a model: opaque to the plumbing but for these questions.
class CompiledModel {
 public:
  virtual ~CompiledModel() = default;

  /// The model it runs: what requests are validated against and memory-domain roles name.
  virtual const Model& model() const = 0;
  /// The largest memory one execution needs besides the request's own (bytes); preparation
  /// fails with RESOURCE_EXHAUSTED_PERSISTENT when it exceeds DeviceOptions::maxExecutionBytes.
  virtual uint64_t executionBytes() const = 0;
  /// True when an execution's work does not depend on its data (static shapes, no control
  /// flow): the plumbing may then predict its length from earlier runs.
  virtual bool dataIndependent() const = 0;
  /// Bytes of each main output whose shape is known at compile time (0 where it is not).
  virtual std::vector<size_t> outputBytes() const = 0;
  /// Memory for executions charged to `application` on `budget` (may be null: no budget).
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT.
  virtual Result<std::unique_ptr<ExecutionMemory>> createMemory(
      engine::ArenaBudget* budget, hal::ApplicationId application) const = 0;
  /// Runs `request` with memory from `memory` (one this model's createMemory made: the
  /// plumbing never mixes them up). Returns
  /// the main outputs' shapes. Errors: the execution's (OUTPUT_INSUFFICIENT_SIZE with the
  /// shapes, MISSED_DEADLINE_*, RESOURCE_EXHAUSTED_*, DEVICE_UNAVAILABLE when cancelled,
  /// GENERAL_FAILURE).
  virtual Result<std::vector<OutputShape>> execute(const Request& request, ExecutionMemory& memory,
                                                   const RunOptions& options) const = 0;
  /// The name of an operation of this model for traces ("CONV_2D", an extension's name).
  virtual std::string operationName(OperationType type) const = 0;
};

/// What compile() returns: the compiled model and, when asked, its cache images (or why they
/// could not be made: caching is best effort, IDevice.hal never fails a preparation for it).
struct Compiled {
  std::unique_ptr<CompiledModel> model;
  std::optional<cache::EncodedCache> cache;
  std::string cacheSkipped;  ///< why `cache` is empty although asked
};

/// The cache images the plumbing read: the model image authenticated against the token map
/// (its SHA-256 is `modelDigest`), the data image untrusted and possibly still filling.
struct CacheImages {
  std::span<const uint8_t> model;
  cache::Digest modelDigest{};
  std::shared_ptr<const cache::FillingBuffer> data;
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// IDevice::getName: unique among the devices of one process.
  virtual std::string name() const = 0;
  /// IDevice::getVersionString; caches made by another version are never loaded.
  virtual std::string version() const = 0;
  virtual DeviceType type() const = 0;
  virtual Capabilities capabilities() const = 0;
  virtual std::vector<Extension> supportedExtensions() const = 0;

  /// Everything compile() would refuse in a validated model: INVALID_ARGUMENT naming the
  /// operation and the reason.
  virtual Result<void> checkModel(const Model& model) const = 0;
  /// Per operation of model.main, "" when supported, else why not. Errors: INVALID_ARGUMENT
  /// when the model is invalid for this backend (as getSupportedOperations must say).
  virtual Result<std::vector<std::string>> explainSupport(const Model& model) const = 0;

  /// Compiles a model that passed checkModel. Errors: MISSED_DEADLINE_TRANSIENT,
  /// RESOURCE_EXHAUSTED_*, GENERAL_FAILURE.
  virtual Result<Compiled> compile(Model model, const CompileOptions& options) const = 0;
  /// Rebuilds a compiled model from cache images this backend encoded with `settings`
  /// (returned only once the data image is complete). Errors: GENERAL_FAILURE for anything
  /// wrong with the images, RESOURCE_EXHAUSTED_TRANSIENT.
  virtual Result<std::unique_ptr<CompiledModel>> compileFromCache(
      const CacheImages& images, const CacheSettings& settings) const = 0;
  /// The cache images of `model`, one this backend compiled (PreparedModelImpl::updateCache).
  /// Errors: GENERAL_FAILURE.
  virtual Result<cache::EncodedCache> encodeCache(const CompiledModel& model,
                                                  const CacheSettings& settings) const = 0;
};

}  // namespace nnhal::backend
