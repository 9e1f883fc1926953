// A ring pass as tasks: computes where the mask allows pairs, hops where a later rank needs
// the block, and the dependencies that make it a double-buffered pipeline.
//
// Step t = o*I + i (ring.hpp): rank (n, l) computes with the block of ((n-o) mod N, (l-i) mod I).
// Blocks move along two kinds of hop:
//   inner hop  (n, l-1) -> (n, l) before inner step i+1: the block the sender used at step t;
//   outer hop  (n-1, l) -> (n, l) before outer step o+1: the block the sender started outer
//              step o with (its "outer block"), which then circulates the receiving node.
// A flat ring is N = 1 (only inner hops); a pure outer ring is I = 1.
//
// Double buffering (pass.overlap): each rank has two buffers per ring level. The hop for step
// t+1 is issued as step t starts: it needs the block at the sender (the hop that brought it
// there) and a free buffer at the receiver (its compute up to step t-1 done, and the hop that
// forwarded the block it is about to overwrite). So it flies while both ends compute step t.
// An outer hop is issued when outer step o starts and has I inner steps to arrive. Without
// overlap a hop waits for the computes of step t at both ends (and, for the outer ring, for
// the end of the outer step).
//
// Skipping: block b's journey is a tree (the outer chain, with an inner circulation hanging
// off every node). A hop is made only if its receiver or a rank after it on that branch needs
// the block: last_inner[b][o] is the last inner step at outer step o whose rank needs it,
// last_outer[b] the last outer step with any need. Blocks with no allowed pair get no compute.
//
// Direction: K,V blocks travel "forward" (rank k -> k+1) and the query pack the other way
// round (k -> k-1, i.e. the same schedule on mirrored positions p = R-1-k). Under causal-like
// masks the keys a query block needs lie before it and the queries a key block serves after
// it, so both journeys end early and skipping removes the rest; on full journeys the
// direction changes nothing.
//
// Backward accumulators (dK,dV in the K,V ring, dQ in the Q ring) cannot be copied, so they
// follow one path: the ranks that compute on the block, in step order, each hop issued after
// the sender's compute and the accumulator's arrival there, i.e. one step behind the block.
// After the last of them, one direct hop returns it to the owner. With full journeys that is
// R hops per block (R-1 along the ring, one home), the closed form in lowering.hpp.
//
// Folded (RingWindow in ring_pass.hpp): the steps run over the window's positions only. Every
// per-rank record of a rank outside the window is read and written at its home in the window,
// and a transfer from outside carries its real source. Journeys are then full, so the
// accumulator a window rank receives at step t comes from the block's holder at step t - 1.
#include "simulator/detail/attention/ring_pass.hpp"

#include <algorithm>
#include <array>
#include <numeric>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/token_sets.hpp"
#include "simulator/attention/lowering.hpp"

