// The flat parameter layout and its initialisation (see model.hpp).
#include "runtime/training/model.hpp"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {
namespace {

// 16 bytes per parameter (weights, gradients, two AdamW moments): a CPU rank's share is bounded.
constexpr double kMaxParams = 500e6;

void check_trainable(const ModelSpec& m) {
  Problems problems;
  const auto field = [](const char* name) { return fmt::format("plan:/job/model/{}", name); };
  if (!m.gated_mlp || m.activation != "silu") {
    problems.add(field("gated_mlp"),
                 fmt::format("{} has a {} {} MLP; the training runtime runs SwiGLU (gated silu) models", m.name,
                             m.gated_mlp ? "gated" : "non-gated", m.activation),
                 "gated_mlp true, activation silu", "plan a Llama-style model such as tiny-mha or tiny-gqa");
  }
  if (m.qkv_bias) {
    problems.add(field("qkv_bias"),
                 fmt::format("{} has biases on Q, K and V; the training runtime's projections have none", m.name),
                 "qkv_bias false", "plan a Llama-style model such as tiny-mha or tiny-gqa");
  }
  if (m.layers < 1 || m.hidden < 1 || m.ffn < 1 || m.heads < 1 || m.kv_heads < 1 || m.head_dim < 1) {
    problems.add(field("layers"), "layers, hidden, ffn, heads, kv_heads and head_dim must all be positive");
  } else {
    if (m.heads % m.kv_heads != 0) {
      problems.add(field("kv_heads"), fmt::format("{} heads cannot share {} KV heads evenly", m.heads, m.kv_heads),
                   "a divisor of heads");
    }
    if (m.head_dim % 2 != 0) {
      problems.add(field("head_dim"),
                   fmt::format("{} is odd; rotary embeddings rotate pairs of dimensions", m.head_dim),
                   "an even number");
    }
  }
  if (m.vocab < kByteVocabulary) {
    problems.add(field("vocab"),
                 fmt::format("{} tokens; the byte-level training data uses all 256 byte values", m.vocab),
                 "at least 256", "plan with --vocab 256 or more");
  }
  if (problems.empty() && m.total_params() > kMaxParams) {
    problems.add(
        field("name"),
        fmt::format("{} has {:.3g} parameters: {:.1f} GiB of fp32 weights, gradients and AdamW state per CPU rank",
                    m.name, m.total_params(), m.total_params() * 16 / (1024.0 * 1024 * 1024)),
        fmt::format("at most {:.0f}M parameters", kMaxParams / 1e6),
        "the CPU runtime trains small models (tiny-mha, tiny-gqa); plan big ones for GPUs");
  }
  problems.throw_if_any();
}

}  // namespace

ModelLayout::ModelLayout(const ModelSpec& spec) : spec_(spec) {
  check_trainable(spec);
  const auto take = [this](std::int64_t count) {
    const Slice s{size_, static_cast<std::size_t>(count)};
    size_ += s.count;
    return s;
  };
  const std::int64_t d = spec.hidden, f = spec.ffn;
  embedding = take(spec.vocab * d);
  for (int l = 0; l < spec.layers; ++l) {
    LayerSlices s;
    s.attn_norm = take(d);
    s.wq = take(d * q_dim());
    s.wk = take(d * kv_dim());
    s.wv = take(d * kv_dim());
    s.wo = take(q_dim() * d);
    s.mlp_norm = take(d);
    s.w_gate = take(d * f);
    s.w_up = take(d * f);
    s.w_down = take(f * d);
    layers.push_back(s);
  }
  final_norm = take(d);
  lm_head = take(d * spec.vocab);
}

std::vector<std::pair<std::string, Slice>> ModelLayout::named() const {
  std::vector<std::pair<std::string, Slice>> out{{"embedding", embedding}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const LayerSlices& s = layers[l];
    const auto name = [l](const char* t) { return fmt::format("layers.{}.{}", l, t); };
    out.insert(out.end(), {{name("attn_norm"), s.attn_norm},
                           {name("wq"), s.wq},
                           {name("wk"), s.wk},
                           {name("wv"), s.wv},
                           {name("wo"), s.wo},
                           {name("mlp_norm"), s.mlp_norm},
                           {name("w_gate"), s.w_gate},
                           {name("w_up"), s.w_up},
                           {name("w_down"), s.w_down}});
  }
  out.emplace_back("final_norm", final_norm);
  out.emplace_back("lm_head", lm_head);
  return out;
}

LayerSlices LayerSlices::relative_to(std::size_t base) const {
  return {attn_norm.relative_to(base), wq.relative_to(base),   wk.relative_to(base),
          wv.relative_to(base),        wo.relative_to(base),   mlp_norm.relative_to(base),
          w_gate.relative_to(base),    w_up.relative_to(base), w_down.relative_to(base)};
}

std::vector<Slice> ModelLayout::units() const {
  std::vector<Slice> out{embedding};
  for (const LayerSlices& l : layers)
    out.push_back({l.attn_norm.offset, l.w_down.offset + l.w_down.count - l.attn_norm.offset});
  out.push_back({final_norm.offset, lm_head.offset + lm_head.count - final_norm.offset});
  return out;
}

std::vector<ParamGroup> ModelLayout::groups() const {
  std::vector<ParamGroup> out;
  for (const auto& [name, slice] : named()) {
    const bool gain = name.ends_with("norm");
    out.push_back({slice.offset, slice.count, !gain});
  }
  return out;
}

std::vector<float> initial_params(const ModelLayout& layout, std::uint64_t seed) {
  std::vector<float> params(layout.size());
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  const float residual_scale = 1.0f / std::sqrt(2.0f * static_cast<float>(layout.layers.size()));
  for (const auto& [name, slice] : layout.named()) {
    const auto values = slice.of(std::span<float>(params));
    if (name.ends_with("norm")) {
      std::fill(values.begin(), values.end(), 1.0f);
      continue;
    }
    const float scale = name.ends_with(".wo") || name.ends_with(".w_down") ? residual_scale : 1.0f;
    for (float& x : values) x = scale * normal(rng);
  }
  return params;
}

}  // namespace burst::rt
