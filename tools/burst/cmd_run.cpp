// burst run plan.json: execute a plan on the ranks mpirun started (one per plan rank), or,
// with --loopback, on every rank as a thread of this one process.
//   (default)         train the plan's model on real text for --steps steps (runtime/training)
//   --attention-only  the plan's distributed attention on random inputs (runtime/executor)
//   --dry-run         the plan's exact schedule with tiny tensors, checked
// Rank 0 prints; every rank runs. Bad input (a corrupt plan, another rank count, unreadable
// data, a state of another model) is reported once before any step, and after that a failure
// on one rank ends the whole job (every_rank.hpp), so no rank is left waiting. --trace FILE (attention runs): rank 0 writes the measured timeline of every rank as
// a Chrome trace (runtime/executor/run_trace.hpp) once every rank is done, so a bad path fails
// rank 0 alone, with exit code 2.
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/units.hpp"
#include "planner/contract/plan.hpp"
#include "planner/plan_traffic.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/device/device.hpp"
#include "runtime/executor/attention_run.hpp"
#include "runtime/training/training_run.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/validators.hpp"
#include "tools/burst/every_rank.hpp"
#include "tools/burst/run_placement.hpp"
#include "tools/burst/run_plan_check.hpp"

namespace burst::cli {
namespace {

struct RunOptions {
  std::string plan;
  bool attention_only = false;
  bool dry_run = false;
  bool check = false;
  bool json = false;
  std::string trace;
  std::string dtype;  // overrides the plan's /job/dtype when set
  std::string device;  // cuda, cpu; empty: cuda when a GPU is visible (attention runs)
  bool deterministic = false;
  bool loopback = false;  // every rank a thread of this process
  std::string transport;  // nccl, host; empty: nccl on multi-process cuda runs when built
  std::uint64_t seed = 1;
  double timeout_s = 120;
  // Training.
  int steps = 30;
  std::string data = rt::kDefaultCorpus;
  std::string save, resume;
  int save_every = 0;
  int keep = 2;
  rt::LrSchedule lr;  // --lr (peak; unset: the model's default), --warmup, --decay, --decay-steps, --lr-floor
  std::string decay = "constant";
};

// The plan as this run executes it: the file, with --dtype in place of its /job/dtype (and,
// for fp32, of its travelling accumulators' bf16: an fp32 run is fp32 throughout). Rank 0 says
// what changed, so a run never differs from its plan silently.
plan::Plan read_run_plan(const RunOptions& o, const rt::Communicator& comm) {
  plan::Plan p = plan::read_plan(o.plan);
  check_plan_cluster(p, o.plan);
  if (o.dtype.empty()) return p;
  const auto override_field = [&](const char* pointer, const std::string& from, const std::string& to) {
    if (comm.rank() == 0 && from != to) fmt::print(stderr, "note: --dtype {}: {} {} -> {}\n", o.dtype, pointer, from, to);
  };
  override_field("/job/dtype", p.job.dtype, o.dtype);
  p.job.dtype = o.dtype;
  if (o.dtype == "fp32") {
    override_field("/strategy/dq_bytes", std::to_string(p.strategy.dq_bytes), "4");
    override_field("/strategy/dkv_bytes", std::to_string(p.strategy.dkv_bytes), "4");
    p.strategy.dq_bytes = p.strategy.dkv_bytes = 4;
  }
  return p;
}

// "precision bf16 (dQ accumulators bf16, dK,dV fp32); overlap on"
std::string precision_line(const Json& run) {
  const Json& p = run["precision"];
  return fmt::format("  precision {} tensors, dQ accumulators {}, dK,dV accumulators {}; transfers {}\n",
                     p["activations"].get<std::string>(), p["dq"].get<std::string>(), p["dkv"].get<std::string>(),
                     run["overlap"].get<bool>() ? "overlapped with compute" : "then compute (overlap off)");
}

// The simulator's bytes per ring level for the plan as it ran (a dry run's dimensions and
// mask), beside the measured ones: report["comm_bytes"]["simulated_by_level"] and the ratios.
void add_simulated_traffic(const rt::PreparedRun& ran, Json& report) {
  const planner::RingTraffic simulated =
      planner::simulated_ring_traffic(ran.plan, {ran.seq, ran.heads, ran.kv_heads, ran.head_dim});
  Json& bytes = report["comm_bytes"];
  for (std::size_t phase = 0; phase < 2; ++phase) {
    const char* name = phase == 0 ? "forward" : "backward";
    for (std::size_t level = 0; level < 3; ++level) {
      const char* level_name = level == 0 ? "flat" : level == 1 ? "intra" : "inter";
      bytes["simulated_by_level"][name][level_name] = simulated[phase][level];
    }
  }
}

// "flat 1.000" for each level either side uses: measured over simulated bytes.
std::string traffic_ratios(const Json& bytes, const char* phase) {
  std::string out;
  for (const char* level : {"flat", "intra", "inter"}) {
    const double measured = bytes["by_level"][phase][level].get<double>();
    const double simulated = bytes["simulated_by_level"][phase][level].get<double>();
    if (measured == 0 && simulated == 0) continue;
    out += simulated > 0 ? fmt::format(" {} {:.3f}", level, measured / simulated)
                         : fmt::format(" {} {:.0f} bytes, none simulated", level, measured);
  }
  return out.empty() ? " none sent" : out;
}

void print_report(const Json& r) {
  const Json& m = r["measured"];
  const Json& p = r["predicted"];
  fmt::print("{} on {} ranks: {} ring, {} layout, {} backward, {} mask; {} tokens x {} heads ({} KV) x {}\n",
             r["plan"]["strategy"].get<std::string>(), r["plan"]["ranks"].get<int>(), r["plan"]["ring"].get<std::string>(),
             r["plan"]["layout"].get<std::string>(), r["plan"]["backward"].get<std::string>(),
             r["plan"]["mask"].get<std::string>(), r["run"]["seq"].get<std::int64_t>(), r["run"]["heads"].get<int>(),
             r["run"]["kv_heads"].get<int>(), r["run"]["head_dim"].get<int>());
  fmt::print("{}", precision_line(r["run"]));
  fmt::print("  forward   measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m["forward_s"].get<double>(), p["forward_s"].get<double>(), r["comm_bytes"]["forward"].get<double>());
  fmt::print("  backward  measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m["backward_s"].get<double>(), p["backward_s"].get<double>(), r["comm_bytes"]["backward"].get<double>());
  fmt::print("  overlap   forward {:.2f}, backward {:.2f} (phase time / busiest rank's kernel time; 1 = fully hidden)\n",
             m["forward_overlap"].get<double>(), m["backward_overlap"].get<double>());
  fmt::print("  ring bytes measured / simulated: forward{}, backward{}\n", traffic_ratios(r["comm_bytes"], "forward"),
             traffic_ratios(r["comm_bytes"], "backward"));
  const Json& msg = r["messages"];
  fmt::print("  messages  forward {} sent / {} received, backward {} sent / {} received\n",
             msg["forward_sent"].get<double>(), msg["forward_received"].get<double>(),
             msg["backward_sent"].get<double>(), msg["backward_received"].get<double>());
  if (r.contains("check")) {
    const Json& c = r["check"];
    const bool relative = c["tolerance_kind"].get<std::string>() != "max |error|";
    const Json& e = relative ? c["max_rel_err"] : c["max_abs_err"];
    fmt::print("  check     {} out {:.2e}, dq {:.2e}, dk {:.2e}, dv {:.2e} (tolerance {:.0e}): {}\n",
               relative ? "max |error| / max |reference|" : "max |error|", e["out"].get<double>(),
               e["dq"].get<double>(), e["dk"].get<double>(), e["dv"].get<double>(), c["tolerance"].get<double>(),
               c["passed"].get<bool>() ? "passed" : "FAILED");
  }
}

// Training runs on the CPU unless --device cuda asks for the GPU (attention runs default to a
// visible GPU): the GPU training step has not run on a GPU yet.
bool trains_on_cpu(const RunOptions& o) { return !o.attention_only && !o.dry_run && o.device != "cuda"; }

// The device of --device on this rank; rank 0 says which and why.
rt::Device run_device(const RunOptions& o, const rt::Communicator& comm) {
  return rt::job_device(o.device, comm, o.deterministic ? ", deterministic kernels" : "");
}

// Whether the ring's transfers go over NCCL; rank 0 says how they travel. On cuda the ring's
// blocks live in GPU memory (DeviceKernelMemory), which the job's communicator (MPI, host
// memory) cannot read: a job of several processes needs NCCL, and a --loopback job copies GPU
// to GPU itself (run_loopback). --transport host is the CPU's, and nccl needs --device cuda.
bool use_nccl(const RunOptions& o, rt::Device device, const rt::Communicator& comm) {
  const auto refuse = [](const std::string& what, const char* valid) {
    throw Error(Problem{"--transport", what, valid, ""});
  };
  if (device != rt::Device::Cuda) {
    if (o.transport == "nccl") refuse("nccl cannot carry this run: it moves GPU memory: it needs --device cuda", "host");
    return false;
  }
  if (o.loopback) {
    if (o.transport == "nccl") refuse("nccl cannot make two ranks of one GPU: --loopback copies the ring's blocks GPU to GPU itself", "host");
    if (comm.rank() == 0) fmt::print(stderr, "transport: loopback, the ring's blocks copied GPU to GPU between the rank threads\n");
    return false;
  }
  if (comm.size() == 1) return false;  // a ring of one: no transfers
  if (o.transport == "host") {
    refuse("host cannot carry a cuda run: the ring's blocks live in GPU memory, which the job's communicator does not read",
           "nccl");
  }
  const std::string nccl_version = rt::nccl_build_version();
  if (nccl_version.empty()) {
    throw Error(Problem{"--device", "cuda over several processes needs NCCL for the ring's GPU blocks, and this build has none",
                        "", "build with the CUDA toolkit's NCCL, run --device cpu, or --loopback on one GPU"});
  }
  if (comm.rank() == 0) {
    fmt::print(stderr, "transport: nccl {} for the ring's transfers (collectives over the job's communicator)\n", nccl_version);
  }
  return true;
}

void run_attention(const RunOptions& o, rt::Communicator& comm) {
  rt::AttentionRunOptions options;
  options.seed = o.seed;
  options.check = o.check;
  options.dry_run = o.dry_run;
  rt::RunTrace trace;
  plan::Plan ran;
  std::unique_ptr<rt::AttentionKernels> kernels;
  std::unique_ptr<rt::PreparedRun> prepared;  // the plan as it runs, prepared once
  std::unique_ptr<rt::Communicator> nccl;     // the ring's transport under --transport nccl
  Json report = run_on_every_rank(comm, [&]() -> std::function<Json()> {
    ran = read_run_plan(o, comm);
    rt::require_runnable_job(ran, comm.size());
    const rt::Device device = run_device(o, comm);
    // A loopback job's ranks share the first GPU.
    kernels = rt::make_attention_kernels(device, o.loopback ? 0 : comm.local_rank(), o.deterministic, !o.trace.empty());
    rt::order_messages_on(comm, *kernels);  // the GPU loopback's copies ordered on the kernels' stream
    options.kernels = kernels.get();
    prepared = std::make_unique<rt::PreparedRun>(rt::prepare_attention_run(ran, comm.size(), options));
    const bool over_nccl = use_nccl(o, device, comm);
    return [&, over_nccl] {
      if (over_nccl) {
        const plan::Plan as_run = rt::plan_as_run(*prepared);
        nccl = rt::make_nccl_transport(comm, rt::NcclOpLists(as_run, as_run.job.seq), *kernels);
      }
      return rt::run_attention(*prepared, over_nccl ? *nccl : comm, options, o.trace.empty() ? nullptr : &trace);
    };
  });
  if (comm.rank() != 0) return;
  add_simulated_traffic(*prepared, report);
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    print_report(report);
  }
  if (!o.trace.empty()) {
    rt::write_run_trace(o.trace, trace);
    fmt::print(stderr, "trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)\n", o.trace);
  }
  if (report.contains("check") && !report["check"]["passed"].get<bool>()) {
    throw Error(Problem{"--check", "the distributed result differs from the single-rank reference beyond the tolerance",
                        "", "run with --dry-run to check the schedule alone"});
  }
}

std::string mib(const Json& bytes) { return fmt::format("{:.1f} MiB", bytes.get<double>() / (1024.0 * 1024.0)); }

// A GPU run: its tensors are the "GPU layout" column; CUDA's own counts beside them.
void print_cuda_memory(const Json& g) {
  fmt::print("  on GPU    the GPU layout column is what this run's GPU step allocated for its activations; CUDA "
             "measured: the step's pool (attention's included) at its peak {}, device in use {} of {}\n",
             mib(g["pool_peak_bytes"]), mib(g["device_used_bytes"]), mib(g["device_total_bytes"]));
}

void print_training_report(const Json& r) {
  const Json& p = r["plan"];
  const Json& run = r["run"];
  const Json& losses = r["losses"];
  const Json& m = r["measured"];
  std::string checkpoint = p["checkpoint"].get<std::string>();
  if (checkpoint == "seq_stash") checkpoint += fmt::format(" (kept {:.2f})", p["kept_fraction"].get<double>());
  fmt::print("\n{} on {} ranks: {} ring, {} layout, {} backward, {} mask, checkpoint {}, LM head in {} chunk(s)\n",
             p["strategy"].get<std::string>(), p["ranks"].get<int>(), p["ring"].get<std::string>(),
             p["layout"].get<std::string>(), p["backward"].get<std::string>(), p["mask"].get<std::string>(), checkpoint,
             p["lm_head_chunks"].get<int>());
  fmt::print("  model     {} ({} parameters), {}-token sequences of {} ({} documents)\n",
             run["model"]["name"].get<std::string>(), run["parameters"].get<std::int64_t>(),
             units::format_tokens(run["seq"].get<std::int64_t>()), run["data"]["source"].get<std::string>(),
             run["data"]["documents"].get<std::int64_t>());
  fmt::print("{}", precision_line(run));
  fmt::print("  loss      {:.4f} -> {:.4f} over {} steps (from step {})\n", losses.front().get<double>(),
             losses.back().get<double>(), losses.size(), run["first_step"].get<std::int64_t>());
  const Json& lr = run["lr_schedule"];
  fmt::print("  lr        peak {:.3g}, linear warm-up over {} steps, then {}\n", lr["peak"].get<double>(),
             lr["warmup_steps"].get<std::int64_t>(),
             lr["decay"] == "cosine" ? fmt::format("cosine to {:.3g} at step {}", lr["peak"].get<double>() * lr["floor_ratio"].get<double>(),
                                                   lr["decay_steps"].get<std::int64_t>())
                                     : std::string("constant"));
  fmt::print("  step      measured {:.3f} s median (forward {:.3f}, backward {:.3f} of which recompute {:.3f}; attention "
             "{:.3f}, LM head {:.3f}), predicted {:.3f} s\n",
             m["step_s_median"].get<double>(), m["forward_s"].get<double>(), m["backward_s"].get<double>(),
             m["recompute_s"].get<double>(), m["attention_s"].get<double>(), m["loss_s"].get<double>(),
             r["predicted"]["step_time_s"].get<double>());
  const Json& z = r["zero"];
  fmt::print("  zero      stage {} over {} ranks: {} of {} parameters a shard, {:.3f} s a step in its collectives\n",
             z["stage"].get<int>(), z["ranks"].get<int>(), z["shard_floats"].get<std::int64_t>(),
             z["total_floats"].get<std::int64_t>(), z["collective_s"].get<double>());
  if (z.contains("state")) fmt::print("  state     {}\n", z["state"].get<std::string>());
  const auto traffic = [](const Json& t) {
    return fmt::format("{} B to the device, {} B to the host, {} host waits, {} device syncs, {} driver allocations",
                       t["host_to_device_bytes"].get<std::uint64_t>(), t["device_to_host_bytes"].get<std::uint64_t>(),
                       t["host_waits"].get<std::uint64_t>(), t["device_synchronizations"].get<std::uint64_t>(),
                       t["driver_allocations"].get<std::uint64_t>());
  };
  const Json& dt = r["device_traffic"];
  fmt::print("  traffic   first step: {}\n", traffic(dt["first_step"]));
  if (dt.contains("later_steps_max")) fmt::print("            later steps, at most: {}\n", traffic(dt["later_steps_max"]));
  if (z["offload"].is_string()) fmt::print("  offload   {}\n", z["offload"].get<std::string>());
  // Each item the run measured (the largest rank's peak) beside the plan's item of the same
  // name; the note says why where they differ by more than 10%. The reserve stands apart.
  const auto bytes = [](const Json& v) { return v.is_null() ? std::string("-") : mib(v); };
  fmt::print("  memory    peak per rank, measured here | as the GPU step lays it out | predicted by the plan:\n");
  const Json* reserve = nullptr;
  for (const Json& item : r["memory_items"]) {
    const std::string name = item["item"].get<std::string>();
    if (name == "reserve") {
      reserve = &item;
      continue;
    }
    const std::string why = item["note"].get<std::string>(), gpu_why = item["on_gpu_note"].get<std::string>();
    // One note: why the GPU layout differs from the plan, else why this run's fp32 buffers do.
    const std::string note = !gpu_why.empty() ? "  (" + gpu_why + ")" : why.empty() ? "" : "  (here: " + why + ")";
    fmt::print("            {:<16} {:>12} | {:>12} | {:>12}{}\n", name, bytes(item["measured"]), bytes(item["on_gpu"]),
               bytes(item["predicted"]), note);
  }
  if (reserve != nullptr) {
    fmt::print("            {:<16} {:>12} | {:>12} | {:>12}  (apart, not in the total: {})\n", "reserve", "-", "-",
               bytes((*reserve)["predicted"]), (*reserve)["note"].get<std::string>());
  }
  if (r["memory_on_gpu"].contains("measured_by_cuda")) print_cuda_memory(r["memory_on_gpu"]["measured_by_cuda"]);
  if (r.contains("check")) {
    const Json& c = r["check"];
    fmt::print("  check     loss {:.6f} vs single-rank {:.6f}; weight gradients max relative error {:.2e} ({}), "
               "tolerance {:.0e}: {}\n",
               c["loss"].get<double>(), c["reference_loss"].get<double>(), c["max_rel_err_grad"].get<double>(),
               c["worst_tensor"].get<std::string>(), c["tolerance"].get<double>(), c["passed"].get<bool>() ? "passed" : "FAILED");
  }
  if (!run["saved_to"].get<std::string>().empty()) {
    fmt::print("  saved     {} (after step {})\n", run["saved_to"].get<std::string>(),
               run["first_step"].get<std::int64_t>() + run["steps"].get<std::int64_t>());
  }
}

void run_training(const RunOptions& o, rt::Communicator& comm) {
  rt::TrainingOptions options;
  options.steps = o.steps;
  options.data = o.data;
  options.check = o.check;
  options.save = o.save;
  options.save_every = o.save_every;
  options.keep = o.keep;
  options.resume = o.resume;
  options.seed = o.seed;
  options.lr = o.lr;
  options.lr.decay = rt::parse_lr_decay(o.decay, "--decay");
  // Progress goes to stderr under --json, so stdout stays one JSON document.
  std::FILE* progress = o.json ? stderr : stdout;
  options.progress = [progress](const Json& s) {
    fmt::print(progress, "step {:>4}/{}  loss {:.4f}  {:.3f} s  {:.0f} tokens/s  grad norm {:.3f}  peak {}\n",
               s["step"].get<std::int64_t>(), s["last_step"].get<std::int64_t>(), s["loss"].get<double>(),
               s["step_s"].get<double>(), s["tokens_per_s"].get<double>(), s["grad_norm"].get<double>(),
               mib(s["peak_memory_bytes"]));
    std::fflush(progress);
  };
  std::unique_ptr<rt::StepKernels> step_kernels;  // declared before the run: destroyed after it
  std::unique_ptr<rt::AttentionKernels> attention_kernels;
  std::unique_ptr<rt::TrainingRun> training;
  const Json report = run_on_every_rank(comm, [&]() -> std::function<Json()> {
    const plan::Plan plan = read_run_plan(o, comm);
    const rt::Device device = trains_on_cpu(o) ? rt::Device::Cpu : run_device(o, comm);
    if (device == rt::Device::Cuda) {
      // A loopback job's ranks share the first GPU, as its attention runs do.
      const int gpu = o.loopback ? 0 : comm.local_rank();
      step_kernels = rt::make_step_kernels(device, gpu, o.deterministic);
      attention_kernels = rt::make_step_attention_kernels(device, *step_kernels, gpu, o.deterministic);
      rt::order_messages_on(comm, *step_kernels);  // the GPU loopback's copies ordered on the step's stream
      options.backend.step = step_kernels.get();
      options.backend.attention = attention_kernels.get();
      const int gpus = std::max(1, rt::probe_gpus().count);
      options.ranks_per_device = o.loopback ? comm.size() : (comm.local_size() + gpus - 1) / gpus;
    }
    if (use_nccl(o, device, comm)) {  // each ring of the step over NCCL, made by the step on its first run
      options.backend.ring_transport = [&comm, &kernels = *attention_kernels, plan](std::int64_t seq) {
        return rt::make_nccl_transport(comm, rt::NcclOpLists(plan, seq), kernels);
      };
    }
    if (device == rt::Device::Cuda && plan.strategy.zero.offload) {
      options.host_state_memory = [] { return rt::make_host_state_memory(rt::Device::Cuda); };  // page-locked
    } else if (device == rt::Device::Cuda && !o.loopback) {
      // ZeRO's collectives on the GPU-resident model state: NCCL (the loopback's copy reads GPU memory itself)
      options.state_transport = [&comm, &kernels = *step_kernels] { return rt::make_state_transport(comm, kernels); };
    }
    training = std::make_unique<rt::TrainingRun>(plan, comm, options);
    return [&] { return training->run(); };
  });
  if (comm.rank() != 0) return;
  if (o.json) {
    fmt::print("{}\n", report.dump(2));
  } else {
    print_training_report(report);
  }
  if (report.contains("check") && !report["check"]["passed"].get<bool>()) {
    throw Error(Problem{"--check", "the distributed step differs from the single-rank step beyond the tolerance", "",
                        "run --attention-only --check to test the attention alone"});
  }
}

// One rank's part of the job, whatever drives the rank (an mpirun process, a loopback thread).
void run_rank(const RunOptions& o, rt::Communicator& comm) {
  if (!check_run_placement(o.plan, comm)) return;  // the real hosts and local ranks against the plan's
  if (o.attention_only || o.dry_run) {
    run_attention(o, comm);
  } else {
    run_training(o, comm);
  }
}

// --loopback: every rank of the plan a thread of this process (rt::LoopbackCommunicator). A
// rank's failure once ranks communicate ends the process, as it ends an mpirun job; an error
// before (bad input) is rank 0's to report, or the first rank's that has one.
void run_loopback(const RunOptions& o, const rt::CommOptions& comm_options) {
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (world != nullptr && std::atoi(world) > 1) {
    throw Error(Problem{"--loopback", fmt::format("runs every rank in this process, but mpirun started {} processes", world),
                        "one process", "start `burst run --loopback` without mpirun, or drop --loopback"});
  }
  const auto ranks = static_cast<int>(plan::read_plan(o.plan).ranks.size());
  // On cuda every rank's ring blocks are GPU memory: the threads copy them GPU to GPU.
  const rt::Device device = trains_on_cpu(o) ? rt::Device::Cpu : rt::choose_device(o.device, rt::probe_gpus(), "--device");
  fmt::print(stderr, "loopback: the plan's {} ranks as threads of this process\n", ranks);
  auto comms = rt::make_loopback_communicators(ranks, comm_options, rt::message_copy(device));
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(ranks));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      try {
        run_rank(o, *comms[static_cast<std::size_t>(r)]);
      } catch (...) {
        failures[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

void run(const RunOptions& o) {
  rt::CommOptions comm_options;
  comm_options.timeout_s = o.timeout_s;
  if (!o.trace.empty() && !o.attention_only && !o.dry_run) {
    throw Error(Problem{"--trace", "records the timeline of attention runs", "with --attention-only or --dry-run", ""});
  }
  if (o.deterministic && o.device == "cpu") {
    throw Error(Problem{"--deterministic", "chooses the CUDA kernels' mode; the CPU kernels are always deterministic",
                        "with --device cuda", ""});
  }
  if (o.loopback) {
    run_loopback(o, comm_options);
    return;
  }
  rt::Job job(comm_options);
  run_rank(o, job.comm());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Execute a plan on the ranks mpirun started (mpirun -np N burst run plan.json ...): train its model, or run its attention");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/1)")->required();
  auto* attention = cmd->add_flag("--attention-only", options->attention_only,
                                  "Run the plan's distributed attention, forward and backward, on random inputs");
  auto* dry = cmd->add_flag("--dry-run", options->dry_run,
                            "Run the plan's exact schedule with tiny tensors and check it (any plan, one local rank per plan rank)");
  cmd->add_flag("--check", options->check,
                "Compare with a single-rank reference: the first step's loss and weight gradients (training) or O, dQ, dK, dV (attention)");
  cmd->add_flag("--json", options->json, "Print the report as JSON on stdout");
  cmd->add_option("--trace", options->trace,
                                "Attention runs: write the measured timeline of every rank as a Chrome trace (Perfetto) to this file");
  cmd->add_option("--dtype", options->dtype,
                  "Run in this precision instead of the plan's /job/dtype (the run says so): bf16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}));  // fp32 also makes the travelling accumulators fp32
  cmd->add_option("--device", options->device,
                  "Where the run computes: cuda (the rank's GPU) or cpu. Attention runs: default cuda when a GPU is "
                  "visible, else cpu. Training: default cpu; cuda runs the GPU training step (its rings over NCCL, "
                  "or --loopback on one GPU)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_option("--transport", options->transport,
                  "What carries the ring's transfers: host (the job's communicator, for --device cpu) or nccl "
                  "(GPU to GPU, for --device cuda over several processes, where it is the default); --loopback "
                  "copies GPU to GPU itself")
      ->check(CLI::IsMember({"nccl", "host"}));
  cmd->add_flag("--loopback", options->loopback,
                "Run every rank of the plan as a thread of this process, without mpirun: the whole ring on one "
                "machine (with --device cuda, every rank on this machine's first GPU)");
  cmd->add_flag("--deterministic", options->deterministic,
                "CUDA kernels without float atomics: bit-identical results run to run (a little slower)");
  cmd->add_option("--seed", options->seed, "Seed of the initial weights (training) or of the random inputs (attention)")
      ->capture_default_str();
  cmd->add_option("--timeout", options->timeout_s, "Seconds a rank waits for a message before the job fails")
      ->check(kFinitePositive)
      ->capture_default_str();
  auto* steps = cmd->add_option("--steps", options->steps, "Training steps")->check(CLI::Range(1, 1000000))->capture_default_str();
  auto* data = cmd->add_option("--data", options->data,
                               "Training text: a directory (every file a document) or a file, read as bytes")
                   ->capture_default_str();
  auto* save = cmd->add_option("--save", options->save, "Write model and optimizer state after the last step: each save a new set of files "
                               "(FILE.gen<N>-step<S>/), then FILE, the manifest naming it, replaced atomically");
  auto* save_every = cmd->add_option("--save-every", options->save_every,
                                     "Also save to --save after every N steps, so a run cut short keeps its progress")
                         ->check(CLI::Range(1, 1000000))
                         ->needs(save);
  auto* keep = cmd->add_option("--keep", options->keep,
                               "Complete saves kept on disk: each save is a new set of files (a generation, "
                               "FILE.gen<N>-step<S>/) that replaces FILE's manifest only once it is complete; "
                               "older generations beyond the newest N are then removed")
                   ->check(CLI::Range(1, 1000000))
                   ->capture_default_str()
                   ->needs(save);
  auto* resume = cmd->add_option("--resume", options->resume,
                                 "Start from a state written by --save (the newest complete set its manifest names; "
                                 "it says which on stderr); its step count continues");
  auto* lr = cmd->add_option("--lr", options->lr.peak,
                             "AdamW's peak learning rate (default: 3e-3 up to 10M parameters, 3e-3 * sqrt(1e7 / N) "
                             "above: 4.6e-4 at 430M)")
                  ->check(kFinitePositive);
  auto* warmup = cmd->add_option("--warmup", options->lr.warmup_steps,
                                 "Steps of linear warm-up from peak / N to the peak (0: none; default: 0 up to 10M "
                                 "parameters, 20 above)")
                     ->check(CLI::Range(0, 100000000));
  auto* decay = cmd->add_option("--decay", options->decay, "After the warm-up: constant, or cosine down to --lr-floor")
                    ->check(CLI::IsMember({"constant", "cosine"}))
                    ->capture_default_str();
  auto* decay_steps = cmd->add_option("--decay-steps", options->lr.decay_steps,
                                      "cosine: the step at which lr reaches the floor (counted from step 1, across resumes)");
  auto* floor = cmd->add_option("--lr-floor", options->lr.floor_ratio, "cosine: the floor as a fraction of the peak")
                    ->check(CLI::Range(0.0, 1.0))
                    ->capture_default_str();
  for (CLI::Option* training : {steps, data, save, save_every, keep, resume, lr, warmup, decay, decay_steps, floor}) {
    training->excludes(attention);
    training->excludes(dry);
  }
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