namespace burst::sim {

namespace {

// What one query part meets of one key part: its allowed pairs, the tokens of each that take
// part, and whether those pairs fill the rectangle of those tokens (pairs -1: not counted yet,
// in the memo below).
struct PartBlock {
  std::int64_t pairs = -1;
  PairedTokens tokens;
  bool masked = false;
};

PartBlock part_block(const Mask& mask, const Progression& q, const Progression& k) {
  PartBlock block{.pairs = allowed_pairs(mask, q, k), .tokens = paired_tokens(mask, q, k), .masked = false};
  block.masked = block.pairs < block.tokens.queries.count() * block.tokens.keys.count();
  return block;
}

// Elements in either of two ranges of one progression.
std::int64_t union_count(const IndexRange& x, const IndexRange& y) {
  const IndexRange both{std::max(x.first, y.first), std::min(x.last, y.last)};
  return x.count() + y.count() - both.count();
}

}  // namespace

PairTable::PairTable(const Mask& mask, Layout layout, std::int64_t seq, int ring_size) : ring_(ring_size) {
  std::vector<TokenSet> tokens;
  tokens.reserve(static_cast<std::size_t>(ring_size));
  std::int64_t unit = 0, top = 0;  // gcd and maximum of all progression starts
  for (int r = 0; r < ring_size; ++r) {
    tokens.push_back(ring_tokens(layout, seq, ring_size, r));
    for (int p = 0; p < tokens.back().size; ++p) {
      const std::int64_t start = tokens.back().parts[static_cast<std::size_t>(p)].start;
      unit = std::gcd(unit, start);
      top = std::max(top, start);
    }
  }
  if (tokens.front().tokens() >= std::int64_t{kMasked}) {
    throw Error(Problem{"seq", fmt::format("{} tokens per ring rank", tokens.front().tokens()),
                        fmt::format("fewer than {}", kMasked), "split the sequence over more ring ranks"});
  }
  unit = std::max<std::int64_t>(unit, 1);
  // Full, causal and sliding masks depend on q - k only, and every rank's part p has the same
  // count and stride: what parts (p, p') meet is a function of the start difference, a
  // multiple of `unit` in [-top, top]. Memoised per (p, p'), a million blocks cost a few
  // thousand counts. The document mask is not translation invariant: counted directly.
  const bool invariant = mask.kind != MaskKind::Document;
  const std::int64_t span = top / unit;
  const auto slots = static_cast<std::size_t>(2 * span + 1);
  std::array<std::vector<PartBlock>, 4> memo;
  if (invariant) {
    for (auto& m : memo) m.assign(slots, PartBlock{});
  }
  std::vector<std::array<std::int64_t, 2>> units(tokens.size());  // part starts / unit
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    for (std::size_t p = 0; p < 2; ++p) units[r][p] = tokens[r].parts[p].start / unit;
  }
  const auto cells = static_cast<std::size_t>(ring_size) * static_cast<std::size_t>(ring_size);
  pairs_.resize(cells);  // all written below
  shapes_.resize(cells);
  const PartBlock none{.pairs = 0, .tokens = {}, .masked = false};
  std::array<PartBlock, 4> counted;  // the document mask's part blocks of one cell
  std::size_t x = 0;
  for (std::size_t q = 0; q < tokens.size(); ++q) {
    const TokenSet& qs = tokens[q];
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      const TokenSet& ks = tokens[k];
      // [a * 2 + b]: query part a against key part b, in the memo (or `counted`); absent: `none`.
      std::array<const PartBlock*, 4> met{&none, &none, &none, &none};
      std::int64_t total = 0;
      bool masked = false;
      for (std::size_t a = 0; a < static_cast<std::size_t>(qs.size); ++a) {
        for (std::size_t b = 0; b < static_cast<std::size_t>(ks.size); ++b) {
          const std::size_t i = a * 2 + b;
          if (invariant) {
            PartBlock& slot = memo[i][static_cast<std::size_t>(units[q][a] - units[k][b] + span)];
            if (slot.pairs < 0) slot = part_block(mask, qs.parts[a], ks.parts[b]);
            met[i] = &slot;
          } else {
            counted[i] = part_block(mask, qs.parts[a], ks.parts[b]);
            met[i] = &counted[i];
          }
          total += met[i]->pairs;
          masked = masked || met[i]->masked;
        }
      }
      std::int64_t rows = 0, columns = 0;
      for (std::size_t p = 0; p < 2; ++p) {
        rows += union_count(met[p * 2]->tokens.queries, met[p * 2 + 1]->tokens.queries);
        columns += union_count(met[p]->tokens.keys, met[2 + p]->tokens.keys);
      }
      pairs_[x] = total;
      shapes_[x++] =
          PackedShape{static_cast<std::uint32_t>(rows), static_cast<std::uint32_t>(columns) | (masked ? kMasked : 0U)};
    }
  }
}

BlockShape PairTable::shape(int q, int k) const {
  const PackedShape packed = shapes_[cell(q, k)];
  return BlockShape{.rows = packed.rows,
                    .columns = packed.columns_masked & ~kMasked,
                    .masked = (packed.columns_masked & kMasked) != 0};
}

namespace {

// The merge or accumulation after a block's kernel, over its rows and columns, and the copy of
// a merged slice back into the rank's output where the family's code makes one.
double epilogue_bytes(const RingPass& pass, const BlockShape& shape, bool later_window) {
  const auto rows = static_cast<double>(shape.rows);
  const double slice_copy = shape.rows < pass.rank_rows ? rows * pass.slice_copy_bytes_per_row : 0;
  const bool later = later_window && pass.later_windows;
  const double per_row = later ? pass.later_windows->epilogue_bytes_per_row : pass.epilogue_bytes_per_row;
  const double per_column = later ? pass.later_windows->epilogue_bytes_per_column : pass.epilogue_bytes_per_column;
  return rows * per_row + static_cast<double>(shape.columns) * per_column + slice_copy;
}

}  // namespace

