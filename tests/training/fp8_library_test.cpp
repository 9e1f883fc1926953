// FP8 linear layers as each library runs them (sim::Fp8Library): TransformerEngine's FP8 saved
// inputs, cached weight copies and FP8 all-gathers; torchao's dynamic casts, redone for the
// backward, with bf16 inputs kept.
#include <catch2/catch.hpp>

#include "simulator/detail/training/iteration_parts.hpp"
#include "training_fixtures.hpp"

using namespace burst;
using burst::test::job_of;

namespace {

const topo::Topology& h100_node() {
  static const topo::Topology t = topo::load_topology("dgx-h100", {});
  return t;
}

sim::TrainingJob fp8_job(sim::Fp8Library library, std::int64_t seq = 16384) {
  sim::TrainingJob job = job_of("llama3-8b", seq);
  job.linears = sim::LinearPrecision::Fp8;
  job.fp8_library = library;
  return job;
}

sim::TrainingJob bf16_job(std::int64_t seq = 16384) { return job_of("llama3-8b", seq); }

}  // namespace

TEST_CASE("the FP8 library's name reads back, and a wrong one says where", "[training][fp8]") {
  for (const sim::Fp8Library library : {sim::Fp8Library::TransformerEngine, sim::Fp8Library::Torchao}) {
    CHECK(sim::parse_fp8_library(sim::to_string(library), "here") == library);
  }
  CHECK_THROWS_WITH(sim::parse_fp8_library("float8", "table row 3: fp8_library"),
                    Catch::Contains("table row 3: fp8_library") && Catch::Contains("torchao"));
}

TEST_CASE("torchao's casts: an amax pass and a cast, input and weight forward, four more backward", "[training][fp8]") {
  const sim::CostModels models = sim::make_cost_models();
  const ModelSpec m = sim::model_preset("llama3-8b");
  const double c = 16384, e = 2;
  const auto kernels = [&](const sim::TrainingJob& job) {
    return sim::layer_kernels(job, c, 1, *models.compute, h100_node().gpu());
  };
  const sim::LayerKernels bf16 = kernels(bf16_job()), te = kernels(fp8_job(sim::Fp8Library::TransformerEngine));
  const sim::LayerKernels torchao = kernels(fp8_job(sim::Fp8Library::Torchao));
  // The GEMMs are the same FP8 GEMMs either way.
  CHECK(torchao.gemm_forward_s == Approx(te.gemm_forward_s).epsilon(1e-12));
  CHECK(torchao.gemm_backward_s == Approx(te.gemm_backward_s).epsilon(1e-12));
  // Per GEMM of input width k and output width n: forward (2e + 1)(c k + k n), backward
  // (2e + 1)(2 c n + k n + c k); every kernel here is far above the launch gap, so time is bytes.
  const double h = m.hidden, f = m.ffn, hq = 1.0 * m.heads * m.head_dim, hkv = 1.0 * m.kv_heads * m.head_dim;
  const std::array<std::array<double, 2>, 4> gemms = {{{h, hq + 2 * hkv}, {hq, h}, {h, 2 * f}, {f, h}}};
  double forward_bytes = 0, backward_bytes = 0;
  for (const auto& [k, n] : gemms) {
    forward_bytes += (2 * e + 1) * (c * k + k * n);
    backward_bytes += (2 * e + 1) * (2 * c * n + k * n + c * k);
  }
  const sim::LayerElementwiseBytes others = sim::layer_elementwise_bytes(m, c, 1, 2);
  double other_forward = 0;
  for (const double b : others.forward) other_forward += b;
  const double per_byte = bf16.elementwise_forward_s / other_forward;
  CHECK(torchao.elementwise_forward_s - bf16.elementwise_forward_s == Approx(forward_bytes * per_byte).epsilon(1e-9));
  CHECK(torchao.elementwise_backward_s - bf16.elementwise_backward_s ==
        Approx(backward_bytes * per_byte).epsilon(1e-9));
  // So torchao's casts cost more than TransformerEngine's fused cast-transposes.
  CHECK(torchao.elementwise_forward_s + torchao.elementwise_backward_s >
        te.elementwise_forward_s + te.elementwise_backward_s);
}

