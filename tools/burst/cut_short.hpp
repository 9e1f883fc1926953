// A command cut short by Ctrl-C (common/interrupt.hpp) writes what it has finished, then throws
// CutShort with a note saying how far it got; main prints the note and exits 130, so scripts
// see the interruption while the output on stdout and in files stays whole.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace burst::cli {

class CutShort : public std::exception {
 public:
  explicit CutShort(std::string note) : note_(std::move(note)) {}
  [[nodiscard]] const char* what() const noexcept override { return note_.c_str(); }

 private:
  std::string note_;
};

}  // namespace burst::cli
