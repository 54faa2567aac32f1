// tools/nnhal/run_command.h — `nnhal run`: prepare a TFLite model through the driver,
// execute it and say what its outputs mean (tools/common/output_report.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal::cli {

struct RunArgs {
  std::string model;
  std::string image;                 ///< fed to the first [1, H, W, 3] input not given by --input
  std::vector<std::string> inputs;   ///< NAME=FILE, or FILE for input 0: raw tensor bytes
  std::vector<std::string> outputs;  ///< NAME=FILE, or FILE for output 0: raw bytes written
  std::string labels;
  size_t top = 5;
  unsigned warmupRuns = 1;  ///< executions before the timed ones (the first is reported apart)
  unsigned numRuns = 10;    ///< timed executions
  unsigned threads = 0;
  float mean = 127.5f;
  float stddev = 127.5f;
  std::string cacheDir;
  std::string connect;   ///< nnhald socket; empty = the embedded driver
  std::string device;    ///< nnhald's device by name; empty = its default
  bool profile = false;  ///< print the time of each operation
  std::string trace;     ///< write the operations' times as Chrome trace JSON here
  std::string mask;      ///< segmentation: write the class map as a colour PNG here
  bool json = false;     ///< print the report as JSON
  uint32_t seed = 1;     ///< of the random inputs fed when no input is given
  /// Also run the model with TFLite's own runtime (LiteRT, tools/common/litert_reference.h)
  /// on the same inputs and report how each output differs.
  bool compareTflite = false;
};

/// The embedded driver, or the daemon's when `socket` is not empty.
Result<std::shared_ptr<Device>> openDevice(const std::string& socket, const DeviceOptions& options,
                                           const std::string& device = {});

/// Runs the model. Without any --input or --image, every input gets seeded random values
/// (`seed`; as TFLite's benchmark_model does), with a note on stderr; otherwise inputs that
/// neither gives are zero (the real value 0, i.e. the zero point of a quantized input), with
/// a note on stderr. Errors: INVALID_ARGUMENT for a bad argument (unknown
/// input or output name, wrong byte count, --mask without a segmentation output), and
/// whatever the driver returns.
Result<void> runModel(const RunArgs& args);

}  // namespace nnhal::cli
