// Memory as each framework allocates it: the gradients and LM-head items follow the family's
// FrameworkMemory row (attention/families.hpp), a change of trait changes the item, and fp32
// main gradients are reduced in fp32.
#include <catch2/catch.hpp>

#include "training_fixtures.hpp"

using namespace burst;
using burst::test::a800;
using burst::test::job_of;

namespace {

// burst-7b at 64K tokens on 16 GPUs: 4096 local tokens, vocabulary 32000.
struct Case {
  topo::Topology topology = a800(2);
  sim::TrainingJob job = job_of("burst-7b", 64 * 1024);
  double n = job.model.total_params();
  double c = sim::local_tokens(job, topology, TrainingKnobs{});
  double vocab = static_cast<double>(job.model.vocab);
};

}  // namespace

TEST_CASE("each family's training preset carries its row's framework memory", "[training][memory][framework]") {
  const Case k;
  for (const std::string& family : sim::family_names()) {
    const sim::FrameworkMemory& row = sim::family_traits(family).memory;
    const sim::FrameworkMemory& preset = sim::training_preset(family, k.job, k.topology).memory;
    CHECK(preset.fp32_main_grads == row.fp32_main_grads);
    CHECK(preset.logits_fp32_buffers == row.logits_fp32_buffers);
    CHECK(preset.gradient_bucket_elements == row.gradient_bucket_elements);
  }
  // burst keeps the model's own numbers: bf16 gradients, softmax and gradient beside the logits
  const sim::FrameworkMemory& burst = sim::family_traits("burst").memory;
  CHECK_FALSE(burst.fp32_main_grads);
  CHECK(burst.logits_fp32_buffers == 2);
  CHECK(burst.gradient_bucket_elements == 0);
}

TEST_CASE("megatron-cp's gradients are its fp32 main-gradient buffer, whole under ZeRO-1",
          "[training][memory][framework]") {
  const Case k;
  const auto megatron = sim::training_preset("megatron-cp", k.job, k.topology);
  REQUIRE(megatron.zero.stage == 1);
  const auto m = sim::estimate_memory(k.job, megatron, k.topology);
  CHECK(m.gradients == Approx(4 * k.n));  // the distributed optimizer does not shard main_grad
  // the loss works on one fp32 copy of the logits beside the bf16 logits: 2 + 4 bytes
  CHECK(m.lm_head == Approx(k.c * k.vocab * 6));

  auto bf16_grads = megatron;
  bf16_grads.memory.fp32_main_grads = false;
  CHECK(sim::estimate_memory(k.job, bf16_grads, k.topology).gradients == Approx(2 * k.n));
}

TEST_CASE("ds-ulysses adds ZeRO-3's reduce bucket and holds three fp32 buffers of logits",
          "[training][memory][framework]") {
  const Case k;
  const auto ulysses = sim::training_preset("ds-ulysses", k.job, k.topology);
  REQUIRE(ulysses.zero.stage == 3);
  const auto m = sim::estimate_memory(k.job, ulysses, k.topology);
  const double p = k.topology.gpu_count();
  CHECK(m.gradients == Approx(2 * k.n / p + 5e8 * 2));
  CHECK(m.lm_head == Approx(k.c * k.vocab * (2 + 3 * 4)));
}

TEST_CASE("loongtrain's loss works in place on one fp32 copy of the logits", "[training][memory][framework]") {
  const Case k;
  for (const char* family : {"loongtrain-double-ring", "loongtrain-usp"}) {
    const auto s = sim::training_preset(family, k.job, k.topology);
    const auto m = sim::estimate_memory(k.job, s, k.topology);
    CHECK(m.lm_head == Approx(k.c * k.vocab * (2 + 4)));
    CHECK(m.gradients == Approx(2 * k.n / k.topology.gpu_count()));  // bf16, ZeRO-3: as burst
  }
}

TEST_CASE("a change of framework trait changes only its own item", "[training][memory][framework]") {
  const Case k;
  const auto base = sim::training_preset("burst", k.job, k.topology);
  const auto before = sim::estimate_memory(k.job, base, k.topology);

  auto more_logits = base;
  more_logits.memory.logits_fp32_buffers = 3;
  const auto logits = sim::estimate_memory(k.job, more_logits, k.topology);
  CHECK(logits.lm_head == Approx(before.lm_head * (2 + 12) / (2 + 8)));
  CHECK(logits.gradients == before.gradients);

  auto bucket = base;
  bucket.memory.gradient_bucket_elements = 1e6;
  const auto bucketed = sim::estimate_memory(k.job, bucket, k.topology);
  CHECK(bucketed.gradients == Approx(before.gradients + 2e6));
  CHECK(bucketed.lm_head == before.lm_head);

  auto fp32 = base;
  fp32.memory.fp32_main_grads = true;
  const double p = k.topology.gpu_count();  // burst's ZeRO-3 shards the fp32 buffer too
  CHECK(sim::estimate_memory(k.job, fp32, k.topology).gradients == Approx(4 * k.n / p));
}

TEST_CASE("megatron-cp reduces its fp32 main gradients: the ZeRO reduce-scatter moves 4 bytes a parameter",
          "[training][framework]") {
  const Case k;
  const auto megatron = sim::training_preset("megatron-cp", k.job, k.topology);
  auto bf16_grads = megatron;
  bf16_grads.memory.fp32_main_grads = false;
  const auto fp32 = sim::simulate_iteration(k.job, megatron, k.topology, burst::test::analytic());
  const auto bf16 = sim::simulate_iteration(k.job, bf16_grads, k.topology, burst::test::analytic());
  // ZeRO-1 reduce-scatters every gradient once per iteration; two nodes put it on the network
  const double p = k.topology.gpu_count();
  CHECK(fp32.comm_bytes_inter - bf16.comm_bytes_inter == Approx((p - 1) / p * (4 - 2) * k.n));
  CHECK(fp32.comm_bytes_intra == bf16.comm_bytes_intra);
}
