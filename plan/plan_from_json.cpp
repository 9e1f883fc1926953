// Reading a whole plan document: the schema first, then every section, then the checks that
// join sections (world size against cp x ulysses, ring lengths against the ring sizes).
//
// A "schema" naming another format (a topology, a future plan version) stops the read after
// that one problem: the rest would be a page of unknown and missing fields that only restate
// "this is not a burst.plan/1 document". A missing "schema" is reported with the rest, since a
// hand-written plan that merely forgot the line deserves all its other problems too.
#include <fmt/format.h>

#include "plan/detail/plan_reader.hpp"

namespace burst::plan {
namespace {

const std::vector<std::string> kTopKeys = {"schema", "meta",      "job",          "strategy", "world",
                                           "rings",  "predicted", "alternatives", "layouts",  "cluster"};
const std::vector<std::string> kStrategyKeys = {"name",     "tp",      "cp",         "dp",       "micro_batch",
                                                "ulysses",  "ring",    "layout",     "backward", "dkv_bytes",
                                                "dq_bytes", "overlap", "checkpoint", "lm_head",  "zero"};
const std::vector<std::string> kPredictionKeys = {"step_time_s",    "tokens_per_s_per_gpu", "mfu",
                                                  "exposed_comm_s", "memory_bytes_per_gpu", "time_s",
                                                  "comm_bytes",     "attention_layer",      "passes"};

// The document's plan version (2, or 1 for burst.plan/1), or nothing when it declares another
// format (reported): nothing else is worth checking. A missing "schema" is reported and read as
// the current version, so the rest of the document's problems are reported too.
std::optional<int> check_schema(JsonReader& r, const Json& doc) {
  const auto it = doc.find("schema");
  const std::string hint = fmt::format("a plan starts with \"schema\": \"{}\"; `burst plan` writes one", kSchema);
  const std::string valid = fmt::format("{} or {}", kSchema, kSchemaV1);
  if (it == doc.end()) {
    r.problem("/schema", "missing \"schema\"", valid, hint);
    return 2;
  }
  if (it->is_string() && it->get<std::string>() == kSchema) return 2;
  if (it->is_string() && it->get<std::string>() == kSchemaV1) return 1;
  const std::string found = it->is_string() ? it->get<std::string>() : it->dump();
  r.problem("/schema", fmt::format("'{}' is not a plan schema this build reads", found), valid,
            found.rfind("burst.topology/", 0) == 0 ? "this is a topology file; pass it with --topology" : hint);
  return std::nullopt;
}

// The replicas run whole micro-batches: dp x micro_batch divides the job's batch.
void check_batch_split(JsonReader& r, const Job& job, const Strategy& s, const std::string& pointer) {
  if (s.dp < 1 || s.micro_batch < 1 || job.batch % (s.dp * s.micro_batch) == 0) return;
  r.problem(JsonReader::child(pointer, "micro_batch"),
            fmt::format("{} replicas of micro-batches of {} do not split a batch of {} sequences", s.dp, s.micro_batch,
                        job.batch),
            "dp x micro_batch dividing /job/batch", "each replica accumulates the same number of micro-batches");
}

// A list of candidates shaped as the chosen strategy and its prediction: /alternatives (one a
// family) or /layouts (one a parallel layout).
void read_alternatives(detail::PlanReader& reader, const Json& list, const std::string& pointer, const Job& job,
                       int version, std::vector<Alternative>& out) {
  JsonReader& r = reader.json();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& e = list[i];
    const std::string at = JsonReader::child(pointer, i);
    if (!e.is_object()) {
      r.problem(at, fmt::format("expected an object, found {}", e.type_name()));
      continue;
    }
    r.reject_unknown_keys(e, at, {"strategy", "config", "feasible", "reason", "predicted"});
    Alternative a;
    std::string family;
    const bool named = reader.text(e, at, "strategy", family);
    if (const Json* config = reader.section(e, at, "config", kStrategyKeys)) {
      (void)reader.strategy(*config, JsonReader::child(at, "config"), a.strategy);
      if (version == 1) a.strategy.micro_batch = job.batch;
      check_batch_split(r, job, a.strategy, JsonReader::child(at, "config"));
      if (named && family != a.strategy.name) {
        r.problem(JsonReader::child(at, "strategy"),
                  fmt::format("'{}' differs from the config's name '{}'", family, a.strategy.name),
                  "the family name of the config");
      }
    }
    reader.flag(e, at, "feasible", a.feasible);
    reader.text(e, at, "reason", a.reason);
    if (const Json* p = reader.section(e, at, "predicted", kPredictionKeys)) {
      reader.prediction(*p, JsonReader::child(at, "predicted"), a.predicted);
    }
    out.push_back(std::move(a));
  }
}

}  // namespace

