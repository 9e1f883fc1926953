// One tensor-parallel rank's part of the decoder and its map to the whole (see tensor_parallel.hpp).
#include "runtime/training/tensor_parallel.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.hpp"

namespace burst::rt {

ModelSpec tensor_parallel_spec(const ModelSpec& whole, int tp) {
  if (tp < 1 || whole.heads % tp != 0 || whole.kv_heads % tp != 0 || whole.ffn % tp != 0) {
    throw Error(Problem{"plan:/strategy/tp",
                        fmt::format("tensor-parallel degree {} does not divide the model's {} heads, {} KV heads "
                                    "and MLP of {}",
                                    tp, whole.heads, whole.kv_heads, whole.ffn),
                        "a degree dividing heads, kv_heads and ffn",
                        "each tensor-parallel rank holds heads / tp query heads, kv_heads / tp KV heads and ffn / tp "
                        "MLP features"});
  }
  ModelSpec part = whole;
  part.heads /= tp;
  part.kv_heads /= tp;
  part.ffn /= tp;
  return part;
}

TensorParallelShard::TensorParallelShard(const ModelLayout& whole, int tp, int rank)
    : whole_(whole), local_(tensor_parallel_spec(whole.spec(), tp)), tp_(tp) {
  if (rank < 0 || rank >= tp) {
    throw Error(
        Problem{"tensor parallelism", fmt::format("rank {} of {}", rank, tp), fmt::format("a rank 0..{}", tp - 1), ""});
  }
  const auto t = static_cast<std::size_t>(rank);
  const auto replicated = [&](const Slice& w, const Slice& l) {
    pieces_.push_back({w.offset, l.offset, 1, l.count, 0});
    replicated_.push_back(l);
  };
  // Columns [t out', (t+1) out') of an [in, out] matrix, out' = out / tp: `in` runs of out'.
  const auto columns = [&](const Slice& w, const Slice& l, std::size_t in) {
    const std::size_t out = w.count / in, part_out = l.count / in;
    pieces_.push_back({w.offset + t * part_out, l.offset, in, part_out, out});
  };
  // Rows [t in', (t+1) in'): one run.
  const auto rows = [&](const Slice& w, const Slice& l) {
    pieces_.push_back({w.offset + t * l.count, l.offset, 1, l.count, 0});
  };
  const auto hidden = static_cast<std::size_t>(whole.spec().hidden);
  replicated(whole.embedding, local_.embedding);
  for (std::size_t i = 0; i < whole.layers.size(); ++i) {
    const LayerSlices& w = whole.layers[i];
    const LayerSlices& l = local_.layers[i];
    replicated(w.attn_norm, l.attn_norm);
    columns(w.wq, l.wq, hidden);
    columns(w.wk, l.wk, hidden);
    columns(w.wv, l.wv, hidden);
    rows(w.wo, l.wo);
    replicated(w.mlp_norm, l.mlp_norm);
    columns(w.w_gate, l.w_gate, hidden);
    columns(w.w_up, l.w_up, hidden);
    rows(w.w_down, l.w_down);
  }
  replicated(whole.final_norm, local_.final_norm);
  replicated(whole.lm_head, local_.lm_head);
}

template <typename Copy>
void TensorParallelShard::for_each_run(Copy&& copy) const {
  for (const Piece& p : pieces_) {
    for (std::size_t r = 0; r < p.rows; ++r) copy(p.whole_first + r * p.whole_stride, p.part_first + r * p.run, p.run);
  }
}

std::vector<float> TensorParallelShard::extract(std::span<const float> whole) const {
  if (whole.size() != whole_.size()) {
    throw Error(Problem{"tensor parallelism", fmt::format("{} floats for a model of {}", whole.size(), whole_.size()),
                        "", "a bug in the training runtime: please report it"});
  }
  std::vector<float> part(local_.size());
  for_each_run([&](std::size_t at_whole, std::size_t at_part, std::size_t n) {
    std::copy_n(whole.begin() + static_cast<std::ptrdiff_t>(at_whole), n,
                part.begin() + static_cast<std::ptrdiff_t>(at_part));
  });
  return part;
}

void TensorParallelShard::insert(std::span<const float> part, std::span<float> whole) const {
  if (part.size() != local_.size() || whole.size() != whole_.size()) {
    throw Error(Problem{"tensor parallelism",
                        fmt::format("{} and {} floats for a part of {} and a model of {}", part.size(), whole.size(),
                                    local_.size(), whole_.size()),
                        "", "a bug in the training runtime: please report it"});
  }
  for_each_run([&](std::size_t at_whole, std::size_t at_part, std::size_t n) {
    std::copy_n(part.begin() + static_cast<std::ptrdiff_t>(at_part), n,
                whole.begin() + static_cast<std::ptrdiff_t>(at_whole));
  });
}

}  // namespace burst::rt
