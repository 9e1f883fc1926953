// What a user sees from the planning commands: plan's JSON contract and files, explain,
// capacity, whatif and report, and golden error messages (exit code 2, every problem at once).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include "common/json_reader.hpp"
#include "tests/cli/run_cli.hpp"

using burst::Json;
using burst::test::run_cli;

namespace {

const std::string kJob = "--topology a800-4hca --nodes 2 --model burst-7b --seq 256K --engine analytic";

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("burst-cli-" + std::to_string(::getpid()) + "-" + name)).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_predicted(const Json& p) {
  for (const char* key : {"tokens_per_s_per_gpu", "mfu", "step_time_s"}) CHECK(p.contains(key));
  CHECK(p["memory_bytes_per_gpu"].contains("total"));
}

}  // namespace

TEST_CASE("plan --json prints the plan with every family's best as alternatives") {
  const auto run = run_cli("plan " + kJob + " --json");
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  CHECK(j["schema"] == "burst.plan/2");
  const Json& s = j["strategy"];
  CHECK(s["tp"].get<int>() * s["cp"].get<int>() * s["ulysses"].get<int>() == j["world"]["size"].get<int>());
  check_predicted(j["predicted"]);
  CHECK(j["predicted"]["memory_bytes_per_gpu"]["total"].get<double>() <= j["job"]["memory_budget_bytes"].get<double>());
  REQUIRE(j["alternatives"].size() == 7);
  for (const auto& alt : j["alternatives"]) {
    CHECK(alt["strategy"].is_string());
    CHECK(alt["feasible"].is_boolean());
    CHECK(alt["reason"].is_string());
    check_predicted(alt["predicted"]);
  }
  // The table is for people: on stderr when stdout carries the plan.
  CHECK_THAT(run.err, Catch::Contains("tokens/s/GPU"));
}

TEST_CASE("plan -o writes a plan that explain and report read") {
  const std::string plan = temp_path("plan.json"), html = temp_path("report.html"), md = temp_path("report.md");
  const auto made = run_cli("plan " + kJob + " --strategy megatron-cp -o " + plan);
  REQUIRE(made.exit_code == 0);
  CHECK_THAT(made.out, Catch::Contains("megatron-cp"));
  CHECK(Json::parse(slurp(plan))["strategy"]["name"] == "megatron-cp");

  const auto explained = run_cli("explain " + plan);
  REQUIRE(explained.exit_code == 0);
  CHECK_THAT(explained.out, Catch::StartsWith("Plan: megatron-cp"));
  CHECK_THAT(explained.out, Catch::Contains("Runner-up: "));

  REQUIRE(run_cli("report " + plan + " -o " + html + " --max-nodes 4").exit_code == 0);
  const std::string page = slurp(html);
  CHECK_THAT(page, Catch::Contains("<svg"));
  CHECK_THAT(page, Catch::Contains("megatron-cp"));
  REQUIRE(run_cli("report " + plan + " -o " + md + " --no-scaling").exit_code == 0);
  CHECK_THAT(slurp(md), Catch::Contains("data:image/svg+xml;base64,"));
  for (const auto& f : {plan, html, md}) std::filesystem::remove(f);
}

TEST_CASE("a device or a FIFO given as a plan is refused at once, by what it is") {
  const auto zero = run_cli("explain /dev/zero");  // read until memory ran out
  CHECK(zero.exit_code == 2);
  CHECK_THAT(zero.err, Catch::Contains("/dev/zero: a character device, not a regular file"));
  const std::string fifo = temp_path("plan.fifo");
  std::filesystem::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto piped = run_cli("explain " + fifo);  // blocked for ever: no writer opens it
  CHECK(piped.exit_code == 2);
  CHECK_THAT(piped.err, Catch::Contains(fifo + ": a FIFO (named pipe), not a regular file"));
  std::filesystem::remove(fifo);
}

TEST_CASE("capacity finds the fewest nodes that fit") {
  const auto run =
      run_cli("capacity --topology a800-4hca --model burst-14b --seq 1M --max-nodes 8 --engine analytic --json");
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  REQUIRE(j["scaling"].size() == 4);  // 1, 2, 4, 8 nodes
  // The first feasible row is the answer, and every row before it does not fit.
  int first = 0;
  for (const auto& row : j["scaling"]) {
    if (row["feasible"].get<bool>()) {
      first = row["nodes"].get<int>();
      break;
    }
    CHECK_FALSE(row["reason"].get<std::string>().empty());
  }
  CHECK(j["fewest_nodes"] == first);
  CHECK(first > 1);
}

