// burst run plan.json: execute a plan on the ranks mpirun started (one per plan rank), or,
// with --loopback, on every rank as a thread of this one process.
//   (default)         train the plan's model on real text for --steps steps (runtime/training)
//   --attention-only  the plan's distributed attention on random inputs (runtime/executor)
//   --dry-run         the plan's exact schedule with tiny tensors, checked
// Rank 0 prints; every rank runs. Bad input (a corrupt plan, another rank count, unreadable
// data, a state of another model) is reported once before any step, and after that a failure
// on one rank ends the whole job (every_rank.hpp), so no rank is left waiting. The plan is read
// once per rank (with the placement check); what runs on which device over which transport is
// the runtime session's to decide (runtime/session/session.hpp); this file parses the options
// and prints the report. --trace FILE (attention runs): rank 0 writes the measured timeline of
// every rank as a Chrome trace (runtime/executor/run_trace.hpp) once every rank is done, so a
// bad path fails rank 0 alone, with exit code 2.
#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <optional>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/units.hpp"
#include "plan/plan.hpp"
#include "planner/plan_traffic.hpp"
#include "runtime/cuda/kernel_path.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/session/session.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/device_traffic_text.hpp"
#include "tools/burst/validators.hpp"
#include "tools/burst/every_rank.hpp"
#include "tools/burst/run_placement.hpp"

