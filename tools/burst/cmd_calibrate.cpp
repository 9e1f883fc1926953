// burst calibrate: measure this machine so the `local` topology predicts honestly.
//
// Run it as the runs it calibrates for run: `mpirun -np N burst calibrate --per-node K` gives
// N ranks in N / K virtual nodes of K ranks, rank r in node r / K (the `local` topology's
// layout). Every rank measures at once, as every rank computes at once in a run, and rank 0
// writes a "burst.calibration/1" file (docs/runtime-calibration.md):
//   local.compute_flops_per_rank     the fastest kernel measured (FLOP/s per rank)
//   compute[gpu = "cpu-rank"]        attn_fwd, attn_bwd (full mask), attn_fwd_masked,
//                                    attn_bwd_masked (causal), gemm: speed per block size / that peak
//   local.intra_* / inter_*          ping-pong between ranks 0 and 1 (same node) and ranks 0
//                                    and K (next node); a layout without such a pair keeps
//                                    the default and says so
//   local.memory_per_rank            physical memory / ranks
//   local.memory_bandwidth_per_rank  a streaming copy on every rank at once
// The `local` topology reads the "local" section, the simulator's default calibration the
// "cpu-rank" curves, both from the same file, so `burst plan --topology local` needs no flag.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/json_reader.hpp"
#include "common/units.hpp"
#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/calibration/memory_speed.hpp"
#include "runtime/calibration/ping_pong.hpp"
#include "runtime/comm/job.hpp"
#include "simulator/costs/calibration.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/validators.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::cli {
namespace {

struct CalibrateOptions {
  int per_node = 0;  // 0: 2 as the local topology's default, 1 on a one-rank job
  std::string output;
  bool quick = false;
  bool json = false;
};

// What rank 0 knows after measuring.
struct Measured {
  int ranks = 0;
  int per_node = 0;
  std::vector<rt::KernelSpeed> kernels;
  std::optional<rt::LinkSpeed> intra, inter;  // none: no pair of ranks in that relation
  double memory_per_rank = 0;
  double memory_bandwidth_per_rank = 0;
};

// The file's path and the layout, checked identically on every rank before anything runs.
struct Setup {
  std::string path;
  int per_node = 0;
};

Setup resolve(const CalibrateOptions& o, int ranks) {
  namespace fs = std::filesystem;
  Problems problems;
  Setup s;
  s.per_node = o.per_node > 0 ? o.per_node : std::min(2, ranks);
  if (ranks % s.per_node != 0) {
    problems.add("--per-node", fmt::format("{} ranks per virtual node do not divide the job's {} ranks", s.per_node, ranks),
                 "a divisor of the rank count (mpirun -np)",
                 "use the --per-node the runs will use with --topology local --nodes N --per-node K, and -np N*K");
  }
  s.path = o.output.empty() ? topo::local_calibration_write_path() : o.output;
  if (s.path.empty()) {
    problems.add("-o", "no place to write the calibration: HOME, XDG_CONFIG_HOME and BURST_LOCAL_CALIBRATION are unset",
                 "a file path", "pass -o FILE and point BURST_LOCAL_CALIBRATION at it");
  } else if (!o.output.empty()) {
    const fs::path dir = fs::path(s.path).has_parent_path() ? fs::path(s.path).parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      problems.add(s.path, fmt::format("cannot write the calibration: directory '{}' does not exist", dir.string()),
                   "", "create it first");
    }
  }
  problems.throw_if_any();
  return s;
}

Measured measure(rt::Communicator& comm, const Setup& s, bool quick) {
  Measured m;
  m.ranks = comm.size();
  m.per_node = s.per_node;
  rt::KernelSpeedOptions kernels;
  rt::PingPongOptions links;
  std::size_t copy_bytes = std::size_t{64} << 20;
  int copy_rounds = 5;
  if (quick) {
    kernels = {{128, 256, 512}, 2, 128, 1, 0.05e9};
    links = {20, {std::size_t{1} << 20}, 2};
    copy_bytes = std::size_t{16} << 20;
    copy_rounds = 2;
  }
  const bool lead = comm.rank() == 0;
  if (lead) fmt::print(stderr, "calibrate: kernels on {} ranks at once ...\n", comm.size());
  m.kernels = rt::measure_kernel_speeds(comm, kernels);
  if (s.per_node >= 2) {
    if (lead) fmt::print(stderr, "calibrate: ping-pong ranks 0 and 1 (same virtual node) ...\n");
    m.intra = rt::ping_pong(comm, 0, 1, rt::RingLevel::Intra, links);
  }
  if (comm.size() > s.per_node) {
    if (lead) fmt::print(stderr, "calibrate: ping-pong ranks 0 and {} (next virtual node) ...\n", s.per_node);
    m.inter = rt::ping_pong(comm, 0, s.per_node, rt::RingLevel::Inter, links);
  }
  if (lead) fmt::print(stderr, "calibrate: memory copy on {} ranks at once ...\n", comm.size());
  m.memory_bandwidth_per_rank = rt::copy_bandwidth_per_rank(comm, copy_bytes, copy_rounds);
  // Whole MiB, so the file says "3012MiB" rather than a count of pages.
  m.memory_per_rank = std::floor(rt::machine_memory_bytes() / comm.size() / (1 << 20)) * (1 << 20);
  return m;
}

double peak_of(const Measured& m) {
  double peak = 0;
  for (const auto& k : m.kernels) peak = std::max(peak, k.flops_per_s());
  return peak;
}

