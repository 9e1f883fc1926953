// One writer per framework: the nearest equivalent of a plan (equivalent.hpp) in the
// framework's own settings format. Writers format and never decide: what a framework can do
// lives in the frameworks table (frameworks.cpp). Every writer starts with a header saying
// what was exported, from which plan, following which version, and the notes (what the
// framework cannot do, what its equivalent costs) as comments where the format has them;
// ds_config JSON, which has none, carries them under "_burst_notes" (DeepSpeed reads its
// top-level keys one by one and ignores the ones it does not know). Text from outside (the plan
// file's path, names, notes) reaches a file only through the format's escaping function
// (common/escape.hpp): comment lines through escape::comment, string values through
// escape::yaml_scalar or escape::toml_string, JSON through nlohmann.
#pragma once

#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "planner/export/framework.hpp"

namespace burst::exporter {

struct ExportInput {
  const plan::Plan& plan;
  std::string source;  // the plan file as the user named it
  const Framework& framework;
  const plan::Strategy& strategy;  // the equivalent the framework runs
  bool fp8_linears = false;        // and its linear layers' GEMMs in FP8
  std::vector<std::string> notes;  // one line each, no trailing newline
  int nodes = 1;                   // the plan's nodes and ranks on each
  int ranks_per_node = 1;
  std::string warning;   // an equivalent that cannot run, written with --force: the file's first line
  int nemo_version = 2;  // NeMo's: 2, a Python recipe; 1, NeMo 1.0's YAML
};

[[nodiscard]] std::string write_megatron(const ExportInput& input);
// NeMo: the recipe (NeMo 2, writer_nemo_recipe.cpp) or, at nemo_version 1, the YAML.
[[nodiscard]] std::string write_nemo(const ExportInput& input);
[[nodiscard]] std::string write_nemo_recipe(const ExportInput& input);
[[nodiscard]] std::string write_deepspeed(const ExportInput& input);
[[nodiscard]] std::string write_torchtitan(const ExportInput& input);

// Shared by the writers: "burst 0.1.0 from plan.json: burst-14b, 1M tokens (causal) on
// a800-4hca x4, 32 ranks", and the header lines every commented format starts with.
[[nodiscard]] std::string export_summary(const ExportInput& input);
[[nodiscard]] std::vector<std::string> header_lines(const ExportInput& input, const std::string& usage);
// The same lines behind `prefix` ("# "), one a line, each escaped by escape::comment (a line
// break or a control character in a name cannot end the comment).
[[nodiscard]] std::string commented(const std::vector<std::string>& lines, const std::string& prefix);

// The model's RoPE base as the frameworks read it: a whole number as digits ("1000000", which
// Megatron's int-typed --rotary-base and YAML both take; "1e+06" is a string to YAML), else
// the shortest exact decimal.
[[nodiscard]] std::string rope_base_text(double base);

}  // namespace burst::exporter
