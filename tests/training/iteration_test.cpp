// The time model: its items, recompute, the optimizer, throughput and applicability.
#include <catch2/catch.hpp>

#include <memory>

#include "simulator/detail/training/iteration_parts.hpp"
#include "topologies/hardware.hpp"
#include "topologies/node_template.hpp"
#include "topologies/presets.hpp"
#include "training_fixtures.hpp"

using namespace burst;
using burst::test::a800;
using burst::test::analytic;
using burst::test::job_of;

namespace {

sim::IterationSimulation run(const sim::TrainingJob& job, const sim::TrainingStrategy& s, const topo::Topology& t) {
  return sim::simulate_iteration(job, s, t, analytic());
}

// The same cluster with another HBM bandwidth.
topo::Topology with_hbm(const topo::Topology& t, double bandwidth) {
  topo::GpuSpec gpu = t.gpu();
  gpu.memory_bandwidth_Bps = bandwidth;
  return topo::Topology(t.name(), gpu, std::make_shared<const topo::NodeTemplate>(t.node()), t.nodes(), t.fabric());
}

}  // namespace

TEST_CASE("time items sum to the step time", "[training][time]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  for (const auto& [family, tp] :
       {std::pair{"burst", 1}, {"megatron-cp", 1}, {"loongtrain-double-ring", 1}, {"megatron-cp", 4}}) {
    INFO(family << " at TP " << tp);
    const auto it = run(job, sim::training_preset(family, job, t, tp, 1), t);
    REQUIRE(it.not_applicable.empty());
    const auto& x = it.time;
    CHECK((tp > 1) == (x.tp_exposed_comm > 0));
    // step = dense + elementwise + attention compute + attention exposed comm + recompute + LM head + ZeRO
    // exposed + tensor parallelism's exposed collectives + optimizer
    const double sum = x.dense_compute + x.elementwise + x.attention_compute + x.attention_exposed_comm + x.recompute +
                       x.lm_head + x.zero_exposed_comm + x.tp_exposed_comm + x.optimizer;
    CHECK(it.step_time_s == Approx(sum).epsilon(1e-12));
    CHECK(sim::to_json(x).at("total").get<double>() == Approx(sum).epsilon(1e-12));
    CHECK(x.dense_compute > 0);
    CHECK(x.elementwise > 0);
    CHECK(x.attention_compute > 0);
  }
}

TEST_CASE("the forward and backward passes are the step less ZeRO's exposed collectives and the optimizer",
          "[training][time]") {
  const auto t = a800(2);
  for (const std::int64_t seq : {std::int64_t{16 * 1024}, std::int64_t{64 * 1024}}) {
    const auto job = job_of("burst-7b", seq);
    for (const auto& [family, tp] : {std::pair{"burst", 1},
                                     {"megatron-cp", 1},
                                     {"loongtrain-double-ring", 1},
                                     {"burst-usp", 1},
                                     {"megatron-cp", 4}}) {
      INFO(family << " at TP " << tp << ", " << seq << " tokens");
      const auto it = run(job, sim::training_preset(family, job, t, tp, 1), t);
      REQUIRE(it.not_applicable.empty());
      CHECK(it.forward_s > 0);
      CHECK(it.backward_s > it.forward_s);  // twice the products, and the recompute
      CHECK(it.forward_s + it.backward_s + it.time.zero_exposed_comm + it.time.optimizer ==
            Approx(it.step_time_s).epsilon(1e-12));
    }
  }
}

TEST_CASE("seq_stash recompute fraction of the attention forward", "[training][time]") {
  const std::int64_t s = 1 << 20;
  CheckpointConfig ck;
  ck.policy = CheckpointPolicy::SeqStash;
  ck.kept_fraction = 0.5;
  // causal: ((1 - f) S)^2 / S^2 = 0.25 at f = 0.5 (up to the diagonal's 1/S)
  CHECK(sim::attention_recompute_fraction(Mask{}, s, ck) == Approx(0.25).epsilon(1e-4));
  // a full mask: every recomputed query sees every key, so 1 - f
  CHECK(sim::attention_recompute_fraction(Mask{MaskKind::Full, 0, 0}, s, ck) == Approx(0.5).epsilon(1e-9));
  double previous = 0;
  for (double kept : {0.9, 0.7, 0.5, 0.3, 0.1}) {
    ck.kept_fraction = kept;
    const double r = sim::attention_recompute_fraction(Mask{}, s, ck);
    CHECK(r > previous);  // less kept, more recomputed
    CHECK(r == Approx((1 - kept) * (1 - kept)).epsilon(1e-4));
    previous = r;
  }
  ck.policy = CheckpointPolicy::Full;
  CHECK(sim::attention_recompute_fraction(Mask{}, s, ck) == 1);
  ck.policy = CheckpointPolicy::AttnStash;
  CHECK(sim::attention_recompute_fraction(Mask{}, s, ck) == 0);
}

