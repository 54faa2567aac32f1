#include "nnhal-stress/stress_tests.h"

namespace nnhal::stress {

const char* toString(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSuccess:
      return "SUCCESS";
    case Verdict::kFailure:
      return "FAILURE";
    case Verdict::kHang:
      return "HANG";
    case Verdict::kCrash:
      return "CRASH";
  }
  return "?";
}

const std::vector<StressTestInfo>& allStressTests() {
  static const std::vector<StressTestInfo> tests = {
      {"parallel-inference",
       "--threads threads (own connections) run the models on random paths; outputs must match "
       "the reference bit for bit",
       parallelInference},
      {"client-early-termination",
       "--processes clients compile, execute on every path and hold device buffers; one is "
       "killed with SIGKILL every ~150 ms, then a new client must be served",
       clientEarlyTermination},
      {"multi-process-inference",
       "--processes client processes run inference; random ones are killed and replaced",
       multiProcessInference},
      {"multi-process-model-load",
       "--processes client processes prepare models in a loop; random ones are killed",
       multiProcessModelLoad},
      {"memory-mapped-model-load",
       "models whose constants live in mmap_fd pools backed by files, loaded and run again and "
       "again",
       memoryMappedModelLoad},
      {"random-graphs",
       "valid random graphs (float32, float16, quant8 asymm and signed; bool8 and int32 "
       "beside them) run on every path, results compared with an nnhald at --reference-isa; "
       "a graph that differs is written to --failures",
       randomGraphs},
      {"performance-degradation",
       "median inference latency while --compile-threads threads keep compiling, vs alone; "
       "fails above --max-degradation",
       performanceDegradation},
  };
  return tests;
}

}  // namespace nnhal::stress
