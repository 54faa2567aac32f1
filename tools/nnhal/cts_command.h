// tools/nnhal/cts_command.h — `nnhal cts PATH...`: run CTS-schema test models.
#pragma once

#include <string>
#include <vector>

namespace nnhal::cli {

struct CtsArgs {
  std::vector<std::string> paths;  ///< files or folders of CTS JSON
  std::string mode = "all";        ///< all | sync | async | dynamic | burst | device-buffers
  std::string connect;             ///< nnhald socket; empty = the embedded driver
  std::string device;              ///< nnhald's device by name; empty = its default
  std::string filter;              ///< only test models whose name contains this
  bool quiet = false;              ///< print failures and the summary only
  unsigned threads = 0;            ///< kernel threads (0 = all cores)
  bool json = false;               ///< print one JSON object instead of lines and tables
  std::string junit;               ///< also write a JUnit XML report here ("" = none)
  std::string pool = "ashmem";     ///< request pool kind: ashmem | mmap_fd | hardware_buffer_blob
};

/// Runs every test model under args.paths; prints one line per model and mode, a summary
/// per operation type and per HAL version folder (or, with args.json, one JSON object), and
/// writes the JUnit report. Returns the process exit code: 0 when no model failed, no file
/// failed to load and at least one model passed; 1 otherwise; 2 when the JUnit file cannot
/// be written (found before any model runs).
int runCts(const CtsArgs& args);

}  // namespace nnhal::cli
