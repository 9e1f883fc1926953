// burst calibrate: measure this machine so the `local` topology predicts honestly.
//
// Run it as the runs it calibrates for run: `mpirun -np N burst calibrate --per-node K` gives
// N ranks in N / K virtual nodes of K ranks, rank r in node r / K (the `local` topology's
// layout). Every rank measures at once, as every rank computes at once in a run, and rank 0
// writes a "burst.calibration/1" file (docs/runtime-calibration.md):
//   local.compute_flops_per_rank     the fastest FLOP kernel measured (FLOP/s per rank)
//   compute[gpu = "cpu-rank"]        attn_fwd, attn_bwd (full mask), attn_fwd_masked,
//                                    attn_bwd_masked (causal), gemm: speed per block size / that peak;
//                                    elementwise: a decoder layer's elementwise kernels as the
//                                    training step runs them, the bytes the cost model counts
//                                    for them (bf16) per second / the memory bandwidth below
//   local.intra_* / inter_*          ping-pong between ranks 0 and 1 (same node) and ranks 0
//                                    and K (next node); a layout without such a pair keeps
//                                    the default and says so
//   local.memory_per_rank            physical memory / ranks
//   local.memory_bandwidth_per_rank  a streaming copy on every rank at once
//   local.optimizer_params_per_s_per_rank
//                                    the training step's AdamW on a shard, every rank at once
// The `local` topology reads the "local" section, the simulator's default calibration the
// "cpu-rank" curves, both from the same file, so `burst plan --topology local` needs no flag.
//
// On GPU nodes (--device cuda, the default where a GPU is visible, decided as `burst run`
// decides) every rank measures its node-local GPU instead (runtime/calibration/gpu_speed.hpp),
// K is the real ranks per node (default: the ranks mpirun put on rank 0's node), the links are
// NCCL's, and rank 0 writes the GPU model's file (gpu_calibration.hpp) for
// `burst plan --calibration FILE`.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "common/units.hpp"
#include "runtime/calibration/curve_points.hpp"
#include "runtime/calibration/gpu_speed.hpp"
#include "runtime/calibration/kernel_speed.hpp"
#include "runtime/calibration/layer_speed.hpp"
#include "runtime/calibration/memory_speed.hpp"
#include "runtime/calibration/optimizer_speed.hpp"
#include "runtime/calibration/ping_pong.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/device/device.hpp"
#include "simulator/costs/calibration.hpp"
#include "simulator/training/training.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/gpu_calibration.hpp"
#include "tools/burst/validators.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::cli {
namespace {

struct CalibrateOptions {
  int per_node = 0;  // 0: cpu: 2 as the local topology's default, 1 on a one-rank job; cuda: the node's ranks
  std::string output;
  std::string device;    // cuda, cpu; empty: cuda when a GPU is visible
  std::string topology;  // cuda: what the link figures are relative to (default: the GPU's preset)
  bool quick = false;
  bool json = false;
};

// The element size the elementwise figure's bytes are counted in: the cost model's for a bf16 job
// (burst plan's default dtype), whatever the CPU runtime holds (fp32), so that the efficiency
// prices the runtime's work in the model's terms.
constexpr int kModelledElementBytes = 2;

// What rank 0 knows after measuring.
struct Measured {
  int ranks = 0;
  int per_node = 0;
  std::vector<rt::KernelSpeed> kernels;
  std::optional<rt::LinkSpeed> intra, inter;  // none: no pair of ranks in that relation
  double memory_per_rank = 0;
  double memory_bandwidth_per_rank = 0;
  double optimizer_params_per_s = 0;
};

// The file's path and the layout, checked identically on every rank before anything runs.
struct Setup {
  std::string path;
  int per_node = 0;
};

Setup resolve(const CalibrateOptions& o, const rt::Communicator& comm, rt::Device device) {
  namespace fs = std::filesystem;
  const int ranks = comm.size();
  Problems problems;
  Setup s;
  s.per_node = o.per_node > 0 ? o.per_node : device == rt::Device::Cuda ? comm.local_size() : std::min(2, ranks);
  if (ranks % s.per_node != 0) {
    problems.add("--per-node",
                 fmt::format("{} ranks per virtual node do not divide the job's {} ranks", s.per_node, ranks),
                 "a divisor of the rank count (mpirun -np)",
                 "use the --per-node the runs will use with --topology local --nodes N --per-node K, and -np N*K");
  }
  if (!o.topology.empty() && device != rt::Device::Cuda) {
    problems.add("--topology", "the links of a GPU cluster are calibrated on GPUs", "with --device cuda",
                 "the local topology's links are the \"local\" section, measured without it");
  }
  s.path = o.output.empty() ? topo::local_calibration_write_path() : o.output;
  if (s.path.empty()) {
    problems.add("-o", "no place to write the calibration: HOME, XDG_CONFIG_HOME and BURST_LOCAL_CALIBRATION are unset",
                 "a file path", "pass -o FILE and point BURST_LOCAL_CALIBRATION at it");
  } else if (!o.output.empty()) {
    const fs::path dir = fs::path(s.path).has_parent_path() ? fs::path(s.path).parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      problems.add(s.path, fmt::format("cannot write the calibration: directory '{}' does not exist", dir.string()), "",
                   "create it first");
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
  rt::LayerElementwiseOptions layer;
  rt::OptimizerSpeedOptions optimizer;
  rt::PingPongOptions links;
  std::size_t copy_bytes = std::size_t{64} << 20;
  int copy_rounds = 5;
  if (quick) {
    kernels = {{128, 256, 512}, 2, 128, 1, 0.05e9};
    layer = {{256}, {}, 1, 256};
    optimizer = {std::int64_t{1} << 18, 1};
    links = {20, {std::size_t{1} << 20}, 2};
    copy_bytes = std::size_t{16} << 20;
    copy_rounds = 2;
  }
  const bool lead = comm.rank() == 0;
  if (lead) fmt::print(stderr, "calibrate: kernels on {} ranks at once ...\n", comm.size());
  m.kernels = rt::measure_kernel_speeds(comm, kernels);
  if (lead)
    fmt::print(stderr, "calibrate: a decoder layer's elementwise kernels on {} ranks at once ...\n", comm.size());
  ModelSpec reference;  // the probe's layer, as the cost model sees it
  reference.hidden = static_cast<int>(layer.shape.hidden);
  reference.ffn = static_cast<int>(layer.shape.ffn);
  reference.heads = static_cast<int>(layer.shape.heads);
  reference.kv_heads = static_cast<int>(layer.shape.kv_heads);
  reference.head_dim = static_cast<int>(layer.shape.head_dim);
  const std::vector<rt::KernelSpeed> elementwise =
      rt::measure_layer_elementwise(comm, layer, [&reference](std::int64_t tokens) {
        return sim::layer_elementwise_bytes(reference, static_cast<double>(tokens), 1, kModelledElementBytes).total();
      });
  m.kernels.insert(m.kernels.end(), elementwise.begin(), elementwise.end());
  if (lead) fmt::print(stderr, "calibrate: an AdamW step on {} ranks at once ...\n", comm.size());
  m.optimizer_params_per_s = rt::measure_optimizer_speed(comm, optimizer);
  for (const rt::LinkPair& p : rt::link_pairs(comm.size(), s.per_node)) {
    const bool intra = p.level == rt::RingLevel::Intra;
    if (lead) {
      fmt::print(stderr, "calibrate: ping-pong ranks {} and {} ({} virtual node) ...\n", p.a, p.b,
                 intra ? "same" : "next");
    }
    (intra ? m.intra : m.inter) = rt::ping_pong(comm, p.a, p.b, p.level, links);
  }
  if (lead) fmt::print(stderr, "calibrate: memory copy on {} ranks at once ...\n", comm.size());
  m.memory_bandwidth_per_rank = rt::copy_bandwidth_per_rank(comm, copy_bytes, copy_rounds);
  // Whole MiB, so the file says "3012MiB" rather than a count of pages.
  m.memory_per_rank = std::floor(rt::machine_memory_bytes() / comm.size() / (1 << 20)) * (1 << 20);
  return m;
}

// The fastest FLOP rate measured (the elementwise figures are bytes a second).
double peak_of(const Measured& m) {
  double peak = 0;
  for (const auto& k : m.kernels) {
    if (k.kernel != "elementwise") peak = std::max(peak, k.flops_per_s());
  }
  return peak;
}

Json calibration_document(const Measured& m) {
  const double peak = peak_of(m);
  Json local = {{"compute_flops_per_rank", units::format_flop_rate(peak)},
                {"memory_per_rank", units::format_bytes(m.memory_per_rank)},
                {"memory_bandwidth_per_rank", units::format_bandwidth(m.memory_bandwidth_per_rank)},
                {"optimizer_params_per_s_per_rank", std::round(m.optimizer_params_per_s)}};
  const auto link = [&local](const char* name, const std::optional<rt::LinkSpeed>& speed) {
    if (!speed) return;
    local[fmt::format("{}_bandwidth", name)] = units::format_bandwidth(speed->bandwidth_Bps);
    local[fmt::format("{}_latency", name)] = units::format_duration(speed->latency_s);
  };
  link("intra", m.intra);
  link("inter", m.inter);
  return {
      {"schema", "burst.calibration/1"},
      {"local", local},
      {"compute",
       Json::array({rt::compute_entry(topo::kLocalGpuModel, m.kernels, {peak, m.memory_bandwidth_per_rank}, "cpu")})}};
}

// One row per kernel measured (the elementwise copy is printed as a bandwidth apart).
void print_kernels(const std::vector<rt::KernelSpeed>& kernels) {
  fmt::print("{:<9} {:<7} {:>6} {:>10} {:>10}\n", "kernel", "mask", "block", "GFLOP/s", "seconds");
  for (const auto& k : kernels) {
    if (k.kernel == "elementwise") continue;
    fmt::print("{:<9} {:<7} {:>6} {:>10.2f} {:>10.4f}\n", k.kernel, k.mask.empty() ? "-" : k.mask, k.block,
               k.flops_per_s() / 1e9, k.seconds);
  }
}

void print_table(const Measured& m, const Json& doc, const std::string& path) {
  fmt::print("{} ranks as {} virtual node(s) of {}, measured together\n", m.ranks, m.ranks / m.per_node, m.per_node);
  print_kernels(m.kernels);
  for (const auto& k : m.kernels) {
    if (k.kernel != "elementwise") continue;
    fmt::print("layer elementwise at {} tokens: {} of the model's bf16 bytes, {:.3f} of the memory bandwidth\n",
               k.block, units::format_bandwidth(k.flops_per_s()), k.flops_per_s() / m.memory_bandwidth_per_rank);
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
  fmt::print("{:<26} {:.3g} parameters/s (AdamW)\n", "optimizer per rank", m.optimizer_params_per_s);
  field("intra_bandwidth", units::format_bandwidth(defaults.intra_bandwidth_Bps), no_intra);
  field("intra_latency", units::format_duration(defaults.intra_latency_s), no_intra);
  field("inter_bandwidth", units::format_bandwidth(defaults.inter_bandwidth_Bps), no_inter);
  field("inter_latency", units::format_duration(defaults.inter_latency_s), no_inter);
  fmt::print(stderr, "calibrate: wrote {}\n", escape::terminal(path));
}

// Rank 0 writes `doc` so no reader sees half a file, then reads it back as the cost models will.
void write_calibration(const std::string& path, bool default_path, const Json& doc) {
  if (default_path) std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  write_file_atomically(path, doc.dump(2) + "\n", "the calibration");
  (void)sim::read_calibration_file(path);
}

#ifdef BURST_HAVE_CUDA
// The GPU side: this rank's node-local GPU, the links over NCCL (when this build has it).
void calibrate_gpus(rt::Communicator& comm, const Setup& s, const CalibrateOptions& o, const rt::GpuProbe& probe) {
  const bool lead = comm.rank() == 0;
  const int device = comm.local_rank() % probe.count;
  GpuMeasurements m;
  std::optional<topo::Topology> links;
  try {
    if (comm.local_size() > probe.count) {
      throw Error(Problem{"mpirun",
                          fmt::format("{} ranks on this node share {} GPU(s)", comm.local_size(), probe.count),
                          "at most one rank per GPU", "start as many ranks per node as it has GPUs"});
    }
    if (lead) fmt::print(stderr, "calibrate: attention, GEMM and copy on {} GPU(s) at once ...\n", comm.size());
    const rt::GpuSpeeds speeds = rt::measure_gpu_speeds(
        comm, o.quick ? rt::quick_gpu_speed_options(device) : rt::GpuSpeedOptions{.device = device});
    m = {speeds.cuda_name,
         pci_device_of(speeds.pci_bus_id),
         speeds.multiprocessors,
         speeds.kernels,
         speeds.attention_path,
         {},
         {}};
    // Every rank knows the model (each asks its own GPU), so every rank skips or measures alike.
    const topo::hw::GpuModel& model = gpu_model_of(m.cuda_name, m.pci_device);
    links = link_topology(o.topology, model);
    const std::vector<rt::LinkPair> pairs = rt::link_pairs(comm.size(), s.per_node);
    if (!links && !pairs.empty() && lead) {
      fmt::print(stderr, "calibrate: links not measured: no preset has {} GPUs (pass --topology)\n", model.spec.model);
    }
    if (links && !pairs.empty()) {
#ifdef BURST_HAVE_NCCL
      if (lead) fmt::print(stderr, "calibrate: NCCL ping-pong per ring level ...\n");
      const rt::PingPongOptions sizes = o.quick ? rt::PingPongOptions{10, {std::size_t{1} << 20}, 2}
                                                : rt::PingPongOptions{50,
                                                                      {std::size_t{1} << 20, std::size_t{16} << 20,
                                                                       std::size_t{64} << 20, std::size_t{256} << 20},
                                                                      5};
      const std::vector<rt::LinkSpeed> speeds_by_pair = rt::nccl_ping_pongs(comm, pairs, sizes, device);
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        (pairs[i].level == rt::RingLevel::Intra ? m.intra : m.inter) = speeds_by_pair[i];
      }
#else
      if (lead) fmt::print(stderr, "calibrate: links not measured: this build has no NCCL\n");
#endif
    }
  } catch (const Error& e) {
    rt::abort_job(comm, e.what());
  }
  if (!lead) return;
  const topo::hw::GpuModel& model = gpu_model_of(m.cuda_name, m.pci_device);
  const std::string path = o.output.empty() ? gpu_calibration_path(s.path, model) : o.output;
  const Json doc = gpu_calibration_document(m, links ? &*links : nullptr);
  write_calibration(path, o.output.empty(), doc);
  if (o.json) {
    fmt::print("{}\n", Json{{"file", path}, {"calibration", doc}}.dump(2));
    return;
  }
  fmt::print("{} GPU(s) ({}, {} multiprocessors) in nodes of {}, measured together; attention on the {} kernel path\n",
             comm.size(), model.spec.model, m.multiprocessors, s.per_node, m.attention_path);
  print_kernels(m.kernels);
  for (const auto& k : m.kernels) {
    if (k.kernel == "elementwise")
      fmt::print("device copy {} (read + written)\n", units::format_bandwidth(k.flops_per_s()));
  }
  for (const auto& [level, speed] : {std::pair{"intra", m.intra}, std::pair{"inter", m.inter}}) {
    if (speed) {
      fmt::print("{:<5} NCCL p2p {} one way, {} latency\n", level, units::format_bandwidth(speed->bandwidth_Bps),
                 units::format_duration(speed->latency_s));
    }
  }
  if (links)
    fmt::print("links relative to {}: {}\n", links->name(), doc.value("link_efficiency", Json::object()).dump());
  fmt::print(stderr, "calibrate: wrote {} (use it with burst plan --calibration {})\n", escape::terminal(path),
             escape::shell_word(path));
}
#endif

void calibrate(const CalibrateOptions& o) {
  rt::CommOptions comm_options;
  comm_options.timeout_s = 300;  // the slowest rank's kernels on an oversubscribed machine
  rt::Job job(comm_options);
  rt::Communicator& comm = job.comm();
  // Every rank checks the same options and fails the same way: rank 0 reports it.
  Setup setup;
  const rt::GpuProbe probe = rt::probe_gpus();
  rt::Device device = rt::Device::Cpu;
  try {
    device = rt::choose_device(o.device, probe, "--device");
    setup = resolve(o, comm, device);
  } catch (const Error&) {
    if (comm.rank() == 0) throw;
    return;
  }
  if (comm.rank() == 0) rt::report_device(device, o.device, probe);
#ifdef BURST_HAVE_CUDA
  if (device == rt::Device::Cuda) {
    calibrate_gpus(comm, setup, o, probe);
    return;
  }
#endif
  Measured measured;
  try {
    measured = measure(comm, setup, o.quick);
  } catch (const Error& e) {
    rt::abort_job(comm, e.what());
  }
  if (comm.rank() != 0) return;
  const Json doc = calibration_document(measured);
  write_calibration(setup.path, o.output.empty(), doc);
  // The file must read back as the local topology too.
  (void)topo::read_local_calibration(setup.path);
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
      "calibrate",
      "Measure this machine's ranks for the local topology, or each rank's GPU and NCCL links on GPU nodes "
      "(mpirun -np N burst calibrate --per-node K [--device cuda])");
  cmd->add_option("--per-node", options->per_node,
                  "Ranks per virtual node, as the runs use with --topology local (default 2; 1 on one rank); "
                  "cuda: ranks per node (default: those mpirun put on rank 0's node)")
      ->check(kFinitePositive);
  cmd->add_option(
      "-o,--output", options->output,
      "Calibration file (default: $BURST_LOCAL_CALIBRATION, else $XDG_CONFIG_HOME/burst/local.json, "
      "else ~/.config/burst/local.json; cuda: <model>.json in that file's folder, e.g. H100-SXM5-80GB.json)");
  cmd->add_option("--device", options->device,
                  "cuda: each rank's GPU (kernels, cuBLAS, NCCL); cpu: the CPU kernels and MPI "
                  "(default: cuda when a GPU is visible, else cpu)");
  cmd->add_option("--topology", options->topology,
                  "cuda: the topology (preset or file) the NCCL link figures are relative to "
                  "(default: the preset of this GPU model)");
  cmd->add_flag("--quick", options->quick,
                "A few seconds of measuring (tests); the default takes up to ~30 s (about a minute on GPUs)");
  cmd->add_flag("--json", options->json, "Print the file's path and content as JSON on stdout");
  cmd->callback([options] { calibrate(*options); });
}

}  // namespace burst::cli
