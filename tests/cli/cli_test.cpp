// What a user sees from `burst`: the JSON contracts of topo show and simulate, golden error
// messages for bad input (every problem reported at once, exit code 2), and files written.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <tuple>
#include <vector>

#include "common/json_reader.hpp"
#include "tests/cli/run_cli.hpp"

using burst::Json;
using burst::test::run_cli;

namespace {

const std::string kData = BURST_TEST_DATA;

std::vector<std::string> error_lines(const std::string& err) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < err.size()) {
    const std::size_t end = err.find('\n', start);
    const std::string line = err.substr(start, end - start);
    if (line.rfind("error: ", 0) == 0) lines.push_back(line);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return lines;
}

}  // namespace

TEST_CASE("topo show --json reports BurstEngine's cluster") {
  const auto run = run_cli("topo show a800-4hca --nodes 4 --json");
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  CHECK(j["nodes"] == 4);
  CHECK(j["gpus_per_node"] == 8);
  CHECK(j["gpus"] == 32);
  CHECK(j["gpu"]["peak_bf16_flops"].get<double>() == Approx(312e12));
  CHECK(j["gpu"]["memory_bytes"].get<double>() == Approx(80.0 * 1024 * 1024 * 1024));
  CHECK(j["nets_per_node"] == 4);
  CHECK(j["intra_node"]["class"] == "NVL");
  CHECK(j["intra_node"]["bandwidth_Bps"].get<double>() == Approx(200e9));
  // 4 HDR HCAs (25 GB/s each) shared by 8 GPUs: 12.5 GB/s per GPU per direction.
  CHECK(j["inter_node"]["bandwidth_Bps_per_gpu"].get<double>() == Approx(12.5e9));
}

TEST_CASE("an unknown preset gets a did-you-mean and exit code 2") {
  const auto run = run_cli("topo show a800-4hc");
  CHECK(run.exit_code == 2);
  CHECK(run.out.empty());
  CHECK(run.err.find("did you mean 'a800-4hca'?") != std::string::npos);
}

TEST_CASE("simulate reports every bad option at once") {
  const auto run = run_cli("simulate --topology a800-4hca --nodes 4 --model burst-14 --seq 1Mi --mask slidin:4K");
  CHECK(run.exit_code == 2);
  const auto lines = error_lines(run.err);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "error: --model: unknown model 'burst-14' (valid: burst-7b, burst-14b, llama2-7b, llama3-8b, "
        "qwen2.5-7b, qwen2.5-14b, tiny-mha, tiny-gqa; hint: did you mean 'burst-14b'?)");
  CHECK(lines[1].find("error: --seq: '1Mi': unknown unit 'Mi'") == 0);
  CHECK(lines[2].find("error: --mask:") == 0);
  CHECK(lines[2].find("sliding") != std::string::npos);
}

