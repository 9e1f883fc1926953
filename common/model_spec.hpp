// Transformer model dimensions: the shared description of a decoder-only model that the
// simulator costs, the plan records and the runtime builds. Presets and Hugging Face import
// live in simulator/models.
#pragma once

#include <cstdint>
#include <string>

namespace burst {

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int ffn = 0;  // intermediate size of the MLP
  int heads = 0;
  int kv_heads = 0;  // < heads: grouped-query attention
  int head_dim = 0;
  std::int64_t vocab = 0;
  bool gated_mlp = true;   // SwiGLU (three matrices) vs GELU (two)
  std::string activation;  // "silu" or "gelu"
  // Rotary position embedding's base (theta: pair i of a head turns by position / base^(2i/d)):
  // 10000 for Llama 2, 500000 for Llama 3, 1000000 for Qwen2.5.
  double rope_base = 10000;
  bool qkv_bias = false;  // biases on the Q, K and V projections (Qwen2); none elsewhere

  // Parameters of one decoder layer and of the whole model (embedding and LM head untied).
  [[nodiscard]] double layer_params() const;
  [[nodiscard]] double total_params() const;
  friend bool operator==(const ModelSpec&, const ModelSpec&) = default;
};

}  // namespace burst
