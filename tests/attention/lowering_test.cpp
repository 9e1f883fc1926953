// Lowered graphs: coverage of the mask, closed-form bytes, balance, skipping, dependencies.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <set>

#include "brute_force.hpp"

using namespace burst::sim;
using namespace burst::sim::testing;

namespace {

struct Case {
  World world;
  AttentionStrategy strategy;
};

// A spread of ring shapes on 8 GPUs: flat, double (inner = node, and inner smaller than a
// node), Ulysses x flat, Ulysses x double, Ulysses only.
std::vector<Case> cases_on_8_gpus(Layout layout, BackwardMode backward) {
  const World two_by_four{2, 4};
  std::vector<Case> cases = {
      {two_by_four, make_strategy(RingKind::Flat, layout, backward)},
      {two_by_four, make_strategy(RingKind::Double, layout, backward)},
      {two_by_four, make_strategy(RingKind::Double, layout, backward, 1, 2)},
      {two_by_four, make_strategy(RingKind::Flat, layout, backward, 2)},
      {two_by_four, make_strategy(RingKind::Double, layout, backward, 2)},
      {World{1, 8}, make_strategy(RingKind::Flat, layout, backward, 8)},
  };
  Case no_overlap = cases[1];
  no_overlap.strategy.overlap = false;
  cases.push_back(no_overlap);
  return cases;
}

// Every transfer serves a purpose: a block hop is used by a compute on its receiver or
// forwarded by a hop that is itself used; an accumulator hop leaves after a compute on its
// sender and is carried on, or is the last hop home; an all-to-all into a rank feeds it.
void check_transfers_used(const TaskGraph& g, int ring_steps) {
  const auto users = dependents(g);
  std::vector<char> used(g.size(), 0);
  for (auto id = static_cast<TaskId>(g.size()) - 1; id >= 0; --id) {
    const Task& t = g.task(id);
    if (t.kind != TaskKind::Transfer) continue;
    const bool after_ring = t.payload == Payload::AllToAll && t.step == ring_steps;
    bool ok = after_ring || ((t.payload == Payload::DQ || t.payload == Payload::DKV) && t.step == ring_steps);
    for (const TaskId u : users[static_cast<std::size_t>(id)]) {
      const Task& next = g.task(u);
      if (next.kind == TaskKind::Compute && next.gpu == t.peer) ok = true;
      if (next.kind == TaskKind::Transfer && next.gpu == t.peer && used[static_cast<std::size_t>(u)] &&
          (next.payload == t.payload || t.payload == Payload::AllToAll)) {
        ok = true;
      }
    }
    if (t.payload == Payload::DQ || t.payload == Payload::DKV) {
      bool after_compute = false;
      for (const TaskId d : g.deps(id)) after_compute |= g.task(d).kind == TaskKind::Compute && g.task(d).gpu == t.gpu;
      INFO("accumulator hop " << id << " from " << t.gpu << " does not follow a compute there");
      REQUIRE(after_compute);
    }
    INFO("transfer " << id << " (" << to_string(t.payload) << ", step " << t.step << ", " << t.gpu << " -> " << t.peer
                     << ") is never used");
    REQUIRE(ok);
    used[static_cast<std::size_t>(id)] = 1;
  }
}

double total(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }

}  // namespace