TEST_CASE("simulate --json carries the per-layer figures") {
  const auto run =
      run_cli("simulate --topology a800-4hca --nodes 2 --model llama2-7b --seq 256K --strategy burst --json");
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  for (const char* key :
       {"forward_s", "backward_s", "exposed_comm_s", "comm_bytes_forward", "comm_bytes_backward", "imbalance"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
  CHECK(j["forward_s"].get<double>() > 0);
  CHECK(j["backward_s"].get<double>() > j["forward_s"].get<double>());
  // A double ring over 2 nodes moves bytes over NVLink and over the network.
  CHECK(j["forward"]["comm_bytes_per_rank_by_class"].contains("NVL"));
  CHECK(j["forward"]["comm_bytes_per_rank_by_class"].contains("NET"));
  CHECK(j["topology"]["gpus"] == 16);
}

TEST_CASE("simulate --tp --dp: the layer's copies, one simulated where no link tells them apart") {
  const auto run = run_cli(
      "simulate --topology dgx-h100 --nodes 4 --model llama3-8b --seq 256K --global-batch 2 --tp 2 --dp 2 "
      "--strategy megatron-cp");
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK_THAT(run.out, Catch::Contains("megatron-cp: 4 copies (TP 2 x DP 2) side by side, one simulated for all"));
  const auto json = run_cli(
      "simulate --topology a800-4hca --nodes 2 --model llama3-8b --seq 256K --tp 2 --strategy megatron-cp --json");
  REQUIRE(json.exit_code == 0);
  const Json j = Json::parse(json.out);
  CHECK(j["copies"]["total"] == 2);
  CHECK(j["copies"]["simulated"] == 2);  // two GPUs share each HCA
  CHECK_THAT(j["copies"]["why_all"].get<std::string>(), Catch::Contains("both cross"));
  const auto bad = run_cli("simulate --topology dgx-h100 --nodes 2 --model llama3-8b --seq 256K --tp 3 --dp 2");
  CHECK(bad.exit_code != 0);
  CHECK_THAT(bad.err, Catch::Contains("--tp: 3 does not divide 32 heads and 8 KV heads"));
  CHECK_THAT(bad.err, Catch::Contains("--dp: 2 replicas do not split a batch of 1 sequences"));
}

TEST_CASE("topo show draws the pair matrix of a small node and counts the pairs of a big one") {
  // A 96-GPU PCIe node (an NCCL dump's shape, generated here): too wide to draw.
  const std::string path = "/tmp/burst-cli-96-gpus.xml";
  {
    std::ofstream xml(path);
    xml << "<system version=\"1\"><cpu numaid=\"0\" affinity=\"ff\" arch=\"x86_64\" vendor=\"GenuineIntel\">";
    for (int g = 0; g < 96; ++g) {
      xml << "<pci busid=\"0000:" << std::hex << g + 16 << std::dec
          << ":00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x20b0\" link_speed=\"16.0 GT/s PCIe\" "
             "link_width=\"16\"><gpu dev=\""
          << g << "\" sm=\"80\" rank=\"" << g << "\" gdr=\"1\"/></pci>";
    }
    xml << "</cpu></system>";
  }
  const auto big = run_cli("topo show " + path + " --gpu-from dgx-a100");
  REQUIRE(big.exit_code == 0);
  CHECK(big.out.find("96 GPUs, too many to draw (at most 64); pairs by path class: PHB 4560") != std::string::npos);
  const auto small = run_cli("topo show dgx-a100");
  REQUIRE(small.exit_code == 0);
  CHECK(small.out.find("GPU pairs in a node (path class; X = self)") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("nccl-bandwidths: an NCCL dump read with NCCL's derated link figures, and only a dump") {
  const std::string file = kData + "/topologies/nccl-figures_a100-2gpu.xml";
  const auto physical = run_cli("topo show " + file);
  const auto nccl = run_cli("topo show " + file + " --nccl-bandwidths");
  REQUIRE(physical.exit_code == 0);
  REQUIRE(nccl.exit_code == 0);
  CHECK(physical.out.find("worst pair NVL: 300GBps per GPU") != std::string::npos);
  CHECK(nccl.out.find("worst pair NVL: 240GBps per GPU") != std::string::npos);  // 12 links x 20 GB/s
  const auto preset = run_cli("topo show dgx-a100 --nccl-bandwidths");
  CHECK(preset.exit_code == 2);
  CHECK(preset.err.find("error: --nccl-bandwidths: applies to NCCL XML files only") != std::string::npos);
}

TEST_CASE("simulate --trace writes a Chrome trace with compute and link tracks") {
  const std::string path = "/tmp/burst-cli-trace-test.json";
  std::remove(path.c_str());
  const auto run =
      run_cli("simulate --topology dgx-h100 --nodes 2 --model tiny-gqa --seq 64K --strategy burst --trace " + path);
  REQUIRE(run.exit_code == 0);
  CHECK(run.err.find("trace written to " + path + ", ") != std::string::npos);   // with its size
  CHECK(run.err.find("warning: the trace will be about") == std::string::npos);  // small: no warning
  const Json trace = burst::read_json_file(path);
  REQUIRE(trace.contains("traceEvents"));
  std::size_t compute = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++compute;
    if (e["ph"] == "C") ++counters;
  }
  CHECK(compute > 0);
  CHECK(counters > 0);
  std::remove(path.c_str());
}

TEST_CASE("every strategy side by side, including those that cannot run") {
  const auto run = run_cli("simulate --topology a800-4hca --nodes 4 --model burst-14b --seq 1M --strategy all --json");
  REQUIRE(run.exit_code == 0);
  const Json j = Json::parse(run.out);
  REQUIRE(j["strategies"].size() == 7);
  for (const auto& s : j["strategies"]) {
    if (s["strategy"] == "ds-ulysses") {
      CHECK(s["applicable"] == false);  // 40 heads cannot split 32 ways
    } else {
      CHECK(s["applicable"] == true);
    }
  }
}

TEST_CASE("usage errors exit 2 with a message that says what is valid") {
  const auto zero = run_cli("simulate --topology a800-4hca --nodes 0 --model burst-7b --seq 1M");
  CHECK(zero.exit_code == 2);
  CHECK(zero.err.find("--nodes: must be a whole number of 1 or more, got '0'") != std::string::npos);
  const auto unknown = run_cli("simulate --topology a800-4hca --model burst-7b --seq 1M --strategy bursty");
  CHECK(unknown.exit_code == 2);
  CHECK(run_cli("--help").exit_code == 0);
}

TEST_CASE("a what-if that cannot run says why, and too large a ring is refused before it eats memory") {
  const auto flat_inner = run_cli(
      "simulate --topology a800-4hca --nodes 2 --model burst-7b --seq 1M --strategy megatron-cp --inner 4 --json");
  REQUIRE(flat_inner.exit_code == 0);
  const Json j = Json::parse(flat_inner.out);
  CHECK(j["applicable"] == false);
  CHECK(j["reason"] ==
        "inner: an inner ring size (4) needs a double ring (valid: 0 on a flat ring; hint: add --ring "
        "double, or drop --inner)");
  // 24000 GPUs in one flat ring would lower to ~1.7e9 tasks (~170 GB): a result with a reason.
  const auto huge = run_cli(
      "simulate --topology a800-4hca --nodes 3000 --model burst-7b --seq 1008000 "
      "--strategy megatron-cp --json");
  REQUIRE(huge.exit_code == 0);
  const Json h = Json::parse(huge.out);
  CHECK(h["applicable"] == false);
  CHECK(h["reason"].get<std::string>().find("a ring of 24000 ranks lowers to about 1.73e+09 tasks") !=
        std::string::npos);
}

TEST_CASE("bytes are reported by the kind of link they cross") {
  const auto run =
      run_cli("simulate --topology a800-4hca --nodes 2 --model llama2-7b --seq 256K --strategy burst --json");
  REQUIRE(run.exit_code == 0);
  const Json by_kind = Json::parse(run.out)["forward"]["link_bytes_per_rank_by_kind"];
  // A double ring over 2 nodes: NVLink inside nodes, PCIe to the HCAs, IB between nodes.
  CHECK(by_kind["nvlink"].get<double>() > 0);
  CHECK(by_kind["pcie"].get<double>() > 0);
  CHECK(by_kind["network"].get<double>() > 0);
  CHECK(by_kind["nvlink"].get<double>() > by_kind["network"].get<double>());
}

TEST_CASE("absurd amounts of work are refused up front with their size, unless forced") {
  std::string nodes = "nodes=1", seqs = "seq=1K";
  for (int i = 2; i <= 17; ++i) nodes += "," + std::to_string(i);
  for (int i = 2; i <= 16; ++i) seqs += "," + std::to_string(i) + "K";
  const auto grid =
      run_cli("whatif --topology a800-4hca --nodes 4 --model burst-14b --seq 1M --vary " + nodes + " --vary " + seqs);
  CHECK(grid.exit_code == 2);
  CHECK(grid.err.find("--vary: 272 grid points, each a whole plan search (valid: at most 256 without --force") !=
        std::string::npos);
  // Four lists of 8192 values and one of 4096: 2^64 points, which the count wrapped to 0, passed,
  // and then crashed printing the empty grid (SIGSEGV). Short values: the whole command line stays
  // under Linux's 128 KiB per argument.
  std::string wide;
  for (const auto& [knob, value, count] :
       std::vector<std::tuple<std::string, std::string, int>>{{"nodes", "4", 8192},
                                                              {"nets_per_node", "4", 8192},
                                                              {"seq", "1K", 8192},
                                                              {"memory_budget", "80GB", 8192},
                                                              {"intra_bw", "1TBps", 4096}}) {
    wide += " --vary " + knob + "=" + value;
    for (int i = 1; i < count; ++i) wide += "," + value;
  }
  const auto wrapped = run_cli("whatif --topology a800-4hca --nodes 4 --model burst-14b --seq 1M --force" + wide);
  CHECK(wrapped.exit_code == 2);
  CHECK_THAT(wrapped.err, Catch::Contains("error: --vary: 2^63 or more grid points (the sizes of the --vary lists "
                                          "multiplied)"));
  const auto capacity = run_cli("capacity --topology a800-4hca --model burst-14b --seq 4M --max-nodes 1000000");
  CHECK(capacity.exit_code == 2);
  CHECK(capacity.err.find("--max-nodes: 1000000 nodes, a plan search at every power of two (valid: at most 4096 "
                          "without --force") != std::string::npos);
}