namespace burst::cli {
namespace {

// The command line: what the runtime session is asked for (bound option by option into
// `request`), and what only the command itself uses.
struct RunOptions {
  std::string plan;
  rt::RunRequest request;  // --device, --transport, --dtype, --loopback, --check, --seed, training options
  bool attention_only = false;
  bool dry_run = false;
  bool json = false;
  std::string trace;  // rank 0 writes the timeline here
  double timeout_s = 120;
  std::string decay = "constant";  // --decay, parsed into request.training.lr.decay
};

// A string of a run's report as the terminal shows it: the plan's names, and paths (--data,
// --save) that may hold any byte.
std::string shown(const std::string& text) { return escape::terminal(text); }

// "precision bf16 tensors, dQ accumulators bf16, dK,dV accumulators fp32; transfers overlapped"
std::string precision_line(const rt::AttentionPrecision& p, bool overlap) {
  return fmt::format("  precision {} tensors, dQ accumulators {}, dK,dV accumulators {}; transfers {}\n",
                     to_string(p.activations), to_string(p.dq), to_string(p.dkv),
                     overlap ? "overlapped with compute" : "then compute (overlap off)");
}

// The simulator's bytes per ring level for the plan as it ran (a dry run's dimensions and
// mask), beside the measured ones.
void add_simulated_traffic(const rt::PreparedRun& ran, rt::AttentionReport& report) {
  const planner::RingTraffic simulated =
      planner::simulated_ring_traffic(ran.plan, {ran.seq, ran.heads, ran.kv_heads, ran.head_dim});
  rt::PhaseLevelBytes& out = report.comm_bytes.simulated_by_level.emplace();
  for (std::size_t level = 0; level < simulated[0].size(); ++level) {
    out.forward[level] = simulated[0][level];
    out.backward[level] = simulated[1][level];
  }
}

// "flat 1.000" for each level either side uses: measured over simulated bytes.
std::string traffic_ratios(const rt::LevelBytes& measured, const rt::LevelBytes& simulated) {
  std::string out;
  for (std::size_t level = 0; level < measured.size(); ++level) {
    const std::string_view name = rt::to_string(static_cast<rt::RingLevel>(level));
    if (measured[level] == 0 && simulated[level] == 0) continue;
    out += simulated[level] > 0 ? fmt::format(" {} {:.3f}", name, measured[level] / simulated[level])
                                : fmt::format(" {} {:.0f} bytes, none simulated", name, measured[level]);
  }
  return out.empty() ? " none sent" : out;
}

void print_report(const rt::AttentionReport& r) {
  const rt::AttentionReport::Measured& m = r.measured;
  const std::string groups = r.plan.tp * r.plan.dp > 1
                                 ? fmt::format(" in {} context-parallel groups (tp {} x dp {}), each",
                                               r.plan.tp * r.plan.dp, r.plan.tp, r.plan.dp)
                                 : "";
  fmt::print("{} on {} ranks{}: {} ring, {} layout, {} backward, {} mask; {} tokens x {} heads ({} KV) x {}\n",
             shown(r.plan.strategy), r.plan.ranks, groups, shown(r.plan.ring), shown(r.plan.layout),
             shown(r.plan.backward), shown(r.plan.mask), r.run.seq, r.run.heads, r.run.kv_heads, r.run.head_dim);
  fmt::print("{}", precision_line(r.run.precision, r.run.overlap));
  if (r.run.repeats > 1 || r.run.warmups > 0) {
    fmt::print(
        "  timing    median of {} timed run{} after {} warm-up{}; runs: forward {:.4f}-{:.4f} s, backward "
        "{:.4f}-{:.4f} s\n",
        r.run.repeats, r.run.repeats == 1 ? "" : "s", r.run.warmups, r.run.warmups == 1 ? "" : "s", m.fastest_s.forward,
        m.slowest_s.forward, m.fastest_s.backward, m.slowest_s.backward);
  }
  fmt::print("  forward   measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m.time_s.forward, r.predicted_s.forward, r.comm_bytes.total.forward);
  fmt::print("  backward  measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m.time_s.backward, r.predicted_s.backward, r.comm_bytes.total.backward);
  const rt::PhasePair overlap = m.overlap();
  fmt::print(
      "  overlap   forward {:.2f}, backward {:.2f} (phase time / busiest rank's kernel time; 1 = fully hidden)\n",
      overlap.forward, overlap.backward);
  if (const auto& simulated = r.comm_bytes.simulated_by_level) {
    fmt::print("  ring bytes measured / simulated: forward{}, backward{}\n",
               traffic_ratios(r.comm_bytes.by_level.forward, simulated->forward),
               traffic_ratios(r.comm_bytes.by_level.backward, simulated->backward));
  }
  const rt::AttentionReport::Messages& msg = r.messages;
  fmt::print("  messages  forward {} sent / {} received, backward {} sent / {} received\n", msg.sent.forward,
             msg.received.forward, msg.sent.backward, msg.received.backward);
  if (const auto& c = r.check) {
    const rt::TensorErrors& e = c->judged();
    fmt::print("  check     {} out {:.2e}, dq {:.2e}, dk {:.2e}, dv {:.2e} (tolerance {:.0e}): {}\n",
               c->tolerance_kind(), e.out, e.dq, e.dk, e.dv, c->tolerance, c->passed ? "passed" : "FAILED");
  }
}

void print_json(const Json& report) { fmt::print("{}\n", report.dump(2, ' ', false, Json::error_handler_t::replace)); }

void report_attention(const RunOptions& o, const rt::Session& session, rt::AttentionReport report) {
  add_simulated_traffic(*session.attention(), report);
  if (o.json) {
    print_json(report.to_json());
  } else {
    print_report(report);
  }
  if (!o.trace.empty()) {
    rt::write_run_trace(o.trace, session.trace());
    fmt::print(stderr, "trace written to {} (open it in https://ui.perfetto.dev or chrome://tracing)\n",
               escape::terminal(o.trace));
  }
  if (report.check && !report.check->passed) {
    throw Error(Problem{"--check", "the distributed result differs from the single-rank reference beyond the tolerance",
                        "", "run with --dry-run to check the schedule alone"});
  }
}

std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }

// A GPU run: its tensors are the "GPU layout" column; CUDA's own counts beside them.
void print_cuda_memory(const rt::DeviceMemoryUse& g) {
  fmt::print(
      "  on GPU    the GPU layout column is what this run's GPU step allocated for its activations; CUDA "
      "measured: the step's pool (attention's included) at its peak {}, device in use {} of {}\n",
      mib(static_cast<double>(g.pool_peak_bytes)), mib(static_cast<double>(g.device_used_bytes)),
      mib(static_cast<double>(g.device_total_bytes)));
}

// "constant" or "cosine to 4.6e-05 at step 1000"
std::string decay_text(const rt::LrSchedule& lr) {
  return lr.decay == rt::LrDecay::Cosine
             ? fmt::format("cosine to {:.3g} at step {}", lr.peak * lr.floor_ratio, lr.decay_steps)
             : std::string("constant");
}

// Each item the run measured (the largest rank's peak) beside the plan's item of the same
// name; the note says why where they differ by more than 10%. The reserve stands apart.
void print_memory_items(const std::vector<rt::MemoryItemRow>& items) {
  const auto bytes = [](const std::optional<double>& v) { return v ? mib(*v) : std::string("-"); };
  fmt::print("  memory    peak per rank, measured here | as the GPU step lays it out | predicted by the plan:\n");
  const rt::MemoryItemRow* reserve = nullptr;
  for (const rt::MemoryItemRow& item : items) {
    if (item.item == "reserve") {
      reserve = &item;
      continue;
    }
    const std::string why = shown(item.host.note), gpu_why = shown(item.on_gpu.note);
    // One note: why the GPU layout differs from the plan, else why this run's fp32 buffers do.
    const std::string note = !gpu_why.empty() ? "  (" + gpu_why + ")" : why.empty() ? "" : "  (here: " + why + ")";
    fmt::print("            {:<16} {:>12} | {:>12} | {:>12}{}\n", shown(item.item), bytes(item.host.measured),
               bytes(item.on_gpu.measured), mib(item.predicted), note);
  }
  if (reserve != nullptr && reserve->predicted > 0) {  // CPU ranks' plans reserve nothing
    fmt::print("            {:<16} {:>12} | {:>12} | {:>12}  (apart, not in the total: {})\n", "reserve", "-", "-",
               mib(reserve->predicted), shown(reserve->host.note));
  }
}

void print_training_report(const rt::TrainingReport& r) {
  const rt::TrainingReport::PlanRun& p = r.plan;
  const rt::TrainingReport::Run& run = r.run;
  const rt::TrainingReport::Measured& m = r.measured;
  std::string checkpoint = shown(p.checkpoint);
  if (checkpoint == "seq_stash") checkpoint += fmt::format(" (kept {:.2f})", p.kept_fraction);
  fmt::print("\n{} on {} ranks: {} ring, {} layout, {} backward, {} mask, checkpoint {}, LM head in {} chunk(s)\n",
             shown(p.strategy), p.ranks, shown(p.ring), shown(p.layout), shown(p.backward), shown(p.mask), checkpoint,
             p.lm_head_chunks);
  fmt::print("  model     {} ({} parameters), {}-token sequences of {} ({} documents)\n", shown(run.model.name),
             run.parameters, units::format_tokens(run.seq), shown(run.data.source), run.data.documents);
  if (p.batch > 1) {
    fmt::print(
        "  batch     {} sequences a step: {} data-parallel replica(s), each {} micro-batch(es) of {} sequence(s)\n",
        p.batch, p.dp, p.micro_batches, p.micro_batch);
  }
  if (p.tp > 1) {
    fmt::print("  tensor    {} tensor-parallel ranks a group (sequence-parallel; heads, KV heads and MLP split)\n",
               p.tp);
  }
  fmt::print("{}", precision_line(run.precision, run.overlap));
  fmt::print("  loss      {:.4f} -> {:.4f} over {} steps (from step {})\n", r.steps.front().loss, r.steps.back().loss,
             r.steps.size(), run.first_step);
  fmt::print("  lr        peak {:.3g}, linear warm-up over {} steps, then {}\n", run.lr_schedule.peak,
             run.lr_schedule.warmup_steps, decay_text(run.lr_schedule));
  fmt::print(
      "  step      measured {:.3f} s median (forward {:.3f}, backward {:.3f} of which recompute {:.3f}; attention "
      "{:.3f}, LM head {:.3f}, dense layers {:.3f}; optimizer {:.3f}), predicted {:.3f} s\n",
      m.step_s_median, m.forward_s, m.backward_s, m.recompute_s, m.attention_s, m.loss_s, m.dense_s, m.optimizer_s,
      r.predicted_step_s);
  const rt::ZeroSummary& z = r.zero;
  fmt::print("  zero      stage {} over {} ranks: {} of {} parameters a shard, {:.3f} s a step in its collectives\n",
             z.stage, z.ranks, z.shard_floats, z.total_floats, z.collective_s);
  fmt::print("  state     {}\n", shown(z.state));
  fmt::print("  traffic   first step: {}\n", device_traffic_text(r.device_traffic.first_step));
  if (const auto& later = r.device_traffic.later_steps_max)
    fmt::print("            later steps, at most: {}\n", device_traffic_text(*later));
  if (z.offload) fmt::print("  offload   {}\n", shown(*z.offload));
  print_memory_items(r.memory_items);
  if (r.measured_by_cuda) print_cuda_memory(*r.measured_by_cuda);
  if (const auto& c = r.check) {
    fmt::print(
        "  check     loss {:.6f} vs single-rank {:.6f}; weight gradients max relative error {:.2e} ({}), "
        "gradient norm {:.6g} vs {:.6g}; tolerance {:.0e}: {}\n",
        c->loss, c->reference_loss, c->max_rel_err_grad, shown(c->worst_tensor), c->grad_norm, c->reference_grad_norm,
        c->tolerance, c->passed ? "passed" : "FAILED");
  }
  if (!run.saved_to.empty()) {
    fmt::print("  saved     {} (after step {})\n", shown(run.saved_to), run.first_step + run.steps);
  }
}

void report_training(const RunOptions& o, const rt::TrainingReport& report) {
  if (o.json) {
    print_json(report.to_json());
  } else {
    print_training_report(report);
  }
  if (report.check && !report.check->passed) {
    throw Error(Problem{"--check", "the distributed step differs from the single-rank step beyond the tolerance", "",
                        "run --attention-only --check to test the attention alone"});
  }
}

// What the options ask the runtime session for: the bound request, with its kind, its trace,
// its decay and the step printer.
rt::RunRequest run_request(const RunOptions& o) {
  rt::RunRequest r = o.request;
  r.kind = o.dry_run ? rt::RunKind::DryRun : o.attention_only ? rt::RunKind::Attention : rt::RunKind::Training;
  r.trace = !o.trace.empty();
  rt::TrainingOptions& t = r.training;
  t.lr.decay = rt::parse_lr_decay(o.decay, "--decay");
  // Progress goes to stderr under --json, so stdout stays one JSON document.
  std::FILE* progress = o.json ? stderr : stdout;
  t.progress = [progress](const rt::StepProgress& s) {
    fmt::print(progress, "step {:>4}/{}  loss {:.4f}  {:.3f} s  {:.0f} tokens/s  grad norm {:.3f}  peak {}\n", s.step,
               s.last_step, s.loss, s.step_s, s.tokens_per_s, s.grad_norm,
               mib(static_cast<double>(s.peak_memory_bytes)));
    std::fflush(progress);
  };
  return r;
}

// One rank's part of the job, whatever drives the rank (an mpirun process, a loopback thread).
void run_rank(const RunOptions& o, rt::Communicator& comm) {
  // The plan, read once, and the real hosts and local ranks checked against it.
  std::optional<plan::Plan> plan = read_placed_plan(o.plan, comm);
  if (!plan) return;
  std::unique_ptr<rt::Session> session;
  std::optional<rt::RunReport> report;
  (void)run_on_every_rank(comm, [&]() -> std::function<void()> {
    session = std::make_unique<rt::Session>(std::move(*plan), comm, run_request(o));
    return [&] { report = session->run(); };
  });
  if (!report) return;  // ranks other than 0
  if (auto* attention = std::get_if<rt::AttentionReport>(&*report)) {
    report_attention(o, *session, std::move(*attention));
  } else {
    report_training(o, std::get<rt::TrainingReport>(*report));
  }
}

// --loopback: every rank of the plan a thread of this process (rt::LoopbackCommunicator). A
// rank's failure once ranks communicate ends the process, as it ends an mpirun job; an error
// before (bad input) is rank 0's to report, or the first rank's that has one.
void run_loopback(const RunOptions& o, const rt::CommOptions& comm_options) {
  const char* world = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (world != nullptr && std::atoi(world) > 1) {
    throw Error(Problem{"--loopback",
                        fmt::format("runs every rank in this process, but mpirun started {} processes", world),
                        "one process", "start `burst run --loopback` without mpirun, or drop --loopback"});
  }
  const auto ranks = static_cast<int>(plan::read_plan(o.plan).ranks.size());
  // On cuda every rank's ring blocks are GPU memory: the threads copy them GPU to GPU.
  const rt::Device device = rt::requested_device(run_request(o));
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
  if (o.request.deterministic && o.request.device == "cpu") {
    throw Error(Problem{"--deterministic", "chooses the CUDA kernels' mode; the CPU kernels are always deterministic",
                        "with --device cuda", ""});
  }
  (void)rt::gpu::kernel_path_choice(o.request.kernel_path);  // an unknown name, before any rank starts
  if (o.request.kernel_path != "auto" && o.request.device == "cpu") {
    throw Error(Problem{"--kernel-path", "chooses the CUDA kernels' implementation", "with --device cuda", ""});
  }
  if (o.request.loopback) {
    run_loopback(o, comm_options);
    return;
  }
  rt::Job job(comm_options);
  run_rank(o, job.comm());
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run",
                                     "Execute a plan on the ranks mpirun started (mpirun -np N burst run plan.json "
                                     "...): train its model, or run its attention");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/2)")->required();
  auto* attention = cmd->add_flag("--attention-only", options->attention_only,
                                  "Run the plan's distributed attention, forward and backward, on random inputs");
  auto* dry = cmd->add_flag(
      "--dry-run", options->dry_run,
      "Run the plan's exact schedule with tiny tensors and check it (any plan, one local rank per plan rank)");
  cmd->add_flag("--check", options->request.check,
                "Compare with a single-rank reference: the first step's loss and weight gradients (training) or O, dQ, "
                "dK, dV (attention)");
  cmd->add_flag("--json", options->json, "Print the report as JSON on stdout");
  cmd->add_option(
      "--trace", options->trace,
      "Attention runs: write the measured timeline of every rank as a Chrome trace (Perfetto) to this file");
  cmd->add_option("--dtype", options->request.dtype,
                  "Run in this precision instead of the plan's /job/dtype (the run says so): bf16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}));  // fp32 also makes the travelling accumulators fp32
  cmd->add_option("--device", options->request.device,
                  "Where the run computes: cuda (the rank's GPU) or cpu. Attention runs: default cuda when a GPU is "
                  "visible, else cpu. Training: default cpu; cuda runs the GPU training step (its rings over NCCL, "
                  "or --loopback on one GPU)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_option("--transport", options->request.transport,
                  "What carries the ring's transfers: host (the job's communicator, for --device cpu) or nccl "
                  "(GPU to GPU, for --device cuda over several processes, where it is the default); --loopback "
                  "copies GPU to GPU itself")
      ->check(CLI::IsMember({"nccl", "host"}));
  cmd->add_flag("--loopback", options->request.loopback,
                "Run every rank of the plan as a thread of this process, without mpirun: the whole ring on one "
                "machine (with --device cuda, every rank on this machine's first GPU)");
  cmd->add_flag("--deterministic", options->request.deterministic,
                "CUDA kernels without float atomics: bit-identical results run to run (a little slower)");
  cmd->add_option("--kernel-path", options->request.kernel_path,
                  "The CUDA attention kernels' implementation instead of the plan's /job/kernel_path: auto (wgmma on "
                  "Hopper GPUs, mma.sync elsewhere), mma.sync, or wgmma (Hopper GPUs; docs/runtime-cuda.md)")
      ->capture_default_str();
  cmd->add_option("--seed", options->request.seed,
                  "Seed of the initial weights (training) or of the random inputs (attention)")
      ->capture_default_str();
  cmd->add_option("--timeout", options->timeout_s, "Seconds a rank waits for a message before the job fails")
      ->check(kFinitePositive)
      ->capture_default_str();
  auto* repeat = cmd->add_option("--repeat", options->request.repeat,
                                 "Attention runs: timed runs of both phases after one untimed warm-up; the report "
                                 "gives each phase's median")
                     ->check(CLI::Range(1, 1000))
                     ->capture_default_str()
                     ->needs(attention);
  auto* steps = cmd->add_option("--steps", options->request.training.steps, "Training steps")
                    ->check(CLI::Range(1, 1000000))
                    ->capture_default_str();
  auto* data = cmd->add_option("--data", options->request.training.data,
                               "Training text: a directory (every file a document) or a file, read as bytes")
                   ->capture_default_str();
  auto* save = cmd->add_option("--save", options->request.training.save,
                               "Write model and optimizer state after the last step: each save a new set of files "
                               "(FILE.gen<N>-step<S>/), then FILE, the manifest naming it, replaced atomically");
  auto* save_every = cmd->add_option("--save-every", options->request.training.save_every,
                                     "Also save to --save after every N steps, so a run cut short keeps its progress")
                         ->check(CLI::Range(1, 1000000))
                         ->needs(save);
  auto* keep = cmd->add_option("--keep", options->request.training.keep,
                               "Complete saves kept on disk: each save is a new set of files (a generation, "
                               "FILE.gen<N>-step<S>/) that replaces FILE's manifest only once it is complete; "
                               "older generations beyond the newest N are then removed")
                   ->check(CLI::Range(1, 1000000))
                   ->capture_default_str()
                   ->needs(save);
  auto* resume = cmd->add_option("--resume", options->request.training.resume,
                                 "Start from a state written by --save (the newest complete set its manifest names; "
                                 "it says which on stderr); its step count continues");
  auto* lr = cmd->add_option("--lr", options->request.training.lr.peak,
                             "AdamW's peak learning rate (default: 3e-3 up to 10M parameters, 3e-3 * sqrt(1e7 / N) "
                             "above: 4.6e-4 at 430M)")
                 ->check(kFinitePositive);
  auto* warmup = cmd->add_option("--warmup", options->request.training.lr.warmup_steps,
                                 "Steps of linear warm-up from peak / N to the peak (0: none; default: 0 up to 10M "
                                 "parameters, 20 above)")
                     ->check(CLI::Range(0, 100000000));
  auto* decay = cmd->add_option("--decay", options->decay, "After the warm-up: constant, or cosine down to --lr-floor")
                    ->check(CLI::IsMember({"constant", "cosine"}))
                    ->capture_default_str();
  auto* decay_steps =
      cmd->add_option("--decay-steps", options->request.training.lr.decay_steps,
                      "cosine: the step at which lr reaches the floor (counted from step 1, across resumes)");
  auto* floor = cmd->add_option("--lr-floor", options->request.training.lr.floor_ratio,
                                "cosine: the floor as a fraction of the peak")
                    ->check(CLI::Range(0.0, 1.0))
                    ->capture_default_str();
  for (CLI::Option* training : {steps, data, save, save_every, keep, resume, lr, warmup, decay, decay_steps, floor}) {
    training->excludes(attention);
    training->excludes(dry);
  }
  repeat->excludes(dry);
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
