#include "tools/jobs/job.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/parallelism.hpp"
#include "common/units.hpp"
#include "topologies/local_calibration.hpp"

namespace burst::jobs {
namespace {

// --calibration, or for `local` on GPUs the file `burst calibrate --device cuda` wrote for their
// model, where it exists.
std::string calibration_for(const JobOptions& o, const topo::Topology* topology) {
  if (!o.calibration.empty() || topology == nullptr || o.topology.topology != "local" ||
      topo::is_cpu_rank(topology->gpu())) {
    return o.calibration;
  }
  // A rank's model is the GPU's (a loopback share keeps the name: its curves are fractions of the peak).
  std::string path = topo::gpu_calibration_beside(topo::local_calibration_write_path(), topology->gpu().model);
  if (path.empty() || !std::filesystem::exists(path)) return o.calibration;
  fmt::print(stderr, "note: calibration {} (burst calibrate --device cuda on this machine)\n", path);
  return path;
}

// The global batch in sequences: --global-batch, or --global-batch-tokens over the sequence
// length (a whole number of sequences, or the problem says the nearest ones).
int global_batch(const JobOptions& o, std::int64_t seq) {
  if (o.batch_tokens.empty() || seq <= 0) return o.batch;
  const std::int64_t tokens = units::parse_tokens(o.batch_tokens, "--global-batch-tokens");
  if (tokens <= 0 || tokens % seq != 0 || tokens / seq > INT32_MAX) {
    const std::int64_t below = std::max<std::int64_t>(1, tokens / seq);
    throw Error(
        Problem{"--global-batch-tokens",
                fmt::format("{} tokens are not a whole number of {}-token sequences", o.batch_tokens, seq),
                fmt::format("a multiple of --seq, e.g. {} ({} sequences) or {} ({})", units::format_tokens(below * seq),
                            below, units::format_tokens((below + 1) * seq), below + 1),
                ""});
  }
  return static_cast<int>(tokens / seq);
}

}  // namespace

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
    job.model = o.model_config ? sim::model_from_hf_config(*o.model_config, "model") : sim::load_model(o.model);
    if (o.vocab > 0) job.model.vocab = o.vocab;
  });
  attempt([&] {
    job.shape.seq = units::parse_tokens(o.seq, "--seq");
    if (job.shape.seq <= 0)
      throw Error(Problem{"--seq", "must be at least 1 token", "a positive whole number, e.g. 1M", ""});
  });
  attempt([&] { job.shape.batch = global_batch(o, job.shape.seq); });
  attempt([&] { job.mask = parse_mask(o.mask, "--mask"); });
  attempt([&] {
    job.models =
        sim::make_cost_models(o.compute_model, o.comm_model, calibration_for(o, job.topology.get()), o.kernel_path);
  });
  problems.throw_if_any();

  job.shape.heads = job.model.heads;
  job.shape.kv_heads = job.model.kv_heads;
  job.shape.head_dim = job.model.head_dim;
  job.shape.dtype_bytes = o.dtype == "fp32" ? 4 : 2;
  return job;
}

std::string describe_job(const Job& job) {
  const auto& t = *job.topology;
  return fmt::format(
      "{} ({} heads x {}, {} KV heads) at {} tokens, {} mask, batch {}\n"
      "on {}: {} node(s) x {} {} = {} GPUs, {} {} intra-node, {} per GPU inter-node",
      job.model.name, job.model.heads, job.model.head_dim, job.model.kv_heads, units::format_tokens(job.shape.seq),
      sim::to_string(job.mask), job.shape.batch, t.name(), t.nodes(), t.gpus_per_node(), t.gpu().model, t.gpu_count(),
      topo::to_string(t.intra_node_worst().cls), units::format_bandwidth(t.intra_node_worst().bandwidth_Bps),
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

}  // namespace burst::jobs
