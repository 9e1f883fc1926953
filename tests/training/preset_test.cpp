// The families' training defaults, and that each applies to BurstEngine's own case.
#include <catch2/catch.hpp>

#include <cmath>

#include "training_fixtures.hpp"

using namespace burst;
using burst::test::a800;
using burst::test::job_of;

TEST_CASE("every family applies to burst-14b at 1M on 4 A800 nodes, except ds-ulysses", "[training][preset]") {
  const auto t = a800(4);
  const auto job = job_of("burst-14b", 1 << 20);
  for (const std::string& family : sim::family_names()) {
    const auto s = sim::training_preset(family, job, t);
    const std::string why = sim::check_training(job, s, t);
    if (family == "ds-ulysses") {
      CHECK_THAT(why, Catch::Contains("40 attention heads"));  // 40 heads do not split 32 ways
    } else {
      CHECK(why.empty());
    }
  }
}

TEST_CASE("family defaults: checkpointing, LM head and ZeRO as used in practice", "[training][preset]") {
  const auto t = a800(4);
  const auto job = job_of("burst-14b", 1 << 20);
  const auto burst = sim::training_preset("burst", job, t);
  CHECK(burst.attention.layout == Layout::Striped);
  CHECK(burst.checkpoint.policy == CheckpointPolicy::SeqStash);
  CHECK(burst.checkpoint.kept_fraction == 0.5);
  CHECK(burst.lm_head_chunks == 8);  // ceil(32768 local tokens / 4096)
  CHECK(burst.zero.stage == 3);
  CHECK_FALSE(burst.zero.offload);
  const auto megatron = sim::training_preset("megatron-cp", job, t);
  CHECK(megatron.checkpoint.policy == CheckpointPolicy::None);  // Megatron's recompute default, and NeMo's recipes
  CHECK(megatron.zero.stage == 1);
  CHECK(megatron.lm_head_chunks == 1);
  // LoongTrain as its long-sequence launch (BurstEngine's baseline config) runs it: every layer
  // recomputed, attention included, and the optimizer on the host.
  const auto loongtrain = sim::training_preset("loongtrain-usp", job, t);
  CHECK(loongtrain.checkpoint.policy == CheckpointPolicy::Full);
  CHECK(loongtrain.zero.offload);
  CHECK_FALSE(sim::training_preset("ds-ulysses", job, t).zero.offload);
  CHECK(sim::training_preset("ring", job, t).zero.stage == 3);
  // a short sequence still gets one chunk: ceil(c / 4096) >= 1
  const auto short_job = job_of("burst-14b", 32 * 1024);
  CHECK(sim::training_preset("burst-usp", short_job, t).lm_head_chunks == 1);
  CHECK_THROWS_AS(sim::training_preset("bursty", job, t), Error);
}