TEST_CASE("recompute time grows as seq_stash keeps less, and orders the policies", "[training][time]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  auto s = sim::training_preset("burst", job, t);
  const auto recompute = [&](CheckpointPolicy policy, double kept) {
    s.checkpoint.policy = policy;
    s.checkpoint.kept_fraction = kept;
    return run(job, s, t).time.recompute;
  };
  const double kept_most = recompute(CheckpointPolicy::SeqStash, 0.75);
  const double kept_half = recompute(CheckpointPolicy::SeqStash, 0.5);
  const double kept_least = recompute(CheckpointPolicy::SeqStash, 0.25);
  CHECK(kept_most < kept_half);
  CHECK(kept_half < kept_least);
  // none < attn_stash (dense forward again) < seq_stash < full (dense + all of attention)
  CHECK(recompute(CheckpointPolicy::None, 0) == 0);
  CHECK(recompute(CheckpointPolicy::AttnStash, 0) < kept_most);
  CHECK(kept_least < recompute(CheckpointPolicy::Full, 0));
}

TEST_CASE("offloading moves the optimizer's memory into its time", "[training][time]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  auto s = sim::training_preset("burst", job, t);
  const auto on_gpu = run(job, s, t);
  s.zero.offload = true;
  const auto offloaded = run(job, s, t);
  REQUIRE(offloaded.not_applicable.empty());
  CHECK(offloaded.memory.optimizer == 0);
  CHECK(offloaded.time.optimizer > on_gpu.time.optimizer);
  CHECK(offloaded.comm_bytes_intra > on_gpu.comm_bytes_intra);  // gradients down, parameters up over PCIe
}

TEST_CASE("more HBM bandwidth never makes the optimizer slower", "[training][time][property]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  const auto comm = sim::make_cost_models().comm;
  for (int stage : {0, 1, 3}) {
    ZeroConfig zero;
    zero.stage = stage;
    double previous = sim::optimizer_seconds(job, zero, with_hbm(t, 0.5e12), *comm);
    for (double bandwidth : {1e12, 2e12, 4e12}) {
      const double seconds = sim::optimizer_seconds(job, zero, with_hbm(t, bandwidth), *comm);
      CHECK(seconds <= previous);
      previous = seconds;
    }
    // on the GPU: 2 x 16 bytes per parameter of the shard through HBM
    const double shard = job.model.total_params() / (stage >= 1 ? t.gpu_count() : 1);
    CHECK(sim::optimizer_seconds(job, zero, with_hbm(t, 1e12), *comm) == Approx(32 * shard / 1e12));
  }
}

TEST_CASE("a CPU rank's optimizer step is its shard at the rate its calibration measured", "[training][time]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  const auto comm = sim::make_cost_models().comm;
  topo::GpuSpec rank = t.gpu();
  rank.optimizer_params_per_s = 5e7;
  const topo::Topology cpu_ranks(t.name(), rank, std::make_shared<const topo::NodeTemplate>(t.node()), t.nodes(),
                                 t.fabric());
  for (const bool offload : {false, true}) {  // the rank's own memory either way: nothing crosses PCIe
    ZeroConfig zero;
    zero.stage = 3;
    zero.offload = offload;
    const double shard = job.model.total_params() / t.gpu_count();
    CHECK(sim::optimizer_seconds(job, zero, cpu_ranks, *comm) == Approx(shard / 5e7));
    CHECK(sim::optimizer_seconds(job, zero, t, *comm) < shard / 5e7);  // a GPU node's rates are far higher
  }
}

TEST_CASE("on CPU ranks no ZeRO collective hides behind the layers", "[training][time]") {
  // MPI's shared-memory copies run on the cores the layers compute on: every collective's time
  // is on the critical path.
  const auto t = topo::make_preset("local", 2, 2);
  const auto job = job_of("tiny-mha", 2048);
  auto s = sim::training_preset("burst", job, t);
  s.zero.stage = 3;
  const auto it = run(job, s, t);
  REQUIRE(it.not_applicable.empty());
  const sim::ZeroTraffic zero = sim::zero_traffic(job, s, t, *sim::make_cost_models().comm);
  const double layers = job.model.layers;
  const double all =
      zero.forward_repeats * (layers * zero.seconds(zero.forward_per_layer) + zero.seconds(zero.forward_rest)) +
      zero.backward_repeats * (layers * zero.seconds(zero.backward_per_layer) + zero.seconds(zero.backward_rest));
  CHECK(all > 0);
  CHECK(it.time.zero_exposed_comm == Approx(all));
}

