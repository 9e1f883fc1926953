// The fidelity check (simulator/fidelity): the embedded table parses, bad tables are refused
// with the row, and the model's error against the held-out published figures stays where
// docs/fidelity.md reports it, and below the kernels-only model's; the same for whole training
// steps under tensor x context x data parallelism (published_layouts.csv).
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "common/error.hpp"
#include "simulator/fidelity/fidelity.hpp"
#include "simulator/fidelity/layout_fidelity.hpp"
#include "simulator/fidelity/source_flop_count.hpp"
#include "simulator/models/model.hpp"

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
      "id,kind,gpu,gpus,nodes,heads,kv_heads,head_dim,seq_len,batch,mask,layout,method,phase,metric,value,source,role,"
      "flop_count\n";
  CHECK_THROWS_WITH(
      parse_published_figures(header + "a,attention_kernel,A100,1,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,x,s,fit,\n",
                              "t.csv"),
      Catch::Contains("t.csv row 2 value") && Catch::Contains("'x' is not a number"));
  CHECK_THROWS_WITH(parse_published_figures(header + "a,b\n", "t.csv"), Catch::Contains("2 fields, the header has 19"));
  CHECK_THROWS_WITH(
      parse_published_figures(
          header + "a,attention_kernel,A100,1,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,\"s,fit,\n", "t.csv"),
      Catch::Contains("never ends"));
  CHECK_THROWS_WITH(parse_published_figures("id,kind\n", "t.csv"), Catch::Contains("no column 'gpu'"));
  CHECK_THROWS_WITH(
      parse_published_figures(
          header + "a,attention_kernel,A100,1,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,s,maybe,\n", "t.csv"),
      Catch::Contains("neither fit nor held_out"));
  CHECK_THROWS_WITH(
      parse_published_figures(
          header + "a,attention_kernel,A100,1,1,32,8,128,8192,1,causal,none,fa2,fwd,tflops_per_gpu,1,s,fit,nemo\n",
          "t.csv"),
      Catch::Contains("t.csv row 2: flop_count") && Catch::Contains("flash_attention"));
  CHECK_THROWS_WITH(
      parse_published_figures(header + "a,attention_kernel,A100,1,1,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,s,fit,"
                                       "flash_attention\n",
                              "t.csv"),
      Catch::Contains("t.csv row 2: flop_count") && Catch::Contains("a FLOP count for a ms figure"));
  CHECK_THROWS_WITH(
      parse_published_figures(
          header + "a,attention_kernel,A100,8,0.5,32,8,128,8192,1,causal,none,fa2,fwd,ms,1,s,fit,\n", "t.csv"),
      Catch::Contains("t.csv row 2: nodes") && Catch::Contains("not a node count"));
}

TEST_CASE("held-out published attention figures: mean error under 14%, and better than kernels alone") {
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
  // 11.3% over 124 rows: BurstEngine's four logged runs of one benchmark differ by up to 1.6x at
  // 4K tokens a GPU, its forward-only rows there miss by 30-44%, and all are held out
  // (docs/fidelity.md, "Families side by side").
  CHECK(now / held_out < 0.12);
  CHECK(now < 0.75 * before);
}

TEST_CASE("BurstEngine's attention benchmark: the families' kernels across 4 nodes, and burst's ratio to USP") {
  // evaluation/kernel_bench of thunlp/BurstEngine: every family on the same 32 GPUs, held out
  // (docs/fidelity.md, "Families side by side").
  std::map<std::string, double, std::less<>> predicted, measured;
  int seen = 0;
  for (const auto& r : fidelity_rows()) {
    if (!r.figure.id.starts_with("be-kb-")) continue;
    INFO(r.figure.id);
    REQUIRE(r.skipped.empty());
    CHECK_FALSE(r.figure.fit);
    ++seen;
    predicted[r.figure.id] = r.predicted_s;
    measured[r.figure.id] = r.measured_s;
    if (r.figure.method == "burstengine" || r.figure.method == "internevo-usp") CHECK(std::abs(r.error()) < 0.10);
    if (r.figure.method == "megatron-cp") CHECK(std::abs(r.error()) < 0.15);
  }
  CHECK(seen == 14);
  // The two later logged runs of the same scripts (bench.md, bench_fb.md): forward + backward of
  // burst and USP within 15% in every run, 4K-16K tokens a GPU.
  int later = 0;
  for (const auto& r : fidelity_rows()) {
    if (!r.figure.id.starts_with("be-kb2-") && !r.figure.id.starts_with("be-kb3-")) continue;
    INFO(r.figure.id);
    REQUIRE(r.skipped.empty());
    CHECK_FALSE(r.figure.fit);
    ++later;
    if (r.figure.phase == "fwd_bwd" && r.figure.method != "loongtrain-double-ring") CHECK(std::abs(r.error()) < 0.15);
  }
  CHECK(later == 30);
  for (const char* seq : {"256k", "512k", "1024k"}) {
    INFO(seq);
    const std::string burst = std::string("be-kb-a800-32x-burstengine-") + seq;
    const std::string usp = std::string("be-kb-a800-32x-internevo_usp-") + seq;
    const double measured_ratio = measured[usp] / measured[burst];
    const double predicted_ratio = predicted[usp] / predicted[burst];
    CHECK(std::abs(predicted_ratio / measured_ratio - 1) < 0.05);
  }
}

