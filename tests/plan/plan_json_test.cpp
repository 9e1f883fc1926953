// The plan contract in JSON: parse(dump(p)) == p, the same plan is the same bytes, and a
// corrupt plan is answered with every problem at once, each at its JSON pointer (golden
// messages: what a user reads).
#include <catch2/catch.hpp>

#include <algorithm>

#include "plan/plan.hpp"
#include "tests/plan/sample_plan.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;

namespace {

// The message plan_from_json fails with after `edit` changed the sample plan's JSON.
template <class Edit>
std::string error_after(Edit edit) {
  Json doc = plan::to_json(test::sample_plan());
  edit(doc);
  return test::error_text([&] { (void)plan::plan_from_json(doc, "plan.json"); });
}

}  // namespace

TEST_CASE("a full plan survives the JSON round trip") {
  const plan::Plan p = test::sample_plan();
  const Json doc = plan::to_json(p);
  CHECK(doc["schema"] == "burst.plan/2");
  CHECK(doc["strategy"]["tp"] == 1);
  CHECK(doc["job"]["mask"] == "sliding:4K");
  CHECK(doc["strategy"]["ring"] == Json::parse(R"({"kind": "double", "inner": 8, "outer": 2})"));
  CHECK(doc["alternatives"][2]["strategy"] == "ds-ulysses");
  CHECK(doc["predicted"]["memory_bytes_per_gpu"].begin().key() == "total");
  const plan::Plan back = plan::plan_from_json(doc, "plan.json");
  CHECK(back.strategy == p.strategy);
  CHECK(back.rings == p.rings);
  CHECK(back.alternatives == p.alternatives);
  CHECK(back == p);
}

TEST_CASE("the model's RoPE base and Q, K, V biases: kept, defaulted for older plans, checked") {
  plan::Plan p = test::sample_plan();
  p.job.model.rope_base = 500000;
  p.job.model.qkv_bias = true;
  Json doc = plan::to_json(p);
  CHECK(plan::plan_from_json(doc, "plan.json").job.model == p.job.model);
  doc["job"]["model"].erase("rope_base");
  doc["job"]["model"].erase("qkv_bias");
  const plan::Plan older = plan::plan_from_json(doc, "plan.json");
  CHECK(older.job.model.rope_base == 10000);  // Llama's, as plans before these fields meant
  CHECK_FALSE(older.job.model.qkv_bias);
  CHECK_THAT(error_after([](Json& d) { d["job"]["model"]["rope_base"] = 0.5; }),
             Catch::Contains("/job/model/rope_base: 0.5 is not a rotary base"));
}

TEST_CASE("FP8 linear layers: written when set, kept, checked") {
  plan::Plan p = test::sample_plan();
  CHECK_FALSE(plan::to_json(p)["job"].contains("linears"));  // the job's dtype: no key, older plans' bytes
  p.job.linears = "fp8";
  const Json doc = plan::to_json(p);
  CHECK(doc["job"]["linears"] == "fp8");
  CHECK(plan::plan_from_json(doc, "plan.json") == p);
  CHECK(error_after([](Json& d) { d["job"]["linears"] = "fp4"; }) ==
        "plan.json:/job/linears: 'fp4' is not valid (valid: fp8; hint: did you mean 'fp8'?)");
}

TEST_CASE("the memory margin a plan keeps: written when set, kept, checked") {
  plan::Plan p = test::sample_plan();
  CHECK_FALSE(plan::to_json(p)["job"].contains("memory_margin_bytes"));  // none: no key, older plans' bytes
  constexpr double kMargin = 2.0 * 1024 * 1024 * 1024;
  p.job.memory_margin_bytes = kMargin;
  const Json doc = plan::to_json(p);
  CHECK(doc["job"]["memory_margin_bytes"] == kMargin);
  CHECK(plan::plan_from_json(doc, "plan.json").job.memory_margin_bytes == p.job.memory_margin_bytes);
  CHECK_THAT(error_after([](Json& d) { d["job"]["memory_margin_bytes"] = -1; }),
             Catch::Contains("/job/memory_margin_bytes"));
}

