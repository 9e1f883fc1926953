// One attention layer, forward and backward, as two task graphs.
//
//   forward:  [Ulysses all-to-all of Q,K,V]  ring pass: K,V circulate        [all-to-all of O]
//   backward: [Ulysses all-to-all of dO]     ring pass: K,V ring or Q ring    [all-to-all of dQ,dK,dV]
//
// Notation: c = seq / R tokens per ring rank, H_l = heads / U and KV_l = kv_heads / U heads per
// rank after the all-to-all, d = head_dim, h = H_l*d, h_kv = KV_l*d, e = dtype bytes, b = batch.
//
// Compute (docs/strategies.md, "What a strategy lowers to"): a block with p allowed (query, key) pairs costs
// 4*p*d*H_l*b FLOPs forward (QK^T and PV, 2 FLOPs per multiply-add each) and 2.5x that backward (recompute QK^T, then
// dV, dP, dQ, dK).
//
// Bytes per hop:
//   forward K,V block                    2*c*h_kv*e*b
//   backward K,V ring: K,V block         2*c*h_kv*e*b,   dK,dV accumulator  2*c*h_kv*dkv*b
//   backward Q ring: Q, dO, D, lse pack  (2*c*h*e + 8*c*H_l)*b  (D and lse: one fp32 each per
//                                         token and head),  dQ accumulator  c*h*dq*b
//
// Ulysses (U > 1): a rank starts with c/U tokens of all heads and trades them within its group
// of U for c tokens of H_l heads: to each of its U-1 peers it sends (c/U) tokens x (its heads):
//   before the forward  Q,K,V  (c/U)*(h + 2*h_kv)*e*b     after it       O         (c/U)*h*e*b
//   before the backward dO     (c/U)*h*e*b                after it       dQ,dK,dV  (c/U)*(h + 2*h_kv)*e*b
// so a rank sends (U-1)/U of its local tensors, as DeepSpeed-Ulysses does. With U = P (no ring)
// the attention is one compute per rank over the whole sequence.

#include <algorithm>
#include <array>

#include "simulator/attention/lowering.hpp"
#include "simulator/detail/attention/ring_fold.hpp"
#include "simulator/detail/attention/ring_pass.hpp"