TEST_CASE("published training layouts: every whole-node run without pipelines is rebuilt at its own degrees") {
  const auto rows = layout_fidelity_rows();
  REQUIRE(rows.size() == published_layouts().size());
  int predicted = 0;
  for (const auto& r : rows) {
    const auto& l = r.layout;
    INFO(l.id << ": " << r.skipped);
    if (l.pp > 1 || l.gpus % 8 != 0) {
      CHECK_THAT(r.skipped, Catch::Contains("pipeline parallelism") || Catch::Contains("part of a node"));
      continue;
    }
    REQUIRE(r.skipped.empty());
    CHECK(r.predicted() > 0);
    CHECK_THAT(r.strategy, Catch::Contains(fmt::format("ring {}", l.cp)));
    ++predicted;
  }
  CHECK(predicted >= 10);
}

TEST_CASE("held-out training layouts stay where docs/fidelity.md reports them") {
  std::map<std::string, const LayoutFidelityRow*> by_id;
  const auto rows = layout_fidelity_rows();
  for (const auto& r : rows) by_id[r.layout.id] = &r;
  // TorchTitan's Llama 3.1 8B on 8 H100 of 96 GB at 500 W, whose peak is "between SXM and NVL" by
  // its own account: every run over-predicted on the preset's H100 SXM, the bf16 one by under
  // 30%, all by under 70%; FP8's gain at 8K (Table 1: 1.28x) within 10%, torchao's casts priced.
  // Table 2 (FSDP x CP, FP8, full checkpointing, a zigzag ring as PyTorch balances it): the trend
  // from 32K (CP 1), which carries the same GPU, within 25%, and every run's memory within 10%.
  for (const auto& r : rows) {
    if (r.layout.id.rfind("titan-", 0) != 0) continue;
    INFO(r.layout.id);
    CHECK(r.error() > 0);
    CHECK(r.error() < 0.70);
  }
  const LayoutFidelityRow& bf16 = *by_id.at("titan-llama3-8b-8k-bf16");
  const LayoutFidelityRow& fp8 = *by_id.at("titan-llama3-8b-8k-fp8");
  CHECK(bf16.error() < 0.30);
  CHECK(std::abs((fp8.predicted() / bf16.predicted()) / (fp8.layout.value / bf16.layout.value) - 1) < 0.10);
  const LayoutFidelityRow& cp1 = *by_id.at("titan-llama3-8b-32k");
  for (const char* id :
       {"titan-llama3-8b-32k", "titan-llama3-8b-64k", "titan-llama3-8b-128k", "titan-llama3-8b-256k"}) {
    const LayoutFidelityRow& r = *by_id.at(id);
    INFO(id);
    CHECK(std::abs((r.predicted() / cp1.predicted()) / (r.layout.value / cp1.layout.value) - 1) < 0.25);
    CHECK(std::abs(r.predicted_memory_gib / r.layout.memory_gib - 1) < 0.10);
  }
  // NeMo's Llama-2-7B sweep (TP x CP from 16K to 1M, FP8) and Llama 3 8B at 8K, in NeMo's own FLOP
  // count: each within 12%; the sweep's TFLOP/s at 1M, 0.81 of 16K's, within 20%.
  const auto trend = [&](const LayoutFidelityRow& r) {
    return r.predicted() / by_id.at("nemo-llama2-7b-16k")->predicted();
  };
  CHECK(std::abs(trend(*by_id.at("nemo-llama2-7b-1m")) / (536.0 / 660.0) - 1) < 0.20);
  // Every NeMo run fit its H100s: so must the prediction fit the preset's 80 GiB, Llama 3 8B at 8K
  // on CP 2 with its 128K-token vocabulary included (its Apex optimizer keeps bf16 gradients).
  for (const auto& r : rows) {
    if (r.layout.id.rfind("nemo-", 0) != 0 || !r.skipped.empty()) continue;
    INFO(r.layout.id);
    CHECK(r.predicted_memory_gib < 80);
    CHECK(std::abs(r.error()) < 0.12);
  }
}

