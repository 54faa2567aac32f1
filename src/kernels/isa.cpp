#include "kernels/isa.h"

#include <array>
#include <cstdlib>

namespace nnhal::kernels {

namespace {

/// Indexed by IsaLevel's value.
constexpr std::array<std::string_view, 4> kIsaLevelNames{"scalar", "avx2", "avx512", "vnni"};

}  // namespace

std::string_view toString(IsaLevel level) noexcept {
  const auto index = static_cast<size_t>(level);
  return index < kIsaLevelNames.size() ? kIsaLevelNames[index] : kIsaLevelNames[0];
}

std::optional<IsaLevel> parseIsaLevel(std::string_view name) noexcept {
  for (IsaLevel level : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kVnni}) {
    if (name == toString(level)) return level;
  }
  return std::nullopt;
}

IsaLevel detectSupportedIsa() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512dq");
  if (avx512 && __builtin_cpu_supports("avx512vnni")) return IsaLevel::kVnni;
  if (avx512) return IsaLevel::kAvx512;
  if (avx2) return IsaLevel::kAvx2;
#endif
  return IsaLevel::kScalar;
}

IsaSelection selectIsa(IsaLevel supported, std::string_view requested) {
  IsaSelection s;
  s.supported = supported;
  s.active = supported;
  s.requested = std::string(requested);
  if (requested.empty()) return s;
  const std::optional<IsaLevel> level = parseIsaLevel(requested);
  if (!level) {
    s.note = "NNHAL_ISA=" + s.requested + " is not a level (scalar, avx2, avx512, vnni); using " +
             std::string(toString(supported));
  } else if (*level > supported) {
    s.note = "NNHAL_ISA=" + s.requested + " is above what this CPU supports; using " +
             std::string(toString(supported));
  } else {
    s.active = *level;
  }
  return s;
}

const IsaSelection& isaSelection() noexcept {
  // Decided once, before any kernel runs, and never changed: the packed layouts made at
  // preparation must match the kernels that read them.
  static const IsaSelection selection = [] {
    const char* env = std::getenv("NNHAL_ISA");
    return selectIsa(detectSupportedIsa(), env != nullptr ? env : "");
  }();
  return selection;
}

IsaLevel activeIsa() noexcept { return isaSelection().active; }

std::vector<IsaLevel> supportedIsaLevels() {
  std::vector<IsaLevel> levels;
  const auto top = static_cast<uint8_t>(detectSupportedIsa());
  for (uint8_t l = 0; l <= top; ++l) levels.push_back(static_cast<IsaLevel>(l));
  return levels;
}

}  // namespace nnhal::kernels
