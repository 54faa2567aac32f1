// nnhal-soak/load.h — the mixed load a soak keeps on nnhald.
//
// --clients threads, each a client that joins (connects, prepares every model: compiled, or
// loaded from its compilation cache once one was saved), runs a few hundred executions on
// random models, samples and paths (sync, async, fenced, burst) while checking every output
// against the reference, then leaves (disconnects, dropping everything it held) and joins
// again. One more thread compiles a random model every second or so, alternating without and
// with the cache. Every call is timed; a call that has not returned for --hang-timeout is a
// hang (stuckCall).
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nnhal-soak/samples.h"
#include "nnhal-stress/workload.h"

namespace nnhal::soak {

struct LoadOptions {
  std::filesystem::path socket;
  std::filesystem::path cacheDirectory;  ///< the clients' cache files (one pair per model)
  /// Whether clients save to and load from cache files: only when the daemon reports that
  /// it needs some (getNumberOfCacheFilesNeeded is not (0, 0)).
  bool useCache = true;
  unsigned clients = 4;
  uint64_t seed = 1;
};

class Load {
 public:
  Load(LoadOptions options, std::vector<stress::Workload> workloads, Recorder& recorder);
  ~Load();  ///< stop()s and joins
  Load(const Load&) = delete;
  Load& operator=(const Load&) = delete;

  void start();
  /// Asks every thread to finish its current call and stop, and joins them; false (nothing
  /// joined) when a call is still stuck 5 s later. Such a Load must not be destroyed (its
  /// destructor would wait for the call): the soak ends the process instead.
  bool stop();
  /// "client 2: sync execution of mobilenet_v1 running for 31.0 s" when some call has been
  /// running longer than `limit`.
  std::optional<std::string> stuckCall(std::chrono::milliseconds limit) const;

 private:
  struct Slot {
    std::atomic<int64_t> callStart{0};  ///< steady-clock ns of the running call, 0 = none
    std::atomic<const char*> what{""};
    std::atomic<size_t> model{0};
  };
  void runClient(unsigned index);
  void runCompiler();
  template <typename Fn>
  auto timed(Slot& slot, const char* what, size_t model, Fn&& call);

  LoadOptions options_;
  std::vector<stress::Workload> workloads_;
  Recorder& recorder_;
  std::atomic<bool> stopping_{false};
  std::vector<Slot> slots_;  ///< one per client, then the compiler
  std::vector<std::thread> threads_;
};

}  // namespace nnhal::soak
