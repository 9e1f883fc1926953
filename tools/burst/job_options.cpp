#include "tools/burst/job_options.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/text.hpp"
#include "common/units.hpp"
#include "tools/burst/validators.hpp"

namespace burst::cli {

void add_job_options(CLI::App& cmd, JobOptions& o) {
  cmd.add_option("--topology", o.topology.topology, "Topology preset (burst topo list), our JSON or an NCCL XML dump")
      ->required();
  add_topology_source_options(cmd, o.topology, true);
  cmd.add_option("--model", o.model, "Model preset (" + text::join(sim::model_preset_names()) + ") or a Hugging Face config.json")->required();
  cmd.add_option("--vocab", o.vocab, "Vocabulary size replacing the model's, e.g. 32000 (the LM head grows with it)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--seq", o.seq, "Sequence length in tokens, e.g. 1M (= 1048576), 512K")->required();
  cmd.add_option("--batch", o.batch, "Sequences per step")->check(kAtLeastOne)->capture_default_str();
  cmd.add_option("--mask", o.mask, "Attention mask: full, causal, sliding:W, document:L")->capture_default_str();
  cmd.add_option("--dtype", o.dtype, "Precision of parameters, activations and transfers: bf16 or fp32")
      ->check(CLI::IsMember({"bf16", "fp32"}))
      ->capture_default_str();
  cmd.add_option("--compute-model", o.compute_model, "Compute cost model")
      ->check(CLI::IsMember(sim::compute_model_names()))
      ->capture_default_str();
  cmd.add_option("--comm-model", o.comm_model, "Communication cost model")
      ->check(CLI::IsMember(sim::comm_model_names()))
      ->capture_default_str();
  cmd.add_option("--calibration", o.calibration, "Calibration file (burst.calibration/1) for the cost models");
}

Job resolve_job(const JobOptions& o) {
  Problems problems;
  Job job;
  // Each piece is checked even when an earlier one failed, so the user sees every problem.
  auto attempt = [&problems](auto&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      for (const auto& p : e.problems()) problems.add(p);
    }
  };
  attempt([&] { job.topology = std::make_shared<const topo::Topology>(load_topology_source(o.topology)); });
  attempt([&] {
    job.model = sim::load_model(o.model);
    if (o.vocab > 0) job.model.vocab = o.vocab;
  });
  attempt([&] {
    job.shape.seq = units::parse_tokens(o.seq, "--seq");
    if (job.shape.seq <= 0) throw Error(Problem{"--seq", "must be at least 1 token", "a positive whole number, e.g. 1M", ""});
  });
  attempt([&] { job.mask = parse_mask(o.mask, "--mask"); });
  attempt([&] { job.models = sim::make_cost_models(o.compute_model, o.comm_model, o.calibration); });
  problems.throw_if_any();

  job.shape.heads = job.model.heads;
  job.shape.kv_heads = job.model.kv_heads;
  job.shape.head_dim = job.model.head_dim;
  job.shape.batch = o.batch;
  job.shape.dtype_bytes = o.dtype == "fp32" ? 4 : 2;
  return job;
}

std::string describe_job(const Job& job) {
  const auto& t = *job.topology;
  return fmt::format(
      "{} ({} heads x {}, {} KV heads) at {} tokens, {} mask, batch {}\n"
      "on {}: {} node(s) x {} {} = {} GPUs, {} {} intra-node, {} per GPU inter-node",
      job.model.name, job.model.heads, job.model.head_dim, job.model.kv_heads, units::format_tokens(job.shape.seq),
      sim::to_string(job.mask), job.shape.batch, t.name(), t.nodes(), t.gpus_per_node(), t.gpu().model,
      t.gpu_count(), topo::to_string(t.intra_node_worst().cls),
      units::format_bandwidth(t.intra_node_worst().bandwidth_Bps),
      units::format_bandwidth(t.inter_node_bandwidth_per_gpu()));
}

Json job_json(const Job& job) {
  return Json{{"topology", job.topology->summary_json()},
              {"model", job.model.name},
              {"seq", job.shape.seq},
              {"batch", job.shape.batch},
              {"mask", sim::to_string(job.mask)},
              {"compute_model", job.models.compute->name()},
              {"comm_model", job.models.comm->name()}};
}

}  // namespace burst::cli
