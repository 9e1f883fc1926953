// What `burst run` refuses before its first step rather than ignore: plan fields the runtime
// would not honour (a batch of several sequences, a strategy name that is no family, a cluster
// that is no topology or not the one /meta/topology_hash names, a rank beyond its cluster), and a
// state to resume from that holds a NaN. And what it says when training diverges after
// --save-every has saved: the last save, not "nothing was saved"; and text that is not UTF-8,
// which trains as bytes and is said. Each run is the 2-rank training plan of the tiny model, as
// threads of one process (--loopback).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "common/json_reader.hpp"
#include "tests/cli/run_cli.hpp"
#include "tests/fuzz/state_checksum.hpp"
#include "tests/support/temp_dir.hpp"

using burst::Json;
using burst::test::CliRun;
using burst::test::run_cli;

namespace {

const std::string kTestData = BURST_TEST_DATA;
const std::string kTrainPlan = kTestData + "/run/local-1x2-tiny-train-256-seqstash.json";

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The training plan with `edit` applied, written to `dir`/`name`.
std::string edited_plan(const burst::test::TempDir& dir, const std::string& name,
                        const std::function<void(Json&)>& edit) {
  Json plan = Json::parse(file_bytes(kTrainPlan));
  edit(plan);
  const std::string path = (dir.path / name).string();
  std::ofstream(path) << plan.dump(2);
  return path;
}

CliRun train(const std::string& plan, const std::string& options) {
  return run_cli("run " + plan + " --loopback --data " + kTestData + "/corpus " + options);
}

}  // namespace

TEST_CASE("burst run refuses what the runtime would ignore: strategy name, cluster, topology hash; trains a batch") {
  const burst::test::TempDir dir("run-plan-cli");
  REQUIRE(train(kTrainPlan, "--steps 1").exit_code == 0);
  SECTION("a batch of several sequences is trained: a burst.plan/1 batch is one micro-batch of them side by side") {
    const std::string plan = edited_plan(dir, "batch.json", [](Json& p) { p["job"]["batch"] = 2; });
    const CliRun run = train(plan, "--steps 1");
    INFO(run.err);
    CHECK(run.exit_code == 0);
    CHECK_THAT(run.out, Catch::Contains("batch     2 sequences a step: 1 data-parallel replica(s), each 1 "
                                        "micro-batch(es) of 2 sequence(s)"));
  }
  SECTION("a strategy name that is no family") {
    const std::string plan = edited_plan(dir, "warp.json", [](Json& p) { p["strategy"]["name"] = "warp-drive"; });
    const CliRun run = train(plan, "--steps 1");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err,
               Catch::Contains(plan + ":/strategy/name: unknown strategy 'warp-drive' (valid: burst, burst-usp, "
                                      "megatron-cp, ds-ulysses, loongtrain-double-ring, loongtrain-usp, ring)"));
  }
  SECTION("a cluster without links is no topology") {
    const std::string plan =
        edited_plan(dir, "no-links.json", [](Json& p) { p["cluster"]["node"]["links"] = Json::array(); });
    const CliRun run = train(plan, "--steps 1");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("error: " + plan + ":/cluster:/node: GPU 'rank0' cannot reach any NIC"));
  }
  SECTION("a cluster other than the one the topology hash names") {
    std::string hash;
    const std::string plan = edited_plan(dir, "edited-cluster.json", [&](Json& p) {
      hash = p["meta"]["topology_hash"].get<std::string>();
      p["cluster"]["nodes"] = 3;  // still a topology, and one that holds the ranks
    });
    const CliRun run = train(plan, "--steps 1");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("error: " + plan + ":/meta/topology_hash: '" + hash +
                                        "' is not the hash of the plan's /cluster ("));
    CHECK_THAT(run.err, Catch::Contains("hint: the cluster or the hash was changed after planning"));
  }
  SECTION("a rank on a node its cluster lacks") {
    const std::string plan = edited_plan(dir, "node.json", [](Json& p) { p["world"]["ranks"][1]["node"] = 5; });
    const CliRun run = train(plan, "--steps 1");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("error: " + plan +
                                        ":/world/ranks/1/node: rank 1 is on node 5, and the plan's "
                                        "cluster has 1 nodes (valid: 0 to 0)"));
  }
}

TEST_CASE("a state to resume from with a NaN moment is refused by array and index, not trained to exit 0") {
  const burst::test::TempDir dir("run-plan-cli");
  const std::string state = (dir.path / "s.state").string();
  REQUIRE(train(kTrainPlan, "--steps 1 --save " + state).exit_code == 0);
  // Rank 0's shard with its first adam_m float made NaN, and its checksum made right again.
  const std::string shard = (dir.path / "s.state.gen1-step1" / "rank0-of-2").string();
  std::string text = file_bytes(shard);
  const std::size_t header = text.find('\n') + 1;
  const Json head = Json::parse(text.substr(header, text.find('\n', header) - header));
  const std::size_t body = text.find('\n', text.find('\n', header) + 1) + 1;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(&text[body + 4 * head["params"].get<std::size_t>()], &nan, sizeof nan);
  std::ofstream(shard, std::ios::binary | std::ios::trunc) << burst::fuzz::with_right_checksum(text);
  const CliRun run = train(kTrainPlan, "--steps 1 --resume " + state);
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, Catch::Contains("error: " + state + ": adam_m["));
  CHECK_THAT(run.err, Catch::Contains("] is nan (valid: finite values; hint: a state saved from a diverged run cannot "
                                      "train;"));
}

