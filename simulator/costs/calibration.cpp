// Default calibration tables, their JSON form ("burst.calibration/1") and the merge of a user's
// file onto them. The numbers are explained, with sources, in docs/cost-models.md; the fitted
// ones (link efficiencies, NVL and NET latencies) are re-derived by tests/engine/fit_test.cpp
// from copies of the measurement files.
#include "simulator/costs/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/kernel_paths.hpp"
#include "common/units.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::sim {
namespace {

using Points = std::vector<std::pair<double, double>>;

// The name tables are function-local statics, made on first use: the default calibration is
// read during other translation units' static initialisation (a test's global cost models),
// when a namespace-scope vector may not exist yet (it would read as empty).
const std::vector<std::string>& kernel_names() {
  static const std::vector<std::string> names = {"attn_fwd",    "attn_bwd",        "gemm",
                                                 "elementwise", "attn_fwd_masked", "attn_bwd_masked"};
  return names;
}
// The attention curves among them: what a kernel path's measurements replace (attention_paths).
const std::vector<std::string>& attention_curve_names() {
  static const std::vector<std::string> names = {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked"};
  return names;
}
// The names calibration files use are the topology's own spellings of each enum value.
template <class Enum>
std::vector<std::string> names_of(int count) {
  std::vector<std::string> names;
  for (int k = 0; k < count; ++k) names.emplace_back(topo::to_string(static_cast<Enum>(k)));
  return names;
}
const std::vector<std::string>& link_names() {
  static const std::vector<std::string> names = names_of<topo::LinkKind>(topo::kLinkKindCount);
  return names;
}
const std::vector<std::string>& class_names() {
  static const std::vector<std::string> names = names_of<topo::PathClass>(topo::kPathClassCount);
  return names;
}

Points scaled(const Points& points, double factor) {
  Points out = points;
  for (auto& p : out) p.second *= factor;
  return out;
}

// Published single-GPU FlashAttention-2 runs, as efficiencies: FLOPs by FlashAttention's own
// convention (forward 4 s^2 d h, halved for a causal mask; backward 2.5x the forward) over
// the measured time and the GPU's peak. A forward+backward rate gives the backward as the
// difference of the two times.
struct KernelRun {
  double seq, heads, head_dim, forward_per_s, both_per_s, peak;
  [[nodiscard]] double causal_forward_flops() const { return 2.0 * seq * seq * head_dim * heads; }
  [[nodiscard]] double forward() const { return causal_forward_flops() * forward_per_s / peak; }
  [[nodiscard]] double backward() const {
    return 2.5 * causal_forward_flops() / (1 / both_per_s - 1 / forward_per_s) / peak;
  }
};
// zhuzilin/ring-flash-attention README @8996282, "theoretic flash_attn": one GPU, bf16, batch 1,
// 8K tokens, 32 query and 8 KV heads of 128, causal, iterations per second (forward, fwd+bwd).
constexpr KernelRun kA100Causal8K{8192, 32, 128, 373.4, 94.7, 312e12};
constexpr KernelRun kH800Causal8K{8192, 32, 128, 591.5, 154.7, 989e12};

// Ampere (A100/A800) and the fallback for unknown GPUs. Attention on full blocks: the shape of
// the FlashAttention-2 paper's A100 curves (head dim 128), peaking at 0.72 (fwd, ~225 of 312
// TF) and 0.58 (bwd). Masked blocks: those curves scaled to the causal 8K run above (0.66 and
// 0.56 at 8K). GEMM: Azure ND A100 v4 cuBLASLt FP16 square GEMMs, TFLOPS / 312. Elementwise:
// the same benchmark's HBM copy, 1.61 TB/s of the A100-80GB's 2.039. Launch gap: the host's
// time to issue a CUDA kernel, 4-6 us (docs/cost-models.md).
ComputeCalibration ampere() {
  ComputeCalibration c;  // gpu = "*"
  c.kernels[0].points = {{256, 0.30}, {512, 0.48}, {1024, 0.58}, {2048, 0.65}, {4096, 0.69}, {8192, 0.72}};
  c.kernels[1].points = {{256, 0.24}, {512, 0.38}, {1024, 0.46}, {2048, 0.52}, {4096, 0.56}, {8192, 0.58}};
  c.kernels[2].points = {{1024, 0.383}, {2048, 0.711}, {4096, 0.731}, {8192, 0.813}, {16384, 0.822}};
  c.kernels[3].points = {{1, 1.61 / 2.039}};
  c.kernels[4].points = scaled(c.kernels[0].points, kA100Causal8K.forward() / c.kernels[0].at(8192));
  c.kernels[5].points = scaled(c.kernels[1].points, kA100Causal8K.backward() / c.kernels[1].at(8192));
  c.launch_gap_s = 5e-6;
  c.multiprocessors = 108;
  return c;
}

// Hopper (H100/H200/H800) running FlashAttention-2. No text source sweeps the block size on
// Hopper, so the curves keep Ampere's shape at Hopper's own level: full blocks at the Azure ND
// H100 v5 FA2 run (327.9 TFLOPS, head dim 128, 8K), masked forward blocks at the causal 8K run
// above, and masked backward blocks too; the full backward keeps the masked one's ratio to
// the forward's (the only Hopper backward in text is causal). GEMM: Azure ND H100 v5
// cuBLASLt (FP8 run, TFLOPS / 1979) as a proxy for BF16 efficiency. Elementwise: HBM copy
// 2.90 of 3.35 TB/s.
ComputeCalibration hopper(const std::string& pattern) {
  const ComputeCalibration a = ampere();
  ComputeCalibration c;
  c.gpu = pattern;
  const double full_forward = 327.9e12 / 989e12, masked_forward = kH800Causal8K.forward();
  const double masked_backward = kH800Causal8K.backward();
  const double full_backward = masked_backward * full_forward / masked_forward;
  c.kernels[0].points = scaled(a.kernels[0].points, full_forward / a.kernels[0].at(8192));
  c.kernels[1].points = scaled(a.kernels[1].points, full_backward / a.kernels[1].at(8192));
  c.kernels[2].points = {{1024, 0.139}, {2048, 0.511}, {4096, 0.615}, {8192, 0.652}, {16384, 0.696}};
  c.kernels[3].points = {{1, 2.90 / 3.35}};
  c.kernels[4].points = scaled(a.kernels[0].points, masked_forward / a.kernels[0].at(8192));
  c.kernels[5].points = scaled(a.kernels[1].points, masked_backward / a.kernels[1].at(8192));
  c.launch_gap_s = a.launch_gap_s;
  c.multiprocessors = 132;
  return c;
}

// The local topology's CPU ranks: Ampere's curves until `burst calibrate` measures their own,
// but nothing of a GPU's launch, thread blocks or communication kernels (a BLAS call on a CPU
// core has no launch gap to speak of and no SMs to fill; MPI's copies take whole cores, not a
// share of a GPU's multiprocessors: iteration_model.cpp exposes the ZeRO collectives instead).
ComputeCalibration cpu_ranks() {
  ComputeCalibration c = ampere();
  c.gpu = topo::kLocalGpuModel;
  c.launch_gap_s = 0;
  c.multiprocessors = 0;
  c.comm_ctas = 0;
  return c;
}

// The published numbers only (docs/cost-models.md).
Calibration built_in_calibration() {
  Calibration c;
  c.compute = {ampere(), hopper("H100"), hopper("H200"), hopper("H800"), cpu_ranks()};
  // By topo::LinkKind: nvlink, pcie, inter-socket, shm, network.
  c.link_efficiency = {0.658, 0.80, 0.70, 1.0, 0.984};
  // By topo::PathClass: NVL, SHM, PIX, PXB, PHB, SYS, NET.
  c.latency_s = {3.1e-6, 1e-6, 4e-6, 4e-6, 5e-6, 6e-6, 3.8e-6};
  return c;
}

bool valid_fraction(double v) { return std::isfinite(v) && v > 0 && v <= 1; }

// [[tokens, efficiency], ...] with tokens an integer or a token string ("8K").
std::optional<Points> read_curve(JsonReader& reader, const Json& curve, const std::string& pointer) {
  if (!curve.is_array() || curve.empty()) {
    reader.problem(pointer, "expected a non-empty array of [tokens, efficiency] pairs", "",
                   "e.g. [[\"1K\", 0.55], [\"8K\", 0.72]]");
    return std::nullopt;
  }
  Points points;
  bool ok = true;
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const std::string at = JsonReader::child(pointer, i);
    const Json& p = curve[i];
    if (!p.is_array() || p.size() != 2 || !p[1].is_number()) {
      reader.problem(at, fmt::format("expected [tokens, efficiency], found {}", p.dump()), "", "e.g. [\"8K\", 0.72]");
      ok = false;
      continue;
    }
    double tokens = 0;
    if (p[0].is_number()) {
      tokens = p[0].get<double>();
    } else if (p[0].is_string()) {
      try {
        tokens = static_cast<double>(units::parse_tokens(p[0].get<std::string>(), reader.where(at + "/0")));
      } catch (const Error& e) {
        for (const auto& problem : e.problems()) reader.problem(at + "/0", problem.what, problem.valid, problem.hint);
        ok = false;
        continue;
      }
    }
    if (!(tokens >= 1)) {
      reader.problem(at + "/0", fmt::format("block size {} is not a positive token count", p[0].dump()));
      ok = false;
      continue;
    }
    if (!points.empty() && tokens <= points.back().first) {
      reader.problem(at + "/0", "block sizes must increase along the curve");
      ok = false;
    }
    const double eff = p[1].get<double>();
    if (!valid_fraction(eff)) {
      reader.problem(at + "/1", fmt::format("efficiency {} is not in (0, 1]", eff), "a fraction of peak");
      ok = false;
    }
    points.emplace_back(tokens, eff);
  }
  if (!ok) return std::nullopt;
  return points;
}

void read_compute(JsonReader& reader, const Json& list, Calibration& out) {
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = JsonReader::child("/compute", i);
    const Json& entry = list[i];
    if (!entry.is_object()) {
      reader.problem(at, fmt::format("expected an object, found {}", entry.type_name()));
      continue;
    }
    std::vector<std::string> allowed = {
        "gpu",       "launch_gap",     "multiprocessors", "curve_ctas", "tail_ctas_per_sm",
        "comm_ctas", "attention_path", "attention_paths"};
    allowed.insert(allowed.end(), kernel_names().begin(), kernel_names().end());
    reader.reject_unknown_keys(entry, at, allowed);
    const auto gpu = reader.name(entry, at, "gpu");
    if (!gpu) continue;
    if (gpu->empty()) {
      reader.problem(JsonReader::child(at, "gpu"), "empty GPU pattern", "\"*\" or part of a GPU model name");
      continue;
    }
    auto it = std::find_if(out.compute.begin(), out.compute.end(),
                           [&](const ComputeCalibration& c) { return c.gpu == *gpu; });
    if (it == out.compute.end()) {
      ComputeCalibration fresh = out.compute.empty() ? ampere() : out.compute_for("*");
      fresh.gpu = *gpu;
      out.compute.push_back(fresh);
      it = out.compute.end() - 1;
    }
    std::array<bool, kKernelCurves> given{};
    for (std::size_t k = 0; k < kernel_names().size(); ++k) {
      const auto found = entry.find(kernel_names()[k]);
      if (found == entry.end()) continue;
      given[k] = true;
      if (auto curve = read_curve(reader, *found, JsonReader::child(at, kernel_names()[k]))) {
        it->kernels[k].points = std::move(*curve);
      }
    }
    // A file that measured an attention kernel but not its masked blocks: the measurement is
    // closer to this GPU than another family's masked curve.
    for (const KernelKind kernel : {KernelKind::AttentionForward, KernelKind::AttentionBackward}) {
      const std::size_t plain = curve_index(kernel, false), masked = curve_index(kernel, true);
      if (given[plain] && !given[masked]) it->kernels[masked] = it->kernels[plain];
    }
    if (const Json* paths = reader.object(entry, at, "attention_paths", false)) {
      const std::vector<std::string>& attention_curves = attention_curve_names();
      for (const auto& [path, curves] : paths->items()) {
        const std::string where = JsonReader::child(JsonReader::child(at, "attention_paths"), path);
        if (!curves.is_object()) {
          reader.problem(where, fmt::format("expected an object of curves, found {}", curves.type_name()));
          continue;
        }
        reader.reject_unknown_keys(curves, where, attention_curves);
        for (const std::string& name : attention_curves) {
          const auto found = curves.find(name);
          if (found == curves.end()) continue;
          if (auto curve = read_curve(reader, *found, JsonReader::child(where, name))) {
            it->attention_paths[path][name].points = std::move(*curve);
          }
        }
      }
    }
    if (const auto path = reader.name(entry, at, "attention_path", false)) {
      if (path->empty()) {
        reader.problem(JsonReader::child(at, "attention_path"), "empty kernel path",
                       "the attention kernels' path the curves ran on: cpu, mma.sync, wgmma", "or no key");
      } else {
        it->attention_path = *path;
      }
    }
    if (const auto sms = reader.number(entry, at, "multiprocessors", false)) {
      if (*sms >= 0 && *sms <= 1024 && *sms == std::floor(*sms)) {
        it->multiprocessors = static_cast<int>(*sms);
      } else {
        reader.problem(JsonReader::child(at, "multiprocessors"), fmt::format("{} multiprocessors", *sms),
                       "a whole number from 0 (not a GPU: no thread-block model) to 1024",
                       "an A100 has 108, an H100 SXM 132");
      }
    }
    // Each field with whether 0 is allowed (comm_ctas 0: overlap is free).
    struct CountField {
      const char* key;
      double ComputeCalibration::*field;
      bool zero_allowed;
    };
    for (const auto& [key, field, zero_allowed] :
         {CountField{"curve_ctas", &ComputeCalibration::curve_ctas, false},
          CountField{"tail_ctas_per_sm", &ComputeCalibration::tail_ctas_per_sm, false},
          CountField{"comm_ctas", &ComputeCalibration::comm_ctas, true}}) {
      if (const auto v = reader.number(entry, at, key, false)) {
        if (std::isfinite(*v) && (*v > 0 || (zero_allowed && *v == 0)) && *v <= 1e9) {
          (*it).*field = *v;
        } else {
          reader.problem(JsonReader::child(at, key), fmt::format("{} = {} is out of range", key, *v),
                         zero_allowed ? "0 or more" : "a positive number");
        }
      }
    }
    if (it->multiprocessors > 0 && it->comm_ctas >= it->multiprocessors) {
      reader.problem(JsonReader::child(at, "comm_ctas"),
                     fmt::format("{} of {} multiprocessors held by communication", it->comm_ctas, it->multiprocessors),
                     "fewer than the multiprocessors");
    }
    if (const auto gap = reader.duration(entry, at, "launch_gap", false)) {
      if (*gap >= 0 && *gap <= 1e-3) {
        it->launch_gap_s = *gap;
      } else {
        reader.problem(JsonReader::child(at, "launch_gap"), fmt::format("launch gap {} s is out of range", *gap),
                       "0 to 1ms", "a kernel launch takes a few microseconds, e.g. \"5us\"");
      }
    }
  }
}

}  // namespace

