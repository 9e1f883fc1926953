// The nearest equivalent of a plan per framework, knob by knob, and what it is predicted to
// cost: the plan's own strategy re-simulated must give the plan's own prediction.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string_view>

#include "planner/detail/export/equivalent.hpp"
#include "planner/detail/export/equivalent_cost.hpp"
#include "planner/export/export.hpp"
#include "planner/export/framework.hpp"

using namespace burst;
using burst::exporter::Knob;

namespace {

const std::string kGolden = std::string(BURST_TEST_DATA) + "/plans/a800x4-burst14b-1M.json";
const std::string kLocal = std::string(BURST_TEST_DATA) + "/run/local-2x2-tiny-mha-1K-default.json";

bool deviates(const exporter::Equivalent& e, Knob knob) {
  return std::any_of(e.deviations.begin(), e.deviations.end(),
                     [&](const exporter::Deviation& d) { return d.knob == knob; });
}

exporter::Equivalent equivalent_in(const plan::Plan& p, const char* framework) {
  return exporter::nearest_equivalent(p, exporter::find_framework(framework, "test"));
}

}  // namespace

TEST_CASE("every framework keeps the plan's ranks and never asks for a knob it lacks") {
  for (const std::string& path : {kGolden, kLocal}) {
    const plan::Plan p = plan::read_plan(path);
    for (const exporter::Framework& f : exporter::frameworks()) {
      INFO(path << " -> " << f.name);
      const exporter::Equivalent e = exporter::nearest_equivalent(p, f);
      const plan::Strategy& s = e.strategy;
      CHECK(s.cp * s.ulysses == p.strategy.cp * p.strategy.ulysses);
      if (s.cp > 1) CHECK(f.can.ring);
      if (s.ulysses > 1) CHECK(f.can.ulysses);
      if (s.cp > 1 && s.ulysses > 1) CHECK(f.can.ulysses_with_ring);
      if (s.cp > 1) CHECK(std::find(f.can.layouts.begin(), f.can.layouts.end(), s.layout) != f.can.layouts.end());
      if (s.cp > 1)
        CHECK(std::find(f.can.backwards.begin(), f.can.backwards.end(), s.backward) != f.can.backwards.end());
      CHECK(std::find(f.can.checkpoints.begin(), f.can.checkpoints.end(), s.checkpoint.policy) !=
            f.can.checkpoints.end());
      CHECK(std::find(f.can.zero_stages.begin(), f.can.zero_stages.end(), s.zero.stage) != f.can.zero_stages.end());
      if (s.lm_head_chunks > 1) CHECK(f.can.chunked_lm_head);
      if (s.zero.offload) CHECK(f.can.offload);
      for (const exporter::Deviation& d : e.deviations) {
        CHECK_FALSE(d.why.empty());
        CHECK(d.asked != d.written);
      }
    }
  }
}

TEST_CASE("BurstEngine's 14B 1M plan in Megatron-LM: a flat K,V ring, full recompute, unfused LM head") {
  const plan::Plan p = plan::read_plan(kGolden);
  const exporter::Equivalent e = equivalent_in(p, "megatron");
  CHECK(e.strategy.cp == 32);
  CHECK(e.strategy.backward == BackwardMode::KvRing);
  CHECK(e.strategy.checkpoint.policy == CheckpointPolicy::Full);
  CHECK(e.strategy.lm_head_chunks == 1);
  CHECK(e.strategy.zero.stage == 3);
  CHECK(deviates(e, Knob::Backward));
  CHECK(deviates(e, Knob::Checkpoint));
  CHECK(deviates(e, Knob::LmHead));
  CHECK_FALSE(deviates(e, Knob::Attention));
}

TEST_CASE(
    "a Ulysses x ring plan: Megatron's a2a+p2p keeps it, NeMo and TorchTitan flatten it, DeepSpeed splits heads") {
  const plan::Plan p = plan::read_plan(kLocal);
  REQUIRE(p.strategy.ulysses == 2);
  REQUIRE(p.strategy.cp == 2);
  const exporter::Equivalent megatron = equivalent_in(p, "megatron");
  CHECK(megatron.strategy.ulysses == 2);
  CHECK(megatron.strategy.cp == 2);
  CHECK_FALSE(deviates(megatron, Knob::Attention));
  for (const char* flat : {"nemo", "torchtitan"}) {
    const exporter::Equivalent e = equivalent_in(p, flat);
    CHECK(e.strategy.cp == 4);
    CHECK(e.strategy.ulysses == 1);
    CHECK(deviates(e, Knob::Attention));
  }
  const exporter::Equivalent deepspeed = equivalent_in(p, "deepspeed");
  CHECK(deepspeed.strategy.ulysses == 4);
  CHECK(deepspeed.strategy.cp == 1);
  CHECK_FALSE(deviates(deepspeed, Knob::Backward));  // no ring: the ring's knobs mean nothing
}

