// nnhal/device.h — the driver's device (NN HAL 1.3 IDevice) and the embedded driver.
//
// A Device answers queries (capabilities, supported operations, cache file counts) and
// prepares (compiles) models into PreparedModels, optionally saving them to compilation
// cache files and preparing them again from those files (docs/CACHE_FORMAT.md). The embedded driver
// created by createDevice() runs in the caller's process on its own actor runtime; the remote
// client (nnhal/client.h) implements the same interface over IPC.
//
// Thread safety: every method may be called from any thread, concurrently. Destroying the
// last reference to a Device stops its runtime: new calls are refused, in-flight
// preparations and executions finish first.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "nnhal/buffer.h"
#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/trace.h"
#include "nnhal/types.h"

namespace nnhal {

/// A compilation cache token (types.hal 1.2 CacheToken): 32 bytes chosen by the client.
using CacheToken = std::array<uint8_t, kByteSizeOfCacheToken>;

/// One cache file as IDevice.hal passes it (a hidl_handle): a handle holding exactly one
/// file descriptor. Other counts are a client error the driver reports (load) or tolerates
/// by not saving (save).
using CacheHandle = std::vector<int>;

/// Cache files for prepareModel / prepareModelFromCache (IDevice.hal 1.2+): as many handles
/// as getNumberOfCacheFilesNeeded() says. Descriptors stay owned by the caller (they may be
/// closed once the preparation's callback ran); the driver duplicates what it keeps. Files
/// may have any size and descriptors any offset: the driver truncates before writing and
/// reads from byte 0. Saving needs read-write descriptors, loading readable ones.
struct CacheFiles {
  std::vector<CacheHandle> modelCache;  ///< model cache files (security-sensitive content)
  std::vector<CacheHandle> dataCache;   ///< data cache files (constants, packed weights)
  CacheToken token{};                   ///< identifies the model and its options
};

/// Arguments of prepareModel besides the Model (IDevice::prepareModel_1_3).
struct PrepareOptions {
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  Priority priority = Priority::MEDIUM;
  /// Steady-clock time by which preparation must be done; MISSED_DEADLINE_TRANSIENT after.
  OptionalTimePoint deadline;
  /// Compilation caching: when present (and valid), the prepared model is also saved to
  /// these files under their token before the callback runs. Faults here never fail the
  /// preparation: a wrong number of files or descriptors, a descriptor without read-write
  /// access, no state directory, or an I/O error only mean that nothing is saved.
  std::optional<CacheFiles> cache;
};

/// Completion of an asynchronous preparation (IPreparedModelCallback::notify_1_3). Called
/// exactly once, on a driver thread.
using PrepareCallback = std::move_only_function<void(Result<std::shared_ptr<PreparedModel>>)>;

/// Number of cache files a preparation with caching uses
/// (IDevice::getNumberOfCacheFilesNeeded); each at most kMaxNumberOfCacheFiles.
struct NumberOfCacheFiles {
  uint32_t modelCache = 0;
  uint32_t dataCache = 0;
};

/// Whether a device caches compilations, and why not. The HAL says it with
/// getNumberOfCacheFilesNeeded alone: (0, 0) means "no caching", and a runtime that sees it
/// never passes cache files nor calls prepareModelFromCache (IDevice.hal 1.2). nnhal adds the
/// reason, for `nnhal info` and for logs.
struct CompilationCaching {
  /// True exactly when getNumberOfCacheFilesNeeded() is not (0, 0): saving to and loading
  /// from the files it asks for work.
  bool available = false;
  /// Why caching is off ("" when available), e.g. "no state directory".
  std::string reason;
};

class DaemonConnection;

class Device {
 public:
  virtual ~Device() = default;

