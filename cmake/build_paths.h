// Where this build tree keeps its programs and where the shared/ folder is, for the tests,
// benchmarks, fuzz seeds and the stress and soak tools of the build tree.
//
// The values live in one generated file (build_paths.cpp in the build folder, written by
// CMakeLists.txt) instead of -D definitions on every compile command: the compile commands of
// the sources that use them then name no folder, so ccache reuses their objects from a build in
// another checkout (CI builds a fresh clone each time). CMakeLists.txt includes this header
// in those targets with -include; the macros keep the names the sources have always used.
#pragma once

namespace nnhal::build_paths {

/// The read-only shared/ folder (CTS models in cts/, TFLite models in models/).
const char* sharedDir();
/// The nnhald, nnhal, nnhal-soak and nnhal-stress programs of this build tree.
const char* nnhald();
const char* cli();
const char* soak();
const char* stress();

}  // namespace nnhal::build_paths

#define NNHAL_SHARED_DIR (::nnhal::build_paths::sharedDir())
#define NNHALD_PATH (::nnhal::build_paths::nnhald())
#define NNHAL_CLI_PATH (::nnhal::build_paths::cli())
#define NNHAL_SOAK_PATH (::nnhal::build_paths::soak())
#define NNHAL_STRESS_PATH (::nnhal::build_paths::stress())
