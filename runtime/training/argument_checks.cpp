#include "runtime/training/argument_checks.hpp"

#include <fmt/format.h>

namespace burst::rt {

std::string where(std::string_view call, std::string_view name) { return fmt::format("{}: {}", call, name); }

void check_at_least(Problems& p, std::string_view call, std::string_view name, std::int64_t value, std::int64_t least) {
  if (value < least)
    p.add(where(call, name), fmt::format("{} is {}", name, value), fmt::format("{} >= {}", name, least));
}

void check_size(Problems& p, std::string_view call, std::string_view name, std::size_t got, std::int64_t want,
                std::string_view formula) {
  if (static_cast<std::int64_t>(got) != want) {
    p.add(where(call, name), fmt::format("{} values", got), fmt::format("{} = {}", formula, want));
  }
}

void check_ids(Problems& p, std::string_view call, std::string_view what, std::span<const std::int32_t> ids,
               std::int32_t lowest, std::int64_t vocab, std::string valid, std::string hint) {
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < lowest || ids[i] >= vocab) {
      if (bad++ == 0) first = i;
    }
  }
  if (bad == 0) return;
  p.add(where(call, fmt::format("{}s[{}]", what, first)),
        fmt::format("{} {} is outside the vocabulary of {} tokens ({} such {}s in all)", what, ids[first], vocab, bad,
                    what),
        std::move(valid), std::move(hint));
}

}  // namespace burst::rt
