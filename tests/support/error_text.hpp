// Test helper: the message a call fails with ("(no error)" when it succeeds), so golden-error
// tests compare what a user would read.
#pragma once

#include <functional>
#include <string>

#include "common/error.hpp"

namespace burst::test {

inline std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const burst::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace burst::test
