// Small text helpers shared by every parser: "did you mean" suggestions and joining.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace burst::text {

// Levenshtein distance between two strings (case-sensitive).
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `word` if it is close enough to be a likely typo, else "".
[[nodiscard]] std::string closest(std::string_view word, const std::vector<std::string>& candidates);

// "did you mean 'x'?" or "" when nothing is close.
[[nodiscard]] std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c"
[[nodiscard]] std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

}  // namespace burst::text