Plan plan_from_json(const Json& doc, const std::string& source) {
  detail::PlanReader reader(source);
  JsonReader& r = reader.json();
  if (!doc.is_object()) {
    r.problem("", fmt::format("a plan is a JSON object, found {}", doc.type_name()), "",
              fmt::format("a plan starts with {{\"schema\": \"{}\", ...", kSchema));
    reader.problems().throw_if_any();
  }
  const std::optional<int> version = check_schema(r, doc);
  if (!version) reader.problems().throw_if_any();
  reader.set_version(*version);
  r.reject_unknown_keys(doc, "", kTopKeys);

  Plan plan;
  if (const Json* meta =
          reader.section(doc, "", "meta", {"generator", "topology", "topology_hash", "candidates_evaluated"})) {
    reader.meta(*meta, "/meta", plan);
  }
  if (const Json* job = reader.section(
          doc, "", "job",
          {"model", "seq_len", "batch", "dtype", "linears", "mask", "memory_budget_bytes", "memory_margin_bytes",
           "only_family", "only_tp", "only_dp", "only_checkpoint", "kernel_path"})) {
    reader.job(*job, "/job", plan.job);
  }
  detail::StrategySizes sizes;
  if (const Json* strategy = reader.section(doc, "", "strategy", kStrategyKeys)) {
    sizes = reader.strategy(*strategy, "/strategy", plan.strategy);
  }
  std::optional<std::int64_t> world_size;
  if (*version == 1) plan.strategy.micro_batch = plan.job.batch;  // /1: the whole batch at once
  check_batch_split(r, plan.job, plan.strategy, "/strategy");
  if (const Json* world = reader.section(doc, "", "world", {"size", "ranks"})) {  // tp x cp x ulysses x dp ranks
    world_size = reader.world(*world, "/world", sizes, plan.ranks);
  }
  if (const Json* rings = r.array(doc, "", "rings")) reader.rings(*rings, "/rings", sizes, world_size, plan.rings);
  if (const Json* predicted = reader.section(doc, "", "predicted", kPredictionKeys)) {
    reader.prediction(*predicted, "/predicted", plan.predicted);
  }
  if (const Json* alternatives = r.array(doc, "", "alternatives"))
    read_alternatives(reader, *alternatives, "/alternatives", plan.job, *version, plan.alternatives);
  if (const Json* layouts = r.array(doc, "", "layouts", false))  // plans before the list have none
    read_alternatives(reader, *layouts, "/layouts", plan.job, *version, plan.layouts);

  if (const auto it = doc.find("cluster"); it == doc.end()) {
    r.problem("/cluster", "missing required field 'cluster'", "the burst.topology/1 document, or null");
  } else if (!it->is_object() && !it->is_null()) {
    r.problem("/cluster", fmt::format("expected an object, found {}", it->type_name()),
              "the burst.topology/1 document, or null");
  } else {
    plan.cluster = *it;
    // The rest of the cluster is read as a topology by those who simulate on it; its name is
    // read here too (whether the plan is local, the report's cluster table).
    if (it->is_object() && it->contains("name")) r.name(*it, "/cluster", "name");
  }
  reader.problems().throw_if_any();
  return plan;
}

}  // namespace burst::plan
