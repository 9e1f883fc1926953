// burst export plan.json --to megatron|nemo|deepspeed|torchtitan [-o FILE] [--nemo-version 1|2]: the plan as the
// framework's own settings on stdout (or in FILE); what the framework cannot do, and what its
// nearest equivalent is predicted to cost, on stderr (and in the file, as comments).
#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "common/escape.hpp"
#include "plan/plan.hpp"
#include "planner/export/export.hpp"
#include "planner/export/framework.hpp"
#include "tools/burst/commands.hpp"

namespace burst::cli {
namespace {

struct ExportOptions {
  std::string plan;
  std::string framework;
  std::string output;
  bool force = false;
  int nemo_version = 2;
  bool nemo_version_given = false;
};

void run(const ExportOptions& o) {
  if (o.nemo_version_given && o.framework != "nemo") {
    throw Error(Problem{"--nemo-version", fmt::format("given with --to {}", o.framework), "--to nemo",
                        "only NeMo's output has versions"});
  }
  const exporter::Exported exported =
      exporter::export_plan(plan::read_plan(o.plan), o.plan, o.framework, "--to", o.force, o.nemo_version);
  for (const std::string& note : exported.notes) fmt::print(stderr, "note: {}\n", escape::terminal(note));
  exporter::throw_if_refused(exported);
  if (o.output.empty()) {
    fmt::print("{}", exported.text);
    return;
  }
  write_file_atomically(o.output, exported.text, "the exported settings");
  fmt::print(stderr, "{} settings written to {}\n", exporter::find_framework(o.framework, "--to").title,
             escape::terminal(o.output));
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  std::string frameworks;
  for (const exporter::Framework& f : exporter::frameworks()) {
    frameworks += fmt::format("{}{} ({} {}: {})", frameworks.empty() ? "" : "; ", f.name, f.title, f.version, f.format);
  }
  CLI::App* cmd = app.add_subcommand(
      "export", "Write a plan as a training framework's settings; say what it cannot do and what its equivalent costs");
  cmd->add_option("plan", options->plan, "A plan file (burst.plan/2)")->required();
  cmd->add_option("--to", options->framework, "The framework: " + frameworks)->required();
  cmd->add_option("-o,--output", options->output, "Write the settings to this file instead of stdout");
  CLI::Option* nemo = cmd->add_option("--nemo-version", options->nemo_version,
                                      "NeMo's output: 2, a NeMo 2 Python recipe (MegatronStrategy, LlamaConfig, "
                                      "llm.pretrain; the default), or 1, YAML overrides of NeMo 1.0's "
                                      "megatron_gpt_config.yaml")
                          ->check(CLI::IsMember({1, 2}))
                          ->capture_default_str();
  cmd->add_flag("--force", options->force,
                "Write the settings even when the framework's equivalent of the plan cannot run on its cluster (it "
                "does not apply, or does not fit the memory budget); the warning is the file's first line");
  cmd->callback([options, nemo] {
    options->nemo_version_given = nemo->count() > 0;
    run(*options);
  });
}

}  // namespace burst::cli
