#include "simulator/models/model.hpp"

#include "common/error.hpp"
#include "common/text.hpp"

namespace burst::sim {
namespace {

ModelSpec make(std::string name, int layers, int hidden, int ffn, int heads, int kv_heads, std::int64_t vocab,
               bool gated) {
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
  return m;
}

const std::vector<ModelSpec>& presets() {
  // BurstEngine (arXiv 2509.19836) section 5: 7B is 32 layers, hidden 4096, FFN 11008, 32 heads,
  // vocab 32000, non-gated GELU; 14B is 40 layers, hidden 5120, FFN 13824, 40 heads, vocab
  // 120000, SwiGLU. The public models match tests/data/models/architecture_crosscheck.csv.
  static const std::vector<ModelSpec> list = {
      make("burst-7b", 32, 4096, 11008, 32, 32, 32000, false),
      make("burst-14b", 40, 5120, 13824, 40, 40, 120000, true),
      make("llama2-7b", 32, 4096, 11008, 32, 32, 32000, true),
      make("llama3-8b", 32, 4096, 14336, 32, 8, 128256, true),
      make("qwen2.5-7b", 28, 3584, 18944, 28, 4, 152064, true),
      make("qwen2.5-14b", 48, 5120, 13824, 40, 8, 152064, true),
      // Tiny models for the CPU runtime: byte-level vocabulary.
      make("tiny-mha", 2, 512, 1376, 4, 4, 256, true),
      make("tiny-gqa", 2, 512, 1376, 8, 2, 256, true),
  };
  return list;
}

}  // namespace

double ModelSpec::layer_params() const {
  const double h = hidden;
  const double attention = h * h /* Q */ + 2.0 * h * kv_heads * head_dim /* K,V */ + h * h /* O */;
  const double mlp = (gated_mlp ? 3.0 : 2.0) * h * ffn;
  const double norms = 2.0 * h;
  return attention + mlp + norms;
}

double ModelSpec::total_params() const {
  return layers * layer_params() + 2.0 * static_cast<double>(vocab) * hidden + hidden;
}

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

}  // namespace burst::sim