TEST_CASE("a plan records a checkpoint policy fixed for every family, only when one was") {
  plan::Plan p = test::sample_plan();
  CHECK_FALSE(plan::to_json(p)["job"].contains("only_checkpoint"));  // each family's own: no key
  p.job.only_checkpoint = "attn_stash";
  const Json doc = plan::to_json(p);
  CHECK(doc["job"]["only_checkpoint"] == "attn_stash");
  CHECK(plan::plan_from_json(doc, "plan.json") == p);
  CHECK_THAT(error_after([](Json& d) { d["job"]["only_checkpoint"] = "seq_stash"; }),
             Catch::Contains("/job/only_checkpoint") && Catch::Contains("attn_stash"));
}

TEST_CASE("a plan records the kernel path it was priced for, only when one was asked for") {
  plan::Plan p = test::sample_plan();
  CHECK_FALSE(plan::to_json(p)["job"].contains("kernel_path"));  // auto: no key, as older plans
  p.job.kernel_path = "wgmma";
  const Json doc = plan::to_json(p);
  CHECK(doc["job"]["kernel_path"] == "wgmma");
  CHECK(plan::plan_from_json(doc, "plan.json").job.kernel_path == "wgmma");
  CHECK_THAT(error_after([](Json& d) { d["job"]["kernel_path"] = "hopper"; }),
             Catch::Contains("/job/kernel_path") && Catch::Contains("wgmma"));
}

TEST_CASE("the same plan is the same bytes") {
  const std::string first = plan::to_json(test::sample_plan()).dump(2);
  CHECK(first == plan::to_json(test::sample_plan()).dump(2));
  CHECK(plan::to_json(plan::plan_from_json(Json::parse(first), "p.json")).dump(2) == first);
  // Keys come in the documented order, whatever nlohmann would sort them into.
  std::vector<std::string> keys;
  const Json parsed = Json::parse(first);
  for (const auto& [key, value] : parsed.items()) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"schema", "meta", "job", "strategy", "world", "rings", "predicted",
                                         "alternatives", "layouts", "cluster"});
}

TEST_CASE("a default plan (no cluster, no alternatives) round-trips too") {
  plan::Plan p;
  p.strategy.name = "burst";
  p.ranks = {{0, 0, 0}};
  p.job.model = ModelSpec{"tiny", 1, 8, 16, 2, 1, 4, 10, false, "gelu"};
  p.job.seq = 1;
  CHECK(plan::plan_from_json(plan::to_json(p), "p.json") == p);
}

TEST_CASE("golden errors: the schema") {
  CHECK(error_after([](Json& d) { d["schema"] = "burst.plan/3"; }) ==
        "plan.json:/schema: 'burst.plan/3' is not a plan schema this build reads (valid: burst.plan/2 or "
        "burst.plan/1; hint: a plan starts with \"schema\": \"burst.plan/2\"; `burst plan` writes one)");
  CHECK(error_after([](Json& d) { d.erase("schema"); }) ==
        "plan.json:/schema: missing \"schema\" (valid: burst.plan/2 or burst.plan/1; hint: a plan starts with "
        "\"schema\": \"burst.plan/2\"; `burst plan` writes one)");
  CHECK(error_after([](Json& d) { d = Json::parse(R"({"schema": "burst.topology/1", "name": "x"})"); }) ==
        "plan.json:/schema: 'burst.topology/1' is not a plan schema this build reads (valid: burst.plan/2 or "
        "burst.plan/1; hint: this is a topology file; pass it with --topology)");
  CHECK(error_after([](Json& d) { d = Json::array(); }) ==
        "plan.json:/: a plan is a JSON object, found array (hint: a plan starts with {\"schema\": \"burst.plan/2\", "
        "...)");
}

