// Grouping tokens by id for the GPU embedding backward (see token_groups.hpp): a counting pass
// over the ids, then a stable placement, so each group keeps ascending token order.
#include "runtime/cuda/detail/token_groups.hpp"

#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/training/argument_checks.hpp"

namespace burst::rt::gpu {

TokenGroups group_tokens(std::span<const std::int32_t> tokens, std::int64_t vocab) {
  constexpr std::string_view call = "group_tokens";
  Problems problems;
  check_at_least(problems, call, "vocab", vocab, 1);
  if (vocab > std::numeric_limits<std::int32_t>::max() ||
      tokens.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    problems.add(where(call, "tokens"), fmt::format("{} tokens over a vocabulary of {}", tokens.size(), vocab),
                 "fewer than 2^31 of each (int32 indices)");
  }
  check_ids(problems, call, "token", tokens, 0, vocab, fmt::format("0 <= token < {}", vocab),
            "the tokenizer and the model must agree on the vocabulary");
  problems.throw_if_any();

  std::vector<std::int32_t> count(static_cast<std::size_t>(vocab), 0);
  for (const std::int32_t id : tokens) ++count[static_cast<std::size_t>(id)];
  TokenGroups groups;
  std::vector<std::int32_t> next(static_cast<std::size_t>(vocab), 0);  // a present id's next slot
  std::int32_t placed = 0;
  groups.offsets.push_back(0);
  for (std::int64_t id = 0; id < vocab; ++id) {
    const std::int32_t n = count[static_cast<std::size_t>(id)];
    if (n == 0) continue;
    groups.rows.push_back(static_cast<std::int32_t>(id));
    next[static_cast<std::size_t>(id)] = placed;
    placed += n;
    groups.offsets.push_back(placed);
  }
  groups.token_index.resize(tokens.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) {
    groups.token_index[static_cast<std::size_t>(next[static_cast<std::size_t>(tokens[t])]++)] =
        static_cast<std::int32_t>(t);
  }
  return groups;
}

}  // namespace burst::rt::gpu
