// A run's JSON beside the plan: both kinds of `burst run --json` read (training, attention
// only, recorded under tests/report/data), shown as tables and charts in the HTML, and a wrong
// file named by the field it lacks.
#include <catch2/catch.hpp>

#include <pugixml.hpp>

#include "common/error.hpp"
#include "planner/report/report.hpp"

using namespace burst;

namespace {

const std::string kData = std::string(BURST_TEST_DATA) + "/../report/data/";

Json run_json(const std::string& name) { return read_json_file(kData + name); }

std::string error_of(const Json& doc) {
  try {
    (void)planner::read_run(doc, "run.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a training run: step time parts and memory items beside the plan's") {
  const planner::RunFigures f = planner::read_run(run_json("local-2x2-tiny-train-256.run.json"), "run.json");
  CHECK(f.kind == "training");
  REQUIRE(f.times.size() == 7);  // forward, backward, attention, recompute, LM head, ZeRO, step
  CHECK(f.times.back().name == "step (median)");
  CHECK(f.times.back().has_predicted);
  CHECK_FALSE(f.memory.empty());
  CHECK(f.level_bytes.empty());
  const plan::Plan p = plan::read_plan(std::string(BURST_TEST_DATA) + "/run/local-2x2-tiny-train-256.json");
  planner::ReportInput input;
  input.plan = p;
  input.run = f;
  const std::string html = planner::render_html(input);
  pugi::xml_document doc;
  REQUIRE(doc.load_string(html.c_str()));
  // Each part the runtime times apart is paired with the plan's items it covers; only the
  // forward and backward (the plan does not split by pass) lack a prediction, and only the
  // plan's parts no measured one covers lack a measurement.
  const std::vector<planner::Compared> rows = planner::training_times(f, p);
  int unpredicted = 0, unmeasured = 0;
  for (const planner::Compared& c : rows) {
    unpredicted += c.has_predicted ? 0 : 1;
    unmeasured += c.has_measured ? 0 : 1;
  }
  CHECK(unpredicted == 2);
  CHECK(unmeasured == static_cast<int>(p.predicted.time_s.size()) - 5);  // all but the 5 paired items
  for (const planner::Compared& c : rows) {
    if (c.name.starts_with("attention")) CHECK(c.predicted > 0);
  }
  CHECK(doc.select_nodes("//table[@id='run-time']/tbody/tr").size() == rows.size());
  // Every memory row holds both figures; what the runtime cannot measure (the reserve) is named under the table.
  std::size_t measured_items = 0;
  for (const planner::Compared& c : f.memory) measured_items += c.has_measured ? 1 : 0;
  CHECK(measured_items < f.memory.size());
  CHECK(doc.select_nodes("//table[@id='run-memory']/tbody/tr").size() == measured_items);
  CHECK(html.find("Predicted only, nothing the runtime allocates to measure: reserve") != std::string::npos);
  CHECK(doc.select_nodes("//section[h2='Measured against predicted']//svg").size() == 2);
}

TEST_CASE("an attention-only run: forward, backward and ring bytes per level") {
  const planner::RunFigures f = planner::read_run(run_json("local-2x2-tiny-mha-4K-burst.run.json"), "run.json");
  CHECK(f.kind == "attention only");
  CHECK(f.times.size() == 2);
  REQUIRE_FALSE(f.level_bytes.empty());
  CHECK(f.level_bytes.front().name == "forward flat");
  CHECK(f.level_bytes.front().has_predicted);
  CHECK(f.memory.empty());
}

TEST_CASE("a wrong file is named by the field it lacks") {
  CHECK_THAT(error_of(Json::parse(R"({"schema": "burst.plan/1"})")),
             Catch::Contains("run.json:/losses: missing, and so is /comm_bytes"));
  Json training = run_json("local-2x2-tiny-train-256.run.json");
  training["memory_items"][1].erase("predicted");
  CHECK_THAT(error_of(training), Catch::Contains("run.json:/memory_items/1/predicted: missing"));
  Json attention = run_json("local-2x2-tiny-mha-4K-burst.run.json");
  attention["measured"]["backward_s"] = "slow";
  CHECK_THAT(error_of(attention), Catch::Contains("run.json:/measured/backward_s: not a number"));
}

TEST_CASE("with the dense layers and the optimizer measured and the passes predicted, every row is filled") {
  Json run = run_json("local-2x2-tiny-train-256.run.json");
  run["measured"]["dense_s"] = 0.05;
  run["measured"]["optimizer_s"] = 0.002;
  const planner::RunFigures f = planner::read_run(run, "run.json");
  REQUIRE(f.times.size() == 9);
  plan::Plan p = plan::read_plan(std::string(BURST_TEST_DATA) + "/run/local-2x2-tiny-train-256.json");
  CHECK(p.predicted.forward_pass_s == 0);  // a plan from before the passes were predicted
  p.predicted.forward_pass_s = 0.003;
  p.predicted.backward_pass_s = 0.006;
  const std::vector<planner::Compared> rows = planner::training_times(f, p);
  CHECK(rows.size() == 9);
  for (const planner::Compared& c : rows) {
    INFO(c.name);
    CHECK(c.has_measured);
    CHECK(c.has_predicted);
    if (c.name == "forward") CHECK(c.predicted == 0.003);
    if (c.name == "optimizer") CHECK(c.measured == 0.002);
    if (c.name.starts_with("dense")) {
      double dense = 0;
      for (const plan::Item& item : p.predicted.time_s) {
        if (item.name == "dense_compute" || item.name == "elementwise" || item.name == "tp_exposed_comm")
          dense += item.value;
      }
      CHECK(c.predicted == Approx(dense));
      CHECK(c.measured == 0.05);
    }
  }
}
