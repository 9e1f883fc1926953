// The frameworks' own rules (planner/export/rules.hpp): every one cites its upstream file and
// lines; every golden export a framework can run keeps them all; and each defect an export once
// had (issue 27) breaks the rule that upstream enforces, so the check would have caught it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "planner/export/rules.hpp"

using namespace burst;
using exporter::check_rules;
using exporter::RuleContext;

namespace {

std::string golden(const std::string& name) {
  std::ifstream in(std::string(BURST_TEST_DATA) + "/exports/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

std::string megatron(const std::string& args) { return "MEGATRON_ARGS=(\n" + args + ")\n"; }

}  // namespace

TEST_CASE("every rule says what must hold and where upstream enforces it", "[rules]") {
  REQUIRE(exporter::framework_rules().size() >= 12);
  for (const exporter::Rule& r : exporter::framework_rules()) {
    INFO(r.id);
    CHECK((r.framework == "megatron" || r.framework == "deepspeed" || r.framework == "torchtitan"));
    CHECK_FALSE(r.statement.empty());
    CHECK_THAT(r.source, Catch::Matches(R"([a-z_/]+\.py:[0-9,-]+ \([A-Za-z-]+/[A-Za-z-]+@[0-9a-f]{8}\))"));
    CHECK_FALSE(r.quote.empty());
  }
}

TEST_CASE("the golden exports a framework can run keep its rules", "[rules]") {
  const struct {
    const char* file;
    const char* framework;
    RuleContext context;
  } cases[] = {
      {"h100x2-qwen7b-hf-256K.megatron.sh", "megatron", {16, 28, 4, 1}},
      {"h100x2-qwen7b-hf-256K.torchtitan.toml", "torchtitan", {16, 28, 4, 1}},
      {"a800x4-burst14b-1M.megatron.sh", "megatron", {32, 40, 40, 1}},
      {"local-2x2-tiny-mha-1K-default.megatron.sh", "megatron", {4, 4, 4, 1}},
      {"local-2x2-tiny-mha-1K-default.deepspeed.json", "deepspeed", {4, 4, 4, 1}},
      {"local-2x2-tiny-mha-1K-default.torchtitan.toml", "torchtitan", {4, 4, 4, 1}},
      {"a800x1-burst14b-512K-offload.deepspeed.json", "deepspeed", {8, 40, 40, 1}},
  };
  for (const auto& c : cases) {
    INFO(c.file);
    CHECK(check_rules(c.framework, golden(c.file), c.context).empty());
  }
}

TEST_CASE("each export defect issue 27 found breaks the rule upstream enforces", "[rules]") {
  const RuleContext local{4, 4, 4, 1};
  SECTION("Megatron: the CPU optimizer without the distributed optimizer") {
    const auto broken =
        check_rules("megatron", megatron("  --optimizer-cpu-offload\n  --use-precision-aware-optimizer\n"), local);
    REQUIRE(broken.size() == 1);
    CHECK_THAT(broken.front(), Catch::Contains("needs --use-distributed-optimizer"));
    CHECK_THAT(broken.front(), Catch::Contains("megatron/core/optimizer/__init__.py:1057-1059"));
  }
  SECTION("Megatron: FSDP without its checkpoint format") {
    const auto broken =
        check_rules("megatron", megatron("  --use-megatron-fsdp\n  --use-distributed-optimizer\n"), local);
    REQUIRE(broken.size() == 1);
    CHECK_THAT(broken.front(), Catch::Contains("fsdp_dtensor"));
  }
  SECTION("Megatron: heads that tensor parallelism cannot split, a hierarchy that is not the CP size") {
    const auto broken =
        check_rules("megatron",
                    megatron("  --tensor-model-parallel-size 3\n  --num-attention-heads 4\n  --context-parallel-size "
                             "4\n  --cp-comm-type a2a+p2p\n  --hierarchical-context-parallel-sizes 2 3\n"),
                    RuleContext{12, 4, 4, 1});
    CHECK(broken.size() == 2);
  }
  SECTION("DeepSpeed: Ulysses 32 of a 40-head model (the golden plan, forced)") {
    const auto broken =
        check_rules("deepspeed", golden("a800x4-burst14b-1M.deepspeed.json"), RuleContext{32, 40, 40, 1});
    REQUIRE(broken.size() == 1);
    CHECK_THAT(broken.front(), Catch::Contains("multiple of sequence_parallel_size"));
    CHECK_THAT(broken.front(), Catch::Contains("deepspeed/sequence/layer.py"));
  }
  SECTION("DeepSpeed: an offloaded optimizer without an optimizer section") {
    const std::string local_json = golden("local-2x2-tiny-mha-1K-default.deepspeed.json");
    const auto broken =
        check_rules("deepspeed", replaced(local_json, "\"type\": \"AdamW\"", "\"type\": \"Lamb\""), local);
    REQUIRE(broken.size() == 1);
    CHECK_THAT(broken.front(), Catch::Contains("DeepSpeedCPUAdam"));
  }
  SECTION("TorchTitan: degrees that do not make the world, a sequence CP cannot halve") {
    const std::string toml = golden("local-2x2-tiny-mha-1K-default.torchtitan.toml");
    CHECK(check_rules("torchtitan", toml, RuleContext{8, 4, 4, 1}).size() == 1);
    const auto broken = check_rules("torchtitan", replaced(toml, "seq_len = 1024", "seq_len = 1028"), local);
    REQUIRE(broken.size() == 1);
    CHECK_THAT(broken.front(), Catch::Contains("2 x its degree"));
  }
  SECTION("a file not in the framework's format is an error, not a pass") {
    CHECK_THROWS_WITH(check_rules("megatron", "--tensor-model-parallel-size 2\n", local),
                      Catch::Contains("not in its format"));
    CHECK_THROWS_WITH(check_rules("deepspeed", "{", local), Catch::Contains("not a JSON object"));
  }
}
