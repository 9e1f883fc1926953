// BURST_TEST_FAULT (see fault_point.hpp).
#include "common/fault_point.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

namespace burst {

void fault_point(std::string_view point, int rank) {
  const char* env = std::getenv("BURST_TEST_FAULT");
  if (env == nullptr) return;
  const std::string_view spec(env);
  // "<point>:<rank>" exactly, or followed by ":<seconds>".
  const std::string prefix = std::string(point) + ":" + std::to_string(rank);
  if (!spec.starts_with(prefix)) return;
  const std::string_view rest = spec.substr(prefix.size());
  if (!rest.empty() && rest.front() != ':') return;  // rank 1 must not match "...:12"
  if (point.starts_with("die-")) std::raise(SIGKILL);
  if (point.starts_with("stall-")) {
    const double seconds = rest.empty() ? 3600.0 : std::atof(std::string(rest.substr(1)).c_str());
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  }
}

}  // namespace burst
