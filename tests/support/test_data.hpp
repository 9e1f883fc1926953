// Test helper: the path of a file under tests/data (BURST_TEST_DATA, set by tests/CMakeLists.txt).
#pragma once

#include <string>

namespace burst::test {

inline std::string topology_data(const std::string& name) {
  return std::string(BURST_TEST_DATA) + "/topologies/" + name;
}

}  // namespace burst::test