// A burst.plan/1 document: the /2 plan without its tensor and data parallelism (no "tp", "dp"
// or "micro_batch" anywhere).
Json as_version_1(Json doc) {
  doc["schema"] = "burst.plan/1";
  for (const char* key : {"tp", "dp", "micro_batch"}) {
    doc["strategy"].erase(key);
    for (Json& alternative : doc["alternatives"]) alternative["config"].erase(key);
  }
  for (Json& ring : doc["rings"]) {
    ring.erase("tp");
    ring.erase("dp");
  }
  return doc;
}

TEST_CASE("a burst.plan/1 document is read as tensor and data parallelism 1, the batch one micro-batch") {
  const plan::Plan p = test::sample_plan();
  const plan::Plan back = plan::plan_from_json(as_version_1(plan::to_json(p)), "old.json");
  CHECK(back == p);
  CHECK(back.strategy.tp == 1);
  CHECK(back.strategy.dp == 1);
  CHECK(back.strategy.micro_batch == back.job.batch);
  Json with_tp = as_version_1(plan::to_json(p));
  with_tp["strategy"]["tp"] = 2;
  CHECK(test::error_text([&] { (void)plan::plan_from_json(with_tp, "old.json"); }) ==
        "old.json:/strategy/tp: burst.plan/1 has no \"tp\" (valid: \"schema\": \"burst.plan/2\" for a plan with "
        "tensor or data parallelism)");
  Json ring_tp = as_version_1(plan::to_json(p));
  ring_tp["rings"][0]["tp"] = 0;
  CHECK(test::error_text([&] { (void)plan::plan_from_json(ring_tp, "old.json"); }) ==
        "old.json:/rings/0/tp: unknown field 'tp' (valid: level, member, order)");
}

TEST_CASE("a burst.plan/2 document needs tp and dp, and its world is tp x cp x ulysses x dp") {
  CHECK(error_after([](Json& d) { d["strategy"].erase("tp"); }) ==
        "plan.json:/strategy/tp: missing required field 'tp' (valid: an integer)");
  CHECK(error_after([](Json& d) { d["strategy"].erase("dp"); }) ==
        "plan.json:/strategy/dp: missing required field 'dp' (valid: an integer)");
  CHECK(error_after([](Json& d) { d["strategy"]["tp"] = 2; }) ==
        "plan.json:/world/size: world size 16 does not match the strategy: tp x cp x ulysses x dp = 2 x 16 x 1 x 1 = "
        "32 (valid: tp x cp x ulysses x dp; hint: every GPU of the plan is one rank of a tensor-parallel group, of "
        "the head split, of the ring and of a data-parallel replica)");
  CHECK(error_after([](Json& d) { d["strategy"]["dp"] = 2; }) ==
        "plan.json:/strategy/micro_batch: 2 replicas of micro-batches of 1 do not split a batch of 1 sequences "
        "(valid: dp x micro_batch dividing /job/batch; hint: each replica accumulates the same number of "
        "micro-batches)\n"
        "plan.json:/world/size: world size 16 does not match the strategy: tp x cp x ulysses x dp = 1 x 16 x 1 x 2 = "
        "32 (valid: tp x cp x ulysses x dp; hint: every GPU of the plan is one rank of a tensor-parallel group, of "
        "the head split, of the ring and of a data-parallel replica)");
  CHECK(error_after([](Json& d) { d["rings"][0]["tp"] = 1; }) ==
        "plan.json:/rings/0/tp: 1 is out of range (valid: 0 to 0)");
  CHECK(error_after([](Json& d) { d["rings"][0]["dp"] = 1; }) ==
        "plan.json:/rings/0/dp: 1 is out of range (valid: 0 to 0)");
}

