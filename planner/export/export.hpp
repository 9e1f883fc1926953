// burst export: a plan as a training framework's own settings (Megatron-LM arguments, NeMo
// YAML, DeepSpeed ds_config JSON, TorchTitan TOML).
//
// The framework runs the nearest equivalent of the plan (equivalent.hpp). Where that differs
// from the plan, the notes say, knob by knob, what the plan asks, why the framework cannot do
// it and what is written instead, and then what the equivalent costs: the plan's job on the
// plan's cluster simulated under the equivalent beside the plan's own strategy simulated the
// same way (equivalent_cost.hpp). The notes go into the file as comments (or "_burst_notes"
// in JSON) and to the caller, who prints them for people.
//
// An equivalent the framework cannot run on the plan's cluster (one the simulator says does not
// apply, such as a Ulysses degree that does not divide the heads, or one predicted not to fit
// the plan's memory budget) is refused: no text, the notes, and `refused` saying why, which
// throw_if_refused turns into a burst::Error once the caller has shown the notes. `force`
// writes it anyway, the warning as the file's first line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/plan.hpp"

namespace burst::exporter {

struct Exported {
  std::string text;                // the settings file ("" when refused)
  std::vector<std::string> notes;  // one line each: what differs from the plan, what it costs
  std::string refused;             // why the framework cannot run it ("" when written)
  std::string field;               // what chose the framework ("--to megatron"), for the error
};

// Throws burst::Error when the export was refused (its reason, and how to write it anyway).
void throw_if_refused(const Exported& exported);

// `framework`: a name of framework_names() (burst::Error otherwise, naming `field`); `source`:
// the plan file, for the header and errors.
// `nemo_version`: NeMo's output, 2 (a Python recipe) or 1 (NeMo 1.0's YAML); burst::Error
// naming --nemo-version for any other.
[[nodiscard]] Exported export_plan(const plan::Plan& plan, const std::string& source, std::string_view framework,
                                   std::string_view field = "--to", bool force = false, int nemo_version = 2);

}  // namespace burst::exporter