// Per curve, [block, efficiency] points: the speed of a block size / the peak, rounded to 3
// decimals and kept above 0 (a calibration file's efficiencies lie in (0, 1]). Attention on the
// full mask gives attn_fwd / attn_bwd, on the causal mask (a diagonal block, partly allowed)
// attn_fwd_masked / attn_bwd_masked: the simulator prices a ring step's blocks on the curve of
// their own kind (docs/cost-models.md).
Json curves(const Measured& m, double peak) {
  std::map<std::string, std::map<std::int64_t, std::pair<double, double>>> sums;  // curve -> block -> (flops, s)
  for (const auto& k : m.kernels) {
    auto& [flops, seconds] = sums[k.mask == "causal" ? k.kernel + "_masked" : k.kernel][k.block];
    flops += k.flops;
    seconds += k.seconds;
  }
  Json entry = {{"gpu", topo::kLocalGpuModel}};
  for (const char* kernel : {"attn_fwd", "attn_bwd", "attn_fwd_masked", "attn_bwd_masked", "gemm"}) {
    Json points = Json::array();
    for (const auto& [block, fs] : sums[kernel]) {
      const double efficiency = std::clamp(std::round(fs.first / fs.second / peak * 1000) / 1000, 0.001, 1.0);
      points.push_back(Json::array({block, efficiency}));
    }
    entry[kernel] = points;
  }
  return entry;
}

Json calibration_document(const Measured& m) {
  const double peak = peak_of(m);
  Json local = {{"compute_flops_per_rank", units::format_flop_rate(peak)},
                {"memory_per_rank", units::format_bytes(m.memory_per_rank)},
                {"memory_bandwidth_per_rank", units::format_bandwidth(m.memory_bandwidth_per_rank)}};
  const auto link = [&local](const char* name, const std::optional<rt::LinkSpeed>& speed) {
    if (!speed) return;
    local[fmt::format("{}_bandwidth", name)] = units::format_bandwidth(speed->bandwidth_Bps);
    local[fmt::format("{}_latency", name)] = units::format_duration(speed->latency_s);
  };
  link("intra", m.intra);
  link("inter", m.inter);
  return {{"schema", "burst.calibration/1"}, {"local", local}, {"compute", Json::array({curves(m, peak)})}};
}

void print_table(const Measured& m, const Json& doc, const std::string& path) {
  fmt::print("{} ranks as {} virtual node(s) of {}, measured together\n", m.ranks, m.ranks / m.per_node, m.per_node);
  fmt::print("{:<9} {:<7} {:>6} {:>10} {:>10}\n", "kernel", "mask", "block", "GFLOP/s", "seconds");
  for (const auto& k : m.kernels) {
    fmt::print("{:<9} {:<7} {:>6} {:>10.2f} {:>10.4f}\n", k.kernel, k.mask.empty() ? "-" : k.mask, k.block,
               k.flops_per_s() / 1e9, k.seconds);
  }
  const topo::LocalCalibration defaults;
  const Json& local = doc["local"];
  const auto field = [&local](const char* key, const std::string& fallback, const char* why) {
    fmt::print("{:<26} {}\n", key,
               local.contains(key) ? local[key].get<std::string>() : fmt::format("{} (default: {})", fallback, why));
  };
  const char* no_intra = "no two ranks share a virtual node";
  const char* no_inter = "one virtual node";
  field("compute_flops_per_rank", "", "");
  field("memory_per_rank", "", "");
  field("memory_bandwidth_per_rank", "", "");
  field("intra_bandwidth", units::format_bandwidth(defaults.intra_bandwidth_Bps), no_intra);
  field("intra_latency", units::format_duration(defaults.intra_latency_s), no_intra);
  field("inter_bandwidth", units::format_bandwidth(defaults.inter_bandwidth_Bps), no_inter);
  field("inter_latency", units::format_duration(defaults.inter_latency_s), no_inter);
  fmt::print(stderr, "calibrate: wrote {}\n", path);
}

void calibrate(const CalibrateOptions& o) {
  rt::CommOptions comm_options;
  comm_options.timeout_s = 300;  // the slowest rank's kernels on an oversubscribed machine
  rt::Job job(comm_options);
  rt::Communicator& comm = job.comm();
  // Every rank checks the same options and fails the same way: rank 0 reports it.
  Setup setup;
  try {
    setup = resolve(o, comm.size());
  } catch (const Error&) {
    if (comm.rank() == 0) throw;
    return;
  }
  Measured measured;
  try {
    measured = measure(comm, setup, o.quick);
  } catch (const Error& e) {
    rt::abort_job(comm, e.what());
  }
  if (comm.rank() != 0) return;
  const Json doc = calibration_document(measured);
  if (o.output.empty()) std::filesystem::create_directories(std::filesystem::path(setup.path).parent_path());
  write_file_atomically(setup.path, doc.dump(2) + "\n", "the calibration");
  // The file must read back as the local topology and the cost models will read it.
  (void)topo::read_local_calibration(setup.path);
  (void)sim::read_calibration_file(setup.path);
  if (o.json) {
    fmt::print("{}\n", Json{{"file", setup.path}, {"calibration", doc}}.dump(2));
  } else {
    print_table(measured, doc, setup.path);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate", "Measure this machine's ranks for the local topology (mpirun -np N burst calibrate --per-node K)");
  cmd->add_option("--per-node", options->per_node,
                  "Ranks per virtual node, as the runs use with --topology local (default 2; 1 on one rank)")
      ->check(kFinitePositive);
  cmd->add_option("-o,--output", options->output,
                  "Calibration file (default: $BURST_LOCAL_CALIBRATION, else $XDG_CONFIG_HOME/burst/local.json, "
                  "else ~/.config/burst/local.json)");
  cmd->add_flag("--quick", options->quick, "A few seconds of measuring (tests); the default takes up to ~30 s");
  cmd->add_flag("--json", options->json, "Print the file's path and content as JSON on stdout");
  cmd->callback([options] { calibrate(*options); });
}

}  // namespace burst::cli