TEST_CASE("nearest checkpoint and ZeRO stage") {
  plan::Plan p = plan::read_plan(kLocal);
  p.strategy.checkpoint.policy = CheckpointPolicy::SeqStash;
  p.strategy.checkpoint.kept_fraction = 0.5;
  p.strategy.zero.stage = 1;
  // TorchTitan keeps attention outputs (per-op selective): seq_stash -> attn_stash.
  CHECK(equivalent_in(p, "torchtitan").strategy.checkpoint.policy == CheckpointPolicy::AttnStash);
  CHECK(equivalent_in(p, "torchtitan").strategy.checkpoint.kept_fraction == 0);
  // Megatron cannot keep them: full recompute.
  CHECK(equivalent_in(p, "megatron").strategy.checkpoint.policy == CheckpointPolicy::Full);
  // NeMo has stages 0, 2, 3: stage 1 becomes the nearest that shards at least as much.
  CHECK(equivalent_in(p, "nemo").strategy.zero.stage == 2);
  CHECK(equivalent_in(p, "megatron").strategy.zero.stage == 1);
}

TEST_CASE("the plan's own strategy re-simulated gives the plan's prediction") {
  const plan::Plan p = plan::read_plan(kGolden);
  const exporter::Predicted ours = exporter::predict_strategy(p, p.strategy, kGolden);
  REQUIRE(ours.runs);
  CHECK(ours.fits);
  CHECK(ours.step_time_s == Approx(p.predicted.step_time_s).epsilon(1e-9));
  CHECK(ours.memory_bytes == Approx(p.predicted.memory_total_bytes).epsilon(1e-9));
}

TEST_CASE("an equivalent that cannot run says why, is refused, and is written only when forced") {
  const plan::Plan p = plan::read_plan(kGolden);
  const exporter::Equivalent e = equivalent_in(p, "deepspeed");
  const exporter::Predicted theirs = exporter::predict_strategy(p, e.strategy, kGolden, "", e.linears);
  CHECK_FALSE(theirs.runs);
  CHECK_THAT(theirs.reason, Catch::Contains("does not divide the 40 attention heads"));
  const exporter::Exported refused = exporter::export_plan(p, kGolden, "deepspeed");
  CHECK(refused.text.empty());
  CHECK_THAT(refused.refused, Catch::StartsWith("DeepSpeed cannot run this plan on its cluster"));
  CHECK(std::any_of(refused.notes.begin(), refused.notes.end(),
                    [](const std::string& n) { return n.find("cannot run") != std::string::npos; }));
  CHECK_THROWS_AS(exporter::throw_if_refused(refused), Error);
  const exporter::Exported out = exporter::export_plan(p, kGolden, "deepspeed", "--to", true);
  CHECK(out.refused.empty());
  CHECK_NOTHROW(exporter::throw_if_refused(out));
  CHECK_THAT(out.text, Catch::Contains("\"sequence_parallel_size\": 32"));
  CHECK_THAT(out.text, Catch::Contains("\"_burst_warning\": \"WARNING: DeepSpeed cannot run this plan"));
}

TEST_CASE("an unknown framework is one problem with a did-you-mean") {
  const plan::Plan p = plan::read_plan(kLocal);
  try {
    (void)exporter::export_plan(p, kLocal, "megatrom");
    FAIL("no error");
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 1);
    CHECK(e.problems()[0].where == "--to");
    CHECK_THAT(e.problems()[0].hint, Catch::Contains("megatron"));
  }
}

TEST_CASE("a plan without its cluster is exported, with no prediction") {
  plan::Plan p = plan::read_plan(kLocal);
  p.cluster = nullptr;
  const exporter::Exported out = exporter::export_plan(p, kLocal, "nemo", "--to", false, 1);
  CHECK_THAT(out.text, Catch::Contains("context_parallel_size: 4"));
  CHECK(std::any_of(out.notes.begin(), out.notes.end(),
                    [](const std::string& n) { return n.find("no prediction") != std::string::npos; }));
}