TaskGraph::ComputeSpec block_compute(const RingPass& pass, std::int64_t pairs, const BlockShape& shape,
                                     bool later_window) {
  return TaskGraph::ComputeSpec{.gpu = 0,
                                .stream = 0,
                                .phase = pass.phase,
                                .kernel = pass.kernel,
                                .flops = static_cast<double>(pairs) * pass.flops_per_pair,
                                .block_q = shape.rows,
                                .block_k = shape.columns,
                                .masked = shape.masked,
                                .epilogue_bytes = epilogue_bytes(pass, shape, later_window),
                                .lanes = pass.lanes,
                                .step = 0};
}

namespace {

using Ids = std::vector<TaskId>;

std::size_t at(int index) { return static_cast<std::size_t>(index); }
// x mod m for -m <= x < 2m, without a division (the loops below step indices by one).
int wrap(int x, int m) { return x < 0 ? x + m : (x >= m ? x - m : x); }

class PassBuilder {
 public:
  PassBuilder(const RingGeometry& g, const PairTable& table, const RingPass& pass, const RingWindow& window,
              const Ids& own_block_deps, TaskGraph& graph, std::vector<double>& flops, std::size_t tasks_after)
      : g_(g),
        table_(table),
        pass_(pass),
        window_(window),
        folded_(window.folds(g.ring)),
        own_deps_(own_block_deps),
        graph_(graph),
        flops_(flops) {
    const auto p = at(g.world);
    for (Ids* v : {&cur_, &next_, &outer_cur_, &outer_next_, &last_comp_, &prev_comp_, &inner_out_, &inner_sent_,
                   &outer_out_, &outer_sent_, &acc_hop_, &acc_comp_, &acc_in_, &acc_in_before_}) {
      v->assign(p, -1);
    }
    acc_at_.assign(p, -1);
    for (int k = 0; k < g.ring; ++k) {
      if (simulated(k)) positions_.push_back(k);
    }
    plan_journeys();
    reserve(tasks_after);
  }

  RingPassEnd run() {
    for (int t = 0; t < g_.ring; ++t) step(t);
    RingPassEnd end;
    end.accumulator_home.assign(at(g_.world), -1);
    if (pass_.accumulator_bytes > 0) return_accumulators(end);
    if (folded_) add_unsimulated_flops();
    end.last_compute = std::move(last_comp_);
    return end;
  }

 private:
  // Ring rank at ring position p (the schedule of ring.hpp runs on positions), and back.
  int rank_of(int p) const { return pass_.queries_travel ? g_.ring - 1 - p : p; }
  int world_of(int p, int member) const { return g_.world_rank(rank_of(p), member); }
  bool simulated(int p) const { return !folded_ || window_.contains(rank_of(p)); }
  // The position whose records stand for position p's: p itself unless folded.
  int home(int p) const { return folded_ ? rank_of(window_.home(rank_of(p), g_.ring)) : p; }
  // World rank of member j at position p's home: where p's per-rank records live.
  int home_world(int p, int member) const { return world_of(home(p), member); }
  // Allowed pairs when the block of position `block` visits position `visitor`.
  std::int64_t pairs(int visitor, int block) const {
    const int v = rank_of(visitor), b = rank_of(block);
    return pass_.queries_travel ? table_.at(b, v) : table_.at(v, b);
  }
  BlockShape shape(int visitor, int block) const {
    const int v = rank_of(visitor), b = rank_of(block);
    return pass_.queries_travel ? table_.shape(b, v) : table_.shape(v, b);
  }

  void plan_journeys() {
    const int n_outer = g_.outer, n_inner = g_.inner;
    last_inner_.assign(at(g_.ring) * at(n_outer), -1);
    last_outer_.assign(at(g_.ring), -1);
    for (int b = 0; b < g_.ring; ++b) {
      const int n0 = b / n_inner, l0 = b % n_inner;
      for (int o = 0; o < n_outer; ++o) {
        const int node = wrap(n0 + o, n_outer) * n_inner;  // visitor(b, o*I + i) = node + (l0 + i) mod I
        int last = -1;
        for (int i = n_inner - 1; i >= 0 && last < 0; --i) {
          if (pairs(node + wrap(l0 + i, n_inner), b) > 0) last = i;
        }
        last_inner_[at(b) * at(n_outer) + at(o)] = last;
        if (last >= 0) last_outer_[at(b)] = o;
      }
    }
  }

