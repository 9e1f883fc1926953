// The frameworks' rules and their check (rules.hpp). Sources were read in these snapshots:
// NVIDIA/Megatron-LM@d98e8a64, deepspeedai/DeepSpeed@edaa7221, pytorch/torchtitan@b5bcd76c.
#include "planner/export/rules.hpp"

#include <functional>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/json_reader.hpp"

namespace burst::exporter {
namespace {

// A settings file as key -> value: Megatron's flags ("--context-parallel-size" -> "8", a switch
// -> ""), DeepSpeed's keys joined by dots ("zero_optimization.stage" -> "3"), TorchTitan's
// "section.key" (strings unquoted).
using Settings = std::map<std::string, std::string, std::less<>>;

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

[[noreturn]] void not_format(std::string_view framework, std::string_view why) {
  throw Error(
      Problem{fmt::format("--to {}", framework), fmt::format("the settings are not in its format: {}", why), "", ""});
}

Settings megatron_settings(std::string_view text) {
  const auto open = text.find("MEGATRON_ARGS=(\n");
  if (open == std::string_view::npos) not_format("megatron", "no MEGATRON_ARGS=( array");
  Settings s;
  std::istringstream lines{std::string(text.substr(open + 16))};
  for (std::string line; std::getline(lines, line);) {
    const std::string t = trim(line);
    if (t == ")") return s;
    if (!t.starts_with("--")) not_format("megatron", fmt::format("'{}' is not a flag", t));
    const auto space = t.find(' ');
    s[t.substr(0, space)] = space == std::string::npos ? "" : trim(t.substr(space + 1));
  }
  not_format("megatron", "the array does not end");
}

void flatten(const Json& j, const std::string& prefix, Settings& s) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items())
      flatten(value, prefix.empty() ? key : fmt::format("{}.{}", prefix, key), s);
  } else {
    s[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

Settings deepspeed_settings(std::string_view text) {
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) not_format("deepspeed", "not a JSON object");
  Settings s;
  flatten(j, "", s);
  return s;
}

Settings torchtitan_settings(std::string_view text) {
  Settings s;
  std::string section;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    const std::string t = trim(line);
    if (t.empty() || t.starts_with('#')) continue;
    if (t.starts_with('[')) {
      section = t.substr(1, t.find(']') - 1);
      continue;
    }
    const auto eq = t.find('=');
    if (eq == std::string::npos) not_format("torchtitan", fmt::format("'{}' is not key = value", t));
    std::string value = trim(t.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    s[section + "." + trim(t.substr(0, eq))] = value;
  }
  return s;
}

bool has(const Settings& s, std::string_view key) { return s.contains(key); }
std::int64_t number(const Settings& s, std::string_view key, std::int64_t missing) {
  const auto it = s.find(key);
  if (it == s.end()) return missing;
  try {
    return std::stoll(it->second);
  } catch (const std::exception&) {
    return missing;
  }
}
std::string value(const Settings& s, std::string_view key) {
  const auto it = s.find(key);
  return it == s.end() ? "" : it->second;
}

struct CheckedRule {
  Rule rule;
  std::function<bool(const Settings&, const RuleContext&)> holds;
};

std::string megatron_at(const char* path, const char* lines) {
  return fmt::format("{}:{} (NVIDIA/Megatron-LM@d98e8a64)", path, lines);
}

const std::vector<CheckedRule>& table() {
  static const std::vector<CheckedRule> rules = {
      {{"megatron", "megatron-offload-needs-precision-aware",
        "--optimizer-cpu-offload needs --use-precision-aware-optimizer",
        megatron_at("megatron/training/arguments.py", "1884-1888"),
        "must be used in conjunction with `--use-precision-aware-optimizer`"},
       [](const Settings& s, const RuleContext&) {
         return !has(s, "--optimizer-cpu-offload") || has(s, "--use-precision-aware-optimizer");
       }},
      {{"megatron", "megatron-precision-aware-needs-distributed",
        "--use-precision-aware-optimizer needs --use-distributed-optimizer",
        megatron_at("megatron/core/optimizer/__init__.py", "1057-1059"),
        "--use-precision-aware-optimizer only supported with distributed optimizer"},
       [](const Settings& s, const RuleContext&) {
         return !has(s, "--use-precision-aware-optimizer") || has(s, "--use-distributed-optimizer");
       }},
      {{"megatron", "megatron-fsdp-needs-fsdp-dtensor", "--use-megatron-fsdp needs --ckpt-format fsdp_dtensor",
        megatron_at("megatron/training/arguments.py", "1169-1170"),
        "Megatron-FSDP requires the `fsdp_dtensor` checkpointing format."},
       [](const Settings& s, const RuleContext&) {
         return !has(s, "--use-megatron-fsdp") || value(s, "--ckpt-format") == "fsdp_dtensor";
       }},
      {{"megatron", "megatron-sequence-parallel-needs-tp", "--sequence-parallel needs tensor parallelism above 1",
        megatron_at("megatron/core/model_parallel_config.py", "502-504"),
        "Cannot use sequence parallelism without tensor parallelism"},
       [](const Settings& s, const RuleContext&) {
         return !has(s, "--sequence-parallel") || number(s, "--tensor-model-parallel-size", 1) > 1;
       }},
      {{"megatron", "megatron-heads-divide-by-tp",
        "--num-attention-heads is a multiple of --tensor-model-parallel-size",
        megatron_at("megatron/core/transformer/transformer_config.py", "1446-1449"),
        "num_attention_heads % tensor_model_parallel_size != 0"},
       [](const Settings& s, const RuleContext&) {
         const auto tp = number(s, "--tensor-model-parallel-size", 1);
         return tp >= 1 && number(s, "--num-attention-heads", 0) % tp == 0;
       }},
      {{"megatron", "megatron-query-groups-and-tp",
        "--num-query-groups is a multiple or a divisor of --tensor-model-parallel-size",
        megatron_at("megatron/core/transformer/transformer_config.py", "1461-1467"),
        "must be a multiple or divisor of tensor_model_parallel_size"},
       [](const Settings& s, const RuleContext&) {
         if (!has(s, "--num-query-groups")) return true;
         const auto groups = number(s, "--num-query-groups", 0), tp = number(s, "--tensor-model-parallel-size", 1);
         return groups >= 1 && tp >= 1 && (groups % tp == 0 || tp % groups == 0);
       }},
      {{"megatron", "megatron-hierarchical-cp",
        "--cp-comm-type a2a+p2p has --hierarchical-context-parallel-sizes whose product is --context-parallel-size",
        megatron_at("megatron/training/arguments.py", "580-585"),
        "assert args.context_parallel_size == prod(args.hierarchical_context_parallel_sizes)"},
       [](const Settings& s, const RuleContext&) {
         if (value(s, "--cp-comm-type") != "a2a+p2p") return !has(s, "--hierarchical-context-parallel-sizes");
         std::istringstream sizes(value(s, "--hierarchical-context-parallel-sizes"));
         std::int64_t product = 1, n = 0;
         for (std::int64_t size = 0; sizes >> size; ++n) product *= size;
         return n >= 2 && product == number(s, "--context-parallel-size", 0);
       }},
      {{"megatron", "megatron-global-batch",
        "--global-batch-size is a multiple of --micro-batch-size x data-parallel size",
        megatron_at("megatron/core/num_microbatches_calculator.py", "381-386"),
        "global batch size ({}) is not divisible by micro batch size ({})"},
       [](const Settings& s, const RuleContext& c) {
         const auto model_parallel = number(s, "--tensor-model-parallel-size", 1) *
                                     number(s, "--pipeline-model-parallel-size", 1) *
                                     number(s, "--context-parallel-size", 1);
         if (model_parallel < 1 || c.world % model_parallel != 0) return false;
         const auto per_step = number(s, "--micro-batch-size", 1) * (c.world / model_parallel);
         return per_step >= 1 && number(s, "--global-batch-size", 0) % per_step == 0;
       }},
      {{"deepspeed", "deepspeed-ulysses-heads", "the attention heads are a multiple of sequence_parallel_size",
        "deepspeed/sequence/layer.py:40,56 (deepspeedai/DeepSpeed@edaa7221)",
        "Number of heads ({num_total_head}) must be divisible by the sequence parallel size"},
       [](const Settings& s, const RuleContext& c) {
         const auto sp = number(s, "sequence_parallel_size", 1);
         return sp >= 1 && c.heads % sp == 0;
       }},
      {{"deepspeed", "deepspeed-offload-needs-cpu-adam",
        "an optimizer offloaded to the CPU is DeepSpeed's own (an \"optimizer\" section of Adam or AdamW, run as "
        "DeepSpeedCPUAdam): a client optimizer is refused",
        "deepspeed/runtime/engine.py:2040-2044 (deepspeedai/DeepSpeed@edaa7221)",
        "not isinstance(basic_optimizer, deepspeed.ops.adam.DeepSpeedCPUAdam) ... raise ZeRORuntimeException"},
       [](const Settings& s, const RuleContext&) {
         if (value(s, "zero_optimization.offload_optimizer.device") != "cpu") return true;
         const std::string type = value(s, "optimizer.type");
         return type == "Adam" || type == "AdamW";
       }},
      {{"deepspeed", "deepspeed-batch",
        "train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel size is the global batch",
        "deepspeed/runtime/config.py:937-940 (deepspeedai/DeepSpeed@edaa7221)",
        "assert train_batch == micro_batch * grad_acc * self.world_size"},
       [](const Settings& s, const RuleContext& c) {
         const auto sp = number(s, "sequence_parallel_size", 1);
         if (sp < 1 || c.world % sp != 0) return false;
         return number(s, "train_micro_batch_size_per_gpu", 1) * number(s, "gradient_accumulation_steps", 1) *
                    (c.world / sp) ==
                c.global_batch;
       }},
      {{"torchtitan", "torchtitan-degrees-make-world",
        "data_parallel_replicate x data_parallel_shard x context x tensor x pipeline degrees = the world",
        "torchtitan/distributed/parallel_dims.py:182-185 (pytorch/torchtitan@b5bcd76c)",
        "assert dp_replicate * dp_shard * cp * tp * pp == self.world_size"},
       [](const Settings& s, const RuleContext& c) {
         return number(s, "parallelism.data_parallel_replicate_degree", 1) *
                    number(s, "parallelism.data_parallel_shard_degree", 1) *
                    number(s, "parallelism.context_parallel_degree", 1) *
                    number(s, "parallelism.tensor_parallel_degree", 1) *
                    number(s, "parallelism.pipeline_parallel_degree", 1) ==
                c.world;
       }},
      {{"torchtitan", "torchtitan-cp-seq-len", "with context parallelism, seq_len is a multiple of 2 x its degree",
        "torchtitan/trainer.py:299-308 (pytorch/torchtitan@b5bcd76c)", "must be divisible by {seq_len_divisor}"},
       [](const Settings& s, const RuleContext&) {
         const auto cp = number(s, "parallelism.context_parallel_degree", 1);
         return cp <= 1 || number(s, "training.seq_len", 0) % (2 * cp) == 0;
       }},
  };
  return rules;
}

}  // namespace

const std::vector<Rule>& framework_rules() {
  static const std::vector<Rule> rules = [] {
    std::vector<Rule> out;
    for (const CheckedRule& r : table()) out.push_back(r.rule);
    return out;
  }();
  return rules;
}

std::vector<std::string> check_rules(std::string_view framework, std::string_view text, const RuleContext& context) {
  Settings settings;
  if (framework == "megatron") {
    settings = megatron_settings(text);
  } else if (framework == "deepspeed") {
    settings = deepspeed_settings(text);
  } else if (framework == "torchtitan") {
    settings = torchtitan_settings(text);
  } else {
    return {};
  }
  std::vector<std::string> broken;
  for (const CheckedRule& r : table()) {
    if (r.rule.framework == framework && !r.holds(settings, context)) {
      broken.push_back(fmt::format("{} ({})", r.rule.statement, r.rule.source));
    }
  }
  return broken;
}

}  // namespace burst::exporter