  /// Driver name, e.g. "nnhal-cpu".
  virtual std::string getName() const = 0;
  /// Version string of the driver; a change invalidates compilation caches.
  virtual std::string getVersionString() const = 0;
  virtual DeviceType getType() const = 0;
  /// Performance relative to the CPU reference; measured by bench/, see docs.
  virtual Capabilities getCapabilities() const = 0;
  virtual std::vector<Extension> getSupportedExtensions() const = 0;
  /// (0, 0) whenever the device cannot cache compilations (no state directory, one it cannot
  /// write, caching turned off): the client then passes no cache files. Otherwise the files
  /// a preparation saves to and loads from, which then work.
  virtual NumberOfCacheFiles getNumberOfCacheFilesNeeded() const = 0;
  /// Whether compilation caching is available, with the reason when not. The default derives
  /// it from getNumberOfCacheFilesNeeded(), without a reason beyond that.
  virtual CompilationCaching getCompilationCaching() const;

  /// One flag per operation of `model.main`, in order: whether this driver can run it
  /// (IDevice::getSupportedOperations_1_3). Errors: INVALID_ARGUMENT if the model does not
  /// validate.
  virtual Result<std::vector<bool>> getSupportedOperations(const Model& model) const = 0;

  /// Like getSupportedOperations, plus for each unsupported operation the reason (empty
  /// string for supported ones).
  virtual Result<std::vector<std::string>> explainSupportedOperations(const Model& model) const = 0;

  /// Starts compiling `model` and returns at once (IDevice::prepareModel_1_3). The returned
  /// status reports argument validation only: INVALID_ARGUMENT (a model that does not
  /// validate, or a bad option) or DEVICE_UNAVAILABLE (shutting down); in those cases the
  /// callback is also called once with the same error before this returns. Otherwise the
  /// callback receives the PreparedModel, or INVALID_ARGUMENT for a model with unsupported
  /// operations, MISSED_DEADLINE_TRANSIENT, GENERAL_FAILURE.
  virtual ErrorStatus prepareModel(Model model, const PrepareOptions& options,
                                   PrepareCallback callback) = 0;

  /// Blocking convenience form of prepareModel: waits for the callback.
  Result<std::shared_ptr<PreparedModel>> prepareModel(Model model,
                                                      const PrepareOptions& options = {});

  /// Prepares a model from cache files saved by an earlier prepareModel with the same token
  /// (IDevice::prepareModelFromCache_1_3), without the Model. Returns at once: the returned
  /// status reports argument checks only, INVALID_ARGUMENT for a number of model or data
  /// cache handles different from getNumberOfCacheFilesNeeded() or a handle without exactly
  /// one descriptor, DEVICE_UNAVAILABLE when shutting down (the callback also receives that
  /// error before this returns). Otherwise the callback receives the PreparedModel or
  /// GENERAL_FAILURE for everything wrong with the cache: no state directory, a descriptor
  /// that is not readable, a token the driver did not save, a model cache whose SHA-256 is
  /// not the one recorded for the token (changed, truncated, extended, another model's), a
  /// wrong magic, format or driver version, malformed content; or
  /// MISSED_DEADLINE_TRANSIENT. The data cache is not authenticated: damage there can
  /// change the results but nothing else.
  virtual ErrorStatus prepareModelFromCache(const CacheFiles& cache, OptionalTimePoint deadline,
                                            PrepareCallback callback) = 0;

  /// Blocking convenience form of prepareModelFromCache: waits for the callback.
  Result<std::shared_ptr<PreparedModel>> prepareModelFromCache(const CacheFiles& cache,
                                                               OptionalTimePoint deadline = {});

