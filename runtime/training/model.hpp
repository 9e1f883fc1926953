// A Llama-style decoder as the CPU training runtime holds it: every parameter in one flat fp32
// vector, so all-reducing the gradients, the optimizer, saving and comparing are each one loop
// over one array, and the tensors are named slices of it.
//
//   x_0 = embedding[tokens]
//   layer l:  a = RMSNorm(x; g_attn)          q = a Wq, k = a Wk, v = a Wv, RoPE(q, k) at each
//             o = attention(q, k, v)          token's global position
//             h = x + o Wo
//             b = RMSNorm(h; g_mlp)           m = silu(b Wgate) * (b Wup)
//             x' = h + m Wdown
//   z = RMSNorm(x_L; g_final)                 loss = cross_entropy(z W_lm, next tokens)
//
// Matrices are [in, out] row-major (y = x W). Embedding and LM head are untied. Initialisation
// is deterministic from a seed: gains 1, matrices N(0, 0.02), the two projections that write the
// residual stream (Wo, Wdown) scaled by 1 / sqrt(2 L) (GPT-2), so the same seed gives the same
// model on every rank and every run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/model_spec.hpp"
#include "runtime/training/adamw.hpp"

namespace burst::rt {

// floats [offset, offset + count) of the flat parameter vector.
struct Slice {
  std::size_t offset = 0;
  std::size_t count = 0;
  [[nodiscard]] std::span<float> of(std::span<float> all) const { return all.subspan(offset, count); }
  [[nodiscard]] std::span<const float> of(std::span<const float> all) const { return all.subspan(offset, count); }
  // The same floats counted from `base` (a unit's first float, below) rather than from 0.
  [[nodiscard]] Slice relative_to(std::size_t base) const { return {offset - base, count}; }
};

struct LayerSlices {
  Slice attn_norm, wq, wk, wv, wo, mlp_norm, w_gate, w_up, w_down;
  [[nodiscard]] LayerSlices relative_to(std::size_t base) const;
};

class ModelLayout {
 public:
  // Throws burst::Error naming the plan's model field when the runtime cannot train it: not a
  // SwiGLU model, heads not a multiple of KV heads, an odd head dimension (RoPE), a vocabulary
  // under 256 (byte-level data), or too many parameters for a CPU rank.
  explicit ModelLayout(const ModelSpec& spec);

  [[nodiscard]] const ModelSpec& spec() const { return spec_; }
  [[nodiscard]] std::int64_t q_dim() const { return std::int64_t{spec_.heads} * spec_.head_dim; }
  [[nodiscard]] std::int64_t kv_dim() const { return std::int64_t{spec_.kv_heads} * spec_.head_dim; }
  [[nodiscard]] std::size_t size() const { return size_; }

  Slice embedding;
  std::vector<LayerSlices> layers;
  Slice final_norm;
  Slice lm_head;

  // Every tensor with its name ("embedding", "layers.0.wq", ..., "lm_head"), in storage order.
  [[nodiscard]] std::vector<std::pair<std::string, Slice>> named() const;
  // The optimizer's groups: gains are not decayed, matrices (embedding included) are.
  [[nodiscard]] std::vector<ParamGroup> groups() const;

  // The units a step uses one at a time, tiling the vector in storage order: the embedding,
  // each layer (its nine tensors), the head (final norm and LM head). ZeRO shards, gathers and
  // reduces unit by unit (shard_map.hpp, weight_source.hpp).
  [[nodiscard]] std::vector<Slice> units() const;
  [[nodiscard]] static constexpr std::size_t embedding_unit() { return 0; }
  [[nodiscard]] static constexpr std::size_t layer_unit(std::size_t layer) { return 1 + layer; }
  [[nodiscard]] std::size_t head_unit() const { return 1 + layers.size(); }

 private:
  ModelSpec spec_;
  std::size_t size_ = 0;
};

[[nodiscard]] std::vector<float> initial_params(const ModelLayout& layout, std::uint64_t seed);

// RMSNorm's epsilon, as Llama uses it (RoPE's base is the model's: ModelSpec::rope_base).
inline constexpr float kNormEps = 1e-5f;

// The smallest vocabulary the byte-level data needs.
inline constexpr std::int64_t kByteVocabulary = 256;

}  // namespace burst::rt
