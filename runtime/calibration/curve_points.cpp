#include "runtime/calibration/curve_points.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

namespace burst::rt {
namespace {

std::string curve_of(const KernelSpeed& k) { return k.mask == "causal" ? k.kernel + "_masked" : k.kernel; }

}  // namespace

double efficiency_point(double work, double seconds, double peak) {
  return std::clamp(std::round(work / seconds / peak * 1000) / 1000, 0.001, 1.0);
}

Json compute_entry(const std::string& gpu, const std::vector<KernelSpeed>& speeds, const Peaks& peaks,
                   const std::string& attention_path) {
  std::map<std::string, std::map<std::int64_t, std::pair<double, double>>> sums;  // curve -> block -> (work, s)
  for (const KernelSpeed& k : speeds) {
    auto& [work, seconds] = sums[curve_of(k)][k.block];
    work += k.flops;
    seconds += k.seconds;
  }
  Json entry = {{"gpu", gpu}};
  if (!attention_path.empty()) entry["attention_path"] = attention_path;
  for (const char* curve : {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked", "gemm", "elementwise"}) {
    const auto found = sums.find(curve);
    if (found == sums.end()) continue;
    const double peak = std::string_view(curve) == "elementwise" ? peaks.bytes_per_s : peaks.flops_per_s;
    Json points = Json::array();
    for (const auto& [block, run] : found->second) {
      points.push_back(Json::array({block, efficiency_point(run.first, run.second, peak)}));
    }
    entry[curve] = points;
  }
  return entry;
}

}  // namespace burst::rt