TEST_CASE("every allowed pair is computed exactly once, and every transfer is used", "[lowering]") {
  // Sum over compute tasks of FLOPs = 4 * d * H * b * (allowed pairs of the whole sequence)
  // forward and 2.5x that backward, whatever the split of heads (U) and sequence (R); and a
  // rank computes with each block it needs once: its computes sit at distinct steps and
  // number the blocks with at least one allowed pair.
  const std::vector<Mask> masks = {{MaskKind::Full, 0, 0},          {MaskKind::Causal, 0, 0},
                                   {MaskKind::SlidingWindow, 5, 0}, {MaskKind::SlidingWindow, 20, 0},
                                   {MaskKind::Document, 0, 12},     {MaskKind::Document, 0, 7}};
  const std::int64_t seq = 96;
  AttentionShape shape = mha(seq, 8, 16);
  for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
    for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
      for (const Case& c : cases_on_8_gpus(layout, backward)) {
        for (const Mask& mask : masks) {
          const RingGeometry g = ring_geometry(c.strategy, c.world);
          INFO(to_string(layout) << " " << to_string(backward) << " U " << g.ulysses << " inner " << g.inner
                                 << " outer " << g.outer << " overlap " << c.strategy.overlap << " "
                                 << to_string(mask));
          const LoweredAttention low = lower_attention(shape, mask, c.strategy, c.world);
          const double pair_flops = 4.0 * shape.head_dim * shape.heads * shape.batch;
          const auto pairs = static_cast<double>(brute_total(mask, seq));
          REQUIRE(total(low.forward_flops) == pair_flops * pairs);
          REQUIRE(total(low.backward_flops) == 2.5 * pair_flops * pairs);

          for (const bool fwd : {true, false}) {
            const TaskGraph& graph = fwd ? low.forward : low.backward;
            std::vector<std::set<int>> steps(static_cast<std::size_t>(g.world));
            std::vector<int> computes(static_cast<std::size_t>(g.world), 0);
            for (const Task& t : graph.tasks()) {
              if (t.kind != TaskKind::Compute) continue;
              REQUIRE(steps[static_cast<std::size_t>(t.gpu)].insert(t.step).second);
              ++computes[static_cast<std::size_t>(t.gpu)];
            }
            for (int w = 0; w < g.world; ++w) {
              const int k = w / g.ulysses;
              const auto mine = tokens_of(ring_tokens(layout, seq, g.ring, k));
              int needed = 0;
              for (int b = 0; b < g.ring; ++b) {
                const auto theirs = tokens_of(ring_tokens(layout, seq, g.ring, b));
                // Forward and K,V ring: my queries x their keys; Q ring: their queries x my keys.
                const bool queries_mine = fwd || backward == BackwardMode::KvRing;
                needed +=
                    (queries_mine ? brute_pairs(mask, mine, theirs) : brute_pairs(mask, theirs, mine)) > 0 ? 1 : 0;
              }
              REQUIRE(computes[static_cast<std::size_t>(w)] == needed);
            }
            check_transfers_used(graph, g.ring);
          }
        }
      }
    }
  }
}

TEST_CASE("flat ring bytes equal the closed forms of docs/strategies.md, MHA and GQA", "[lowering][bytes]") {
  // Per rank, full journeys (full mask; causal zigzag/striped need every block too), with
  // c = seq / R, h = H*d, h_kv = H_kv*d, e = 2, b = 1:
  //   forward            (R-1) * 2*c*h_kv*e                  (K,V hops)
  //   backward K,V ring  (R-1) * 2*c*h_kv*e + R * 2*c*h_kv*dkv (K,V hops; dK,dV R-1 hops + home)
  //   backward Q ring    (R-1) * (2*c*h*e + 8*c*H) + R * c*h*dq  (Q,dO,D,lse hops; dQ hops + home)
  const World world{2, 4};
  const double r = 8, e = 2;
  for (const int kv_heads : {4, 2, 1}) {
    for (const Mask mask : {Mask{MaskKind::Full, 0, 0}, Mask{MaskKind::Causal, 0, 0}}) {
      for (const Layout layout : {Layout::Zigzag, Layout::Striped}) {
        AttentionShape shape = mha(128, 4, 64);
        shape.kv_heads = kv_heads;
        const double c = 16, h = 4 * 64, h_kv = kv_heads * 64;
        INFO("kv_heads " << kv_heads << " " << to_string(mask) << " " << to_string(layout));

        AttentionStrategy kv = make_strategy(RingKind::Flat, layout, BackwardMode::KvRing);
        kv.dkv_bytes = 4;
        const LoweredAttention a = lower_attention(shape, mask, kv, world);
        const auto fwd = sent_bytes(a.forward, {kChannelInner, static_cast<int>(Payload::KV)});
        const auto kv_blocks = sent_bytes(a.backward, {kChannelInner, static_cast<int>(Payload::KV)});
        const auto dkv = sent_bytes(a.backward, {kChannelAccumulator, static_cast<int>(Payload::DKV)});
        for (int w = 0; w < 8; ++w) {
          const auto x = static_cast<std::size_t>(w);
          REQUIRE(fwd[x] == (r - 1) * 2 * c * h_kv * e);
          REQUIRE(kv_blocks[x] == (r - 1) * 2 * c * h_kv * e);
          REQUIRE(dkv[x] == r * 2 * c * h_kv * 4);
        }
        CHECK(total(sent_bytes(a.backward)) == 8 * ring_backward_bytes_per_rank(BackwardMode::KvRing, shape, kv, 8));

        const AttentionStrategy q = make_strategy(RingKind::Flat, layout, BackwardMode::QRing);
        const LoweredAttention b = lower_attention(shape, mask, q, world);
        const auto pack = sent_bytes(b.backward, {kChannelInner, static_cast<int>(Payload::QPack)});
        const auto dq = sent_bytes(b.backward, {kChannelAccumulator, static_cast<int>(Payload::DQ)});
        for (int w = 0; w < 8; ++w) {
          const auto x = static_cast<std::size_t>(w);
          REQUIRE(pack[x] == (r - 1) * (2 * c * h * e + 8 * c * 4));
          REQUIRE(dq[x] == r * c * h * 2);
        }
        CHECK(total(sent_bytes(b.backward)) == 8 * ring_backward_bytes_per_rank(BackwardMode::QRing, shape, q, 8));
      }
    }
  }
}

