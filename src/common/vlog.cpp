#include "common/vlog.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>

namespace nnhal::common {
namespace {

constexpr std::array<std::string_view, kVlogTagCount> kTagNames = {
    "compilation", "cpuexe", "driver", "execution", "manager", "model", "ipc", "cache", "burst"};

constexpr uint32_t kAllTags = (1u << kVlogTagCount) - 1;

bool isSeparator(char c) { return c == ' ' || c == ',' || c == ':' || c == '\t' || c == '\n'; }

/// The verbose logger: stderr only, every level, independent of spdlog's default logger
/// (which the tools point at stdout or silence).
spdlog::logger& vlogLogger() {
  static const std::shared_ptr<spdlog::logger> logger = [] {
    auto made =
        std::make_shared<spdlog::logger>("vlog", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    made->set_pattern("[%H:%M:%S.%f] [%t] %v");
    made->set_level(spdlog::level::trace);
    made->flush_on(spdlog::level::trace);
    return made;
  }();
  return *logger;
}

}  // namespace

std::string_view vlogTagName(VlogTag tag) {
  const auto index = static_cast<uint32_t>(tag);
  return index < kVlogTagCount ? kTagNames[index] : std::string_view("?");
}

VlogSettings parseVlogTags(std::string_view value) {
  VlogSettings settings;
  size_t at = 0;
  while (at < value.size()) {
    if (isSeparator(value[at])) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < value.size() && !isSeparator(value[end])) ++end;
    const std::string_view word = value.substr(at, end - at);
    at = end;
    if (word == "1" || word == "all") {
      settings.mask = kAllTags;
      continue;
    }
    bool known = false;
    for (uint32_t i = 0; i < kVlogTagCount; ++i) {
      if (word == kTagNames[i]) {
        settings.mask |= 1u << i;
        known = true;
      }
    }
    const bool seen = std::find(settings.unknownTags.begin(), settings.unknownTags.end(), word) !=
                      settings.unknownTags.end();
    if (!known && !seen) settings.unknownTags.emplace_back(word);
  }
  return settings;
}

namespace detail {

uint32_t vlogMaskFromEnvironment() {
  const char* value = std::getenv("NNHAL_VLOG");
  if (value == nullptr) return 0;
  const VlogSettings settings = parseVlogTags(value);
  for (const std::string& unknown : settings.unknownTags) {
    vlogLogger().warn(
        "NNHAL_VLOG: unknown tag '{}' ignored (tags: compilation, cpuexe, driver, execution, "
        "manager, model, ipc, cache, burst; or 1/all)",
        unknown);
  }
  return settings.mask;
}

}  // namespace detail

void vlogWrite(VlogTag tag, std::string_view message) {
  vlogLogger().info("[{}] {}", vlogTagName(tag), message);
}

}  // namespace nnhal::common
