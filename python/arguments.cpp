#include "python/arguments.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "common/text.hpp"
#include "planner/search/candidates.hpp"
#include "simulator/engine/engine.hpp"
#include "python/json_bridge.hpp"

namespace py = pybind11;

namespace burst::python {

Keywords::Keywords(const py::kwargs& kwargs) {
  for (const auto& [key, value] : kwargs) given_[key.cast<std::string>()] = py::reinterpret_borrow<py::object>(value);
}

std::optional<py::object> Keywords::take(const std::string& name) {
  known_.push_back(name);
  const auto it = given_.find(name);
  if (it == given_.end()) return std::nullopt;
  py::object value = it->second;
  given_.erase(it);
  return value;
}

void Keywords::wrong_type(const std::string& name, const py::handle& value, const std::string& valid) {
  problems_.add(name, "a " + py::type::of(value).attr("__name__").cast<std::string>() + " is not valid here", valid);
}

void Keywords::text(const std::string& name, std::string& out, bool required) {
  const auto value = take(name);
  if (!value) {
    if (required) problems_.add(name, "missing keyword argument", "", "");
    return;
  }
  if (py::isinstance<py::str>(*value)) {
    out = value->cast<std::string>();
  } else if (py::isinstance<py::int_>(*value) && !py::isinstance<py::bool_>(*value)) {
    out = py::str(*value).cast<std::string>();
  } else {
    wrong_type(name, *value, "a str (or an int)");
  }
}

void Keywords::text(const std::string& name, std::optional<std::string>& out) {
  std::string value;
  const bool given = given_.contains(name);
  text(name, value);
  if (given) out = value;
}

void Keywords::choice(const std::string& name, std::string& out, const std::vector<std::string>& valid) {
  std::string value = out;
  text(name, value);
  if (std::find(valid.begin(), valid.end(), value) == valid.end()) {
    problems_.add(name, "unknown value '" + value + "'", text::join(valid), text::did_you_mean(value, valid));
    return;
  }
  out = value;
}

void Keywords::count(const std::string& name, std::int64_t& out) {
  const auto value = take(name);
  if (!value) return;
  if (!py::isinstance<py::int_>(*value) || py::isinstance<py::bool_>(*value)) {
    wrong_type(name, *value, "a whole number of 1 or more");
    return;
  }
  const Json number = from_python(*value, name);
  if (number.get<std::int64_t>() < 1) {
    problems_.add(name, fmt::format("must be a whole number of 1 or more, got {}", number.get<std::int64_t>()), "");
    return;
  }
  out = number.get<std::int64_t>();
}

void Keywords::count(const std::string& name, int& out) {
  std::int64_t value = out;
  count(name, value);
  if (value > std::numeric_limits<int>::max()) {
    problems_.add(name, fmt::format("{} is too large", value),
                  fmt::format("at most {}", std::numeric_limits<int>::max()));
    return;
  }
  out = static_cast<int>(value);
}

void Keywords::count(const std::string& name, std::optional<int>& out) {
  const bool given = given_.contains(name);
  int value = 1;
  count(name, value);
  if (given) out = value;
}

void Keywords::flag(const std::string& name, bool& out) {
  const auto value = take(name);
  if (!value) return;
  if (!py::isinstance<py::bool_>(*value)) {
    wrong_type(name, *value, "True or False");
    return;
  }
  out = value->cast<bool>();
}

void Keywords::model(jobs::JobOptions& job) {
  const auto value = take("model");
  if (!value) {
    problems_.add("model", "missing keyword argument", "", "");
  } else if (py::isinstance<py::str>(*value)) {
    job.model = value->cast<std::string>();
  } else if (py::isinstance<py::dict>(*value)) {
    try {
      job.model_config = from_python(*value, "model");
    } catch (const Error& e) {
      for (const Problem& p : e.problems()) problems_.add(p);
    }
  } else {
    wrong_type("model", *value, "a preset name or config.json path (str), or a Hugging Face config (dict)");
  }
}

void Keywords::variations(const std::string& name, std::vector<std::string>& out) {
  const auto value = take(name);
  if (!value) {
    problems_.add(name, "missing keyword argument", "", "e.g. vary={\"nodes\": [4, 8]}");
    return;
  }
  if (!py::isinstance<py::dict>(*value)) {
    wrong_type(name, *value, "a dict of knob -> list of values");
    return;
  }
  for (const auto& [knob, values] : value->cast<py::dict>()) {
    std::string spec = py::str(knob).cast<std::string>() + "=";
    std::vector<std::string> texts;
    if (py::isinstance<py::list>(values) || py::isinstance<py::tuple>(values)) {
      for (const py::handle v : values) texts.push_back(py::str(v).cast<std::string>());
    } else {
      texts.push_back(py::str(values).cast<std::string>());  // one value
    }
    spec += text::join(texts, ",");
    out.push_back(spec);
  }
}

void Keywords::finish() {
  for (const auto& [name, value] : given_) {
    problems_.add(name, "unknown keyword argument", text::join(known_), text::did_you_mean(name, known_));
  }
  problems_.throw_if_any();
}

void read_topology_source(Keywords& k, jobs::TopologySource& s) {
  k.count("nodes", s.nodes);
  k.count("per_node", s.per_node);
  k.text("nvlink_from", s.nvlink_from);
  k.text("gpu_from", s.gpu_from);
  k.text("nic_speed", s.nic_speed);
}

void read_job(Keywords& k, jobs::JobOptions& job) {
  k.text("topology", job.topology.topology, true);
  read_topology_source(k, job.topology);
  k.model(job);
  k.count("vocab", job.vocab);
  k.text("seq", job.seq, true);
  k.count("batch", job.batch);
  k.text("global_batch_tokens", job.batch_tokens);
  k.text("mask", job.mask);
  k.choice("dtype", job.dtype, {"bf16", "fp32"});
  k.choice("compute_model", job.compute_model, sim::compute_model_names());
  k.choice("comm_model", job.comm_model, sim::comm_model_names());
  k.text("calibration", job.calibration);
}

void read_planning(Keywords& k, jobs::PlanOptions& plan) {
  read_job(k, plan.job);
  k.text("memory_budget", plan.memory_budget);
  k.text("memory_margin", plan.memory_margin);
  k.text("strategy", plan.strategy);
  std::optional<int> tp;  // None: every degree the node allows, as `burst plan` without --tp
  k.count("tp", tp);
  plan.tp = tp.value_or(0);
  std::optional<int> dp;  // None: every degree the batch allows, as `burst plan` without --dp
  k.count("dp", dp);
  plan.dp = dp.value_or(0);
  k.choice("engine", plan.engine, sim::engine_names());
  k.count("max_candidates", plan.max_candidates);
  k.flag("fp8_linears", plan.fp8_linears);
  k.text("checkpoint", plan.checkpoint);
}

plan::Plan read_plan_argument(const py::handle& plan, std::string& source) {
  if (py::isinstance<py::str>(plan)) {
    source = plan.cast<std::string>();
    return plan::read_plan(source);
  }
  if (!py::isinstance<py::dict>(plan)) {
    throw Error(Problem{"plan", "a " + py::type::of(plan).attr("__name__").cast<std::string>() + " is not a plan",
                        "a burst.plan/2 file's path (str) or the dict burst.plan() returns", ""});
  }
  source = "<dict>";  // as Python names sources that are no file ("<string>", "<stdin>")
  Json doc = from_python(plan, source);
  doc.erase("search");
  return plan::plan_from_json(doc, source);
}

}  // namespace burst::python