TEST_CASE("double ring bytes: N*(I-1) inner hops over NVLink, N-1 outer hops per rank", "[lowering][bytes]") {
  // 4 nodes x 4 GPUs, inner ring I = 4, outer N = 4: each block makes I-1 inner hops on each
  // of the N nodes and N-1 outer hops, R-1 = 15 in all, as on a flat ring. The accumulator
  // follows the visiting order (crossing nodes at outer-step boundaries): R hops per block.
  const World world{4, 4};
  const AttentionShape shape = mha(256, 4, 64);
  const double c = 16, h = 4 * 64, e = 2, kv_block = 2 * c * h * e;
  const double pack = 2 * c * h * e + 8 * c * 4;
  const LoweredAttention low = lower_attention(
      shape, Mask{MaskKind::Causal, 0, 0}, make_strategy(RingKind::Double, Layout::Zigzag, BackwardMode::QRing), world);
  const auto inner = sent_bytes(low.forward, {kChannelInner, -1});
  const auto outer = sent_bytes(low.forward, {kChannelOuter, -1});
  const auto inner_b = sent_bytes(low.backward, {kChannelInner, -1});
  const auto outer_b = sent_bytes(low.backward, {kChannelOuter, -1});
  const auto dq = sent_bytes(low.backward, {kChannelAccumulator, -1});
  for (std::size_t w = 0; w < 16; ++w) {
    REQUIRE(inner[w] == 4 * 3 * kv_block);
    REQUIRE(outer[w] == 3 * kv_block);
    REQUIRE(inner_b[w] == 4 * 3 * pack);
    REQUIRE(outer_b[w] == 3 * pack);
    REQUIRE(dq[w] == 16 * c * h * 2);
  }
  // Outer hops join the same local rank of neighbouring nodes (rails); inner hops stay inside a node.
  for (const Task& t : low.forward.tasks()) {
    if (t.kind != TaskKind::Transfer) continue;
    if (t.stream == kChannelOuter) {
      CHECK(t.gpu % 4 == t.peer % 4);
      CHECK(t.gpu / 4 != t.peer / 4);
    } else {
      CHECK(t.gpu / 4 == t.peer / 4);
    }
  }
}

TEST_CASE("the Q ring moves about 0.76 of the K,V ring's backward bytes for MHA, d = 128, P = 32",
          "[lowering][bytes]") {
  // Per rank and token of one head, e = dq = dkv = 2, d = 128, R = 32:
  //   Q ring   (R-1) * (2*d*e + 8) + R * d*dq = 31 * 520 + 32 * 256 = 24312
  //   K,V ring (R-1) * 2*d*e + R * 2*d*dkv    = 31 * 512 + 32 * 512 = 32256
  // ratio 24312 / 32256 = 0.7537; for large R it tends to 776 / 1024 = 0.758 (docs/strategies.md: ~0.76).
  const World world{4, 8};
  const AttentionShape shape = mha(32 * 2 * 2, 4, 128);
  const LoweredAttention q = lower_attention(shape, Mask{MaskKind::Causal, 0, 0},
                                             make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::QRing), world);
  const LoweredAttention kv = lower_attention(
      shape, Mask{MaskKind::Causal, 0, 0}, make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::KvRing), world);
  const double tokens_heads = 4.0 * 4 * 32;  // c = 4 tokens x 4 heads per rank, 32 ranks
  CHECK(total(sent_bytes(q.backward)) == 24312 * tokens_heads);
  CHECK(total(sent_bytes(kv.backward)) == 32256 * tokens_heads);
  const double ratio = total(sent_bytes(q.backward)) / total(sent_bytes(kv.backward));
  CHECK(ratio > 0.74);
  CHECK(ratio < 0.78);
}