TEST_CASE("a run that diverges after --save-every saved names the last save") {
  const burst::test::TempDir dir("run-plan-cli");
  const std::string state = (dir.path / "s.state").string();
  // An absurd learning rate: step 1 is finite and saved, step 2's loss is not.
  const CliRun saved = train(kTrainPlan, "--steps 5 --lr 1e30 --save-every 1 --save " + state);
  CHECK(saved.exit_code != 0);
  CHECK_THAT(saved.err, Catch::Contains("step 2: training diverged: loss nan"));
  CHECK_THAT(saved.err, Catch::Contains("the last save, the state after step 1, is " + state + " (--resume " + state +
                                        " continues from it)"));
  CHECK_THAT(saved.err, !Catch::Contains("nothing was saved"));
  const CliRun unsaved = train(kTrainPlan, "--steps 5 --lr 1e30");
  CHECK(unsaved.exit_code != 0);
  CHECK_THAT(unsaved.err, Catch::Contains("nothing was saved"));
}

TEST_CASE("text that is not UTF-8 trains as bytes, and the run says so") {
  const burst::test::TempDir dir("run-plan-cli");
  const std::string latin1 = (dir.path / "latin1.txt").string();
  std::ofstream(latin1, std::ios::binary) << std::string(300, 'a') + "caf\xe9\n";  // \xe9: é in Latin-1
  const CliRun run = run_cli("run " + kTrainPlan + " --loopback --steps 1 --data " + latin1);
  CHECK(run.exit_code == 0);
  CHECK_THAT(run.err, Catch::Contains("note: --data: 1 of 1 document(s) are not UTF-8 (the first, 'latin1.txt', at "
                                      "byte 303: 0xe9); they train as they are, every byte a token"));
}

TEST_CASE("--kernel-path: a CUDA choice, refused by name on the CPU and when unknown") {
  const CliRun on_cpu = train(kTrainPlan, "--steps 1 --kernel-path wgmma");
  CHECK(on_cpu.exit_code == 2);
  CHECK_THAT(on_cpu.err, Catch::Contains("--kernel-path: 'wgmma' chooses the CUDA kernels' implementation; this run is "
                                         "on the CPU (valid: with --device cuda)"));
  const CliRun named_cpu = train(kTrainPlan, "--steps 1 --device cpu --kernel-path mma.sync");
  CHECK(named_cpu.exit_code == 2);
  CHECK_THAT(named_cpu.err, Catch::Contains("--kernel-path: chooses the CUDA kernels' implementation"));
  const CliRun unknown = train(kTrainPlan, "--steps 1 --kernel-path hopper");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.err,
             Catch::Contains("--kernel-path: unknown kernel path 'hopper' (valid: auto, mma.sync, wgmma)"));
  CHECK(train(kTrainPlan, "--steps 1 --kernel-path auto").exit_code == 0);
}

TEST_CASE("a plan's kernel path is run as written: refused on the CPU by its pointer, overridden by name") {
  const burst::test::TempDir dir("run-plan-kernel-path");
  const std::string plan = edited_plan(dir, "wgmma.json", [](Json& p) { p["job"]["kernel_path"] = "wgmma"; });
  const CliRun on_cpu = train(plan, "--steps 1");
  CHECK(on_cpu.exit_code == 2);
  CHECK_THAT(on_cpu.err, Catch::Contains("/job/kernel_path: 'wgmma' chooses the CUDA kernels' implementation; this "
                                         "run is on the CPU (valid: with --device cuda; hint: or re-plan without "
                                         "--kernel-path)"));
}

TEST_CASE("burst plan --kernel-path: priced on that path's measured curves and recorded in the plan") {
  const burst::test::TempDir dir("plan-kernel-path");
  // A calibration of the A800 measured on mma.sync, with wgmma's attention twice as fast kept apart.
  const std::string calibration = (dir.path / "c.json").string();
  std::ofstream(calibration) << R"({"schema": "burst.calibration/1", "compute": [{"gpu": "A800",
    "attention_path": "mma.sync", "attn_fwd": [[1024, 0.3]], "attn_bwd": [[1024, 0.3]],
    "attention_paths": {"wgmma": {"attn_fwd": [[1024, 0.6]], "attn_bwd": [[1024, 0.6]],
                                  "attn_fwd_masked": [[1024, 0.6]], "attn_bwd_masked": [[1024, 0.6]]}}}]})";
  const auto plan = [&](const std::string& name, const std::string& options) {
    const std::string out = (dir.path / name).string();
    const CliRun r = run_cli("plan --topology a800-4hca --nodes 1 --model burst-7b --seq 64K --calibration " +
                             calibration + " -o " + out + " " + options);
    REQUIRE(r.exit_code == 0);
    return Json::parse(file_bytes(out));
  };
  const Json mma = plan("mma.json", ""), wgmma = plan("wgmma.json", "--kernel-path wgmma");
  CHECK_FALSE(mma["job"].contains("kernel_path"));
  CHECK(wgmma["job"]["kernel_path"] == "wgmma");
  CHECK(wgmma["predicted"]["step_time_s"].get<double>() < mma["predicted"]["step_time_s"].get<double>());
  const CliRun unknown = run_cli("plan --topology a800-4hca --nodes 1 --model burst-7b --seq 64K --calibration " +
                                 calibration + " --kernel-path hopper -o " + (dir.path / "x.json").string());
  CHECK(unknown.exit_code != 0);
  CHECK_THAT(unknown.err, Catch::Contains("--kernel-path"));
}