TEST_CASE("whatif prints the grid and writes it as CSV") {
  const std::string csv = temp_path("grid.csv");
  const auto run = run_cli("whatif " + kJob + " --vary nets_per_node=2,4 --vary intra_bw=200GBps,450GBps -o " + csv);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("nets_per_node"));
  const std::string text = slurp(csv);
  CHECK(std::count(text.begin(), text.end(), '\n') == 5);  // header + 2 x 2 points
  std::filesystem::remove(csv);
}

TEST_CASE("golden errors of the planning commands") {
  SECTION("unknown presets get a did-you-mean, all at once") {
    const auto run = run_cli("plan --topology a800-4hc --model burst-14 --seq 1M --strategy brust");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("did you mean 'a800-4hca'?"));
    CHECK_THAT(run.err, Catch::Contains("did you mean 'burst-14b'?"));
    CHECK_THAT(run.err, Catch::Contains("--strategy: unknown strategy 'brust'"));
  }
  SECTION("--checkpoint takes the policies every family runs, and says why not seq_stash") {
    const auto unknown = run_cli("plan --topology a800-4hca --model burst-7b --seq 256K --checkpoint attn");
    CHECK(unknown.exit_code == 2);
    CHECK_THAT(unknown.err, Catch::Contains("--checkpoint: unknown checkpoint policy 'attn'") &&
                                Catch::Contains("did you mean 'attn_stash'?"));
    const auto stash = run_cli("plan --topology a800-4hca --model burst-7b --seq 256K --checkpoint seq_stash");
    CHECK(stash.exit_code == 2);
    CHECK_THAT(stash.err, Catch::Contains("--checkpoint: seq_stash is burst's own") && Catch::Contains("no peer runs"));
  }
  SECTION("a sequence the layouts cannot split says so per family, with the nearest lengths") {
    const auto run = run_cli("plan --topology a800-4hca --nodes 4 --model burst-14b --seq 1000001 --engine analytic");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("error: burst: seq: 1000001 tokens do not split evenly: zigzag on a ring of "
                                        "32 ranks (2 chunks per rank) needs a multiple of 64 (valid: a multiple of 64; "
                                        "hint: nearest valid lengths: 1000000 or 1000064)"));
  }
  SECTION("local built from GPUs where none is visible says so, and CPU ranks are one flag away") {
    const auto run = run_cli("plan --topology local --local-device cuda --model tiny-mha --seq 2K");
    if (run.exit_code == 0) {
      CHECK_THAT(run.err, Catch::Contains("--topology local is this machine's GPUs"));  // a GPU machine
    } else {
      CHECK(run.exit_code == 2);
      CHECK_THAT(run.err,
                 Catch::Contains("error: --local-device: cuda asked for, but no GPU is visible (valid: cpu; hint: "
                                 "plan on a GPU node, or plan CPU ranks with --local-device cpu)"));
    }
    const auto cpu = run_cli("plan --topology local --local-device cpu --per-node 2 --model tiny-mha --seq 2K");
    CHECK(cpu.exit_code == 0);
    CHECK_THAT(cpu.err, !Catch::Contains("this machine's GPUs"));
  }
  SECTION("an impossible budget is no plan, with what to change") {
    const auto run = run_cli("plan " + kJob + " --memory-budget 1GiB");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err,
               Catch::Contains("error: --memory-budget: no plan fits: no strategy runs in 1.0 GiB per GPU on "
                               "16 GPUs (hint: more nodes (see burst capacity), a larger --memory-budget, or a "
                               "shorter --seq)"));
    CHECK_THAT(run.out, Catch::Contains("needs"));  // the table says what each family would need
  }
  SECTION("explain of a corrupt plan names the file and the place") {
    const std::string bad = temp_path("bad.json");
    std::ofstream(bad) << "{\"schema\": \"burst.plan/1\", ";
    const auto run = run_cli("explain " + bad);
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains(bad + ":1:"));
    std::filesystem::remove(bad);
  }
  SECTION("whatif with a knob that does not exist") {
    const auto run = run_cli("whatif " + kJob + " --vary nodez=2,4");
    CHECK(run.exit_code == 2);
    CHECK_THAT(run.err, Catch::Contains("--vary: unknown knob 'nodez' (valid: nodes, nets_per_node, intra_bw, seq, "
                                        "memory_budget, tp, dp, batch, checkpoint; hint: did you mean 'nodes'?)"));
  }
}