TEST_CASE("causal zigzag: every rank does the same work; causal contiguous: the last rank does most",
          "[lowering][balance]") {
  const World world{1, 8};
  const std::int64_t c = 16, r = 8;
  const AttentionShape shape = mha(r * c, 2, 8);
  const Mask causal{MaskKind::Causal, 0, 0};
  const double pair_flops = 4.0 * 8 * 2;
  // Zigzag (chunks of k = c/2): rank r's queries see k^2 (2R-1) + k (k+1) keys, for every r.
  const LoweredAttention zz =
      lower_attention(shape, causal, make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::QRing), world);
  const double k = c / 2.0;
  for (const double f : zz.forward_flops) REQUIRE(f == pair_flops * (k * k * (2 * r - 1) + k * (k + 1)));
  for (const double f : zz.backward_flops) REQUIRE(f == 2.5 * pair_flops * (k * k * (2 * r - 1) + k * (k + 1)));
  // Contiguous: rank j sees j full blocks and its causal diagonal: j c^2 + c (c+1) / 2.
  // Efficiency mean / max = [R c (R c + 1) / 2 / R] / [(R-1) c^2 + c (c+1) / 2] (here 0.5373):
  // The textbook (P+1)/(2P) (0.5625) is the same imbalance counted in whole blocks (a
  // diagonal block as a full one); both tend to 1/2.
  const LoweredAttention ct =
      lower_attention(shape, causal, make_strategy(RingKind::Flat, Layout::Contiguous, BackwardMode::KvRing), world);
  for (int j = 0; j < r; ++j) {
    REQUIRE(ct.forward_flops[static_cast<std::size_t>(j)] == pair_flops * (j * c * c + c * (c + 1) / 2.0));
  }
  const double mean = total(ct.forward_flops) / r;
  const double max = *std::max_element(ct.forward_flops.begin(), ct.forward_flops.end());
  const double n = static_cast<double>(r * c);
  CHECK(mean / max == Approx((n * (n + 1) / 2 / r) / ((r - 1) * c * c + c * (c + 1) / 2.0)).epsilon(1e-12));
}

TEST_CASE("sliding window: hops beyond the window are skipped", "[lowering][skip]") {
  // Contiguous, R = 8, c = 16. A window W <= c needs the own block and the previous one:
  // each block but the last hops once, R-1 = 7 hops (a flat ring without skipping: R(R-1) = 56),
  // and R + (R-1) = 15 computes. With c < W <= 2c blocks reach two ranks: (R-1) + (R-2) = 13.
  const World world{1, 8};
  const AttentionShape shape = mha(128, 2, 8);
  for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
    const AttentionStrategy s = make_strategy(RingKind::Flat, Layout::Contiguous, backward);
    const Payload block = backward == BackwardMode::KvRing ? Payload::KV : Payload::QPack;
    const LoweredAttention w16 = lower_attention(shape, Mask{MaskKind::SlidingWindow, 16, 0}, s, world);
    CHECK(count_tasks(w16.forward, TaskKind::Transfer) == 7);
    CHECK(count_tasks(w16.forward, TaskKind::Compute) == 15);
    // Backward: the same 7 block hops (the query pack runs the other way round, so its
    // journey is as short); each block seen by 2 ranks has one accumulator hop and one home.
    CHECK(count_tasks(w16.backward, TaskKind::Transfer, kChannelInner) == 7);
    CHECK(count_tasks(w16.backward, TaskKind::Transfer, kChannelAccumulator) == 14);
    std::size_t blocks = 0;
    for (const Task& t : w16.backward.tasks()) blocks += t.kind == TaskKind::Transfer && t.payload == block ? 1 : 0;
    CHECK(blocks == 7);
    const LoweredAttention w20 = lower_attention(shape, Mask{MaskKind::SlidingWindow, 20, 0}, s, world);
    CHECK(count_tasks(w20.forward, TaskKind::Transfer) == 13);
    CHECK(count_tasks(w20.forward, TaskKind::Compute) == 8 + 7 + 6);
    CHECK(count_tasks(w20.backward, TaskKind::Transfer, kChannelInner) == 13);
  }
}

