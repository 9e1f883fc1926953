// Inputs past a node's caps are refused before the work that grows with their square, fast:
// an NCCL XML of thousands of <cpu> elements (once joined pairwise: 20,000 took 14 s and
// 12 GB), a local preset of 50,000 ranks a node (once a name search per link: 200,000 took
// 66 s), a full NVLink mesh of 1020 GPUs (once a path search over 520,000 links from every GPU:
// minutes). Each must fail with its cap in well under a second (bounds generous for a loaded,
// sanitized build).
#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "tests/support/error_text.hpp"
#include "topologies/detail/nccl_xml.hpp"
#include "topologies/detail/node_builder.hpp"
#include "topologies/presets.hpp"

using namespace burst;
using namespace burst::topo;

namespace {

// The error text of `f` and the seconds it took to fail.
std::pair<std::string, double> timed_error(const std::function<void()>& f) {
  const auto start = std::chrono::steady_clock::now();
  std::string text = test::error_text(f);
  return {std::move(text), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()};
}

}  // namespace

TEST_CASE("an NCCL XML of thousands of <cpu> elements is refused before they are joined pairwise", "[work_bounds]") {
  std::string xml = "<system version=\"1\">\n";
  for (int i = 0; i < 4000; ++i) xml += fmt::format("  <cpu numaid=\"{}\" vendor=\"GenuineIntel\"/>\n", i);
  xml += "</system>\n";
  const auto [text, seconds] = timed_error([&] { (void)import_nccl_xml(xml, "many-cpus.xml"); });
  CHECK_THAT(text, Catch::Contains("many-cpus.xml:1: 4000 <cpu> elements in one node (valid: at most 64"));
  CHECK(seconds < 0.5);
}

TEST_CASE("--per-node past a node's devices is refused before the node is built", "[work_bounds]") {
  const auto [text, seconds] = timed_error([] { (void)make_preset("local", 1, 50000); });
  CHECK_THAT(text, Catch::Contains("--per-node: 50000 ranks per node (valid: at most 1021"));
  CHECK(seconds < 0.5);
}

TEST_CASE("a full NVLink mesh of 1020 GPUs is refused before any path search", "[work_bounds]") {
  NodeBuilder b;
  constexpr int kGpus = 1020;
  for (int g = 0; g < kGpus; ++g) b.device(DeviceKind::Gpu, fmt::format("gpu{}", g));
  for (int a = 0; a < kGpus; ++a) {
    for (int c = a + 1; c < kGpus; ++c) b.link(a, c, LinkKind::NvLink, 50e9, 1e-6);
  }
  const auto [text, seconds] = timed_error([&] { (void)b.build("mesh.json:/node"); });
  CHECK_THAT(text, Catch::Contains("mesh.json:/node/links: 519690 links in one node (valid: at most 16384"));
  CHECK(seconds < 0.5);
}