std::size_t curve_index(KernelKind kernel, bool masked) {
  if (masked && kernel == KernelKind::AttentionForward) return 4;
  if (masked && kernel == KernelKind::AttentionBackward) return 5;
  return static_cast<std::size_t>(kernel);
}

Calibration with_attention_path(Calibration calibration, std::string_view path) {
  if (path.empty() || path == kernel_paths::kAuto) return calibration;
  const std::vector<std::string>& names = kernel_names();
  for (ComputeCalibration& c : calibration.compute) {
    // Built-in and published curves name no path; CPU ranks (no multiprocessors) run no CUDA path.
    if (c.attention_path.empty() || c.attention_path == path || c.multiprocessors == 0) continue;
    const auto wanted = c.attention_paths.find(std::string(path));
    if (wanted == c.attention_paths.end()) {
      std::string measured = c.attention_path;
      for (const auto& [other, curves] : c.attention_paths) measured += ", " + other;
      throw Error(Problem{fmt::format("calibration of GPU '{}'", c.gpu),
                          fmt::format("no attention curves measured on kernel path {}", path),
                          fmt::format("a kernel path it measured ({})", measured),
                          "run burst calibrate --device cuda on a GPU that runs that path, or plan for auto"});
    }
    std::map<std::string, EfficiencyCurve> own;
    for (const std::string& name : attention_curve_names()) {
      const auto at = static_cast<std::size_t>(std::find(names.begin(), names.end(), name) - names.begin());
      own[name] = c.kernels[at];
      if (const auto curve = wanted->second.find(name); curve != wanted->second.end()) c.kernels[at] = curve->second;
    }
    c.attention_paths.erase(wanted);
    c.attention_paths[c.attention_path] = std::move(own);
    c.attention_path = std::string(path);
  }
  return calibration;
}

