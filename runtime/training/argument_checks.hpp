// Argument checks shared by the training runtime's operations (layer_ops, lm_head_loss): each
// adds a burst::Problem naming the call and the argument ("linear_backward: dw"), what is
// wrong and what would be valid, so a caller sees every mistake of a call at once (the
// operations collect them and throw one burst::Error).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/error.hpp"

namespace burst::rt {

// "call: name".
[[nodiscard]] std::string where(std::string_view call, std::string_view name);

// A count that must be at least `least`.
void check_at_least(Problems& p, std::string_view call, std::string_view name, std::int64_t value, std::int64_t least);

// A span that must hold `want` values; `formula` says where that count comes from.
void check_size(Problems& p, std::string_view call, std::string_view name, std::size_t got, std::int64_t want,
                std::string_view formula);

// Token ids (`what` names one: "token", "target") that must lie in [lowest, vocab): the first
// one outside, as one problem that counts all of them.
void check_ids(Problems& p, std::string_view call, std::string_view what, std::span<const std::int32_t> ids,
               std::int32_t lowest, std::int64_t vocab, std::string valid, std::string hint = {});

}  // namespace burst::rt
