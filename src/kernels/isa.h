// kernels/isa.h — the instruction-set level of the optimized kernels, chosen at run time.
//
// nnhal is built for the baseline x86-64 instruction set; each optimized kernel family is
// compiled a second time per level (src/kernels/x86/, one file per level) and one dispatch
// point per family picks the variant from activeIsa(). The level is decided once per
// process: the highest level the CPU and the operating system support, lowered by the
// environment variable NNHAL_ISA (avx2, avx512, vnni or scalar) for tests. A request for a
// level above what the CPU supports is refused (the supported level stays in use) and the
// selection says why.
//
// Layouts that depend on the level (packed depthwise filters) are made at preparation time
// by the same process that runs them; compilation caches record the level (cache::cacheVersion)
// so that a cache made at one level is never loaded at another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nnhal::kernels {

/// Ordered: a higher level can run every kernel of a lower one.
enum class IsaLevel : uint8_t {
  kScalar = 0,  ///< plain C++ (compiled for baseline x86-64)
  kAvx2 = 1,    ///< AVX2 + FMA
  kAvx512 = 2,  ///< AVX-512 F, BW, VL and DQ
  kVnni = 3,    ///< kAvx512 plus AVX-512 VNNI (vpdpbusd, vpdpwssd)
};

/// "scalar", "avx2", "avx512" or "vnni".
std::string_view toString(IsaLevel level) noexcept;

/// The level named `name` (as toString writes it), or nullopt.
std::optional<IsaLevel> parseIsaLevel(std::string_view name) noexcept;

/// How activeIsa() was decided.
struct IsaSelection {
  IsaLevel supported = IsaLevel::kScalar;  ///< what this CPU and OS can run
  IsaLevel active = IsaLevel::kScalar;     ///< what the kernels use
  std::string requested;                   ///< NNHAL_ISA as set ("" when unset)
  std::string note;  ///< why a request was not followed ("" when it was, or when unset)
};

/// The highest level this CPU and operating system support (detected with cpuid and xgetbv
/// through the compiler's CPU-feature query).
IsaLevel detectSupportedIsa() noexcept;

/// The selection for a given NNHAL_ISA value (pure: no environment read): `requested`
/// empty keeps `supported`; a known level at or below `supported` is used; anything else
/// keeps `supported` and explains it in `note`.
IsaSelection selectIsa(IsaLevel supported, std::string_view requested);

/// The selection of this process, made on first use from detectSupportedIsa() and
/// NNHAL_ISA, and the same for the rest of the process.
const IsaSelection& isaSelection() noexcept;

/// isaSelection().active.
IsaLevel activeIsa() noexcept;

/// Every level from kScalar up to detectSupportedIsa(): what the kernel tests run at.
std::vector<IsaLevel> supportedIsaLevels();

}  // namespace nnhal::kernels
