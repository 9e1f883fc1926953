// CPU attention kernels over one (query block, key block) pair: the unit of work of a ring step.
//
// Forward, per query head h (kv head g = h / (H / Hkv): grouped-query attention reads the
// shared K,V rows in place, never repeated), query q and the keys k it may attend (the mask):
//   s_qk = scale * <Q_q, K_k>, scale = 1 / sqrt(d)
//   lse_q = log sum_k exp(s_qk),   O_q = sum_k exp(s_qk - lse_q) V_k
// A query with no allowed key gets O = 0 and lse = -inf: an empty partial that merge ignores.
//
// Ring steps each see one key block; their partials merge exactly (merge_partial):
//   o = o - sigmoid(lse_i - lse) * (o - o_i),   lse = lse - logsigmoid(lse - lse_i)
// which is the softmax-weighted mean of the two partials and the log of the summed mass.
//
// Backward of a pair, given the FINAL merged lse and D = rowsum(O * dO) (attention_delta):
//   P = exp(S - lse),  dV += P^T dO,  dP = dO V^T,  dS = P * (dP - D),
//   dQ += scale dS K,  dK += scale dS^T Q
// Gradients ACCUMULATE (+=) in fp32 so the ring steps of one block sum into the same buffers.
//
// Shapes: Q, O, dO, dQ [nq, H, d]; K, V, dK, dV [nk, Hkv, d]; lse, D [nq * H]; positions are
// the global token positions of the rows (int64, any order: layouts permute tokens).
// Work is tiled (tile_q x tile_k, never nq x nk), tiles the mask makes empty are skipped
// (attention_mask.hpp), and only computed tiles count in the returned KernelStats.
// Bad shapes or masks throw burst::Error naming the argument.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/kernels/attention_mask.hpp"
#include "runtime/kernels/tensor.hpp"

namespace burst::rt {

struct KernelOptions {
  std::int64_t tile_q = 128;  // queries per tile
  std::int64_t tile_k = 128;  // keys per tile
  int threads = 0;            // workers over (head, tile) items; 0: one per hardware thread
};

// What a kernel call computed. Tiles are counted per head; flops are those of the matmuls of
// computed tiles (forward 4 d per score, backward 10 d), masked scores inside a computed tile
// included; allowed_pairs counts (head, query, key) triples that attend.
struct KernelStats {
  std::int64_t tiles_computed = 0;
  std::int64_t tiles_skipped = 0;
  double flops = 0;
  double allowed_pairs = 0;
  // The kernels' time on the device, from CUDA events recorded around their launches (the CUDA
  // backend); 0 where a backend does not measure it apart (the CPU kernels: the call is the kernel).
  double device_s = 0;
  KernelStats& operator+=(const KernelStats& other);
};

// One (query block, key block) pair.
struct BlockPair {
  ConstView q;
  ConstView k;
  ConstView v;
  std::span<const std::int64_t> q_positions;
  std::span<const std::int64_t> k_positions;
};

// Writes O and lse of the pair (overwrites: this is one partial).
KernelStats attention_forward(const BlockPair& in, const AttentionMask& mask, View o, std::span<float> lse,
                              const KernelOptions& options = {});

// Folds the partial (o_i, lse_i) into the accumulator (o, lse), both [n, H, d] and [n * H].
void merge_partial(View o, std::span<float> lse, ConstView o_i, std::span<const float> lse_i);

// D[t * H + h] = sum over d of O * dO: the softmax backward's per-row correction.
void attention_delta(ConstView o, ConstView d_o, std::span<float> delta);

// Adds this pair's contribution to dQ, dK, dV.
KernelStats attention_backward(const BlockPair& in, const AttentionMask& mask, ConstView d_o,
                               std::span<const float> delta, std::span<const float> lse, View d_q, View d_k, View d_v,
                               const KernelOptions& options = {});

// 0, 1, ..., n - 1.
[[nodiscard]] std::vector<std::int64_t> contiguous_positions(std::int64_t n);

// Attention over one whole sequence (queries and keys share `positions`), forward and backward
// from the kernels above: the single-block reference other code compares against.
struct FullAttention {
  Tensor o;
  std::vector<float> lse;
  Tensor d_q, d_k, d_v;
  KernelStats forward, backward;
};
[[nodiscard]] FullAttention full_attention(ConstView q, ConstView k, ConstView v, ConstView d_o,
                                           std::span<const std::int64_t> positions, const AttentionMask& mask,
                                           const KernelOptions& options = {});

}  // namespace burst::rt
