#include "runtime/calibration/memory_speed.hpp"

#include <unistd.h>

#include <cstring>
#include <vector>

#include "runtime/calibration/together.hpp"

namespace burst::rt {

double machine_memory_bytes() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
}

double copy_bandwidth_per_rank(Communicator& comm, std::size_t bytes, int rounds) {
  // Filled (so every page is touched before the clock runs) and distinct.
  std::vector<char> from(bytes, 1), to(bytes, 2);
  std::vector<double> mine;
  for (int r = 0; r < rounds; ++r) {
    mine.push_back(time_together(comm, [&] {
      std::memcpy(to.data(), from.data(), bytes);
      const volatile char last = to[bytes - 1];  // the copy is read, so it cannot be elided
      (void)last;
    }));
  }
  const std::vector<double> typical = median_of_slowest(comm, mine, 1);
  return typical.empty() ? 0 : 2.0 * static_cast<double>(bytes) / typical[0];
}

}  // namespace burst::rt
