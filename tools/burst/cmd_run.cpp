// burst run plan.json --attention-only | --dry-run: execute a plan's distributed attention on
// the ranks mpirun started (one per plan rank), check it against a single-rank reference, and
// report measured beside predicted. Rank 0 prints; every rank runs. A failure on one rank
// ends the whole job (abort), so no rank is left waiting. --trace FILE: rank 0 writes the
// measured timeline of every rank as a Chrome trace (runtime/executor/run_trace.hpp), once
// every rank is done, so a bad path fails rank 0 alone, with exit code 2.
#include <fmt/format.h>

#include "common/error.hpp"
#include "planner/contract/plan.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/executor/attention_run.hpp"
#include "tools/burst/commands.hpp"

namespace burst::cli {
namespace {

struct RunOptions {
  std::string plan;
  bool attention_only = false;
  bool dry_run = false;
  bool check = false;
  bool json = false;
  std::string trace;
  std::uint64_t seed = 1;
  double timeout_s = 120;
};

void print_report(const Json& r) {
  const Json& m = r["measured"];
  const Json& p = r["predicted"];
  fmt::print("{} on {} ranks: {} ring, {} layout, {} backward, {} mask; {} tokens x {} heads ({} KV) x {}\n",
             r["plan"]["strategy"].get<std::string>(), r["plan"]["ranks"].get<int>(), r["plan"]["ring"].get<std::string>(),
             r["plan"]["layout"].get<std::string>(), r["plan"]["backward"].get<std::string>(),
             r["plan"]["mask"].get<std::string>(), r["run"]["seq"].get<std::int64_t>(), r["run"]["heads"].get<int>(),
             r["run"]["kv_heads"].get<int>(), r["run"]["head_dim"].get<int>());
  fmt::print("  forward   measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m["forward_s"].get<double>(), p["forward_s"].get<double>(), r["comm_bytes"]["forward"].get<double>());
  fmt::print("  backward  measured {:>10.4f} s   predicted {:>10.4f} s   {:>12.0f} bytes sent per rank\n",
             m["backward_s"].get<double>(), p["backward_s"].get<double>(), r["comm_bytes"]["backward"].get<double>());
  fmt::print("  overlap   forward {:.2f}, backward {:.2f} (phase time / busiest rank's kernel time; 1 = fully hidden)\n",
             m["forward_overlap"].get<double>(), m["backward_overlap"].get<double>());
  const Json& msg = r["messages"];
  fmt::print("  messages  forward {} sent / {} received, backward {} sent / {} received\n",
             msg["forward_sent"].get<double>(), msg["forward_received"].get<double>(),
             msg["backward_sent"].get<double>(), msg["backward_received"].get<double>());
  if (r.contains("check")) {
    const Json& e = r["check"]["max_abs_err"];
    fmt::print("  check     max |error| out {:.2e}, dq {:.2e}, dk {:.2e}, dv {:.2e} (tolerance {:.0e}): {}\n",
               e["out"].get<double>(), e["dq"].get<double>(), e["dk"].get<double>(), e["dv"].get<double>(),
               r["check"]["tolerance"].get<double>(), r["check"]["passed"].get<bool>() ? "passed" : "FAILED");
  }
}

void run(const RunOptions& o) {
  if (!o.attention_only && !o.dry_run) {
    throw Error(Problem{"burst run", "nothing to run", "--attention-only or --dry-run",
                        "training runs (--steps) come with the training runtime"});
  }
  rt::CommOptions comm_options;
  comm_options.timeout_s = o.timeout_s;
  rt::Job job(comm_options);
  rt::Communicator& comm = job.comm();
  rt::AttentionRunOptions options;
  options.seed = o.seed;
  options.check = o.check;
  options.dry_run = o.dry_run;
  // Bad input (a corrupt plan, another rank count, a plan the runtime cannot run) fails every
  // rank the same way before any message is sent: rank 0 reports it, the others just end.
  plan::Plan p;
  try {
    p = plan::read_plan(o.plan);
    (void)rt::prepare_attention_run(p, comm.size(), options);
  } catch (const Error&) {
    if (comm.rank() == 0) throw;
    return;
  }
  // From here a failure is one rank's (a message that never came): it ends the whole job.
  Json report;
  rt::RunTrace trace;
  try {
    report = rt::run_attention(p, comm, options, o.trace.empty() ? nullptr : &trace);
  } catch (const Error& e) {
    if (comm.size() == 1) throw;
    rt::abort_job(comm, e.what());
  }
  if (comm.rank() != 0) return;
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

}  // namespace

void add_run_command(CLI::App& app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Execute a plan on the ranks mpirun started (mpirun -np N burst run plan.json ...)");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/1)")->required();
  cmd->add_flag("--attention-only", options->attention_only, "Run the plan's distributed attention, forward and backward");
  cmd->add_flag("--dry-run", options->dry_run,
                "Run the plan's exact schedule with tiny tensors and check it (any plan, one local rank per plan rank)");
  cmd->add_flag("--check", options->check, "Compare O, dQ, dK, dV with a single-rank reference");
  cmd->add_flag("--json", options->json, "Print the report as JSON on stdout");
  cmd->add_option("--trace", options->trace, "Write the measured timeline of every rank as a Chrome trace (Perfetto) to this file");
  cmd->add_option("--seed", options->seed, "Seed of the random inputs")->capture_default_str();
  cmd->add_option("--timeout", options->timeout_s, "Seconds a rank waits for a message before the job fails")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->callback([options] { run(*options); });
}

}  // namespace burst::cli