  // Exact task counts (dependencies: at most three per task), so that a million-task graph is
  // allocated once; `after` more tasks follow the pass.
  void reserve(std::size_t after) {
    std::size_t computes = 0, hops = 0;
    for (const int p : positions_) {
      for (int k = 0; k < g_.ring; ++k) computes += pairs(p, k) > 0 ? 1 : 0;
    }
    for (int b = 0; b < g_.ring; ++b) {
      for (int o = 0; o < g_.outer; ++o) {
        if (o >= 1 && o <= last_outer_[at(b)]) ++hops;
        hops += at(std::max(0, last_inner_[at(b) * at(g_.outer) + at(o)]));
      }
    }
    const std::size_t u = at(g_.ulysses);
    const std::size_t accumulators = pass_.accumulator_bytes > 0 ? computes : 0;
    if (folded_) hops = hops * positions_.size() / at(g_.ring);  // full journeys: every rank receives alike
    const std::size_t tasks = graph_.size() + u * (computes + hops + accumulators) + at(g_.world) + after;
    graph_.reserve(tasks, tasks * 3 + own_deps_.size());
  }

  // The tasks that put `w`'s block of step (o, i) in place: the hop that brought it, or the
  // rank's own block (the all-to-all into it, if any).
  void push_held(int w, int i, int o) {
    if (i > 0) {
      deps_.push_back(cur_[at(w)]);
    } else if (o > 0) {
      deps_.push_back(outer_cur_[at(w)]);
    } else if (!own_deps_.empty()) {
      const auto per_rank = at(g_.ulysses - 1);
      const auto first = own_deps_.begin() + static_cast<std::ptrdiff_t>(at(w) * per_rank);
      deps_.insert(deps_.end(), first, first + static_cast<std::ptrdiff_t>(per_rank));
    }
  }

  void step(int t) {
    const int o = t / g_.inner, i = t % g_.inner;
    if (i == 0 && o > 0) {
      std::swap(outer_cur_, outer_next_);
      std::fill(outer_next_.begin(), outer_next_.end(), -1);
    }
    computes(t, o, i);
    inner_hops(t, o, i);
    const bool last_inner_step = i + 1 == g_.inner;
    if (o + 1 < g_.outer && (pass_.overlap ? i == 0 : last_inner_step)) outer_hops(o);
  }

  // The allowed pairs and the shape of every rank's block at this step are looked up first, in
  // a loop of independent loads: the R x R tables (8 MB each for R = 1024) are read across
  // rows, cache misses per rank, and here the misses overlap instead of each stalling the
  // task-building loop.
  void computes(int t, int o, int i) {
    const std::size_t n_pos = positions_.size();
    step_blocks_.resize(n_pos);
    step_pairs_.resize(n_pos);
    step_shapes_.resize(n_pos);
    for (std::size_t x = 0; x < n_pos; ++x) {
      const int k = positions_[x];
      const int n = k / g_.inner, l = k - n * g_.inner;
      const int b = wrap(n - o, g_.outer) * g_.inner + wrap(l - i, g_.inner);  // block_at(k, t)
      step_blocks_[x] = b;
      step_pairs_[x] = pairs(k, b);
      step_shapes_[x] = shape(k, b);
      for (int j = 0; j < g_.ulysses; ++j) {
        const auto w = at(world_of(k, j));
        prev_comp_[w] = last_comp_[w];
        acc_in_before_[w] = acc_in_[w];
      }
    }
    for (std::size_t x = 0; x < n_pos; ++x) {
      const int k = positions_[x];
      const int b = step_blocks_[x];
      const std::int64_t p = step_pairs_[x];
      if (p == 0) continue;
      TaskGraph::ComputeSpec spec = block_compute(pass_, p, step_shapes_[x], o > 0);
      spec.step = t;
      for (int j = 0; j < g_.ulysses; ++j) {
        const int w = world_of(k, j);
        deps_.clear();
        push_held(w, i, o);
        spec.gpu = w;
        const TaskId id = graph_.add_compute(spec, deps_);
        flops_[at(w)] += spec.flops;
        last_comp_[at(w)] = id;
        if (pass_.accumulator_bytes <= 0) continue;
        if (folded_) {
          receive_accumulator(b, j, w, t);
        } else {
          follow_accumulator(world_of(b, j), w, id, t);
        }
      }
    }
  }

