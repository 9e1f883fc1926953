// burst bench training --device (see bench_training_device.hpp).
#include "tools/burst/bench_training_device.hpp"

#include <stdlib.h>  // NOLINT(modernize-deprecated-headers): mkdtemp

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "common/median.hpp"
#include "plan/plan.hpp"
#include "runtime/device/device.hpp"
#include "runtime/training/training_report.hpp"
#include "tools/burst/device_traffic_text.hpp"
#include "tools/burst/subprocess_json.hpp"

namespace burst::cli {
namespace {

constexpr double kHopperPeakTflops = 989;  // H100 / H200 SXM, dense bf16

struct Row {
  int ranks = 1;
  std::int64_t tokens = 0;
};

// The last lines of `text`: what a failed command said.
std::string tail_of(const std::string& text, std::size_t lines = 6) {
  std::size_t at = text.size();
  for (std::size_t n = 0; n <= lines && at != std::string::npos && at > 0; ++n) at = text.rfind('\n', at - 1);
  return text.substr(at == std::string::npos ? 0 : at + 1);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Model FLOPs of one step (see the header): matrix parameters, and attention under the plan's mask.
double model_flops(const Json& report) {
  const Json& m = report["run"]["model"];
  const auto get = [&](const char* k) { return m[k].get<double>(); };
  const double tokens = report["run"]["seq"].get<double>();
  const double matrices = report["run"]["parameters"].get<double>() - get("vocab") * get("hidden") -
                          (2 * get("layers") + 1) * get("hidden");
  const double attention_pairs = report["plan"]["mask"] == "full" ? 2 * tokens * tokens : tokens * (tokens + 1);
  return 6 * tokens * matrices + 6 * get("layers") * get("heads") * get("head_dim") * attention_pairs;
}

double median_warm_step(const Json& report) {
  std::vector<double> steps = report["step_time_s"].get<std::vector<double>>();
  if (steps.size() > 1) steps.erase(steps.begin());  // the first fills the pools and builds the plans
  return median(std::move(steps));
}

class Bench {
 public:
  explicit Bench(const DeviceTrainingBench& b) : b_(b), exe_(own_executable()) {
    std::string pattern = (std::filesystem::temp_directory_path() / "burst-bench-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw Error(Problem{"bench training", "cannot make a temporary directory", "", ""});
    dir_ = pattern;
    peak_ = b.peak_tflops > 0 ? b.peak_tflops : (b.device == "cuda" ? kHopperPeakTflops : 0);
  }
  ~Bench() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  // The row's figures, or {"error": what failed}.
  Json run(const Row& r) {
    const std::string name = fmt::format("{}x{}", r.ranks, r.tokens);
    const std::string plan_path = dir_ + "/plan-" + name + ".json";
    const CommandResult planned = run_command(fmt::format(
        "{} plan --topology local --nodes 1 --per-node {} --model {} --seq {} --memory-budget 75GiB --strategy burst "
        "-o {} 2>&1",
        escape::shell_word(exe_), r.ranks, escape::shell_word(b_.model), r.tokens, escape::shell_word(plan_path)));
    if (planned.status != 0) return {{"error", "burst plan failed: " + tail_of(planned.output)}};
    plan::Plan plan = plan::read_plan(plan_path);
    plan.strategy.zero.offload = false;  // the state where the device computes
    plan::write_plan(plan, plan_path);
    const std::string errors = dir_ + "/run-" + name + ".err";
    const CommandResult ran = run_command(
        fmt::format("{} run {} --device {} --loopback --steps {} --json{} 2>{}", escape::shell_word(exe_),
                    escape::shell_word(plan_path), b_.device, b_.steps,
                    b_.data.empty() ? "" : " --data " + escape::shell_word(b_.data), escape::shell_word(errors)));
    const Json report = ran.json();
    if (ran.status != 0 || report.is_discarded()) return {{"error", "burst run failed: " + tail_of(read_text(errors))}};
    const double step = median_warm_step(report), flops = model_flops(report);
    const Json& traffic = report["device_traffic"];
    Json row = {{"ranks", r.ranks},
                {"tokens", r.tokens},
                {"parameters", report["run"]["parameters"]},
                {"step_s", step},
                {"tokens_per_s", static_cast<double>(r.tokens) / step},
                {"model_flops_per_step", flops},
                {"predicted_step_s", report["predicted"]["step_time_s"]},
                {"losses", report["losses"]},
                {"traffic_warm_step",
                 traffic.contains("later_steps_max") ? traffic["later_steps_max"] : traffic["first_step"]}};
    if (peak_ > 0) row["mfu"] = flops / step / (peak_ * 1e12);
    if (r.ranks == 1 && b_.torch) row["torch"] = torch_row(r);
    return row;
  }

  [[nodiscard]] double peak() const { return peak_; }

 private:
  Json torch_row(const Row& r) const {
    if (b_.device != "cuda") return {{"unavailable", "PyTorch's step is measured on cuda only"}};
    const CommandResult t = run_command(fmt::format(
        "python3 {} --model {} --tokens {} --steps {} --peak-tflops {} 2>&1",
        escape::shell_word(BURST_TORCH_STEP_SCRIPT), escape::shell_word(b_.model), r.tokens, b_.steps, peak_));
    if (t.status < 0) return {{"unavailable", "could not start python3"}};
    Json parsed = t.json();
    if (parsed.is_discarded()) return {{"unavailable", "torch_step.py printed no JSON: " + tail_of(t.output)}};
    return parsed;
  }

  const DeviceTrainingBench& b_;
  std::string exe_, dir_;
  double peak_ = 0;
};

void print_row(const Json& row, const Json& rows) {
  const int ranks = row["ranks"].get<int>();
  const std::int64_t tokens = row["tokens"].get<std::int64_t>();
  if (row.contains("error")) {
    fmt::print("{:>5} {:>7}  failed: {}\n", ranks, tokens, row["error"].get<std::string>());
    return;
  }
  const double step = row["step_s"].get<double>();
  std::string scaling = "-";
  for (const Json& one : rows) {  // the one-rank row on 1/P of the tokens
    if (ranks > 1 && one["ranks"] == 1 && one.contains("step_s") &&
        one["tokens"].get<std::int64_t>() * ranks == tokens) {
      scaling = fmt::format("{:.2f}", step / (ranks * one["step_s"].get<double>()));
    }
  }
  const double predicted = row["predicted_step_s"].get<double>();
  fmt::print("{:>5} {:>7} {:>9.3f} {:>10.0f} {:>6} {:>7} {:>9.3f} {:>6.2f}  {}\n", ranks, tokens, step,
             row["tokens_per_s"].get<double>(),
             row.contains("mfu") ? fmt::format("{:.1f}%", 100 * row["mfu"].get<double>()) : "-", scaling, predicted,
             step / predicted, device_traffic_text(rt::device_traffic_from_json(row["traffic_warm_step"])));
  if (!row.contains("torch")) return;
  const Json& t = row["torch"];
  if (t.contains("unavailable")) {
    fmt::print("{:>13}  torch: {}\n", "", t["unavailable"].get<std::string>());
  } else {
    fmt::print(
        "{:>13} {:>9.3f} {:>10.0f} {:>6}  torch {} on {}, {} parameters (burst {}); burst / torch tokens/s {:.2f}\n",
        "", t["step_s_median"].get<double>(), t["tokens_per_s"].get<double>(),
        t.contains("mfu") ? fmt::format("{:.1f}%", 100 * t["mfu"].get<double>()) : "-", t["torch"].get<std::string>(),
        t["device"].get<std::string>(), t["parameters"].get<std::uint64_t>(), row["parameters"].get<std::uint64_t>(),
        row["tokens_per_s"].get<double>() / t["tokens_per_s"].get<double>());
  }
  std::fflush(stdout);
}

}  // namespace

void run_training_bench_device(const DeviceTrainingBench& b) {
  if (b.device == "cuda")
    (void)rt::choose_device("cuda", rt::probe_gpus(), "--device");  // one clear line without a GPU
  if (!std::filesystem::is_regular_file(b.model)) {
    throw Error(Problem{"--model", fmt::format("{}: not a file", b.model), "a model file (config.json)", ""});
  }
  std::vector<Row> rows;
  for (const std::int64_t t : b.tokens) rows.push_back({1, t});
  for (const int p : b.ranks) rows.push_back({p, b.tokens.front() * p});
  Bench bench(b);
  if (!b.json) {
    fmt::print("bench: {} on {}, {} steps a row (the median after the first){}\n", b.model, b.device, b.steps,
               bench.peak() > 0 ? fmt::format(", MFU against {} TFLOP/s", bench.peak()) : "");
    fmt::print("{:>5} {:>7} {:>9} {:>10} {:>6} {:>7} {:>9} {:>6}  {}\n", "ranks", "tokens", "step s", "tokens/s", "MFU",
               "vs Px1", "predicted", "ratio", "a warm step's host/device traffic");
  }
  Json out = Json::array();
  for (const Row& r : rows) {
    fmt::print(stderr, "bench: {} rank(s), {} tokens ...\n", r.ranks, r.tokens);
    out.push_back(bench.run(r));
    if (!b.json) print_row(out.back(), out);
  }
  if (b.json) fmt::print("{}\n", out.dump(2));
}

}  // namespace burst::cli
