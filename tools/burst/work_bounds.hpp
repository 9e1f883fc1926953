// Bounds on how much work one command starts: a what-if grid or a capacity table of absurd size
// (a 9-million-point grid, --max-nodes 1000000) is refused up front with its size and how to
// narrow it, unless the user says --force; within the bound the command says how much it starts.
#pragma once

#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::cli {

inline constexpr std::int64_t kMaxWhatIfPoints = 256;    // each a whole plan search
inline constexpr std::int64_t kMaxCapacityNodes = 4096;  // 32K GPUs at 8 a node

// Throws burst::Error naming `option` when `amount` exceeds `limit` and `force` is not set.
inline void require_bounded(const std::string& option, std::int64_t amount, std::int64_t limit, bool force,
                            const std::string& what, const std::string& narrow) {
  if (amount <= limit || force) return;
  throw Error(Problem{option, fmt::format("{} {}", amount, what), fmt::format("at most {} without --force", limit),
                      narrow + ", or add --force to run it anyway"});
}

}  // namespace burst::cli
