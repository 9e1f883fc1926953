#include "runtime/calibration/curve_points.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace burst::rt {
namespace {

std::string curve_of(const KernelSpeed& k) { return k.mask == "causal" ? k.kernel + "_masked" : k.kernel; }

}  // namespace

double efficiency_point(double work, double seconds, double peak) {
  return std::clamp(std::round(work / seconds / peak * 1000) / 1000, 0.001, 1.0);
}

namespace {

// The curves of `speeds` that `keep` selects, as {"<curve>": [[block, efficiency], ...]}.
Json curves_of(const std::vector<KernelSpeed>& speeds, const Peaks& peaks,
               const std::function<bool(const KernelSpeed&)>& keep) {
  std::map<std::string, std::map<std::int64_t, std::pair<double, double>>> sums;  // curve -> block -> (work, s)
  for (const KernelSpeed& k : speeds) {
    if (!keep(k)) continue;
    auto& [work, seconds] = sums[curve_of(k)][k.block];
    work += k.flops;
    seconds += k.seconds;
  }
  Json curves = Json::object();
  for (const char* curve : {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked", "gemm", "elementwise"}) {
    const auto found = sums.find(curve);
    if (found == sums.end()) continue;
    const double peak = std::string_view(curve) == "elementwise" ? peaks.bytes_per_s : peaks.flops_per_s;
    Json points = Json::array();
    for (const auto& [block, run] : found->second) {
      points.push_back(Json::array({block, efficiency_point(run.first, run.second, peak)}));
    }
    curves[curve] = points;
  }
  return curves;
}

}  // namespace

Json compute_entry(const std::string& gpu, const std::vector<KernelSpeed>& speeds, const Peaks& peaks,
                   const std::string& attention_path) {
  Json entry = {{"gpu", gpu}};
  if (!attention_path.empty()) entry["attention_path"] = attention_path;
  const Json own = curves_of(speeds, peaks, [](const KernelSpeed& k) { return k.path.empty(); });
  for (const auto& [curve, points] : own.items()) entry[curve] = points;
  std::set<std::string> others;
  for (const KernelSpeed& k : speeds) {
    if (!k.path.empty()) others.insert(k.path);
  }
  for (const std::string& path : others) {
    entry["attention_paths"][path] = curves_of(speeds, peaks, [&path](const KernelSpeed& k) { return k.path == path; });
  }
  return entry;
}

}  // namespace burst::rt