TEST_CASE("NeMo's FLOP count turns its published tokens/s into its published TFLOP/s") {
  // performance_summary.md prints both for the same runs (source_flop_count.hpp).
  const auto tflops = [](const char* model, double seq, double tokens_per_s) {
    return source_flops_per_token(FlopCount::Nemo, model_preset(model), seq) * tokens_per_s / 1e12;
  };
  CHECK(tflops("llama2-7b", 4096, 16634) == Approx(767).epsilon(0.002));
  CHECK(tflops("llama3-8b", 8192, 12036) == Approx(697).epsilon(0.002));
  // Attention counted unmasked: four times the tokens, four times attention's share per token.
  const ModelSpec m = model_preset("llama2-7b");
  const double attention_4k =
      source_flops_per_token(FlopCount::Nemo, m, 8192) - source_flops_per_token(FlopCount::Nemo, m, 4096);
  CHECK(attention_4k == Approx(12.0 * 4096 * m.hidden * m.layers));
}

TEST_CASE("a malformed layouts table is refused with its row") {
  // A valid row (16 H100, TP 2 x DP 8) with the given fields changed, parsed as l.csv.
  const auto parse_row = [](const std::map<std::string, std::string>& changed) {
    std::vector<std::pair<std::string, std::string>> row = {{"id", "a"},
                                                            {"model", "llama2-7b"},
                                                            {"gpu", "H100"},
                                                            {"gpus", "16"},
                                                            {"seq_len", "16384"},
                                                            {"global_batch", "256"},
                                                            {"micro_batch", "1"},
                                                            {"tp", "2"},
                                                            {"cp", "1"},
                                                            {"pp", "1"},
                                                            {"dp", "8"},
                                                            {"family", "megatron-cp"},
                                                            {"layout", ""},
                                                            {"checkpoint", ""},
                                                            {"gradients", ""},
                                                            {"precision", "fp8"},
                                                            {"fp8_library", "transformer-engine"},
                                                            {"metric", "model_tflops_per_gpu"},
                                                            {"flop_count", "nemo"},
                                                            {"value", "660"},
                                                            {"memory_gib", ""},
                                                            {"source", "s"},
                                                            {"role", "held_out"}};
    std::string header, fields;
    for (auto& [column, value] : row) {
      if (const auto it = changed.find(column); it != changed.end()) value = it->second;
      header += (header.empty() ? "" : ",") + column;
      fields += (fields.empty() ? "" : ",") + value;
    }
    (void)parse_published_layouts(header + "\n" + fields + "\n", "l.csv");
  };
  CHECK_NOTHROW(parse_row({}));
  CHECK_THROWS_WITH(parse_row({{"dp", "4"}}),
                    Catch::Contains("l.csv row 2") && Catch::Contains("gpus is not tp x cp x pp x dp"));
  CHECK_THROWS_WITH(parse_row({{"gradients", "fp16"}}),
                    Catch::Contains("l.csv row 2: gradients") && Catch::Contains("bf16 or fp32"));
  CHECK_THROWS_WITH(parse_row({{"flop_count", ""}}),
                    Catch::Contains("l.csv row 2: flop_count") && Catch::Contains("nemo"));
  CHECK_THROWS_WITH(parse_row({{"metric", "tokens_per_s_per_gpu"}}),
                    Catch::Contains("l.csv row 2: flop_count") && Catch::Contains("counts no FLOPs"));
  CHECK_THROWS_WITH(parse_row({{"metric", "mfu"}, {"flop_count", ""}}),
                    Catch::Contains("l.csv row 2: metric") && Catch::Contains("tokens_per_s_per_gpu"));
  CHECK_THROWS_WITH(parse_row({{"precision", "fp16"}}),
                    Catch::Contains("l.csv row 2: precision") && Catch::Contains("bf16 or fp8"));
  // An FP8 row names the library that ran its FP8; a bf16 row names none.
  CHECK_THROWS_WITH(parse_row({{"fp8_library", ""}}),
                    Catch::Contains("l.csv row 2: fp8_library") && Catch::Contains("torchao"));
  CHECK_THROWS_WITH(parse_row({{"precision", "bf16"}}),
                    Catch::Contains("l.csv row 2: fp8_library") && Catch::Contains("not FP8"));
  CHECK_NOTHROW(parse_row({{"precision", "bf16"}, {"fp8_library", ""}}));
  CHECK_THROWS_WITH(parse_row({{"layout", "zigzg"}}),
                    Catch::Contains("l.csv row 2: layout") && Catch::Contains("zigzag"));
  CHECK_THROWS_WITH(parse_published_layouts("id,model\n", "l.csv"), Catch::Contains("no column 'gpu'"));
}
