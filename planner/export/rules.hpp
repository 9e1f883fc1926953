// Each framework's own combination rules as data, with where upstream enforces them, checked
// on the settings file an export wrote.
//
// The writers decide what to write from the plan; these rules are the framework's side of the
// contract, read from its source: which flags need which, which degree must divide which count.
// A rule names the upstream file and lines that enforce it (an assert or raise) in the snapshot
// of the repository read for it (the commit given; newer than the versions the writers follow,
// so a line may have moved at the pinned tag: the quote says what to look for). check_rules()
// parses the written file (Megatron's bash array, DeepSpeed's JSON, TorchTitan's TOML) and
// returns every rule it breaks, so an export that would fail at the framework's start is caught
// here: burst export refuses it (unless --force) and the golden exports are tested against it.
// NeMo's files are Python (NeMo 2) or YAML over Megatron Core, whose rules are Megatron's; they
// have no table of their own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace burst::exporter {

// What a rule may need beyond the file: the job's ranks, heads and global batch.
struct RuleContext {
  int world = 1;
  int heads = 1;
  int kv_heads = 1;
  std::int64_t global_batch = 1;
};

struct Rule {
  std::string framework;  // as --to names it
  std::string id;         // "megatron-offload-precision-aware"
  std::string statement;  // what must hold, in the framework's terms
  std::string source;     // "megatron/training/arguments.py:1884-1888 (NVIDIA/Megatron-LM@d98e8a64)"
  std::string quote;      // the upstream message or condition, to find it at another version
};

// Every rule of every framework, in a stable order.
[[nodiscard]] const std::vector<Rule>& framework_rules();

// The rules of `framework` the settings file `text` breaks, each as "statement (source)";
// empty when it keeps them all, or when the framework has no table. Throws burst::Error when
// the text is not in the framework's format.
[[nodiscard]] std::vector<std::string> check_rules(std::string_view framework, std::string_view text,
                                                   const RuleContext& context);

}  // namespace burst::exporter