TEST_CASE("TransformerEngine's FP8 all-gathers carry 1 byte an element; its reduce-scatters and torchao's stay bf16",
          "[training][fp8][tensor-parallel]") {
  const double c = 8192;
  const int tp = 4;
  const sim::TensorParallelBytes bf16 = sim::tensor_parallel_bytes(bf16_job(), tp, c);
  const sim::TensorParallelBytes te = sim::tensor_parallel_bytes(fp8_job(sim::Fp8Library::TransformerEngine), tp, c);
  const sim::TensorParallelBytes torchao = sim::tensor_parallel_bytes(fp8_job(sim::Fp8Library::Torchao), tp, c);
  const double elements = c * 4096 * (tp - 1.0) / tp;
  CHECK(bf16.all_gather == Approx(2 * elements));
  CHECK(bf16.reduce_scatter == Approx(2 * elements));
  CHECK(te.all_gather == Approx(elements));
  CHECK(te.reduce_scatter == Approx(bf16.reduce_scatter));
  CHECK(torchao.all_gather == Approx(bf16.all_gather));
  // 2 all-gathers and 2 reduce-scatters forward; 4 and 2 backward.
  CHECK(te.forward_per_layer() == Approx(6 * elements));
  CHECK(te.backward_per_layer() == Approx(8 * elements));
  CHECK(bf16.forward_per_layer() == Approx(8 * elements));
  CHECK(bf16.backward_per_layer() == Approx(12 * elements));
  CHECK(sim::tensor_parallel_bytes(fp8_job(sim::Fp8Library::TransformerEngine), 1, c).all_gather == 0);
}

TEST_CASE("TransformerEngine keeps FP8 GEMM inputs and FP8 weight copies; torchao keeps what bf16 keeps",
          "[training][fp8][memory]") {
  const topo::Topology& t = h100_node();
  const ModelSpec m = sim::model_preset("llama3-8b");
  const int tp = 2;
  const auto memory = [&](const sim::TrainingJob& job, int zero_stage) {
    sim::TrainingStrategy s = sim::training_preset("megatron-cp", job, t, tp, 1);
    s.zero.stage = zero_stage;
    return std::pair{sim::estimate_memory(job, s, t), sim::local_tokens(job, t, s)};
  };
  const auto [bf16, c] = memory(bf16_job(), 1);
  const auto [te, c_te] = memory(fp8_job(sim::Fp8Library::TransformerEngine), 1);
  const auto [torchao, c_ao] = memory(fp8_job(sim::Fp8Library::Torchao), 1);
  REQUIRE(c_te == c);
  // Nothing recomputed: every layer keeps the two norms' outputs and the MLP output matrix's
  // input in 1 byte instead of 2, and an FP8 copy of O: per token and layer (h + h + f) less and
  // hq more, over T.
  const double h = m.hidden, f = m.ffn, hq = 1.0 * m.heads * m.head_dim;
  const double per_token_layer = -(h + h + f) + hq;
  // The working set (one layer's gradients) is one more layer's worth.
  CHECK(te.activations - bf16.activations == Approx(c * (m.layers + 1) * per_token_layer / tp).epsilon(1e-9));
  CHECK(te.attention_stash == Approx(bf16.attention_stash));
  // The weights' FP8 copies with their transposes: 2 bytes a local linear weight.
  CHECK(te.fp8_weights == Approx(2.0 * m.layers * (m.layer_params() - 2.0 * m.hidden) / tp));
  CHECK(bf16.fp8_weights == 0);
  // Under ZeRO-3 TransformerEngine caches none (FSDP2 gathers the weights each time).
  CHECK(memory(fp8_job(sim::Fp8Library::TransformerEngine), 3).first.fp8_weights == 0);
  // torchao saves the bf16 input and casts the weight on every call.
  CHECK(torchao.total() == Approx(bf16.total()).epsilon(1e-12));
  // The item is in the JSON only where it is held.
  CHECK(sim::to_json(te).contains("fp8_weights"));
  CHECK_FALSE(sim::to_json(bf16).contains("fp8_weights"));
  CHECK(sim::to_json(te).at("total").get<double>() == Approx(te.total()).epsilon(1e-12));
}

TEST_CASE("FP8 all-gathers shorten tensor parallelism's exposed collectives", "[training][fp8][tensor-parallel]") {
  const topo::Topology& t = h100_node();
  const auto exposed = [&](const sim::TrainingJob& job) {
    const sim::TrainingStrategy s = sim::training_preset("megatron-cp", job, t, 4, 1);
    const sim::IterationSimulation it = sim::simulate_iteration(job, s, t, test::analytic());
    REQUIRE(it.not_applicable.empty());
    return it.time.tp_exposed_comm;
  };
  const double te = exposed(fp8_job(sim::Fp8Library::TransformerEngine, 65536));
  const double torchao = exposed(fp8_job(sim::Fp8Library::Torchao, 65536));
  CHECK(te > 0);
  CHECK(te < 0.9 * torchao);
}
