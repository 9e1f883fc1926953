// The memory pre-flight of a training run (see memory_preflight.hpp).
#include "runtime/training/detail/memory_preflight.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/saturating.hpp"
#include "runtime/training/tensor_parallel.hpp"

namespace burst::rt {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / kGiB); }

// An item of the lower bound: in GiB, or "more than 8 EiB" at the ceiling of
// common/saturating.hpp, where the estimate stopped counting.
std::string need_text(std::uint64_t bytes) {
  return bytes >= kSizeCeiling ? "more than 8 EiB" : gib(static_cast<double>(bytes));
}

// MemAvailable of /proc/meminfo in bytes, or 0 when it cannot be read.
std::uint64_t mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

// The cgroup v2 memory limit of this process in bytes, or 0 when there is none.
std::uint64_t cgroup_limit() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  return std::strtoull(text.c_str(), nullptr, 10);
}

// Bytes the process has mapped (VmSize), for what is left under RLIMIT_AS.
std::uint64_t mapped_now() {
  std::ifstream in("/proc/self/statm");
  std::uint64_t pages = 0;
  in >> pages;
  return pages * 4096;
}

}  // namespace

std::vector<MemoryNeed> minimum_training_memory(const plan::Plan& plan, std::int64_t tokens, int ranks,
                                                std::size_t device_activation_bytes, bool state_on_device) {
  // Under tensor parallelism a rank holds its part of the model (tensor_parallel.hpp), which ZeRO
  // shards over the ranks holding the same part.
  const int tp = std::max(1, plan.strategy.tp);
  const ModelSpec m = tp > 1 ? tensor_parallel_spec(plan.job.model, tp) : plan.job.model;
  const auto c = static_cast<double>(tokens);
  const double kv_dim = static_cast<double>(m.kv_heads) * m.head_dim;
  // ZeRO 3 shards the parameters, ZeRO 2 and 3 the gradients (a unit's full gradients live only
  // briefly), ZeRO 1-3 the optimizer's state.
  const double shard = 1.0 / std::max(1, ranks / tp);
  const int stage = plan.strategy.zero.stage;
  const double params = m.total_params() * (stage >= 3 ? shard : 1.0);
  const double grads = m.total_params() * (stage >= 2 ? shard : 1.0);
  const double optimizer = m.total_params() * (stage >= 1 ? shard : 1.0);
  const auto bytes = [](double floats) { return saturating_size(floats * sizeof(float)); };
  const bool gpu = device_activation_bytes > 0;
  const auto activations = [&](double elements) {
    return gpu ? saturating_size(elements * static_cast<double>(device_activation_bytes)) : bytes(elements);
  };
  std::vector<MemoryNeed> need{
      {"layer inputs kept (every policy)", activations(static_cast<double>(m.layers) * c * m.hidden), gpu},
      {"one layer's forward working set",
       activations(c * std::max(3.0 * m.hidden + 2.0 * kv_dim, m.hidden + 2.0 * m.ffn)), gpu}};
  if (gpu && state_on_device) {
    need.push_back({"parameters, gradients, master weights and AdamW",
                    saturating_sum(activations(params), bytes(grads + 3.0 * optimizer)), true});
  } else {
    need.push_back({"parameters and gradients", bytes(params + grads), false});
  }
  return need;
}

MemoryAvailable memory_available(int ranks_on_node) {
  const int share = std::max(1, ranks_on_node);
  const auto shared = [share](std::uint64_t bytes) { return bytes / static_cast<std::uint64_t>(share); };
  MemoryAvailable best{UINT64_MAX, "no limit found"};
  const auto consider = [&best](std::uint64_t bytes, std::string source) {
    if (bytes > 0 && bytes < best.bytes) best = {bytes, std::move(source)};
  };
  if (const std::uint64_t available = mem_available(); available > 0) {
    consider(shared(available), fmt::format("MemAvailable {} shared by {} rank(s) on this node",
                                            gib(static_cast<double>(available)), share));
  }
  if (const std::uint64_t limit = cgroup_limit(); limit > 0) {
    consider(shared(limit),
             fmt::format("the cgroup's memory.max {} shared by {} rank(s)", gib(static_cast<double>(limit)), share));
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t used = mapped_now();
    const std::uint64_t left = as.rlim_cur > used ? as.rlim_cur - used : 1;
    consider(left, fmt::format("the address-space limit (ulimit -v) {} less {} mapped",
                               gib(static_cast<double>(as.rlim_cur)), gib(static_cast<double>(used))));
  }
  return best;
}

MemoryAvailable device_memory_available(const DeviceMemoryUse& use, int ranks_per_device) {
  const int share = std::max(1, ranks_per_device);
  const std::uint64_t free = use.device_total_bytes - use.device_used_bytes;
  return {free / static_cast<std::uint64_t>(share),
          fmt::format("cudaMemGetInfo: {} free of {} on this GPU, shared by {} rank(s)", gib(static_cast<double>(free)),
                      gib(static_cast<double>(use.device_total_bytes)), share)};
}

namespace {

// The items of one memory against what it has.
void require_in(const std::vector<MemoryNeed>& need, bool device, const MemoryAvailable& available) {
  std::uint64_t total = 0;
  std::string items;
  for (const MemoryNeed& n : need) {
    if (n.on_device != device) continue;
    total = saturating_sum(total, n.bytes);
    items += fmt::format("{}{} {}", items.empty() ? "" : ", ", n.item, need_text(n.bytes));
  }
  if (total < kSizeCeiling && total <= available.bytes) return;  // at the ceiling: no machine has it
  throw Error(Problem{
      "plan:/job/seq_len",
      fmt::format("this rank needs {}{} ({}) but can have {} ({})",
                  total >= kSizeCeiling ? "more than 8 EiB, too large to count" : "at least " + need_text(total),
                  device ? " of GPU memory" : "", items, gib(static_cast<double>(available.bytes)), available.source),
      "", "plan it over more ranks or a shorter sequence, or run where more memory is free"});
}

}  // namespace

void require_memory(const std::vector<MemoryNeed>& need, const MemoryAvailable& available,
                    const std::optional<MemoryAvailable>& device) {
  require_in(need, false, available);
  if (device) require_in(need, true, *device);
}

}  // namespace burst::rt