TEST_CASE("sliding window on a double ring: a node's last block reaches the next node's first rank",
          "[lowering][skip]") {
  // 3 nodes x 4, W <= c: block (n, l) is needed by (n, l+1) only (one inner hop), and block
  // (n, 3) by (n+1, 0): an outer hop to (n+1, 3), then one inner hop. Hops: N(I-1) + 2(N-1) = 13.
  const World world{3, 4};
  const LoweredAttention low =
      lower_attention(mha(12 * 16, 2, 8), Mask{MaskKind::SlidingWindow, 16, 0},
                      make_strategy(RingKind::Double, Layout::Contiguous, BackwardMode::KvRing), world);
  CHECK(count_tasks(low.forward, TaskKind::Transfer, kChannelInner) == 3 * 3 + 2);
  CHECK(count_tasks(low.forward, TaskKind::Transfer, kChannelOuter) == 2);
}

TEST_CASE("document mask: blocks of other documents are neither computed nor sent", "[lowering][skip]") {
  const World world{1, 8};
  const AttentionShape shape = mha(128, 2, 8);  // c = 16
  for (const BackwardMode backward : {BackwardMode::KvRing, BackwardMode::QRing}) {
    const AttentionStrategy s = make_strategy(RingKind::Flat, Layout::Contiguous, backward);
    // Documents of c tokens: each rank holds one whole document; nothing travels.
    const LoweredAttention one = lower_attention(shape, Mask{MaskKind::Document, 0, 16}, s, world);
    CHECK(count_tasks(one.forward, TaskKind::Transfer) == 0);
    CHECK(count_tasks(one.backward, TaskKind::Transfer) == 0);
    CHECK(count_tasks(one.forward, TaskKind::Compute) == 8);
    // Documents of 2c: ranks 2m and 2m+1 share one; one hop per document, R/2 = 4, each way.
    const LoweredAttention two = lower_attention(shape, Mask{MaskKind::Document, 0, 32}, s, world);
    CHECK(count_tasks(two.forward, TaskKind::Transfer) == 4);
    CHECK(count_tasks(two.backward, TaskKind::Transfer, kChannelInner) == 4);
    CHECK(count_tasks(two.forward, TaskKind::Compute) == 8 + 4);
  }
}

TEST_CASE("double buffering: a hop flies during the step before the one that needs it", "[lowering][deps]") {
  // Overlap: the hop for step s+1 waits for the block at the sender (a transfer) and for the
  // receiver's compute of step s-1 (its spare buffer), never for a compute of step s.
  // Without overlap it waits for the computes of step s at both ends.
  const World world{1, 4};
  const AttentionShape shape = mha(64, 2, 8);
  for (const bool overlap : {true, false}) {
    AttentionStrategy s = make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::KvRing);
    s.overlap = overlap;
    const LoweredAttention low = lower_attention(shape, Mask{MaskKind::Full, 0, 0}, s, world);
    const TaskGraph& g = low.forward;
    for (TaskId id = 0; id < static_cast<TaskId>(g.size()); ++id) {
      const Task& t = g.task(id);
      if (t.kind != TaskKind::Transfer) continue;
      std::set<std::pair<int, int>> computes;  // (gpu, step) of compute dependencies
      for (const TaskId d : g.deps(id)) {
        if (g.task(d).kind == TaskKind::Compute) computes.insert({g.task(d).gpu, g.task(d).step});
      }
      std::set<std::pair<int, int>> expected;
      if (overlap && t.step >= 2) expected = {{t.peer, t.step - 2}};
      if (!overlap) expected = {{t.gpu, t.step - 1}, {t.peer, t.step - 1}};
      INFO("overlap " << overlap << " hop " << t.gpu << " -> " << t.peer << " for step " << t.step);
      CHECK(computes == expected);
    }
  }
}