  // Folded: the accumulator of block b comes to w from the block's holder at step t - 1 (full
  // journeys), once that holder's compute and the accumulator's arrival there are done (read at
  // its home, as they were before this step). At step 0 the block is w's own.
  void receive_accumulator(int b, int j, int w, int t) {
    if (t == 0) return;
    const int holder = g_.visitor(b, t - 1);
    const auto h = at(home_world(holder, j));
    acc_in_[at(w)] = accumulator_hop(world_of(holder, j), w, t, prev_comp_[h], acc_in_before_[h]);
  }

  // One hop of a travelling accumulator, once the compute that last added to it and its
  // previous hop are done. The hop for step `step` (g_.ring: the way home) into a later window
  // of a double ring carries RingPass::later_windows' bytes where set.
  TaskId accumulator_hop(int src, int dst, int step, TaskId compute, TaskId previous_hop) {
    const bool later = g_.outer > 1 && step >= g_.inner && pass_.later_windows;
    const double bytes = later ? pass_.later_windows->accumulator_bytes : pass_.accumulator_bytes;
    return graph_.add_transfer(TaskGraph::TransferSpec{.src = src,
                                                       .dst = dst,
                                                       .channel = kChannelAccumulator,
                                                       .phase = pass_.phase,
                                                       .payload = pass_.accumulator_payload,
                                                       .bytes = bytes,
                                                       .step = step},
                               {compute, previous_hop});
  }

  // The owner's accumulator moves from the previous computing visitor to `w`.
  void follow_accumulator(int owner, int w, TaskId compute, int t) {
    const auto x = at(owner);
    if (acc_at_[x] >= 0) {
      acc_hop_[x] = accumulator_hop(acc_at_[x], w, t, acc_comp_[x], acc_hop_[x]);
    }
    acc_at_[x] = w;
    acc_comp_[x] = compute;
  }

  void inner_hops(int t, int o, int i) {
    std::fill(next_.begin(), next_.end(), -1);
    std::fill(inner_sent_.begin(), inner_sent_.end(), -1);
    if (i + 1 < g_.inner) {
      for (const int k : positions_) {
        const int n = k / g_.inner, l = k - n * g_.inner;
        const int sender = n * g_.inner + wrap(l - 1, g_.inner);
        const int b = wrap(n - o, g_.outer) * g_.inner + wrap(l - 1 - i, g_.inner);  // block_at(sender, t)
        if (i + 1 > last_inner_[at(b) * at(g_.outer) + at(o)]) continue;
        for (int j = 0; j < g_.ulysses; ++j) {
          const int w = world_of(k, j), ws = home_world(sender, j);
          deps_.clear();
          push_held(ws, i, o);
          if (pass_.overlap) {
            deps_.push_back(prev_comp_[at(w)]);
            deps_.push_back(inner_out_[at(w)]);
          } else {
            deps_.push_back(last_comp_[at(ws)]);
            deps_.push_back(last_comp_[at(w)]);
          }
          const TaskId id = graph_.add_transfer(TaskGraph::TransferSpec{.src = world_of(sender, j),
                                                                        .dst = w,
                                                                        .channel = kChannelInner,
                                                                        .phase = pass_.phase,
                                                                        .payload = pass_.block_payload,
                                                                        .bytes = pass_.block_bytes,
                                                                        .step = t + 1},
                                                deps_);
          next_[at(w)] = id;
          inner_sent_[at(ws)] = id;
        }
      }
    }
    std::swap(cur_, next_);
    std::swap(inner_out_, inner_sent_);
  }

