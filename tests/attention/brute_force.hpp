// Independent references for the attention tests: masks token by token, token sets as
// explicit lists, byte sums over a task graph.
#pragma once

#include <cstdint>
#include <vector>

#include "common/token_sets.hpp"
#include "simulator/attention/lowering.hpp"

namespace burst::sim::testing {

// The masks' definitions, restated: full; causal k <= q; sliding q - W < k <= q;
// document: causal and floor(q / L) == floor(k / L).
inline bool allowed(const Mask& m, std::int64_t q, std::int64_t k) {
  switch (m.kind) {
    case MaskKind::Full: return true;
    case MaskKind::Causal: return k <= q;
    case MaskKind::SlidingWindow: return k <= q && q - m.window < k;
    case MaskKind::Document: return k <= q && q / m.doc_len == k / m.doc_len;
  }
  return false;
}

inline std::vector<std::int64_t> tokens_of(const TokenSet& set) {
  std::vector<std::int64_t> out;
  for (int p = 0; p < set.size; ++p) {
    const Progression& g = set.parts[static_cast<std::size_t>(p)];
    for (std::int64_t i = 0; i < g.count; ++i) out.push_back(g.start + i * g.stride);
  }
  return out;
}

inline std::int64_t brute_pairs(const Mask& m, const std::vector<std::int64_t>& q, const std::vector<std::int64_t>& k) {
  std::int64_t n = 0;
  for (const auto a : q) {
    for (const auto b : k) n += allowed(m, a, b) ? 1 : 0;
  }
  return n;
}

// Allowed pairs of the whole sequence.
inline std::int64_t brute_total(const Mask& m, std::int64_t seq) {
  std::int64_t n = 0;
  for (std::int64_t q = 0; q < seq; ++q) {
    for (std::int64_t k = 0; k <= q || (m.kind == MaskKind::Full && k < seq); ++k) n += allowed(m, q, k) ? 1 : 0;
  }
  return n;
}

// Bytes each GPU sends in a graph, optionally only on one channel or of one payload.
struct ByteFilter {
  int channel = -1;
  int payload = -1;  // static_cast<int>(Payload::...)
};
inline std::vector<double> sent_bytes(const TaskGraph& g, ByteFilter f = {}) {
  std::vector<double> out(static_cast<std::size_t>(g.gpus()), 0.0);
  for (const Task& t : g.tasks()) {
    if (t.kind != TaskKind::Transfer) continue;
    if (f.channel >= 0 && t.stream != f.channel) continue;
    if (f.payload >= 0 && static_cast<int>(t.payload) != f.payload) continue;
    out[static_cast<std::size_t>(t.gpu)] += t.amount;
  }
  return out;
}

inline std::size_t count_tasks(const TaskGraph& g, TaskKind kind, int channel = -1) {
  std::size_t n = 0;
  for (const Task& t : g.tasks()) n += (t.kind == kind && (channel < 0 || t.stream == channel)) ? 1 : 0;
  return n;
}

// Tasks that depend on each task.
inline std::vector<std::vector<TaskId>> dependents(const TaskGraph& g) {
  std::vector<std::vector<TaskId>> out(g.size());
  for (TaskId id = 0; id < static_cast<TaskId>(g.size()); ++id) {
    for (const TaskId d : g.deps(id)) out[static_cast<std::size_t>(d)].push_back(id);
  }
  return out;
}

inline AttentionShape mha(std::int64_t seq, int heads = 4, int head_dim = 128) {
  return AttentionShape{
      .heads = heads, .kv_heads = heads, .head_dim = head_dim, .seq = seq, .batch = 1, .dtype_bytes = 2};
}

inline AttentionStrategy make_strategy(RingKind ring, Layout layout, BackwardMode backward, int ulysses = 1,
                                       int inner = 0) {
  AttentionStrategy s;
  s.name = "test";
  s.ulysses = ulysses;
  s.ring = ring;
  s.inner = inner;
  s.layout = layout;
  s.backward = backward;
  s.dkv_bytes = 2;
  s.dq_bytes = 2;
  s.overlap = true;
  return s;
}

}  // namespace burst::sim::testing