TEST_CASE("double ring: the outer hop is issued as an outer step starts and has I steps to arrive",
          "[lowering][deps]") {
  // I = 4: the outer hop feeding outer step o+1 (step (o+1)*4) waits only for the receiver's
  // compute of the last step of outer step o-1, i.e. step o*4 - 1.
  const World world{3, 4};
  const LoweredAttention low =
      lower_attention(mha(12 * 8, 2, 8), Mask{MaskKind::Full, 0, 0},
                      make_strategy(RingKind::Double, Layout::Zigzag, BackwardMode::KvRing), world);
  std::size_t outer = 0;
  for (TaskId id = 0; id < static_cast<TaskId>(low.forward.size()); ++id) {
    const Task& t = low.forward.task(id);
    if (t.kind != TaskKind::Transfer || t.stream != kChannelOuter) continue;
    ++outer;
    REQUIRE(t.step % 4 == 0);
    for (const TaskId d : low.forward.deps(id)) {
      const Task& dep = low.forward.task(d);
      if (dep.kind != TaskKind::Compute) continue;
      CHECK(dep.gpu == t.peer);
      CHECK(dep.step == t.step - 5);
    }
  }
  CHECK(outer == 12 * 2);  // each of 12 blocks crosses N-1 = 2 node boundaries
}

TEST_CASE("Ulysses all-to-all bytes and the whole-sequence compute", "[lowering][ulysses]") {
  // ds-ulysses on 4 GPUs (U = P = 4), H = 8, H_kv = 4, d = 16, seq = 64, e = 2: a rank holds
  // 64/4 = 16 tokens of all heads and sends (U-1)/U of them to its peers:
  //   forward  Q,K,V (3/4)*16*(8+2*4)*16*2 = 6144, then O (3/4)*16*8*16*2 = 3072
  //   backward dO 3072, then dQ,dK,dV 6144; as U-1 = 3 pairwise transfers each way.
  // Compute: one block per rank, all 64x64 pairs of the mask for its 2 heads.
  const World world{1, 4};
  AttentionShape shape = mha(64, 8, 16);
  shape.kv_heads = 4;
  const Mask causal{MaskKind::Causal, 0, 0};
  const AttentionStrategy s = strategy_preset("ds-ulysses", shape, world);
  REQUIRE(s.ulysses == 4);
  const LoweredAttention low = lower_attention(shape, causal, s, world);
  const auto fwd = sent_bytes(low.forward, {kChannelAllToAll, -1});
  const auto bwd = sent_bytes(low.backward, {kChannelAllToAll, -1});
  for (std::size_t w = 0; w < 4; ++w) {
    CHECK(fwd[w] == 6144 + 3072);
    CHECK(bwd[w] == 3072 + 6144);
    CHECK(low.forward_flops[w] == 4.0 * 16 * 2 * (64 * 65 / 2));
  }
  CHECK(count_tasks(low.forward, TaskKind::Transfer) == 2 * 4 * 3);
  CHECK(count_tasks(low.forward, TaskKind::Compute) == 4);
  check_transfers_used(low.forward, 1);
  check_transfers_used(low.backward, 1);
}

TEST_CASE("USP: all-to-all inside a node, ring across nodes", "[lowering][ulysses]") {
  // 2 nodes x 4 GPUs, U = 4: the ring has R = 2 ranks (one per node), c = 128/2 = 64 tokens
  // of 8/4 = 2 heads; every ring hop crosses nodes, every all-to-all stays inside one.
  const World world{2, 4};
  const AttentionShape shape = mha(128, 8, 16);
  const AttentionStrategy s = strategy_preset("burst-usp", shape, world);
  REQUIRE(s.ulysses == 4);
  const LoweredAttention low = lower_attention(shape, Mask{MaskKind::Causal, 0, 0}, s, world);
  for (const TaskGraph* g : {&low.forward, &low.backward}) {
    for (const Task& t : g->tasks()) {
      if (t.kind != TaskKind::Transfer) continue;
      if (t.stream == kChannelAllToAll) CHECK(t.gpu / 4 == t.peer / 4);
      if (t.stream == kChannelInner) CHECK(t.gpu / 4 != t.peer / 4);
    }
  }
  // Forward ring: (R-1) = 1 hop of 2*c*h_kv*e = 2*64*32*2 bytes per rank.
  for (const double b : sent_bytes(low.forward, {kChannelInner, -1})) CHECK(b == 2 * 64 * 32 * 2);
}

