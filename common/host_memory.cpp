// The host memory policy of host_memory.hpp: glibc's mallopt and getrusage.
#include "common/host_memory.hpp"

#include <malloc.h>
#include <sys/resource.h>

#include <climits>

namespace burst {

bool keep_freed_host_memory() {
#if defined(__GLIBC__)
  constexpr int kLargestMappingThreshold = 32 << 20;  // glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
  // mallopt returns 1 when it took the setting.
  const bool mapping = mallopt(M_MMAP_THRESHOLD, kLargestMappingThreshold) == 1;
  const bool trimming = mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  return mapping && trimming;
#else
  return false;
#endif
}

std::uint64_t host_page_faults() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return static_cast<std::uint64_t>(usage.ru_minflt);
}

}  // namespace burst
