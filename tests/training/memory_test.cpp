// The memory model: items, checkpointing policies, LM head chunks, ZeRO sharding, offload.
#include <catch2/catch.hpp>

#include "training_fixtures.hpp"

using namespace burst;
using burst::test::a800;
using burst::test::job_of;

namespace {

sim::TrainingStrategy burst_preset(const sim::TrainingJob& job, const topo::Topology& t) {
  return sim::training_preset("burst", job, t);
}

double activation_side(const sim::MemoryBreakdown& m) { return m.activations + m.attention_stash; }

}  // namespace

TEST_CASE("memory items sum to the total, in the JSON too", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  const auto m = sim::estimate_memory(job, burst_preset(job, t), t);
  // total = params + gradients + optimizer + activations + stash + ring buffers + LM head + reserve
  const double sum =
      m.params + m.gradients + m.optimizer + m.activations + m.attention_stash + m.ring_buffers + m.lm_head + m.reserve;
  CHECK(m.total() == Approx(sum).epsilon(1e-12));
  const Json j = sim::to_json(m);
  CHECK(j.at("total").get<double>() == Approx(sum).epsilon(1e-12));
  CHECK(j.size() == 9);
  // reserve = its parts, the fragmentation 5% of everything else
  const sim::ReserveParts parts = sim::estimate_reserve(burst_preset(job, t), t, sum - m.reserve);
  CHECK(m.reserve == Approx(parts.total()).epsilon(1e-12));
  CHECK(parts.fragmentation == Approx(0.05 * (sum - m.reserve)).epsilon(1e-12));
}

TEST_CASE("the reserve: CUDA context, cuBLAS workspaces, each NCCL communicator's buffers, fragmentation",
          "[training][memory][reserve]") {
  const auto t = a800(2);  // 16 GPUs
  const auto job = job_of("burst-7b", 64 * 1024);
  constexpr double kMebibyte = 1024.0 * 1024;
  constexpr double kCommunicator = 32 * 2 * (4 * kMebibyte + 4915200 + 512 * 1024);  // 32 channels x 2 ring peers
  sim::TrainingStrategy s = sim::training_preset("burst", job, t);
  s.tp = 1;
  s.dp = 1;
  s.attention.ulysses = 1;
  s.attention.ring = RingKind::Flat;
  const sim::ReserveParts flat = sim::estimate_reserve(s, t, 0);
  CHECK(flat.context == 400e6);
  CHECK(flat.workspaces == 64 * kMebibyte);
  CHECK(flat.fragmentation == 0);
  // The ring's blocks and its travelling gradients (each on a communicator of its own in burst's
  // runtime), and ZeRO's group: 3 communicators, 588 MiB each (NVIDIA/nccl#964 measured 544-688 MB).
  CHECK(flat.communicators == 3);
  CHECK(flat.nccl == Approx(3 * kCommunicator));
  CHECK(kCommunicator / 1e6 == Approx(616.6).epsilon(1e-3));
  // A double ring doubles the ring's; one communicator carrying both halves them.
  s.attention.ring = RingKind::Double;
  CHECK(sim::estimate_reserve(s, t, 0).communicators == 5);
  s.memory.separate_accumulator_communicator = false;
  CHECK(sim::estimate_reserve(s, t, 0).communicators == 3);
  // A ring inside one node has one level, however it is asked for.
  const auto one_node = a800(1);
  CHECK(sim::estimate_reserve(s, one_node, 0).communicators == 2);  // the ring's, the gradients'
  // Ulysses of 8: its all-to-all reaches 7 peers; tensor parallelism of 2 adds its group, whose
  // ring of two has one peer; the gradients' group of 8 has two. A ring of 16 / 2 / 8 = 1: none.
  s.attention.ulysses = 8;
  s.tp = 2;
  const sim::ReserveParts wide = sim::estimate_reserve(s, t, 0);
  CHECK(wide.communicators == 3);
  CHECK(wide.nccl == Approx(kCommunicator * (7 + 1 + 2) / 2.0));
  CHECK(sim::estimate_reserve(s, t, 1e9).fragmentation == Approx(0.05e9));
  // CPU ranks hold none of it.
  const auto local = topo::load_topology("local", topo::LoadOptions{});
  CHECK(sim::estimate_reserve(s, local, 1e9).total() == 0);
  // The preset that packs dK,dV with K,V (TransformerEngine) and the one running both on one group.
  CHECK_FALSE(sim::training_preset("megatron-cp", job, t).memory.separate_accumulator_communicator);
  CHECK_FALSE(sim::training_preset("ring", job, t).memory.separate_accumulator_communicator);
  CHECK(sim::training_preset("loongtrain-double-ring", job, t).memory.separate_accumulator_communicator);
}

