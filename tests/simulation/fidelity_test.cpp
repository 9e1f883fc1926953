// The fidelity check (simulator/fidelity): the embedded table parses, bad tables are refused
// with the row, and the model's error against the held-out published figures stays where
// docs/fidelity.md reports it, and below the kernels-only model's.
#include <cmath>

#include <catch2/catch.hpp>

#include "common/error.hpp"
#include "simulator/fidelity/fidelity.hpp"

using namespace burst;
using namespace burst::sim;

TEST_CASE("the embedded table of published figures parses, with fit and held-out rows") {
  const auto& figures = published_figures();
  REQUIRE(figures.size() > 100);
  int fit = 0;
  for (const auto& f : figures) {
    CHECK(!f.id.empty());
    CHECK(!f.source.empty());
    fit += f.fit ? 1 : 0;
  }
  CHECK(fit == 8);
}

TEST_CASE("a malformed table is refused with its row") {
  const std::string header =
      "id,kind,gpu,gpus,heads,kv_heads,head_dim,seq_len,batch,mask,layout,method,phase,metric,value,source,role\n";
  CHECK_THROWS_WITH(parse_published_figures(
                        header + "a,attention_kernel,A100,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,x,s,fit\n", "t.csv"),
                    Catch::Contains("t.csv row 2 value") && Catch::Contains("'x' is not a number"));
  CHECK_THROWS_WITH(parse_published_figures(header + "a,b\n", "t.csv"), Catch::Contains("2 fields, the header has 17"));
  CHECK_THROWS_WITH(
      parse_published_figures(header + "a,attention_kernel,A100,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,\"s,fit\n",
                              "t.csv"),
      Catch::Contains("never ends"));
  CHECK_THROWS_WITH(parse_published_figures("id,kind\n", "t.csv"), Catch::Contains("no column 'gpu'"));
  CHECK_THROWS_WITH(
      parse_published_figures(header + "a,attention_kernel,A100,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,s,maybe\n",
                              "t.csv"),
      Catch::Contains("neither fit nor held_out"));
}

TEST_CASE("held-out published attention figures: mean error under 12%, and better than kernels alone") {
  const auto rows = fidelity_rows();
  double now = 0, before = 0;
  int held_out = 0, layouts_seen = 0;
  bool zigzag = false, striped = false, contiguous = false, ampere = false, hopper = false;
  for (const auto& r : rows) {
    if (!r.skipped.empty() || r.figure.fit) continue;
    REQUIRE(r.measured_s > 0);
    REQUIRE(r.predicted_s > 0);
    now += std::abs(r.error());
    before += std::abs(r.kernels_only_error());
    ++held_out;
    zigzag |= r.figure.layout == "zigzag";
    striped |= r.figure.layout == "striped";
    contiguous |= r.figure.layout == "contiguous";
    ampere |= r.figure.gpu.starts_with("A");
    hopper |= r.figure.gpu.starts_with("H");
  }
  layouts_seen = int(zigzag) + int(striped) + int(contiguous);
  REQUIRE(held_out >= 50);
  CHECK(layouts_seen == 3);
  CHECK((ampere && hopper));
  CHECK(now / held_out < 0.12);
  CHECK(now < 0.75 * before);
}
