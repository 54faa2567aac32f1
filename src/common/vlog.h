// common/vlog.h — tag-based verbose logging, as Android NN's VLOG(TAG).
//
// The environment variable NNHAL_VLOG names the tags to log, read once per process (the
// first time any tag is checked): empty or unset = none; "1" or "all" = every tag;
// otherwise tags separated by spaces, commas or colons ("execution,cache"). Unknown tags
// are reported once, on stderr, and ignored. The tags and what each logs are listed in
// docs/DEBUGGING.md.
//
// Verbose logs go to stderr through a dedicated spdlog logger (never stdout, where the
// tools print their results), whatever spdlog's global level is. When a tag is off,
// NNHAL_VLOG(tag, ...) costs one bit test: its arguments are neither formatted nor
// evaluated.
//
// Thread safety: every function here may be called from any thread.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace nnhal::common {

/// The VLOG tags: Android NN's six, then nnhal's own.
enum class VlogTag : uint32_t {
  kCompilation = 0,  ///< compiling a Model into an execution plan
  kCpuexe = 1,       ///< each operation the CPU executor runs, with its time
  kDriver = 2,       ///< entry points of the Device and PreparedModel interfaces
  kExecution = 3,    ///< each execution: start, end, status, time
  kManager = 4,      ///< creating the device (embedded driver or nnhald connection)
  kModel = 5,        ///< model validation and TFLite import
  kIpc = 6,          ///< nnhald connections and requests, client and daemon side
  kCache = 7,        ///< compilation cache hits, misses and saves
  kBurst = 8,        ///< burst listeners starting and stopping, memory slot cache
};
inline constexpr uint32_t kVlogTagCount = 9;

/// The tag's name in NNHAL_VLOG ("compilation", ...).
std::string_view vlogTagName(VlogTag tag);

/// A parsed NNHAL_VLOG value: bit i of `mask` set = tag i on.
struct VlogSettings {
  uint32_t mask = 0;
  std::vector<std::string> unknownTags;  ///< words that name no tag, each once, in order
};

/// Parses an NNHAL_VLOG value (see the top of this file). Never fails: unknown words are
/// returned in `unknownTags` and otherwise ignored.
VlogSettings parseVlogTags(std::string_view value);

namespace detail {
/// Reads NNHAL_VLOG and reports its unknown tags on stderr; called once per process.
uint32_t vlogMaskFromEnvironment();
}  // namespace detail

/// The tags switched on in this process (NNHAL_VLOG, read on the first call).
inline uint32_t vlogMask() {
  static const uint32_t mask = detail::vlogMaskFromEnvironment();
  return mask;
}

/// True when NNHAL_VLOG switched `tag` on.
inline bool vlogIsOn(VlogTag tag) { return (vlogMask() >> static_cast<uint32_t>(tag) & 1u) != 0; }

/// Writes one verbose line tagged "[tag]" to stderr. Use NNHAL_VLOG, which checks the tag
/// first.
void vlogWrite(VlogTag tag, std::string_view message);

}  // namespace nnhal::common

/// Logs a fmt-formatted line under `tag` (a VlogTag name without the k: Compilation,
/// Cpuexe, Driver, Execution, Manager, Model, Ipc, Cache, Burst) when NNHAL_VLOG switched the
/// tag on. Usage: `NNHAL_VLOG(Execution, "finished in {} us", us);`
#define NNHAL_VLOG(tag, ...)                                                                    \
  do {                                                                                          \
    if (::nnhal::common::vlogIsOn(::nnhal::common::VlogTag::k##tag)) {                          \
      ::nnhal::common::vlogWrite(::nnhal::common::VlogTag::k##tag, ::fmt::format(__VA_ARGS__)); \
    }                                                                                           \
  } while (false)
