// Strategy families: names, presets, applicability messages (golden), the topology entry points.
#include <catch2/catch.hpp>

#include "brute_force.hpp"
#include "common/error.hpp"
#include "topologies/load.hpp"

using namespace burst::sim;
using namespace burst::sim::testing;

namespace {

std::string unknown_strategy_error(std::string_view name) {
  try {
    (void)strategy_preset(name, mha(1024), World{1, 8});
  } catch (const burst::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("strategy names are the families of docs/strategies.md, each with a preset", "[strategy]") {
  const std::vector<std::string> expected = {
      "burst", "burst-usp", "megatron-cp", "ds-ulysses", "loongtrain-double-ring", "loongtrain-usp", "ring"};
  REQUIRE(family_names() == expected);
  for (const auto& name : expected) CHECK(strategy_preset(name, mha(1 << 16, 32, 128), World{4, 8}).name == name);
}

TEST_CASE("presets: what each family does by default", "[strategy]") {
  const World world{4, 8};
  const AttentionShape mha32 = mha(1 << 20, 32, 128);
  const AttentionStrategy burst = strategy_preset("burst", mha32, world);
  CHECK(burst.ring == RingKind::Double);
  CHECK(burst.inner == 0);
  CHECK(burst.layout == Layout::Zigzag);
  CHECK(burst.backward == BackwardMode::QRing);
  CHECK(burst.dq_bytes == 2);
  CHECK(burst.overlap);

  const AttentionStrategy ring = strategy_preset("ring", mha32, world);
  CHECK(ring.ring == RingKind::Flat);
  CHECK(ring.layout == Layout::Contiguous);
  CHECK(ring.backward == BackwardMode::KvRing);
  CHECK(ring.dkv_bytes == 4);

  const AttentionStrategy megatron = strategy_preset("megatron-cp", mha32, world);
  CHECK(megatron.layout == Layout::Zigzag);
  CHECK(megatron.backward == BackwardMode::KvRing);
  CHECK(megatron.dkv_bytes == 2);

  CHECK(strategy_preset("ds-ulysses", mha32, world).ulysses == 32);
  const AttentionStrategy loong = strategy_preset("loongtrain-double-ring", mha32, world);
  CHECK(loong.ring == RingKind::Double);
  CHECK(loong.dkv_bytes == 4);
  CHECK(strategy_preset("loongtrain-usp", mha32, world).ulysses == 4);
  const AttentionStrategy usp = strategy_preset("burst-usp", mha32, world);
  CHECK(usp.ulysses == 8);
  CHECK(usp.ring == RingKind::Flat);
  // 40 heads (burst-14b): 8 divides 40, so burst-usp still takes a whole node.
  CHECK(strategy_preset("burst-usp", mha(1 << 20, 40, 128), world).ulysses == 8);
  // 6 heads on 8-GPU nodes: the largest degree dividing 6 and 8 is 2.
  CHECK(strategy_preset("burst-usp", mha(1 << 20, 6, 128), world).ulysses == 2);
}

TEST_CASE("burst picks the Q ring for MHA and the K,V ring when GQA makes K,V cheaper", "[strategy]") {
  // Per token of one query head (d = 128, e = dq = dkv = 2, R = 32):
  //   MHA: Q ring 31*520 + 32*256 = 24312 < K,V ring 31*512 + 32*512 = 32256.
  //   GQA 4:1 (K,V a quarter of Q): K,V ring (31*512 + 32*512) / 4 = 8064 < 24312.
  const World world{4, 8};
  AttentionShape shape = mha(1 << 20, 32, 128);
  CHECK(strategy_preset("burst", shape, world).backward == BackwardMode::QRing);
  shape.kv_heads = 8;
  CHECK(strategy_preset("burst", shape, world).backward == BackwardMode::KvRing);
  const AttentionStrategy s = strategy_preset("burst", shape, world);
  CHECK(ring_backward_bytes_per_rank(BackwardMode::KvRing, shape, s, 32) <
        ring_backward_bytes_per_rank(BackwardMode::QRing, shape, s, 32));
}

TEST_CASE("an unknown strategy name is an error with a suggestion", "[strategy]") {
  CHECK(unknown_strategy_error("brust") ==
        "strategy: unknown strategy 'brust' (valid: burst, burst-usp, megatron-cp, ds-ulysses, loongtrain-double-ring, "
        "loongtrain-usp, ring; hint: did you mean 'burst'?)");
  CHECK(unknown_strategy_error("megatron") ==
        "strategy: unknown strategy 'megatron' (valid: burst, burst-usp, megatron-cp, ds-ulysses, "
        "loongtrain-double-ring, "
        "loongtrain-usp, ring; hint: did you mean 'megatron-cp'?)");
}

TEST_CASE("check_applicable explains what cannot run (golden)", "[strategy]") {
  const World world{4, 8};
  const Mask causal{};
  // DeepSpeed-Ulysses over 32 ranks with 40 heads (burst-14b), and with 32 heads but 8 KV heads.
  AttentionShape shape = mha(1 << 20, 40, 128);
  CHECK(check_applicable(strategy_preset("ds-ulysses", shape, world), shape, causal, world) ==
        "ulysses: Ulysses degree 32 does not divide the 40 attention heads (valid: 1, 2, 4, 8 (dividing the heads, "
        "the KV heads and the world; inside a node or whole nodes); hint: a ring over the remaining ranks "
        "(burst-usp, loongtrain-usp) lifts the limit)");
  shape = mha(1 << 20, 32, 128);
  shape.kv_heads = 8;
  CHECK(check_applicable(strategy_preset("ds-ulysses", shape, world), shape, causal, world) ==
        "ulysses: Ulysses degree 32 does not divide the 8 KV heads (valid: 1, 2, 4, 8 (dividing the heads, the KV "
        "heads and the world; inside a node or whole nodes); hint: KV heads are not replicated across a Ulysses "
        "group, so the degree is at most the KV head count; a ring over the remaining ranks (burst-usp, "
        "loongtrain-usp) lifts the limit)");
  // A Ulysses group straddling nodes.
  shape = mha(1 << 20, 48, 128);
  AttentionStrategy s = make_strategy(RingKind::Flat, Layout::Zigzag, BackwardMode::QRing, 16);
  CHECK(check_applicable(s, shape, causal, World{2, 12}) ==
        "ulysses: Ulysses degree 16 does not divide the 24 ranks of the world (valid: 1, 2, 3, 4, 6, 12, 24 (dividing "
        "the heads, the KV heads and the world; inside a node or whole nodes)); ulysses: Ulysses degree 16 neither "
        "divides the 12 GPUs of a node nor spans whole nodes (valid: 1, 2, 3, 4, 6, 12, 24 (dividing the heads, the "
        "KV heads and the world; inside a node or whole nodes); hint: a group of consecutive ranks must not straddle "
        "a node boundary)");
  // Zigzag needs 2R chunks; contiguous R; with Ulysses, a share per group member too.
  shape = mha(1000, 32, 128);
  CHECK(check_applicable(strategy_preset("megatron-cp", shape, world), shape, causal, world) ==
        "seq: 1000 tokens do not split evenly: zigzag on a ring of 32 ranks (2 chunks per rank) needs a multiple of "
        "64 (valid: a multiple of 64; hint: nearest valid lengths: 960 or 1024)");
  CHECK(check_applicable(strategy_preset("ring", shape, world), shape, causal, world) ==
        "seq: 1000 tokens do not split evenly: contiguous on a ring of 32 ranks needs a multiple of 32 (valid: a "
        "multiple of 32; hint: nearest valid lengths: 992 or 1024)");
  shape.seq = 40;
  CHECK(check_applicable(strategy_preset("loongtrain-usp", shape, world), shape, causal, world) ==
        "seq: 40 tokens do not split evenly: zigzag on a ring of 8 ranks (2 chunks per rank), each split 4 ways by "
        "Ulysses, needs a multiple of 32 (valid: a multiple of 32; hint: nearest valid lengths: 32 or 64)");
  shape.seq = 8;
  CHECK(check_applicable(strategy_preset("burst", shape, world), shape, causal, world) ==
        "seq: 8 tokens do not split evenly: zigzag on a ring of 32 ranks (2 chunks per rank) needs a multiple of 64 "
        "(valid: a multiple of 64; hint: the shortest valid length is 64)");
  // A rank's block must fit the 32-bit block size of a compute task.
  shape.seq = std::int64_t{1} << 37;
  CHECK(check_applicable(strategy_preset("ring", shape, world), shape, causal, world) ==
        "seq: 137438953472 tokens on a ring of 32 ranks: 4294967296 per rank (valid: at most 2147483647 tokens per "
        "ring rank; hint: more GPUs, or a Ulysses degree of 1, split the sequence further)");
  // An inner ring that does not divide the ring.
  shape.seq = 1 << 20;
  s = make_strategy(RingKind::Double, Layout::Zigzag, BackwardMode::QRing, 1, 5);
  CHECK(check_applicable(s, shape, causal, world) ==
        "inner: an inner ring of 5 does not divide the ring of 32 ranks (valid: 0 (the ring ranks of one node) or a "
        "divisor of 32: 1, 2, 4, 8, 16, 32)");
  // Empty world; bad shape; bad mask.
  CHECK(check_applicable(s, shape, causal, World{0, 8}) ==
        "topology: the world is empty: 0 nodes x 8 GPUs per node (valid: at least 1 node of at least 1 GPU)");
  AttentionShape gqa = mha(1 << 20, 32, 128);
  gqa.kv_heads = 5;
  CHECK(check_applicable(strategy_preset("burst", gqa, world), gqa, Mask{MaskKind::SlidingWindow, 0, 0}, world) ==
        "kv_heads: 5 KV heads do not divide 32 attention heads (valid: a divisor of the head count (equal to it for "
        "MHA, fewer for GQA)); mask: a sliding window of 0 tokens (valid: at least 1 token; hint: write it like "
        "\"sliding:4K\")");
  CHECK(check_applicable(strategy_preset("burst", shape, world), shape, causal, world).empty());
}

TEST_CASE("lower_attention throws every problem at once as a burst::Error", "[strategy]") {
  const World world{4, 8};
  AttentionShape shape = mha(1000, 40, 128);
  shape.kv_heads = 20;
  try {
    (void)lower_attention(shape, Mask{}, strategy_preset("ds-ulysses", shape, world), world);
    FAIL("expected burst::Error");
  } catch (const burst::Error& e) {
    // 32 divides neither the 40 heads nor the 20 KV heads: two problems, one exception.
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].what == "Ulysses degree 32 does not divide the 40 attention heads");
    CHECK(e.problems()[1].what == "Ulysses degree 32 does not divide the 20 KV heads");
  }
}

TEST_CASE("the topology entry points see the preset's nodes and GPUs", "[strategy][topology]") {
  burst::topo::LoadOptions options;
  options.nodes = 2;
  const burst::topo::Topology topology = burst::topo::load_topology("a800-4hca", options);
  const AttentionShape shape = mha(1 << 12, 32, 128);
  const AttentionStrategy s = strategy_preset("burst", shape, topology);
  CHECK(check_applicable(s, shape, Mask{}, topology).empty());
  const LoweredAttention low = lower_attention(shape, Mask{}, s, topology);
  CHECK(low.forward.gpus() == 16);
  // Double ring over 2 nodes x 8: each block crosses to the other node once.
  CHECK(count_tasks(low.forward, TaskKind::Transfer, kChannelOuter) == 16);
  for (const Task& t : low.forward.tasks()) {
    if (t.kind == TaskKind::Transfer && t.stream == kChannelOuter)
      CHECK(topology.node_of(t.gpu) != topology.node_of(t.peer));
  }
}
