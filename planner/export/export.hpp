// burst export: a plan as a training framework's own settings (Megatron-LM arguments, NeMo
// YAML, DeepSpeed ds_config JSON, TorchTitan TOML).
//
// The framework runs the nearest equivalent of the plan (equivalent.hpp). Where that differs
// from the plan, the notes say, knob by knob, what the plan asks, why the framework cannot do
// it and what is written instead, and then what the equivalent costs: the plan's job on the
// plan's cluster simulated under the equivalent beside the plan's own strategy simulated the
// same way (equivalent_cost.hpp). The notes go into the file as comments (or "_burst_notes"
// in JSON) and to the caller, who prints them for people.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace burst::exporter {

struct Exported {
  std::string text;                // the settings file
  std::vector<std::string> notes;  // one line each: what differs from the plan, what it costs
};

// `framework`: a name of framework_names() (burst::Error otherwise, naming `field`); `source`:
// the plan file, for the header and errors.
[[nodiscard]] Exported export_plan(const plan::Plan& plan, const std::string& source, std::string_view framework,
                                   std::string_view field = "--to");

}  // namespace burst::exporter
