#include "simulator/models/model.hpp"

#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/escape.hpp"
#include "common/json_reader.hpp"
#include "common/text.hpp"

namespace burst::sim {
namespace {

ModelSpec make(std::string name, int layers, int hidden, int ffn, int heads, int kv_heads, std::int64_t vocab,
               bool gated, double rope_base = 10000, bool qkv_bias = false) {
  ModelSpec m;
  m.name = std::move(name);
  m.layers = layers;
  m.hidden = hidden;
  m.ffn = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.vocab = vocab;
  m.gated_mlp = gated;
  m.activation = gated ? "silu" : "gelu";
  m.rope_base = rope_base;
  m.qkv_bias = qkv_bias;
  return m;
}

const std::vector<ModelSpec>& presets() {
  // BurstEngine (arXiv 2509.19836) section 5: 7B is 32 layers, hidden 4096, FFN 11008, 32 heads,
  // vocab 32000, non-gated GELU; 14B is 40 layers, hidden 5120, FFN 13824, 40 heads, vocab
  // 120000, SwiGLU (its RoPE base is not stated: Llama's 10000 is assumed). The public models
  // match tests/data/models/architecture_crosscheck.csv, with their config.json's rope_theta and,
  // for Qwen2.5, its Q, K, V biases.
  static const std::vector<ModelSpec> list = {
      make("burst-7b", 32, 4096, 11008, 32, 32, 32000, false),
      make("burst-14b", 40, 5120, 13824, 40, 40, 120000, true),
      make("llama2-7b", 32, 4096, 11008, 32, 32, 32000, true),
      make("llama3-8b", 32, 4096, 14336, 32, 8, 128256, true, 500000),
      make("qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064, true, 1000000, true),
      make("qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064, true, 1000000, true),
      // Tiny models for the CPU runtime: byte-level vocabulary.
      make("tiny-mha", 2, 512, 1376, 4, 4, 256, true),
      make("tiny-gqa", 2, 512, 1376, 8, 2, 256, true),
  };
  return list;
}

bool qwen2_architecture(const Json& doc) {
  if (doc.contains("model_type") && doc["model_type"] == "qwen2") return true;
  if (!doc.contains("architectures") || !doc["architectures"].is_array()) return false;
  for (const Json& a : doc["architectures"]) {
    if (a == "Qwen2ForCausalLM") return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const auto& m : presets()) names.push_back(m.name);
  return names;
}

ModelSpec model_preset(std::string_view name) {
  for (const auto& m : presets()) {
    if (m.name == name) return m;
  }
  throw Error(Problem{"--model", "unknown model '" + std::string(name) + "'", text::join(model_preset_names()),
                      text::did_you_mean(name, model_preset_names())});
}

ModelSpec model_from_hf_config(const std::string& path) { return model_from_hf_config(read_json_file(path), path); }

ModelSpec model_from_hf_config(const Json& doc, const std::string& path) {
  Problems problems;
  JsonReader r(path, problems);
  if (!doc.is_object()) {
    r.problem("", "expected a JSON object (a Hugging Face config.json)");
    problems.throw_if_any();
  }
  // Positive integers that fit an int (layer and head counts, widths).
  auto count = [&](std::string_view key, bool required = true) {
    return r.integer(doc, "", key, required, 1, std::numeric_limits<int>::max());
  };
  const auto hidden = count("hidden_size");
  const auto ffn = count("intermediate_size");
  const auto heads = count("num_attention_heads");
  const auto kv_heads = count("num_key_value_heads", false);
  const auto layers = count("num_hidden_layers");
  const auto vocab = r.integer(doc, "", "vocab_size", true, 1);
  const auto head_dim = count("head_dim", false);
  const auto act = r.string(doc, "", "hidden_act", false);
  const auto rope_theta = r.number(doc, "", "rope_theta", false);
  if (rope_theta && !(*rope_theta > 1)) {
    r.problem("/rope_theta", fmt::format("{} is not a rotary base", *rope_theta), "a number above 1, e.g. 10000");
  }
  const std::string activation = act.value_or("silu");
  if (activation != "silu" && activation != "swish" && activation != "gelu" && activation != "gelu_new" &&
      activation != "gelu_pytorch_tanh") {
    r.problem("/hidden_act", fmt::format("unsupported activation '{}'", activation),
              "silu, swish (SwiGLU), gelu, gelu_new, gelu_pytorch_tanh");
  }
  if (heads && kv_heads && *heads % *kv_heads != 0) {
    r.problem("/num_key_value_heads", fmt::format("{} KV heads do not divide {} attention heads", *kv_heads, *heads),
              "a divisor of num_attention_heads");
  }
  if (hidden && heads && !head_dim && *hidden % *heads != 0) {
    r.problem("/hidden_size", fmt::format("hidden size {} is not a multiple of {} heads", *hidden, *heads), "",
              "give head_dim explicitly");
  }
  // The model's name goes into plans, settings files, scripts and reports: printable text
  // only, whether it is the file's _name_or_path or, without one, the file name's stem.
  const auto name = r.name(doc, "", "_name_or_path", false);
  const bool by_stem = !doc.contains("_name_or_path") || (name && name->empty());
  const std::string stem = std::filesystem::path(path).stem().string();
  if (by_stem && escape::unprintable_at(stem)) {
    problems.add(path,
                 fmt::format("the model is named after the file, '{}': {}", escape::terminal(stem),
                             escape::describe_unprintable(stem)),
                 "printable text: no control characters, line breaks or tabs",
                 "rename the file or give the model a name in \"_name_or_path\"");
  }
  problems.throw_if_any();

  ModelSpec m;
  m.name = by_stem ? stem : *name;
  m.layers = static_cast<int>(*layers);
  m.hidden = static_cast<int>(*hidden);
  m.ffn = static_cast<int>(*ffn);
  m.heads = static_cast<int>(*heads);
  m.kv_heads = static_cast<int>(kv_heads.value_or(*heads));
  m.head_dim = static_cast<int>(head_dim.value_or(*hidden / *heads));
  m.vocab = *vocab;
  // Llama-family configs use a gated MLP (SwiGLU) with silu; GPT-style gelu MLPs are not gated.
  m.gated_mlp = activation == "silu" || activation == "swish";
  m.activation = m.gated_mlp ? "silu" : "gelu";
  m.rope_base = rope_theta.value_or(10000.0);  // transformers' default for Llama-family configs
  // Q, K, V biases: "attention_bias" where the config has it (Llama's, default false); Qwen2's
  // architecture has them without saying so.
  m.qkv_bias = doc.contains("attention_bias") ? doc["attention_bias"] == true : qwen2_architecture(doc);
  return m;
}

ModelSpec load_model(const std::string& preset_or_file) {
  const bool is_file = preset_or_file.size() > 5 && preset_or_file.ends_with(".json");
  return is_file ? model_from_hf_config(preset_or_file) : model_preset(preset_or_file);
}

}  // namespace burst::sim