double ComputeCalibration::parallelism(double ctas, bool masked) const {
  if (ctas <= 0 || multiprocessors <= 0) return 1;
  const auto occupancy = [&](double n) { return masked ? n / (n + tail_ctas_per_sm) : n / std::ceil(n); };
  return std::min(1.0, occupancy(ctas / multiprocessors) / occupancy(curve_ctas / multiprocessors));
}

double EfficiencyCurve::at(double tokens) const {
  if (tokens <= 0 || tokens >= points.back().first) return points.back().second;
  if (tokens <= points.front().first) return points.front().second;
  const auto hi = std::upper_bound(points.begin(), points.end(), tokens,
                                   [](double t, const std::pair<double, double>& p) { return t < p.first; });
  const auto lo = hi - 1;
  const double x = std::log2(tokens), x0 = std::log2(lo->first), x1 = std::log2(hi->first);
  return lo->second + (hi->second - lo->second) * (x - x0) / (x1 - x0);
}

const ComputeCalibration& Calibration::compute_for(std::string_view gpu_model) const {
  const ComputeCalibration* best = nullptr;
  for (const auto& c : compute) {
    if (c.gpu == "*") {
      if (!best) best = &c;
    } else if (gpu_model.find(c.gpu) != std::string_view::npos &&
               (!best || best->gpu == "*" || c.gpu.size() > best->gpu.size())) {
      best = &c;
    }
  }
  return best ? *best : compute.front();  // "*" is always present in practice (defaults)
}