TEST_CASE("throughput and MFU follow their definitions", "[training][time]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  const auto it = run(job, sim::training_preset("burst", job, t), t);
  REQUIRE(it.not_applicable.empty());
  // tokens/s/GPU = seq * batch / step / GPUs
  CHECK(it.tokens_per_s_per_gpu == Approx(64.0 * 1024 / it.step_time_s / t.gpu_count()));
  // mfu = model FLOPs / (step x GPUs x peak), strictly inside (0, 1)
  CHECK(it.mfu == Approx(it.model_flops / (it.step_time_s * t.gpu_count() * t.gpu().peak_bf16_flops)));
  CHECK(it.mfu > 0);
  CHECK(it.mfu < 1);
  // model FLOPs = 3 x (2 x tokens x (L x matmul params per layer + LM head) + L x attention forward)
  const auto& m = job.model;
  const double dense = 6 * 64.0 * 1024 * (m.layers * (m.layer_params() - 2.0 * m.hidden) + m.hidden * 32000.0);
  CHECK(it.model_flops == Approx(dense + 3 * m.layers * it.attention.forward.flops_total));
  CHECK(it.comm_bytes_inter > 0);  // two nodes: rings and ZeRO cross the network
  CHECK(it.comm_bytes_intra > 0);
}

TEST_CASE("strategies that cannot train say why instead of throwing", "[training][applicability]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  const auto base = sim::training_preset("burst", job, t);
  REQUIRE(run(job, base, t).not_applicable.empty());
  const auto rejected = [&](auto change, const char* word) {
    auto s = base;
    change(s);
    const auto it = run(job, s, t);
    CHECK_THAT(it.not_applicable, Catch::Contains(word));
    CHECK(it.step_time_s == 0);
  };
  rejected([](sim::TrainingStrategy& s) { s.attention.layout = Layout::Zigzag; }, "striped");
  rejected([](sim::TrainingStrategy& s) { s.checkpoint.kept_fraction = 1; }, "kept_fraction");
  rejected([](sim::TrainingStrategy& s) { s.checkpoint.kept_fraction = 0; }, "kept_fraction");
  rejected([](sim::TrainingStrategy& s) { s.lm_head_chunks = 0; }, "lm_head.chunks");
  rejected([](sim::TrainingStrategy& s) { s.lm_head_chunks = 4097; }, "lm_head.chunks");  // 4096 local tokens
  rejected([](sim::TrainingStrategy& s) { s.zero.stage = 4; }, "zero.stage");
  rejected(
      [](sim::TrainingStrategy& s) {
        s.zero.stage = 0;
        s.zero.offload = true;
      },
      "zero.offload");
  rejected([](sim::TrainingStrategy& s) { s.attention.ulysses = 3; }, "ulysses");
}

TEST_CASE("a layer's elementwise bytes are the listed kernels', split by tensor parallelism", "[training][time]") {
  ModelSpec m;
  m.hidden = 512;
  m.ffn = 1536;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 128;
  m.gated_mlp = true;
  const double e = 2, h = 512, f = 1536, hq = 512, hkv = 256;
  // forward: two norms 2eh, RoPE 2e(hq + hkv), two residual adds 3eh, SwiGLU 3ef;
  // backward: two norms and two residual adds 3eh each, RoPE, SwiGLU 5ef, D = rowsum(dO O).
  const double forward = 2 * (2 * e * h) + 2 * e * (hq + hkv) + 2 * (3 * e * h) + 3 * e * f;
  const double backward = 4 * (3 * e * h) + 2 * e * (hq + hkv) + 5 * e * f + 2 * e * hq + 4 * 4;
  const sim::LayerElementwiseBytes one = sim::layer_elementwise_bytes(m, 1000, 1, 2);
  CHECK(one.total() == Approx(1000 * (forward + backward)));
  CHECK(sim::layer_elementwise_bytes(m, 1000, 2, 2).total() == Approx(one.total() / 2));
  CHECK(sim::layer_elementwise_bytes(m, 1000, 1, 4).total() > one.total());
}

