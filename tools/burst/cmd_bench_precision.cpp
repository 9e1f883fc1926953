// mpirun -np N burst bench precision plan.json: how much precision the plan's bf16 choices cost,
// measured on the plan's own attention (or, with --dry-run, its schedule on tiny tensors).
//
// For the causal and the full mask and both backward modes, the plan's attention runs under
//   fp32 / fp32   tensors fp32, travelling accumulators fp32 (the baseline: summation order only)
//   fp32 / bf16   tensors fp32, accumulators bf16 (the accumulators' rounding alone)
//   bf16 / fp32   tensors bf16, accumulators fp32 (inputs and outputs stored as bf16)
//   bf16 / bf16   both, as BurstEngine runs (bf16 dQ accumulation)
// and each row gives, for dQ, dK and dV against the fp32 one-rank reference on the same
// (bf16-rounded where the tensors are bf16) inputs, the worst element (max |error| / max
// |reference|) and the typical one (||error|| / ||reference||, which shows accumulation that
// the largest elements, often summed over few hops, can hide). The accumulators are
// the backward's own: dQ's on the Q ring, dK,dV's on the K,V ring. docs/runtime-precision.md
// has the table at ring sizes 2 to 16.
#include <fmt/format.h>

#include "common/error.hpp"
#include "plan/plan.hpp"
#include "runtime/comm/job.hpp"
#include "runtime/executor/attention_run.hpp"
#include "tools/burst/commands.hpp"
#include "tools/burst/every_rank.hpp"

namespace burst::cli {
namespace {

struct BenchPrecisionOptions {
  std::string plan;
  bool dry_run = false;
  bool json = false;
};

struct PrecisionVariant {
  std::string mask, tensors, accumulators;
  plan::Plan plan;
};

std::vector<PrecisionVariant> precision_variants(const plan::Plan& base) {
  std::vector<PrecisionVariant> out;
  for (const char* mask : {"causal", "full"}) {
    for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
      for (const auto& [tensors, accumulators] :
           {std::pair{"fp32", 4}, std::pair{"fp32", 2}, std::pair{"bf16", 4}, std::pair{"bf16", 2}}) {
        plan::Plan p = base;
        p.job.mask = parse_mask(mask, "mask");
        p.job.dtype = tensors;
        p.strategy.backward = backward;
        p.strategy.dq_bytes = p.strategy.dkv_bytes = accumulators;
        out.push_back({mask, tensors, accumulators == 2 ? "bf16" : "fp32", std::move(p)});
      }
    }
  }
  return out;
}

Json precision_row(const PrecisionVariant& v, const rt::AttentionCheck& check) {
  return {{"mask", v.mask},
          {"backward", to_string(v.plan.strategy.backward)},
          {"tensors", v.tensors},
          {"accumulators", v.accumulators},
          {"max_rel_err", rt::to_json(check.max_rel_err)},
          {"rms_rel_err", rt::to_json(check.rms_rel_err)}};
}

void bench_precision(const BenchPrecisionOptions& o) {
  rt::Job job({});
  rt::Communicator& comm = job.comm();
  rt::AttentionRunOptions options;
  options.check = true;
  options.dry_run = o.dry_run;
  std::vector<PrecisionVariant> list;
  (void)run_on_every_rank(comm, [&]() -> std::function<void()> {
    std::vector<PrecisionVariant> candidates = precision_variants(plan::read_plan(o.plan));
    for (const PrecisionVariant& v : candidates) (void)rt::prepare_attention_run(v.plan, comm.size(), options);
    list = std::move(candidates);
    return [] {};
  });
  if (list.empty()) return;  // bad input, reported by rank 0
  if (comm.rank() == 0 && !o.json) {
    const rt::PreparedRun shape = rt::prepare_attention_run(list.front().plan, comm.size(), options);
    fmt::print(
        "bench: {} ranks, {} tokens x {} heads ({} KV) x {}; error against the fp32 one-rank reference: "
        "max |error| / max |reference|, then ||error|| / ||reference||\n",
        comm.size(), shape.seq, shape.heads, shape.kv_heads, shape.head_dim);
    fmt::print("{:<7} {:<8} {:>8} {:>13} {:>9} {:>9} {:>9}   {:>9} {:>9} {:>9}\n", "mask", "backward", "tensors",
               "accumulators", "max dQ", "max dK", "max dV", "rms dQ", "rms dK", "rms dV");
  }
  Json rows = Json::array();
  for (const PrecisionVariant& v : list) {
    std::optional<rt::AttentionReport> report;
    (void)run_on_every_rank(
        comm, [&]() -> std::function<void()> { return [&] { report = rt::run_attention(v.plan, comm, options); }; });
    if (!report) continue;                             // ranks other than 0
    const rt::AttentionCheck& check = *report->check;  // options.check
    rows.push_back(precision_row(v, check));
    if (o.json) continue;
    const rt::TensorErrors &m = check.max_rel_err, &rms = check.rms_rel_err;
    fmt::print("{:<7} {:<8} {:>8} {:>13} {:>9.2e} {:>9.2e} {:>9.2e}   {:>9.2e} {:>9.2e} {:>9.2e}\n", v.mask,
               to_string(v.plan.strategy.backward), v.tensors, v.accumulators, m.dq, m.dk, m.dv, rms.dq, rms.dk,
               rms.dv);
    std::fflush(stdout);
  }
  if (comm.rank() == 0 && o.json) fmt::print("{}\n", rows.dump(2));
}

}  // namespace

void add_bench_precision_command(CLI::App& bench_app) {
  auto o = std::make_shared<BenchPrecisionOptions>();
  CLI::App* cmd = bench_app.add_subcommand("precision",
                                           "Error of dQ, dK, dV with bf16 tensors and bf16 travelling accumulators "
                                           "against fp32 (mpirun -np N burst bench precision plan.json)");
  cmd->add_option("plan", o->plan, "A plan file (burst.plan/2); its ring, layout and sizes are kept")->required();
  cmd->add_flag("--dry-run", o->dry_run, "Tiny tensors on the plan's exact schedule (any plan size)");
  cmd->add_flag("--json", o->json, "Print the rows as JSON");
  cmd->callback([o] { bench_precision(*o); });
}

}  // namespace burst::cli