namespace burst::sim {
namespace {

// Every rank sends `bytes` to each other member of its Ulysses group (of the groups in
// `window`, when it folds the ring). `after` (if given) holds, per world rank, tasks the sender
// waits for. Returns, per receiving world rank, the U-1 transfers into it (rank x's at
// [x*(U-1), (x+1)*(U-1))).
std::vector<TaskId> all_to_all(const RingGeometry& g, const RingWindow& window, Phase phase, double bytes, int step,
                               const RingPassEnd* after, TaskGraph& graph) {
  const int u = g.ulysses;
  std::vector<TaskId> into(static_cast<std::size_t>(g.world) * static_cast<std::size_t>(u - 1), -1);
  const bool folded = window.folds(g.ring);
  for (int group = folded ? window.first : 0; group < (folded ? window.first + window.size : g.ring); ++group) {
    for (int a = 0; a < u; ++a) {
      const int src = group * u + a;
      const auto s = static_cast<std::size_t>(src);
      for (int x = 1; x < u; ++x) {
        const int b = (a + x) % u;  // peers in a rotating order, as pairwise all-to-all does
        const int dst = group * u + b;
        const TaskId wait_compute = after ? after->last_compute[s] : -1;
        const TaskId wait_home = after ? after->accumulator_home[s] : -1;
        const TaskId id = graph.add_transfer(TaskGraph::TransferSpec{.src = src,
                                                                     .dst = dst,
                                                                     .channel = kChannelAllToAll,
                                                                     .phase = phase,
                                                                     .payload = Payload::AllToAll,
                                                                     .bytes = bytes,
                                                                     .step = step},
                                             {wait_compute, wait_home});
        const int slot = a < b ? a : a - 1;  // the sender's index among dst's peers
        into[static_cast<std::size_t>(dst) * static_cast<std::size_t>(u - 1) + static_cast<std::size_t>(slot)] = id;
      }
    }
  }
  return into;
}

struct PhaseSpec {
  RingPass pass;
  double bytes_in = 0;   // all-to-all before the ring, per peer
  double bytes_out = 0;  // all-to-all after the ring, per peer
};

TaskGraph lower_phase(const RingGeometry& g, const PairTable& table, const RingWindow& window, const PhaseSpec& spec,
                      std::vector<double>& flops) {
  TaskGraph graph(g.world);
  if (window.folds(g.ring)) {
    // A rank outside the window sends as the window rank in its place.
    for (int rank = 0; rank < g.ring; ++rank) {
      if (window.contains(rank)) continue;
      for (int j = 0; j < g.ulysses; ++j)
        graph.set_stand_in(g.world_rank(rank, j), g.world_rank(window.home(rank, g.ring), j));
    }
  }
  const bool ulysses = g.ulysses > 1;
  const std::size_t a2a = ulysses ? static_cast<std::size_t>(g.world) * static_cast<std::size_t>(g.ulysses - 1) : 0;
  if (ulysses) graph.reserve(a2a, 2 * a2a);
  const std::vector<TaskId> in =
      ulysses ? all_to_all(g, window, spec.pass.phase, spec.bytes_in, 0, nullptr, graph) : std::vector<TaskId>{};
  const RingPassEnd end = lower_ring_pass(g, table, spec.pass, window, in, graph, flops, a2a);
  if (ulysses) (void)all_to_all(g, window, spec.pass.phase, spec.bytes_out, g.ring, &end, graph);
  return graph;
}

}  // namespace

LoweredAttention lower_attention(const AttentionShape& shape, const Mask& mask, const AttentionStrategy& strategy,
                                 const World& world, const FoldOptions& fold) {
  std::vector<Problem> problems = applicability_problems(strategy, shape, mask, world);
  if (!problems.empty()) throw Error(std::move(problems));

  const RingGeometry g = ring_geometry(strategy, world);
  const PairTable table(mask, strategy.layout, shape.seq, g.ring);
  const std::int64_t c = shape.seq / g.ring;
  const double tokens = static_cast<double>(c), batch = shape.batch, e = shape.dtype_bytes;
  const double heads = static_cast<double>(shape.heads / g.ulysses);
  const double h = heads * shape.head_dim;
  const double h_kv = static_cast<double>(shape.kv_heads / g.ulysses) * shape.head_dim;
  const double share = tokens / g.ulysses;  // tokens a rank holds before the all-to-all
  const double forward_flops_per_pair = 4.0 * shape.head_dim * heads * batch;
  // After each step's kernel, the running output (fp32, or the activation dtype where the
  // family's code keeps it so: a) is merged with the block's bf16 output: read both and the lse
  // pair, write the output and lse (a + e + a bytes per element, 12 per row and head). In the
  // backward each step's gradients are added into their accumulators:
  // the travelling one (read and write at its wire precision, plus the fp32 block result) and
  // the resident one (fp32: read, add, write).
  constexpr double kFp32 = 4;
  // A ring of one has nothing to merge: its kernel writes the output and gradients directly.
  const double merging = g.ring > 1 ? 1 : 0;
  const double running = strategy.code.output_accumulator_bytes > 0 ? strategy.code.output_accumulator_bytes : e;
  const double merge_bytes_per_row = merging * ((2 * running + e) * h + 3 * kFp32 * heads) * batch;
  // Where the family's code merges a partial block through a slice, it copies the merged rows
  // back: a row's output (a bytes an element) and lse (4 a head) read and written once more.
  const double slice_copy_bytes_per_row =
      strategy.code.copies_merged_slices ? merging * 2 * (running * h + kFp32 * heads) * batch : 0;
  const double resident_bytes = merging * 3 * kFp32;

  PhaseSpec forward;
  forward.pass = RingPass{.phase = Phase::Forward,
                          .kernel = KernelKind::AttentionForward,
                          .flops_per_pair = forward_flops_per_pair,
                          .lanes = static_cast<int>(std::min(heads * batch, 65535.0)),
                          .epilogue_bytes_per_row = merge_bytes_per_row,
                          .slice_copy_bytes_per_row = slice_copy_bytes_per_row,
                          .rank_rows = c,
                          .block_payload = Payload::KV,
                          .block_bytes = 2 * tokens * h_kv * e * batch,
                          .accumulator_payload = Payload::DKV,
                          .accumulator_bytes = 0,
                          .later_windows = std::nullopt,
                          .queries_travel = false,
                          .overlap = strategy.overlap};
  forward.bytes_in = share * (h + 2 * h_kv) * e * batch;
  forward.bytes_out = share * h * e * batch;

  PhaseSpec backward;
  backward.pass = forward.pass;
  backward.pass.phase = Phase::Backward;
  backward.pass.kernel = KernelKind::AttentionBackward;
  backward.pass.flops_per_pair = 2.5 * forward_flops_per_pair;
  backward.pass.slice_copy_bytes_per_row = 0;  // gradients are added into their slices in place
  if (strategy.backward == BackwardMode::KvRing) {
    backward.pass.accumulator_payload = Payload::DKV;
    backward.pass.accumulator_bytes = 2 * tokens * h_kv * strategy.dkv_bytes * batch;
    backward.pass.epilogue_bytes_per_row = resident_bytes * h * batch;
    backward.pass.epilogue_bytes_per_column = merging * (2.0 * strategy.dkv_bytes + kFp32) * 2 * h_kv * batch;
    if (const double later = strategy.code.gradient_bytes_after_first_window; later > 0) {
      // The resident dQ read, added to and written in `later` bytes, the travelling dK, dV
      // at that precision plus the block's fp32 result, as above.
      backward.pass.later_windows =
          RingPass::LaterWindows{.accumulator_bytes = 2 * tokens * h_kv * later * batch,
                                 .epilogue_bytes_per_row = merging * 3 * later * h * batch,
                                 .epilogue_bytes_per_column = merging * (2.0 * later + kFp32) * 2 * h_kv * batch};
    }
  } else {
    backward.pass.block_payload = Payload::QPack;
    backward.pass.block_bytes = (2 * tokens * h * e + 8 * tokens * heads) * batch;
    backward.pass.accumulator_payload = Payload::DQ;
    backward.pass.accumulator_bytes = tokens * h * strategy.dq_bytes * batch;
    backward.pass.epilogue_bytes_per_row = merging * (2.0 * strategy.dq_bytes + kFp32) * h * batch;
    backward.pass.epilogue_bytes_per_column = resident_bytes * 2 * h_kv * batch;
    backward.pass.queries_travel = true;
  }
  backward.bytes_in = share * h * e * batch;
  backward.bytes_out = share * (h + 2 * h_kv) * e * batch;

  const std::array<const RingPass*, 2> passes{&forward.pass, &backward.pass};
  const FoldChoice choice = fold.fold ? fold_window(g, table, world, passes, fold.block_seconds) : FoldChoice{};
  LoweredAttention out{TaskGraph(g.world), TaskGraph(g.world),
                       std::vector<double>(static_cast<std::size_t>(g.world), 0.0),
                       std::vector<double>(static_cast<std::size_t>(g.world), 0.0), RingFold{}};
  const bool folded = !choice.windows.empty();
  out.forward = lower_phase(g, table, folded ? choice.windows[0] : RingWindow{}, forward, out.forward_flops);
  out.backward = lower_phase(g, table, folded ? choice.windows[1] : RingWindow{}, backward, out.backward_flops);
  if (folded) {
    out.fold = RingFold{.windows = g.ring / choice.windows[0].size,
                        .forward_first = g.world_rank(choice.windows[0].first, 0),
                        .backward_first = g.world_rank(choice.windows[1].first, 0),
                        .size = choice.windows[0].size * g.ulysses,
                        .exact = choice.exact,
                        .forward_imbalance = choice.exact ? 1.0 : choice.imbalance.at(0),
                        .backward_imbalance = choice.exact ? 1.0 : choice.imbalance.at(1),
                        .why_not = ""};
  } else {
    out.fold.why_not = choice.why_not;
  }
  return out;
}

}  // namespace burst::sim
