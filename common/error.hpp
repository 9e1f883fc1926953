// Errors for bad user input.
//
// A user who hands us a malformed topology, an impossible job or a corrupt plan deserves
// every problem at once, each saying where (file, JSON pointer or XML line), what is wrong,
// what would be valid, and a hint. Parsers collect Problems and throw one burst::Error at the
// end; only `main` turns an Error into an exit code. "No plan fits" is a result, not an Error.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace burst {

struct Problem {
  std::string where;  // "topo.json:/node/links/3/bandwidth", "dump.xml:42", "--seq"
  std::string what;   // "unknown unit 'GBs'"
  std::string valid;  // "B/s, KB/s, MB/s, GB/s, TB/s (or Bps, bps ...)"; may be empty
  std::string hint;   // "did you mean 'GBps'?"; may be empty

  // One line: "where: what (valid: ...; hint: ...)", control characters shown as escape::terminal
  // shows them (a line break in a path as \n, ESC as \x1b).
  [[nodiscard]] std::string to_string() const;
};

class Error : public std::runtime_error {
 public:
  explicit Error(Problem problem);
  explicit Error(std::vector<Problem> problems);
  [[nodiscard]] const std::vector<Problem>& problems() const { return problems_; }

 private:
  std::vector<Problem> problems_;
};

// Collects problems while a whole input is checked, then fails once with all of them.
class Problems {
 public:
  void add(Problem problem) { list_.push_back(std::move(problem)); }
  void add(std::string where, std::string what, std::string valid = {}, std::string hint = {});
  [[nodiscard]] bool empty() const { return list_.empty(); }
  [[nodiscard]] std::size_t size() const { return list_.size(); }
  [[nodiscard]] const std::vector<Problem>& list() const { return list_; }
  // Throws burst::Error carrying every collected problem, if there is any.
  void throw_if_any() const;

 private:
  std::vector<Problem> list_;
};

}  // namespace burst
