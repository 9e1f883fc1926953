// The capacity report: HTML that an XML parser accepts and that fetches nothing, one table
// row per strategy, charts as inline SVG (HTML) or data: images (Markdown), user text
// escaped (markup and control characters, NUL and ESC among them), and no "nan"/"inf" even
// when a strategy has no prediction at all.
#include <catch2/catch.hpp>

#include <cctype>

#include <pugixml.hpp>

#include "planner/report/report.hpp"
#include "tests/plan/sample_plan.hpp"
#include "tests/support/read_back.hpp"

using namespace burst;

namespace {

planner::ReportInput sample_input(bool with_scaling) {
  planner::ReportInput input;
  input.plan = test::sample_plan();
  if (with_scaling) {
    constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
    input.scaling = {{1, 8, "", false, "needs 131.0 GiB per GPU, budget 80 GiB", 0, 0, 0, 0},
                     {2, 16, "burst", true, "", 10.0, 1638.4, 0.41, 61.5 * kGiB},
                     {4, 32, "burst", true, "", 5.4, 1517.0, 0.38, 48.0 * kGiB}};
  }
  return input;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// "nan" or "inf" as a word (not inside "infeasible"), in any case.
bool has_nan_or_inf(const std::string& text) {
  std::string lower = text;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto letter = [&](std::size_t i) {
    return i < lower.size() && std::isalpha(static_cast<unsigned char>(lower[i]));
  };
  for (const std::string word : {"nan", "inf"}) {
    for (auto at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
      if ((at == 0 || !letter(at - 1)) && !letter(at + word.size())) return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("the HTML report is well-formed, self-contained and has one row per strategy") {
  const planner::ReportInput input = sample_input(true);
  const std::string html = planner::render_html(input);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_string(html.c_str());
  INFO(parsed.description() << " at offset " << parsed.offset);
  REQUIRE(parsed);
  const pugi::xpath_node peers = doc.select_node("//table[@id='peers']");
  REQUIRE(peers);
  // The chosen plan, then every alternative but the chosen family's own entry (the plan itself).
  CHECK(peers.node().select_nodes("tbody/tr").size() == input.plan.alternatives.size());
  CHECK(peers.node().select_nodes("tbody/tr/td[1][text()='burst']").empty());
  CHECK(doc.select_nodes("//table[@id='scaling']/tbody/tr").size() == 3);
  CHECK(doc.select_nodes("//svg").size() == 4);  // the cluster, time, memory, scaling
  CHECK(html.find("<svg") != std::string::npos);
  CHECK(html.find("http") == std::string::npos);
  CHECK(html.find("<script") == std::string::npos);
  CHECK(html == planner::render_html(input));  // deterministic
}

TEST_CASE("the HTML verdict names the plan, its lead and the peers that do not fit") {
  const std::string html = planner::render_html(sample_input(false));
  pugi::xml_document doc;
  REQUIRE(doc.load_string(html.c_str()));
  const std::string verdict = doc.select_node("//section[1]/p").node().text().get();
  CHECK(verdict ==
        "burst is the plan: double ring 8 x 2, zigzag, q_ring backward. Predicted 1,638 tokens/s per GPU at 41.0% MFU, "
        "10.00 s per iteration, 61.5 GiB per GPU (within the 80.0 GiB budget). That is 1.17x the throughput of the "
        "best peer that also fits, megatron-cp (1,400 tokens/s per GPU). Do not fit: loongtrain-double-ring (needs "
        "97.2 GiB per GPU, budget 80 GiB); ds-ulysses (not applicable: 8 KV heads do not split 16 ways).");
  CHECK(doc.select_node("//table[@id='cluster']/tbody/tr[4]/td[2]").node().text().get() == std::string("16"));
}

TEST_CASE("a restricted search is said, with the faster plans it left out") {
  planner::ReportInput input = sample_input(false);
  input.plan.job.only_family = "burst";
  input.plan.job.only_tp = 1;
  input.plan.alternatives[0].predicted.tokens_per_s_per_gpu = 2000;  // megatron-cp, feasible, now faster
  const std::string html = planner::render_html(input);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(html.c_str()));
  const std::string verdict = doc.select_node("//section[1]/p").node().text().get();
  CHECK_THAT(verdict, Catch::EndsWith("The search was restricted to the burst family (--strategy) and tensor "
                                      "parallelism 1 (--tp). Faster, and left out by it: megatron-cp (2,000 tokens/s "
                                      "per GPU)."));
  CHECK_THAT(planner::render_html(sample_input(false)), !Catch::Contains("The search was restricted"));
}

TEST_CASE("the Markdown report has the tables and the charts as data: SVG images") {
  const std::string md = planner::render_markdown(sample_input(true));
  CHECK(md.rfind("# Capacity report: llama3-8b at 256K tokens on a800-4hca x2\n", 0) == 0);
  CHECK(md.find("| strategy | configuration | fits | step time | tokens/s per GPU | MFU | memory per GPU | memory as | "
                "exposed comm "
                "|") != std::string::npos);
  CHECK(md.find("| burst (chosen) | double ring 8 x 2, zigzag, q_ring backward | yes | 10.00 s | 1,638 | 41.0% | 61.5 "
                "GiB | gradients in the activation dtype; logits + 2 fp32 logit-sized buffers | 500.0 ms |") !=
        std::string::npos);
  CHECK(md.find("| ds-ulysses | Ulysses 16, no ring, zigzag, kv_ring backward | no: not applicable: 8 KV heads do not "
                "split 16 ways | n/a | n/a | n/a | n/a | gradients in the activation dtype, reduced in 500M-element "
                "buckets; logits + 3 "
                "fp32 logit-sized buffers | n/a |") != std::string::npos);
  CHECK(count(md, "](data:image/svg+xml;base64,") == 4);
  CHECK(md.find("| 1 | 8 | none | no: needs 131.0 GiB per GPU, budget 80 GiB | n/a |") != std::string::npos);
}

TEST_CASE("user text is escaped in both formats") {
  planner::ReportInput input = sample_input(false);
  input.plan.job.model.name = "<script>alert('x')</script> & co";
  input.plan.alternatives[1].reason = "a|b <b>";
  const std::string html = planner::render_html(input);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co") != std::string::npos);
  pugi::xml_document doc;
  CHECK(doc.load_string(html.c_str()));
  const std::string md = planner::render_markdown(input);
  CHECK(md.find("<script>") == std::string::npos);
  CHECK(md.find("&lt;script&gt;alert('x')&lt;/script&gt; &amp; co") != std::string::npos);
  CHECK(md.find("a\\|b &lt;b&gt;") != std::string::npos);
}

TEST_CASE("an empty scaling sweep says it was not computed") {
  const planner::ReportInput input = sample_input(false);
  CHECK(planner::render_markdown(input).find("Not computed") != std::string::npos);
  CHECK(planner::render_html(input).find("Not computed") != std::string::npos);
}

TEST_CASE("no NaN or infinity when predictions are all zeros or missing") {
  planner::ReportInput input = sample_input(true);
  input.plan.predicted = {};
  input.plan.job.memory_budget_bytes = 0;
  input.plan.cluster = Json();
  for (auto& a : input.plan.alternatives) a.predicted = {};
  const std::string html = planner::render_html(input);
  const std::string md = planner::render_markdown(input);
  REQUIRE(has_nan_or_inf("1.0 NaN s"));  // the detector itself
  REQUIRE_FALSE(has_nan_or_inf("infeasible, finance"));
  CHECK_FALSE(has_nan_or_inf(html));
  CHECK_FALSE(has_nan_or_inf(md));
  CHECK(html.find("The plan carries no description of its cluster.") != std::string::npos);
  pugi::xml_document doc;
  CHECK(doc.load_string(html.c_str()));
}

TEST_CASE("NUL and ESC in names: the HTML still parses as XML, and no control character reaches either format") {
  planner::ReportInput input = sample_input(true);
  const std::string nul_esc = std::string("nul\0esc\x1b[31m", 12);
  input.plan.job.model.name = "model " + nul_esc;
  input.plan.topology_name = "topology " + nul_esc;
  input.plan.cluster["name"] = "cluster " + nul_esc;
  input.plan.alternatives[0].strategy.name = "peer " + nul_esc;
  input.plan.alternatives[1].reason = "reason " + nul_esc + "\n<b>";
  input.scaling[0].reason = "scaling " + nul_esc;
  input.run = planner::RunFigures{"training", {{"step " + nul_esc, 1.0, 1.1}}, {{"memory " + nul_esc, 2.0, 2.1}}, {}};
  const std::string html = planner::render_html(input);
  INFO(html);
  CHECK(test::raw_control_at(html) == std::string::npos);
  pugi::xml_document doc;
  const pugi::xml_parse_result parsed = doc.load_buffer(html.data(), html.size());
  INFO(parsed.description() << " at offset " << parsed.offset);
  REQUIRE(parsed);
  CHECK(html.find("model nul\\x00esc\\x1b[31m") != std::string::npos);  // shown, not obeyed
  CHECK(html.find("reason nul\\x00esc\\x1b[31m\\n&lt;b&gt;") != std::string::npos);
  const std::string md = planner::render_markdown(input);
  CHECK(test::raw_control_at(md) == std::string::npos);
  CHECK(md.find("model nul\\\\x00esc\\\\x1b\\[31m") != std::string::npos);
}