TEST_CASE("activation memory: none > attn_stash > seq_stash(0.5) > full", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  auto s = burst_preset(job, t);
  const auto with = [&](CheckpointPolicy policy, double kept) {
    s.checkpoint.policy = policy;
    s.checkpoint.kept_fraction = kept;
    return sim::estimate_memory(job, s, t);
  };
  const auto none = with(CheckpointPolicy::None, 0);
  const auto attn = with(CheckpointPolicy::AttnStash, 0);
  const auto seq = with(CheckpointPolicy::SeqStash, 0.5);
  const auto full = with(CheckpointPolicy::Full, 0);
  CHECK(activation_side(none) > activation_side(attn));
  CHECK(activation_side(attn) > activation_side(seq));
  CHECK(activation_side(seq) > activation_side(full));
  // attn_stash, seq_stash and full keep the same layer inputs and working set; the stash is
  // L * c * (O + lse) for attn_stash, f times that for seq_stash, nothing for full.
  CHECK(attn.activations == Approx(full.activations));
  CHECK(seq.attention_stash == Approx(0.5 * attn.attention_stash));
  CHECK(full.attention_stash == 0);
  // stash per token per layer: e * heads * head_dim + 4 bytes of lse per head
  const double c = sim::local_tokens(job, t, TrainingKnobs{});
  const auto& m = job.model;
  CHECK(attn.attention_stash == Approx(c * m.layers * (2.0 * m.heads * m.head_dim + 4.0 * m.heads)));
}

TEST_CASE("the LM head workspace shrinks by the chunk count", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);  // 4096 local tokens on 16 GPUs
  auto s = burst_preset(job, t);
  s.lm_head_chunks = 1;
  const double one = sim::estimate_memory(job, s, t).lm_head;
  s.lm_head_chunks = 8;
  const double eight = sim::estimate_memory(job, s, t).lm_head;
  CHECK(eight == Approx(one / 8).epsilon(0.01));
  // one chunk: c tokens x vocab x (bf16 logits + fp32 softmax + fp32 gradient)
  CHECK(one == Approx(sim::local_tokens(job, t, TrainingKnobs{}) * 32000 * 10.0));
}

TEST_CASE("ZeRO-3 parameters are stage 0's over P, plus two gathered layers", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  auto s = burst_preset(job, t);
  s.zero.stage = 0;
  const auto stage0 = sim::estimate_memory(job, s, t);
  s.zero.stage = 3;
  const auto stage3 = sim::estimate_memory(job, s, t);
  const double p = t.gpu_count();
  // params(3) = params(0) / P + 2 * e * layer_params
  CHECK(stage3.params == Approx(stage0.params / p + 2 * 2 * job.model.layer_params()));
  CHECK(stage3.gradients == Approx(stage0.gradients / p));
  CHECK(stage3.optimizer == Approx(stage0.optimizer / p));
  CHECK(stage0.optimizer == Approx(12 * job.model.total_params()));
  s.zero.stage = 1;
  const auto stage1 = sim::estimate_memory(job, s, t);
  CHECK(stage1.params == Approx(stage0.params));  // stage 1 shards the optimizer only
  CHECK(stage1.gradients == Approx(stage0.gradients));
  CHECK(stage1.optimizer == Approx(stage3.optimizer));
}

TEST_CASE("offload removes optimizer memory", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("burst-7b", 64 * 1024);
  auto s = burst_preset(job, t);
  const auto on_gpu = sim::estimate_memory(job, s, t);
  s.zero.offload = true;
  const auto offloaded = sim::estimate_memory(job, s, t);
  CHECK(on_gpu.optimizer > 0);
  CHECK(offloaded.optimizer == 0);
  CHECK(offloaded.params == on_gpu.params);
  CHECK(offloaded.total() < on_gpu.total());
}

TEST_CASE("ring buffers: two blocks in flight per ring level", "[training][memory]") {
  const auto t = a800(2);
  const auto job = job_of("tiny-mha", 64 * 1024);  // 4 heads of 128, MHA
  auto s = burst_preset(job, t);
  s.attention.backward = BackwardMode::KvRing;
  s.attention.dkv_bytes = 2;
  s.attention.ring = RingKind::Flat;
  const double flat = sim::estimate_memory(job, s, t).ring_buffers;
  // K,V-ring backward block (K, V, dK, dV in bf16) is twice the forward's: 2 x c x 4 h_kv e
  const double c = sim::local_tokens(job, t, TrainingKnobs{}), hkv = 512;
  CHECK(flat == Approx(2 * c * 4 * hkv * 2));
  s.attention.ring = RingKind::Double;
  CHECK(sim::estimate_memory(job, s, t).ring_buffers == Approx(2 * flat));
  // On one node a double ring's outer ring has one rank: one level holds blocks, as a flat ring's.
  const auto one_node = a800(1);
  s.attention.ring = RingKind::Flat;
  const double flat_one_node = sim::estimate_memory(job, s, one_node).ring_buffers;
  s.attention.ring = RingKind::Double;
  CHECK(sim::estimate_memory(job, s, one_node).ring_buffers == Approx(flat_one_node));
}
