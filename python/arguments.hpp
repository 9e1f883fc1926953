// Keyword arguments -> the option structs of tools/jobs, named like the CLI's options with
// underscores (--memory-budget -> memory_budget, --per-node -> per_node) and checked as the CLI
// checks them: every problem at once as one burst::Error, an unknown keyword with a
// did-you-mean. Sizes and token counts take the CLI's strings ("1M", "64GiB") or ints.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "common/error.hpp"
#include "plan/plan.hpp"
#include "tools/jobs/planning.hpp"
#include "tools/jobs/simulation.hpp"

namespace burst::python {

class Keywords {
 public:
  explicit Keywords(const pybind11::kwargs& kwargs);

  // Each reads one keyword, if given, into `out`; a wrong type or value is a problem.
  void text(const std::string& name, std::string& out, bool required = false);
  void text(const std::string& name, std::optional<std::string>& out);
  void choice(const std::string& name, std::string& out, const std::vector<std::string>& valid);
  void count(const std::string& name, int& out);  // a whole number >= 1
  void count(const std::string& name, std::optional<int>& out);
  void count(const std::string& name, std::int64_t& out);
  void flag(const std::string& name, bool& out);
  // A preset name or config.json path (str), or a Hugging Face config as a dict.
  void model(jobs::JobOptions& job);
  // {"knob": [v1, v2, ...], ...} -> "knob=v1,v2,..." per knob, in the dict's order.
  void variations(const std::string& name, std::vector<std::string>& out);

  // Unknown keywords become problems; throws burst::Error when there is any.
  void finish();

 private:
  std::optional<pybind11::object> take(const std::string& name);
  void wrong_type(const std::string& name, const pybind11::handle& value, const std::string& valid);

  std::map<std::string, pybind11::object> given_;
  std::vector<std::string> known_;
  Problems problems_;
};

// nodes, per_node, nvlink_from, gpu_from, nic_speed (the topology itself is the caller's).
void read_topology_source(Keywords& k, jobs::TopologySource& source);
// topology, the keywords above, and model, vocab, seq, batch, mask, dtype, compute_model, comm_model,
// calibration.
void read_job(Keywords& k, jobs::JobOptions& job);
// The job keywords and memory_budget, strategy, engine, max_candidates.
void read_planning(Keywords& k, jobs::PlanOptions& plan);

// A plan: a burst.plan/2 file's path, or the dict burst.plan() returned (its "search" key,
// the ranked table, is dropped). `source` names it in the library's messages: the path, or "<dict>".
[[nodiscard]] plan::Plan read_plan_argument(const pybind11::handle& plan, std::string& source);

}  // namespace burst::python