TEST_CASE("golden errors: one broken field each") {
  CHECK(error_after([](Json& d) { d.erase("strategy"); }) ==
        "plan.json:/strategy: missing required field 'strategy' (valid: an object)");
  CHECK(error_after([](Json& d) { d["world"]["size"] = 8; }) ==
        "plan.json:/world/size: world size 8 does not match the strategy: tp x cp x ulysses x dp = 1 x 16 x 1 x 1 = 16 "
        "(valid: tp x cp x ulysses x dp; hint: every GPU of the plan is one rank of a tensor-parallel group, of the "
        "head split, of the ring and of a data-parallel replica)");
  CHECK(error_after([](Json& d) { d["rings"][0]["order"][3] = 1; }) ==
        "plan.json:/rings/0/order/3: ring order is not a permutation: rank 1 appears twice (also at index 1) (valid: "
        "distinct ranks, each receiving from the one before it)");
  CHECK(error_after([](Json& d) { d["strategy"]["checkpoint"]["kept_fraction"] = 1.5; }) ==
        "plan.json:/strategy/checkpoint/kept_fraction: 1.5 is out of range for seq_stash (valid: greater than 0 and "
        "less than 1; hint: keeping all of the sequence is policy \"none\", keeping none of it \"full\")");
  CHECK(error_after([](Json& d) {
          d["strategey"] = d["strategy"];
          d.erase("strategy");
        }) ==
        "plan.json:/strategey: unknown field 'strategey' (valid: schema, meta, job, strategy, world, rings, "
        "predicted, alternatives, layouts, cluster; hint: did you mean 'strategy'?)\n"
        "plan.json:/strategy: missing required field 'strategy' (valid: an object)");
  CHECK(error_after([](Json& d) { d["strategy"]["ring"]["inner"] = 4; }) ==
        "plan.json:/strategy/ring: double ring of inner x outer = 4 x 2 = 8 ranks, but cp is 16 (valid: inner x outer "
        "== cp; hint: inner is the GPUs of a node in the ring, outer the nodes)");
  CHECK(error_after([](Json& d) { d["job"]["model"]["kv_heads"] = 6; }) ==
        "plan.json:/job/model/kv_heads: 32 heads do not split into 6 KV-head groups (valid: a divisor of heads; hint: "
        "grouped-query attention shares each KV head among heads / kv_heads heads)");
  CHECK(error_after([](Json& d) { d["job"]["dtype"] = "bf61"; }) ==
        "plan.json:/job/dtype: 'bf61' is not valid (valid: bf16, fp16, fp32; hint: did you mean 'bf16'?)");
  CHECK(error_after([](Json& d) { d["alternatives"][0]["strategy"] = "ring"; }) ==
        "plan.json:/alternatives/0/strategy: 'ring' differs from the config's name 'megatron-cp' (valid: the family "
        "name of the config)");
}

TEST_CASE("golden errors: placement") {
  CHECK(error_after([](Json& d) { d["world"]["ranks"][5]["rank"] = 4; }) ==
        "plan.json:/world/ranks/5/rank: rank 4 is listed twice (also at /world/ranks/4) (valid: each rank "
        "once)");
  CHECK(error_after([](Json& d) { d["world"]["ranks"][9]["node"] = 0; }) ==
        "plan.json:/world/ranks/9: rank 9 is placed on node 0 local GPU 1, where rank 1 already is (valid: one rank "
        "per GPU)");
  CHECK(error_after([](Json& d) { d["world"]["ranks"].erase(15); }) ==
        "plan.json:/world/ranks: 15 ranks listed for a world of 16 (valid: each rank 0 to 15 once)");
  CHECK(error_after([](Json& d) { d["rings"][2]["order"][1] = 16; }) ==
        "plan.json:/rings/2/order/1: 16 is not a rank of the world (valid: 0 to 15)");
  CHECK(error_after([](Json& d) { d["rings"][0]["order"].erase(7); }) ==
        "plan.json:/rings/0/order: the intra ring lists 7 ranks, but the strategy's inner is 8 (valid: 8 distinct "
        "ranks)");
}

