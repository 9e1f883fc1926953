// `burst bench attention` prints its figures as JSON (a small, fast size here: the figures
// themselves are not asserted, only that they exist and are positive).
#include <catch2/catch.hpp>

#include "common/json_reader.hpp"
#include "tests/cli/run_cli.hpp"

TEST_CASE("bench attention --json prints the kernel and sgemm figures", "[cli]") {
  const auto run = burst::test::run_cli("bench attention --json --tokens 256 --repeat 1");
  REQUIRE(run.exit_code == 0);
  const burst::Json j = burst::Json::parse(run.out);
  for (const char* key :
       {"forward_gflops", "backward_gflops", "sgemm_gflops", "sgemm_tile_gflops", "forward_over_sgemm"}) {
    INFO(key);
    REQUIRE(j.contains(key));
    CHECK(j[key].get<double>() > 0);
  }
  CHECK(j["tokens"] == 256);
  for (const char* key : {"heads", "kv_heads", "head_dim", "mask", "threads"}) {
    INFO(key);
    CHECK(j.contains(key));
  }
}

TEST_CASE("bench attention refuses kv heads that do not divide the heads", "[cli]") {
  const auto run = burst::test::run_cli("bench attention --tokens 256 --heads 8 --kv-heads 3");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("error: --kv-heads: 3 kv heads do not divide the 8 query heads") != std::string::npos);
}