  /// Allocates a driver-managed buffer for the given roles (IDevice::allocate, HAL 1.3;
  /// nnhal/buffer.h). `preparedModels` must be models this device prepared; each role names
  /// one of them by index and one of its inputs (inputRoles) or outputs (outputRoles).
  /// Errors: INVALID_ARGUMENT when there is no model or no role, a model is null or not this
  /// device's, a role's model or io index is out of range, a frequency is outside (0, 1], a
  /// role is given twice, the roles' operands differ in type, scale, zero point or
  /// per-channel quantization, or the roles' and the descriptor's ranks or dimensions
  /// conflict (a scalar role takes no dimensions); GENERAL_FAILURE for an operand type the
  /// driver cannot keep in a buffer (extension types); DEVICE_UNAVAILABLE when shutting down
  /// or, through nnhald, when the daemon is gone.
  virtual Result<AllocatedBuffer> allocate(
      const BufferDesc& desc, const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
      const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles) = 0;

  /// The nnhald connection this device reaches its driver through (a Device from
  /// nnhal::connect, nnhal/client.h), or null for an embedded driver.
  virtual const DaemonConnection* daemonConnection() const noexcept { return nullptr; }
};

/// How the driver's compiling threads share the CPU with everything else.
enum class PreparationPolicy : uint8_t {
  /// SCHED_IDLE: compilations run only on cores nothing else wants, so they never slow an
  /// execution down (measured: 1.00-1.05x the latency alone while 5 clients compile). One
  /// that other threads keep off the cores for 0.5 s (a machine kept busy by other programs,
  /// another application's executions that started after it), with no execution of its own
  /// application running meanwhile, runs at the process's priority for the rest of its run. That
  /// needs CAP_SYS_NICE or an RLIMIT_NICE of 20 (systemd: LimitNICE=20); without either, kIdle
  /// is applied as kNice, with a line in the log (info) (docs/QOS.md).
  kIdle,
  /// Nice value 10: an execution sharing a core with a compilation gets ~90% of it
  /// (measured: 1.2-1.4x the latency alone); compilations still progress on a busy machine,
  /// and get the process's priority back as kIdle's do where the OS allows it.
  kNice,
  /// As the rest of the process.
  kNormal,
};

/// "idle", "nice", "normal".
std::string_view toString(PreparationPolicy policy);

/// Options of the embedded driver.
struct DeviceOptions {
  /// Preparations and executions that run at once (the scheduler's slots; synchronous
  /// executions and bursts take one too, on their caller's thread); 0 = one per hardware
  /// thread, at least 2. When more is pending, HIGH priority runs before MEDIUM before LOW,
  /// and a running lower-priority execution pauses between operations while higher-priority
  /// work runs; a queued job runs after at most 8 newer ones (docs/QOS.md). The embedded
  /// driver is one application; through nnhald each client uid is one, and applications
  /// share the slots fairly, priorities never crossing between them.
  unsigned runtimeThreads = 0;
  /// Of those, the preparations (compilations, loads from cache) that run at once; 0 = half
  /// the hardware threads, at least 1. Compiling is background work: it never takes every
  /// core, so an execution always finds one (docs/QOS.md).
  unsigned preparationThreads = 0;
  /// How the threads that run preparations share a core with other threads (docs/QOS.md).
  PreparationPolicy preparationPolicy = PreparationPolicy::kIdle;
  /// Threads TBB may use inside kernels; 0 = all hardware threads.
  unsigned kernelThreads = 0;
  /// Directory of the driver's own persistent state (the compilation cache token map,
  /// created if missing); empty = none. Without one, or with one the driver cannot create,
  /// lock or write, compilation caching is off: getNumberOfCacheFilesNeeded() is (0, 0),
  /// cache files given anyway are not saved to, and prepareModelFromCache fails with
  /// GENERAL_FAILURE.
  std::filesystem::path stateDirectory;
  /// Compilation caching; false turns it off as if there were no state directory (the state
  /// directory still holds the calibration, docs/CAPABILITIES.md).
  bool compilationCaching = true;
  /// Compilation caching: also authenticate the data cache (its SHA-256 is recorded in the
  /// model cache at save and checked at load). Without it, a tampered data cache can change
  /// results (never memory safety); with it, loading costs one SHA-256 pass over the data
  /// cache. Caches saved without it do not load with it.
  bool authenticateDataCache = false;
  /// Largest data cache file prepareModelFromCache reads, in bytes; a larger one fails the
  /// preparation (GENERAL_FAILURE) before anything is read. nnhald lowers it (1 GiB).
  uint64_t maxDataCacheBytes = uint64_t{16} << 30;
  /// Memory one execution may use, in bytes: a model whose temporaries need a larger arena
  /// fails its preparation (RESOURCE_EXHAUSTED_PERSISTENT), and an execution that would
  /// allocate more as it runs (dynamic shapes, control flow, staged shared memory) fails with
  /// RESOURCE_EXHAUSTED_TRANSIENT. 0 = no limit. nnhald sets 2 GiB.
  uint64_t maxExecutionBytes = 0;
  /// Replaces the driver version string (getVersionString, cache headers, token map) when
  /// not empty. For tests of version changes; a different version invalidates every cache.
  std::string versionOverride;
  /// Memory every prepared model's (and burst's) execution arenas may hold together, in
  /// bytes; 0 = no limit. Arenas are kept between executions so that they allocate nothing;
  /// beyond this, the arenas nobody uses are freed first (those of the application holding
  /// the most first), and an execution that still finds no room fails with
  /// RESOURCE_EXHAUSTED_TRANSIENT. nnhald sets 8 GiB.
  uint64_t maxArenaBytes = 0;
  /// Free arenas unused for this long are freed (an idle prepared model or burst then holds
  /// none; its next execution allocates again); 0 = kept until the model is released. nnhald
  /// sets 30 s.
  std::chrono::milliseconds arenaIdleRelease{0};
  /// Driver-managed buffers (allocate) alive at once; RESOURCE_EXHAUSTED_TRANSIENT beyond.
  uint32_t maxBuffers = 4096;
  /// Asynchronous executions (execute, executeFenced once its fences signalled) of one
  /// prepared model that may wait for a driver thread; execute returns
  /// RESOURCE_EXHAUSTED_TRANSIENT beyond (try again later).
  uint32_t maxQueuedExecutions = 1024;
  /// When set, the driver records spans of its preparations, compilations, cache I/O,
  /// executions and their operations here (nnhal/trace.h); null = no tracing.
  std::shared_ptr<TraceRecorder> trace{};
};

/// Creates the embedded CPU driver. Errors: GENERAL_FAILURE if the runtime cannot start.
Result<std::shared_ptr<Device>> createDevice(const DeviceOptions& options = {});

/// The instruction-set level of the embedded driver's CPU kernels in this process. nnhal is
/// built for baseline x86-64 and picks its optimized kernels at run time, once per process:
/// the highest level the CPU supports, unless the environment variable NNHAL_ISA names a
/// lower one (for tests). Levels, lowest first: "scalar", "avx2" (AVX2 + FMA), "avx512"
/// (AVX-512 F/BW/VL/DQ), "vnni" (plus AVX-512 VNNI). Compilation caches record the level and
/// are not loaded at another one.
struct KernelIsa {
  std::string active;     ///< the level in use
  std::string supported;  ///< the highest level this CPU supports
  std::string note;       ///< why NNHAL_ISA was not followed ("" when it was, or is unset)
};
KernelIsa kernelIsa();

/// Where the getCapabilities() numbers of an embedded driver created with `options` come
/// from. `nnhal calibrate` measures them and writes capabilities.json in the state
/// directory (docs/CAPABILITIES.md); a driver of the same version at the same kernel level
/// reports them, identically after every restart. Without a calibration that applies, every
/// PerformanceInfo is the documented default 1.0 (the reference CPU path itself).
struct CapabilitiesSource {
  bool measured = false;
  /// measured: when and at which level; otherwise why the defaults apply.
  std::string detail;
};
CapabilitiesSource capabilitiesSource(const DeviceOptions& options);

}  // namespace nnhal