Calibration default_calibration() {
  Calibration c = built_in_calibration();
  const std::string local = topo::find_local_calibration();
  if (local.empty()) return c;
  // The whole file is checked (errors name it), but only the local ranks' curves are taken.
  const Calibration file = apply_calibration(built_in_calibration(), read_json_file(local), local);
  const auto is_local = [](const ComputeCalibration& e) { return e.gpu == topo::kLocalGpuModel; };
  const auto measured = std::find_if(file.compute.begin(), file.compute.end(), is_local);
  if (measured != file.compute.end()) *std::find_if(c.compute.begin(), c.compute.end(), is_local) = *measured;
  return c;
}

Calibration apply_calibration(Calibration base, const Json& doc, const std::string& source) {
  Problems problems;
  JsonReader reader(source, problems);
  if (!doc.is_object()) {
    reader.problem("", fmt::format("expected a JSON object, found {}", doc.type_name()), "",
                   "a calibration file looks like {\"schema\": \"burst.calibration/1\", ...}");
    problems.throw_if_any();
  }
  reader.reject_unknown_keys(doc, "", {"schema", "compute", "link_efficiency", "latency", "local"});
  reader.choice(doc, "", "schema", {"burst.calibration/1"});
  if (const Json* compute = reader.array(doc, "", "compute", false)) read_compute(reader, *compute, base);
  if (const Json* links = reader.object(doc, "", "link_efficiency", false)) {
    reader.reject_unknown_keys(*links, "/link_efficiency", link_names());
    for (std::size_t k = 0; k < link_names().size(); ++k) {
      if (const auto v = reader.number(*links, "/link_efficiency", link_names()[k], false)) {
        if (valid_fraction(*v)) {
          base.link_efficiency[k] = *v;
        } else {
          reader.problem(JsonReader::child("/link_efficiency", link_names()[k]),
                         fmt::format("efficiency {} is not in (0, 1]", *v), "a fraction of the raw bandwidth");
        }
      }
    }
  }
  if (const Json* latency = reader.object(doc, "", "latency", false)) {
    reader.reject_unknown_keys(*latency, "/latency", class_names());
    for (std::size_t k = 0; k < class_names().size(); ++k) {
      if (const auto v = reader.duration(*latency, "/latency", class_names()[k], false)) {
        if (*v >= 0) {
          base.latency_s[k] = *v;
        } else {
          reader.problem(JsonReader::child("/latency", class_names()[k]), "latency must not be negative");
        }
      }
    }
  }
  problems.throw_if_any();
  return base;
}

