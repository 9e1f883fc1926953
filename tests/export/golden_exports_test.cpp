// Golden exports: four plans, each exported to every framework, byte for byte as committed in
// tests/data/exports/. The plans are the four kinds issue 27 names: a GQA model read from a
// Hugging Face config (Qwen2.5-7B, 28 heads / 4 KV heads, TP 2 x double ring 8 on dgx-h100), an
// offloading plan (burst-14b at 512K on one a800-4hca node: TP 8, ZeRO-3 with the optimizer on
// the CPU), a plan whose heads a framework's Ulysses cannot split (BurstEngine's 14B at 1M on
// 32 GPUs: DeepSpeed's equivalent is Ulysses 32 of 40 heads) and the local plan. An export the
// framework cannot run is refused; its golden is the --force text, whose first line is the
// warning. The local plan is priced with tests/data/exports/local-calibration.json (a `burst
// calibrate` of the development machine), not whatever this machine holds. When a writer changes on purpose:
// BURST_UPDATE_GOLDEN=1 build/bin/burst_export_tests
// "[golden]" rewrites them, and the diff is reviewed like code.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "planner/export/export.hpp"
#include "plan/plan.hpp"

using namespace burst;

namespace {

struct Target {
  const char* framework;
  int nemo_version;
  const char* extension;
};

constexpr Target kTargets[] = {{"megatron", 2, "megatron.sh"},
                               {"nemo", 2, "nemo2.py"},
                               {"nemo", 1, "nemo1.yaml"},
                               {"deepspeed", 2, "deepspeed.json"},
                               {"torchtitan", 2, "torchtitan.toml"}};

constexpr const char* kPlans[] = {"exports/plans/h100x2-qwen7b-hf-256K.json",
                                  "exports/plans/a800x1-burst14b-512K-offload.json", "plans/a800x4-burst14b-1M.json",
                                  "run/local-2x2-tiny-mha-1K-default.json"};

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string stem(std::string_view plan) {
  const auto slash = plan.rfind('/');
  const auto name = plan.substr(slash + 1);
  return std::string(name.substr(0, name.rfind('.')));
}

bool updating() {
  const char* update = std::getenv("BURST_UPDATE_GOLDEN");
  return update != nullptr && std::string_view(update) == "1";
}

}  // namespace

TEST_CASE("every framework's export of four kinds of plan is its golden file", "[golden]") {
  // The local plan's costs read this machine's calibration (burst calibrate): the one the goldens
  // were made with, so they do not change with the machine.
  setenv("BURST_LOCAL_CALIBRATION", (std::string(BURST_TEST_DATA) + "/exports/local-calibration.json").c_str(), 1);
  for (const char* plan_path : kPlans) {
    const plan::Plan p = plan::read_plan(std::string(BURST_TEST_DATA) + "/" + plan_path);
    const std::string source = std::string("tests/data/") + plan_path;  // as the header names it
    for (const Target& t : kTargets) {
      INFO(plan_path << " --to " << t.framework << " (NeMo " << t.nemo_version << ")");
      const exporter::Exported asked = exporter::export_plan(p, source, t.framework, "--to", false, t.nemo_version);
      const exporter::Exported forced = exporter::export_plan(p, source, t.framework, "--to", true, t.nemo_version);
      // Refused: no text without --force, and the forced text warns first (JSON: its first key);
      // else both the same.
      CHECK(forced.refused.empty());
      if (asked.refused.empty()) {
        CHECK(asked.text == forced.text);
      } else {
        CHECK(asked.text.empty());
        CHECK(forced.text.find("WARNING") < forced.text.find('\n', forced.text.find('\n') + 1));
      }
      const std::string golden = std::string(BURST_TEST_DATA) + "/exports/" + stem(plan_path) + "." + t.extension;
      if (updating()) {
        std::ofstream(golden, std::ios::binary) << forced.text;
        WARN("BURST_UPDATE_GOLDEN=1: rewrote " << golden);
        continue;
      }
      CHECK(forced.text == read_text(golden));
    }
  }
  unsetenv("BURST_LOCAL_CALIBRATION");
}