TEST_CASE("every problem is reported at once") {
  const std::string text = error_after([](Json& d) {
    d["strategy"]["cp"] = 0;
    d["strategy"]["zero"]["stage"] = 4;
    d["strategy"]["layout"] = "zigzga";
    d["job"]["mask"] = "sliding";
    d["job"]["seq_len"] = -1;
    d["predicted"]["mfu"] = -0.5;
    d["alternatives"][1]["predicted"]["time_s"]["recompute"] = "1s";
    d["rings"][3]["levle"] = "inter";
  });
  CHECK(text ==
        "plan.json:/job/seq_len: -1 is out of range (valid: 1 to 9223372036854775807)\n"
        "plan.json:/job/mask: 'sliding' needs the window in tokens (valid: full, causal, sliding:W, document:L (W, L "
        "in tokens, e.g. sliding:4K); hint: write it like \"sliding:4K\")\n"
        "plan.json:/strategy/cp: 0 is out of range (valid: 1 to 1048576)\n"
        "plan.json:/strategy/layout: unknown layout 'zigzga' (valid: contiguous, zigzag, striped; hint: did you mean "
        "'zigzag'?)\n"
        "plan.json:/strategy/zero/stage: 4 is out of range (valid: 0 to 3)\n"
        "plan.json:/rings/3/levle: unknown field 'levle' (valid: level, tp, dp, member, order; hint: did you mean "
        "'level'?)\n"
        "plan.json:/predicted/mfu: -0.5 is negative (valid: a number >= 0)\n"
        "plan.json:/alternatives/1/predicted/time_s/recompute: expected a number, found string");
}

TEST_CASE("golden errors: names with control characters are refused, naming the field and the byte") {
  const std::string kValid =
      " (valid: printable text: no control characters, line breaks or tabs; hint: names and "
      "messages are written into scripts, settings files, reports and terminals)";
  CHECK(error_after([](Json& d) { d["job"]["model"]["name"] = "x\ntouch PWNED\n"; }) ==
        "plan.json:/job/model/name: 'x\\ntouch PWNED\\n': byte 2 is a control character (\\n)" + kValid);
  CHECK(error_after([](Json& d) { d["meta"]["topology"] = "a800\x1b[31m"; }) ==
        "plan.json:/meta/topology: 'a800\\x1b[31m': byte 5 is a control character (\\x1b)" + kValid);
  CHECK(error_after([](Json& d) { d["strategy"]["name"] = "burst\xc2\x9b"; }) ==
        "plan.json:/strategy/name: 'burst\\xc2\\x9b': byte 6 starts a control character (\\xc2\\x9b)" + kValid);
  CHECK(error_after([](Json& d) { d["alternatives"][2]["reason"] = std::string("a\0b", 3); }) ==
        "plan.json:/alternatives/2/reason: 'a\\x00b': byte 2 is a control character (\\x00)" + kValid);
  CHECK(error_after([](Json& d) { d["predicted"]["time_s"]["tab\there"] = 1.0; }) ==
        "plan.json:/predicted/time_s/tab\\there: 'tab\\there': byte 4 is a control character (\\t)" + kValid);
  CHECK(error_after([](Json& d) { d["cluster"]["name"] = "local\n"; }) ==
        "plan.json:/cluster/name: 'local\\n': byte 6 is a control character (\\n)" + kValid);
  // Every message is one line: what the input held is shown, never obeyed.
  const std::string several = error_after([](Json& d) {
    d["job"]["model"]["name"] = "\x1b[2J";
    d["meta"]["generator"] = "\r\n";
  });
  CHECK(std::count(several.begin(), several.end(), '\n') == 1);
  CHECK(several.find('\x1b') == std::string::npos);
  CHECK(several.find('\r') == std::string::npos);
}

TEST_CASE("golden errors: a cluster name that is not a string") {
  CHECK(error_after([](Json& d) { d["cluster"]["name"] = 5; }) ==
        "plan.json:/cluster/name: expected a string, found number");
  CHECK(error_after([](Json& d) { d["cluster"]["name"] = Json::array(); }) ==
        "plan.json:/cluster/name: expected a string, found array");
}
