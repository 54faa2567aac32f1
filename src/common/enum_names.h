// common/enum_names.h — the one way nnhal names enum values: a constant table of
// {value, name} pairs beside each enum's toString, looked up in both directions.
//
// A value missing from its table gets the caller's fallback name (every toString says which,
// e.g. "ErrorStatus(?)"), so a value read off the wire that no enumerator matches still
// prints. The tables are small (at most ~100 rows): a linear scan, no start-up cost.
//
// Thread safety: constant data and pure functions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace nnhal::common {

/// N pairs {enum value, its name}.
template <typename E, size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

/// The name of `value` in `names`, or `fallback` when the table lacks it.
template <typename E, size_t N>
constexpr std::string_view nameOf(const EnumNames<E, N>& names, E value,
                                  std::string_view fallback) noexcept {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return fallback;
}

/// The value named `name` in `names` (exact, case-sensitive match), or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> valueNamed(const EnumNames<E, N>& names,
                                      std::string_view name) noexcept {
  for (const auto& [v, n] : names) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace nnhal::common
