#include "topologies/local_calibration.hpp"

#include <cstdlib>
#include <filesystem>
#include <vector>

#include "common/error.hpp"
#include "common/json_reader.hpp"

namespace burst::topo {
namespace {

// The search order, first to last.
std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("BURST_LOCAL_CALIBRATION"); env != nullptr && *env != '\0') {
    paths.emplace_back(env);
  }
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != '\0') {
    paths.push_back(std::string(xdg) + "/burst/local.json");
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    paths.push_back(std::string(home) + "/.config/burst/local.json");
  }
  return paths;
}

}  // namespace

std::string find_local_calibration() {
  for (const auto& c : candidates()) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  return {};
}

std::string local_calibration_write_path() {
  const std::vector<std::string> paths = candidates();
  return paths.empty() ? std::string() : paths.front();
}

LocalCalibration read_local_calibration(const std::string& path) {
  const Json doc = read_json_file(path);
  Problems problems;
  JsonReader r(path, problems);
  LocalCalibration c;
  c.source = path;
  if (!doc.is_object()) {
    r.problem("", "expected an object", "", "start the file with {\"schema\": \"burst.calibration/1\", ...}");
    problems.throw_if_any();
  }
  r.choice(doc, "", "schema", {"burst.calibration/1"});
  if (const Json* local = r.object(doc, "", "local", false)) {
    r.reject_unknown_keys(
        *local, "/local",
        {"compute_flops_per_rank", "memory_per_rank", "memory_bandwidth_per_rank", "optimizer_params_per_s_per_rank",
         "intra_bandwidth", "intra_latency", "inter_bandwidth", "inter_latency"});
    auto set = [](double& field, std::optional<double> v) {
      if (v) field = *v;
    };
    set(c.compute_flops_per_rank, r.flop_rate(*local, "/local", "compute_flops_per_rank", false));
    set(c.memory_per_rank, r.bytes(*local, "/local", "memory_per_rank", false));
    set(c.memory_bandwidth_per_rank, r.bandwidth(*local, "/local", "memory_bandwidth_per_rank", false));
    set(c.optimizer_params_per_s_per_rank, r.number(*local, "/local", "optimizer_params_per_s_per_rank", false));
    set(c.intra_bandwidth_Bps, r.bandwidth(*local, "/local", "intra_bandwidth", false));
    set(c.intra_latency_s, r.duration(*local, "/local", "intra_latency", false));
    set(c.inter_bandwidth_Bps, r.bandwidth(*local, "/local", "inter_bandwidth", false));
    set(c.inter_latency_s, r.duration(*local, "/local", "inter_latency", false));
    const std::pair<const char*, double> positive[] = {
        {"compute_flops_per_rank", c.compute_flops_per_rank},
        {"memory_per_rank", c.memory_per_rank},
        {"memory_bandwidth_per_rank", c.memory_bandwidth_per_rank},
        {"optimizer_params_per_s_per_rank", c.optimizer_params_per_s_per_rank},
        {"intra_bandwidth", c.intra_bandwidth_Bps},
        {"inter_bandwidth", c.inter_bandwidth_Bps}};
    // A field the file gives (an absent one keeps its default, 0 for the unmeasured optimizer rate).
    r.require_positive(*local, "/local", positive);
  }
  problems.throw_if_any();
  return c;
}

LocalCalibration local_calibration() {
  const std::string path = find_local_calibration();
  return path.empty() ? LocalCalibration{} : read_local_calibration(path);
}

std::string gpu_calibration_beside(const std::string& local_path, const std::string& model) {
  if (local_path.empty()) return {};
  return (std::filesystem::path(local_path).parent_path() / (model + ".json")).string();
}

}  // namespace burst::topo