Calibration read_calibration_file(const std::string& path) {
  return apply_calibration(default_calibration(), read_json_file(path), path);
}

namespace {

// [["1K", 0.5], ...]: a curve as a calibration file writes it.
Json curve_json(const EfficiencyCurve& curve) {
  Json points = Json::array();
  for (const auto& [tokens, eff] : curve.points) {
    points.push_back(Json::array({units::format_tokens(static_cast<std::int64_t>(tokens)), eff}));
  }
  return points;
}

}  // namespace

Json calibration_to_json(const Calibration& calibration) {
  Json doc = Json::object();
  doc["schema"] = "burst.calibration/1";
  Json compute = Json::array();
  for (const auto& c : calibration.compute) {
    Json entry = Json::object();
    entry["gpu"] = c.gpu;
    if (!c.attention_path.empty()) entry["attention_path"] = c.attention_path;
    for (const auto& [path, curves] : c.attention_paths) {
      for (const auto& [name, curve] : curves) entry["attention_paths"][path][name] = curve_json(curve);
    }
    for (std::size_t k = 0; k < kernel_names().size(); ++k) entry[kernel_names()[k]] = curve_json(c.kernels[k]);
    entry["launch_gap"] = units::format_duration(c.launch_gap_s);
    entry["multiprocessors"] = c.multiprocessors;
    entry["curve_ctas"] = c.curve_ctas;
    entry["tail_ctas_per_sm"] = c.tail_ctas_per_sm;
    entry["comm_ctas"] = c.comm_ctas;
    compute.push_back(entry);
  }
  doc["compute"] = compute;
  Json links = Json::object();
  for (std::size_t k = 0; k < link_names().size(); ++k) links[link_names()[k]] = calibration.link_efficiency[k];
  doc["link_efficiency"] = links;
  Json latency = Json::object();
  for (std::size_t k = 0; k < class_names().size(); ++k) {
    latency[class_names()[k]] = units::format_duration(calibration.latency_s[k]);
  }
  doc["latency"] = latency;
  return doc;
}

}  // namespace burst::sim