TEST_CASE("an export says a plan's kernel path is burst's, not the framework's") {
  plan::Plan p = plan::read_plan(kLocal);
  p.cluster = nullptr;
  const auto says = [](const exporter::Exported& out) {
    return std::any_of(out.notes.begin(), out.notes.end(),
                       [](const std::string& n) { return n.find("kernel path: ") != std::string::npos; });
  };
  CHECK_FALSE(says(exporter::export_plan(p, kLocal, "nemo", "--to", false, 1)));
  p.job.kernel_path = "wgmma";
  const exporter::Exported out = exporter::export_plan(p, kLocal, "nemo", "--to", false, 1);
  CHECK(says(out));
  CHECK(std::any_of(out.notes.begin(), out.notes.end(), [](const std::string& n) {
    return n.find("priced for burst's wgmma attention kernels") != std::string::npos;
  }));
}

TEST_CASE(
    "FP8 linears: written where the framework has them, a deviation priced in the job's dtype where not, "
    "and on torchao a deviation priced as torchao runs them") {
  const std::string h100 = std::string(BURST_TEST_DATA) + "/exports/plans/h100x2-qwen7b-hf-256K.json";
  plan::Plan p = plan::read_plan(h100);
  p.job.linears = "fp8";
  const auto text = [&](const char* framework, int nemo_version) {
    const exporter::Exported out = exporter::export_plan(p, h100, framework, "--to", true, nemo_version);
    CHECK_THAT(out.text, !Catch::Contains("would stop at start"));  // the framework's rules hold
    return out.text;
  };
  CHECK_THAT(text("megatron", 2), Catch::Contains("--fp8-format hybrid"));
  CHECK_THAT(text("nemo", 2), Catch::Contains("fp8=\"hybrid\", fp8_recipe=\"delayed\""));
  CHECK_THAT(text("nemo", 1), Catch::Contains("\n  fp8: true\n"));
  CHECK_THAT(text("torchtitan", 2), Catch::Contains("converters = [\"quantize.linear.float8\"]") &&
                                        Catch::Contains("[quantize.linear.float8]\nfilter_fqns = [\"output\"]"));
  for (const char* framework : {"megatron", "nemo", "torchtitan"}) {
    INFO(framework);
    const exporter::Equivalent e = equivalent_in(p, framework);
    CHECK(e.linears == sim::LinearPrecision::Fp8);
    const bool torchtitan = std::string_view(framework) == "torchtitan";
    CHECK(e.fp8_library == (torchtitan ? sim::Fp8Library::Torchao : sim::Fp8Library::TransformerEngine));
    CHECK(deviates(e, Knob::Linears) == torchtitan);
  }
  // TorchTitan's deviation says which library, and its prediction is printed beside the plan's.
  const exporter::Exported titan = exporter::export_plan(p, h100, "torchtitan", "--to", true, 2);
  CHECK(std::any_of(titan.notes.begin(), titan.notes.end(), [](const std::string& n) {
    return n.find("fp8 linear layers on transformer-engine") != std::string::npos &&
           n.find("written: fp8 linear layers on torchao") != std::string::npos;
  }));
  CHECK(std::any_of(titan.notes.begin(), titan.notes.end(),
                    [](const std::string& n) { return n.find("the TorchTitan equivalent") != std::string::npos; }));
  const exporter::Equivalent deepspeed = equivalent_in(p, "deepspeed");
  CHECK(deepspeed.linears == sim::LinearPrecision::Bf16);
  CHECK(deviates(deepspeed, Knob::Linears));
  // Priced as each runs: the plan's own strategy is faster with FP8 linears than in bf16.
  const exporter::Predicted fp8 = exporter::predict_strategy(p, p.strategy, h100);
  const exporter::Predicted bf16 = exporter::predict_strategy(p, p.strategy, h100, "", sim::LinearPrecision::Bf16);
  REQUIRE(fp8.runs);
  CHECK(fp8.step_time_s < bf16.step_time_s);
  // torchao's casts cost more than TransformerEngine's.
  const exporter::Predicted torchao =
      exporter::predict_strategy(p, p.strategy, h100, "", std::nullopt, sim::Fp8Library::Torchao);
  CHECK(torchao.step_time_s > fp8.step_time_s);
}