  void outer_hops(int o) {
    std::fill(outer_sent_.begin(), outer_sent_.end(), -1);
    for (const int k : positions_) {
      const int n = k / g_.inner, l = k - n * g_.inner;
      const int sender = wrap(n - 1, g_.outer) * g_.inner + l;
      const int b = wrap(n - 1 - o, g_.outer) * g_.inner + l;  // block_at(sender, o*I)
      if (o + 1 > last_outer_[at(b)]) continue;
      for (int j = 0; j < g_.ulysses; ++j) {
        const int w = world_of(k, j), ws = home_world(sender, j);
        deps_.clear();
        push_held(ws, 0, o);
        if (pass_.overlap) {
          deps_.push_back(prev_comp_[at(w)]);
          deps_.push_back(outer_out_[at(w)]);
        } else {
          deps_.push_back(last_comp_[at(ws)]);
          deps_.push_back(last_comp_[at(w)]);
        }
        const TaskId id = graph_.add_transfer(TaskGraph::TransferSpec{.src = world_of(sender, j),
                                                                      .dst = w,
                                                                      .channel = kChannelOuter,
                                                                      .phase = pass_.phase,
                                                                      .payload = pass_.block_payload,
                                                                      .bytes = pass_.block_bytes,
                                                                      .step = (o + 1) * g_.inner},
                                              deps_);
        outer_next_[at(w)] = id;
        outer_sent_[at(ws)] = id;
      }
    }
    std::swap(outer_out_, outer_sent_);
  }

  void return_accumulators(RingPassEnd& end) {
    if (folded_) {
      return_folded_accumulators(end);
      return;
    }
    for (int owner = 0; owner < g_.world; ++owner) {
      const auto x = at(owner);
      if (acc_at_[x] < 0) continue;
      if (acc_at_[x] == owner) {
        end.accumulator_home[x] = acc_comp_[x];
        continue;
      }
      end.accumulator_home[x] = accumulator_hop(acc_at_[x], owner, g_.ring, acc_comp_[x], acc_hop_[x]);
    }
  }

  // Folded: each window rank's own accumulator comes home from its block's last holder.
  void return_folded_accumulators(RingPassEnd& end) {
    for (const int k : positions_) {
      const int holder = g_.visitor(k, g_.ring - 1);
      for (int j = 0; j < g_.ulysses; ++j) {
        const int w = world_of(k, j);
        const auto h = at(home_world(holder, j));
        end.accumulator_home[at(w)] = accumulator_hop(world_of(holder, j), w, g_.ring, last_comp_[h], acc_in_[h]);
      }
    }
  }

  // Folded: the FLOPs of the ranks without tasks, from the pair table.
  void add_unsimulated_flops() {
    for (int k = 0; k < g_.ring; ++k) {
      if (simulated(k)) continue;
      std::int64_t p = 0;
      for (int b = 0; b < g_.ring; ++b) p += pairs(k, b);
      for (int j = 0; j < g_.ulysses; ++j) flops_[at(world_of(k, j))] += static_cast<double>(p) * pass_.flops_per_pair;
    }
  }

  const RingGeometry& g_;
  const PairTable& table_;
  const RingPass& pass_;
  const RingWindow& window_;
  bool folded_;
  const Ids& own_deps_;
  TaskGraph& graph_;
  std::vector<double>& flops_;

  std::vector<int> last_inner_, last_outer_;  // journey ends, see the head comment
  Ids cur_, next_;                            // per world rank: hop that brought this (next) inner step's block
  Ids outer_cur_, outer_next_;                // per world rank: hop that brought this (next) outer step's block
  Ids last_comp_, prev_comp_;                 // per world rank: last compute so far / before this step
  Ids inner_out_, inner_sent_;                // per world rank: inner hop it sent last step / this step
  Ids outer_out_, outer_sent_;                // per world rank: outer hop it sent last outer step / this one
  Ids acc_hop_, acc_comp_;                    // per owner: accumulator's latest hop, latest compute on it
  std::vector<int> acc_at_;                   // per owner: world rank holding the accumulator (-1: none yet)
  Ids acc_in_, acc_in_before_;                // folded, per world rank: accumulator hop into it this step / last
  std::vector<int> positions_;                // the positions given tasks: all, or the window's
  Ids deps_;                                  // scratch, reused for every task
  std::vector<int> step_blocks_;              // scratch of computes(): per ring position, its block at the step
  std::vector<std::int64_t> step_pairs_;      //   the allowed pairs there
  std::vector<BlockShape> step_shapes_;       //   and the block's shape (rows 0 where nothing is allowed)
};

}  // namespace

RingPassEnd lower_ring_pass(const RingGeometry& geometry, const PairTable& table, const RingPass& pass,
                            const RingWindow& window, const std::vector<TaskId>& own_block_deps, TaskGraph& graph,
                            std::vector<double>& flops, std::size_t tasks_after) {
  return PassBuilder(geometry, table, pass, window, own_block_deps, graph, flops, tasks_after).run();
}

}  // namespace burst::sim