TEST_CASE("FP8 linears run the layer's GEMMs at twice the bf16 rate on Hopper, plus their casts", "[training][time]") {
  CHECK(topo::hw::fp8_over_bf16("H100-SXM5-80GB") == 2);
  CHECK(topo::hw::fp8_over_bf16("L40S-PCIE-48GB") == 2);
  CHECK(topo::hw::fp8_over_bf16("A100-SXM4-80GB") == 0);
  CHECK(topo::hw::fp8_over_bf16("no-such-gpu") == 0);

  const topo::Topology h100 = topo::load_topology("dgx-h100", {});
  const ModelSpec m = sim::model_preset("llama3-8b");
  const sim::CostModels models = sim::make_cost_models();
  const double tokens = 16384;
  const auto job_in = [&](sim::LinearPrecision p, sim::Fp8Library library = sim::Fp8Library::TransformerEngine) {
    sim::TrainingJob job;
    job.model = m;
    job.linears = p;
    job.fp8_library = library;
    return job;
  };
  const auto kernels = [&](sim::LinearPrecision p) {
    return sim::layer_kernels(job_in(p), tokens, 1, *models.compute, h100.gpu());
  };
  const sim::LayerKernels bf16 = kernels(sim::LinearPrecision::Bf16), fp8 = kernels(sim::LinearPrecision::Fp8);
  // Large GEMMs: far above the launch gap, so the time halves.
  CHECK(fp8.gemm_forward_s == Approx(bf16.gemm_forward_s / 2).epsilon(1e-9));
  CHECK(fp8.gemm_backward_s == Approx(bf16.gemm_backward_s / 2).epsilon(1e-9));
  // Each GEMM's input (forward) and output gradient (backward) read in bf16 and written as FP8
  // and its transpose: 4 bytes an element, streamed at the rate of the layer's other
  // elementwise kernels (all far above the launch gap at 16K tokens).
  const double h = m.hidden, f = m.ffn, hq = 1.0 * m.heads * m.head_dim, hkv = 1.0 * m.kv_heads * m.head_dim;
  const double forward_cast = 4 * tokens * (h + hq + h + f);
  const double backward_cast = 4 * tokens * ((hq + 2 * hkv) + h + 2 * f + h);
  const sim::LayerElementwiseBytes others = sim::layer_elementwise_bytes(m, tokens, 1, 2);
  double forward_bytes = 0;
  for (const double b : others.forward) forward_bytes += b;
  const double per_byte = bf16.elementwise_forward_s / forward_bytes;
  CHECK(fp8.elementwise_forward_s - bf16.elementwise_forward_s == Approx(forward_cast * per_byte).epsilon(1e-9));
  CHECK(fp8.elementwise_backward_s - bf16.elementwise_backward_s == Approx(backward_cast * per_byte).epsilon(1e-9));
  // Tensor parallelism of 2 with sequence parallelism: each GPU casts half of every tensor.
  const auto cast_seconds = [&](int tp) {
    const auto with = [&](sim::LinearPrecision p) {
      const sim::LayerKernels k = sim::layer_kernels(job_in(p), tokens, tp, *models.compute, h100.gpu());
      return k.elementwise_forward_s + k.elementwise_backward_s;
    };
    return with(sim::LinearPrecision::Fp8) - with(sim::LinearPrecision::Bf16);
  };
  CHECK(cast_seconds(2) == Approx(cast_seconds(1) / 2).epsilon(1e-9));
}

TEST_CASE("FP8 linears on a GPU without FP8 tensor cores are refused with the reason", "[training][applicability]") {
  const auto t = a800(1);
  auto job = job_of("llama3-8b", 8192);
  job.linears = sim::LinearPrecision::Fp8;
  const auto it = run(job, sim::training_preset("megatron-cp", job, t), t);
  CHECK_THAT(it.not_applicable, Catch::Contains("FP8") && Catch::Contains("A800"));
  CHECK(it.step_time_s == 0);
  // The same job in FP8 on Hopper trains, and faster than in bf16.
  const topo::Topology h100 = topo::load_topology("dgx-h100", {});
  const auto fp8 = run(job, sim::training_preset("megatron-cp", job, h100), h100);
  job.linears = sim::LinearPrecision::Bf16;
  const auto bf16 = run(job, sim::training_preset("megatron-cp", job, h100), h100);
  REQUIRE(fp8.not_applicable.empty());
  CHECK(fp8.step_time_s < bf16.step_time_s);
  CHECK(fp8.time.dense_compute == Approx(bf16.time.dense_compute / 2).epsilon(1e-6));
  CHECK(fp8.time.lm_head == Approx(bf16.time.lm_head));  // the LM head stays bf16
}
