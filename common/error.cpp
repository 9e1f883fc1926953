#include "common/error.hpp"

#include <fmt/format.h>

#include "common/escape.hpp"

namespace burst {
namespace {

std::string join_lines(const std::vector<Problem>& problems) {
  std::string text;
  for (const auto& p : problems) {
    if (!text.empty()) text += '\n';
    text += p.to_string();
  }
  return text;
}

}  // namespace

std::string Problem::to_string() const {
  std::string text = where.empty() ? what : fmt::format("{}: {}", where, what);
  if (!valid.empty() || !hint.empty()) {
    text += " (";
    if (!valid.empty()) text += "valid: " + valid;
    if (!valid.empty() && !hint.empty()) text += "; ";
    if (!hint.empty()) text += "hint: " + hint;
    text += ")";
  }
  // A path or a value quoted from the input may hold a line break or a terminal's escape
  // sequence: the line is for a terminal, so they are shown, not obeyed.
  return escape::terminal(text);
}

Error::Error(Problem problem) : Error(std::vector<Problem>{std::move(problem)}) {}

Error::Error(std::vector<Problem> problems)
    : std::runtime_error(join_lines(problems)), problems_(std::move(problems)) {}

void Problems::add(std::string where, std::string what, std::string valid, std::string hint) {
  list_.push_back({std::move(where), std::move(what), std::move(valid), std::move(hint)});
}

void Problems::throw_if_any() const {
  if (!list_.empty()) throw Error(list_);
}

}  // namespace burst