TEST_CASE("lower_attention refuses what check_applicable refuses", "[lowering]") {
  const World world{1, 8};
  const AttentionStrategy s = make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::QRing);
  CHECK_THROWS_AS(lower_attention(mha(100), Mask{}, s, world), burst::Error);
}

TEST_CASE("family code: LoongTrain's gradients in bf16 after the first window, TransformerEngine merges in bf16",
          "[lowering][bytes]") {
  // 4 nodes x 4 GPUs, K,V-ring backward on a double ring: a rank's first window is its first 4
  // steps. LoongTrain keeps dQ and the travelling dK, dV in fp32 there and in bf16 from the hop
  // out of it on (the way home included).
  const World world{4, 4};
  const AttentionShape shape = mha(256, 4, 64);
  const double c = 16, h = 4 * 64;
  AttentionStrategy s = make_strategy(RingKind::Double, Layout::Zigzag, BackwardMode::KvRing);
  s.dkv_bytes = 4;
  const Mask causal{MaskKind::Causal, 0, 0};
  struct Bytes {
    double first = 0, later = 0, epilogue_first = 0, epilogue_later = 0;
  };
  const auto traffic = [&](const AttentionStrategy& strategy) {
    Bytes out;
    const int after = strategy.code.gradient_bytes_after_first_window;
    for (const Task& t : lower_attention(shape, causal, strategy, world).backward.tasks()) {
      const bool later = t.step >= 4;
      if (t.kind == TaskKind::Compute) (later ? out.epilogue_later : out.epilogue_first) += t.epilogue_bytes;
      if (t.kind != TaskKind::Transfer || t.stream != kChannelAccumulator) continue;
      CHECK(t.amount == 2 * c * h * (after > 0 && later ? after : strategy.dkv_bytes));
      (later ? out.later : out.first) += t.amount;
    }
    return out;
  };
  const Bytes fp32 = traffic(s);
  REQUIRE(fp32.first > 0);
  REQUIRE(fp32.later > 0);
  s.code.gradient_bytes_after_first_window = 2;  // LoongTrain's cast at its first window's end
  const Bytes loongtrain = traffic(s);
  CHECK(loongtrain.later == fp32.later / 2);
  CHECK(loongtrain.first == fp32.first);
  CHECK(loongtrain.epilogue_first == fp32.epilogue_first);
  // Per row dQ: 3 x 4 -> 3 x 2 bytes; per column dK, dV: 2 x 4 + 4 -> 2 x 2 + 4.
  CHECK(loongtrain.epilogue_later < fp32.epilogue_later);
  CHECK(loongtrain.epilogue_later > fp32.epilogue_later / 2);
  CHECK(strategy_preset("loongtrain-double-ring", shape, world).code.gradient_bytes_after_first_window == 2);
  CHECK(strategy_preset("burst", shape, world).code.gradient_bytes_after_first_window == 0);
  // megatron-cp's running output in the activation dtype.
  CHECK(strategy_preset("megatron-cp", shape, world).code.output_accumulator_bytes == 0);
  // Each step's merge reads and writes the running output: a + e + a bytes per element (and 12
  // per row and head for the lse pair), so bf16 (a = e = 2) against fp32 (a = 4).
  AttentionStrategy flat = make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::KvRing);
  const auto merge_bytes = [&](const AttentionStrategy& strategy) {
    double bytes = 0;
    for (const Task& t : lower_attention(shape, causal, strategy, world).forward.tasks())
      bytes += static_cast<double>(t.epilogue_bytes);
    return bytes;
  };
  const double fp32_merge = merge_bytes(flat);
  flat.code.output_accumulator_bytes = 0;
  const double bf16_merge = merge_bytes(flat);
  CHECK(fp32_merge / bf16_merge == Approx((10.0 * h + 12 * 4) / (6.0 * h + 12 * 4)));
}
