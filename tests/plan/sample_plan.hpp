// Test helper shared by tests/plan and tests/report: a complete plan as the planner would
// write it. A 7B-class GQA model at 256K tokens with a sliding-window mask on 2 nodes of
// 8 GPUs: burst with a double ring (inner 8 x outer 2) and a sequence-level stash, against
// three peers: one feasible, one over the memory budget, one that cannot run at all (its
// prediction is all zeros, as the planner leaves it).
#pragma once

#include <utility>

#include "plan/plan.hpp"

namespace burst::test {

inline plan::Prediction sample_prediction(double step_s, double memory_gib) {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  plan::Prediction p;
  p.step_time_s = step_s;
  p.tokens_per_s_per_gpu = 262144.0 / 16.0 / step_s;
  p.mfu = 0.41 * 10.0 / step_s;
  p.exposed_comm_s = 0.05 * step_s;
  p.memory_total_bytes = memory_gib * kGiB;
  p.memory_bytes = {{"params", 0.1 * memory_gib * kGiB},
                    {"gradients", 0.1 * memory_gib * kGiB},
                    {"optimizer", 0.2 * memory_gib * kGiB},
                    {"activations", 0.5 * memory_gib * kGiB},
                    {"workspace", 0.1 * memory_gib * kGiB}};
  p.time_s = {{"dense_compute", 0.5 * step_s},
              {"attention_compute", 0.3 * step_s},
              {"exposed_comm", 0.05 * step_s},
              {"recompute", 0.1 * step_s},
              {"optimizer", 0.05 * step_s}};
  p.comm_bytes_intra = 3.5e10;
  p.comm_bytes_inter = 1.25e10;
  p.attention_forward_s = 0.0123456789;
  p.attention_backward_s = 0.0308641975;
  return p;
}

inline plan::Strategy sample_strategy(std::string name, RingKind ring, BackwardMode backward) {
  plan::Strategy s;
  s.name = std::move(name);
  s.cp = 16;
  s.ring = ring;
  s.inner = ring == RingKind::Double ? 8 : 16;
  s.outer = ring == RingKind::Double ? 2 : 1;
  s.backward = backward;
  s.dkv_bytes = backward == BackwardMode::KvRing ? 4 : 2;
  return s;
}

inline Json sample_cluster() {
  return Json::parse(R"({
    "schema": "burst.topology/1", "name": "a800-4hca", "nodes": 2,
    "gpu": {"model": "A800-SXM4-80GB", "peak_bf16": "312TFLOPS", "memory": "80GiB", "memory_bandwidth": "2039GBps"},
    "node": {"devices": [{"name": "nvswitch", "kind": "nvswitch"},
                         {"name": "gpu0", "kind": "gpu"}, {"name": "gpu1", "kind": "gpu"},
                         {"name": "gpu2", "kind": "gpu"}, {"name": "gpu3", "kind": "gpu"},
                         {"name": "gpu4", "kind": "gpu"}, {"name": "gpu5", "kind": "gpu"},
                         {"name": "gpu6", "kind": "gpu"}, {"name": "gpu7", "kind": "gpu"},
                         {"name": "nic0", "kind": "nic", "ports": 1, "port_bandwidth": "200Gbps"}],
             "links": []},
    "fabric": {"kind": "rail-optimized", "latency": "2us"}})");
}

inline plan::Plan sample_plan() {
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  plan::Plan p;
  p.generator = "burst 0.1.0";
  p.topology_name = "a800-4hca x2";
  p.topology_hash = "9f3c2a1b7d4e5f60";
  p.cluster = sample_cluster();
  p.candidates_evaluated = 412;

  p.job.model = ModelSpec{"llama3-8b", 32, 4096, 14336, 32, 8, 128, 128256, true, "silu"};
  p.job.seq = 262144;
  p.job.batch = 1;
  p.job.dtype = "bf16";
  p.job.mask = Mask{MaskKind::SlidingWindow, 4096, 0};
  p.job.memory_budget_bytes = 80 * kGiB;

  p.strategy = sample_strategy("burst", RingKind::Double, BackwardMode::QRing);
  p.strategy.checkpoint.policy = CheckpointPolicy::SeqStash;
  p.strategy.checkpoint.kept_fraction = 0.5;
  p.strategy.lm_head_chunks = 64;
  p.strategy.zero.offload = true;

  for (int r = 0; r < 16; ++r) p.ranks.push_back({r, r / 8, r % 8});
  for (int node = 0; node < 2; ++node) {
    plan::Ring ring{"intra", 0, {}};
    for (int local = 0; local < 8; ++local) ring.order.push_back(node * 8 + local);
    p.rings.push_back(ring);
  }
  for (int local = 0; local < 8; ++local) p.rings.push_back({"inter", 0, {local, 8 + local}});

  p.predicted = sample_prediction(10.0, 61.5);
  p.alternatives.push_back(
      {sample_strategy("megatron-cp", RingKind::Flat, BackwardMode::KvRing), true, "", sample_prediction(11.7, 66.0)});
  p.alternatives.push_back({sample_strategy("loongtrain-double-ring", RingKind::Double, BackwardMode::KvRing), false,
                            "needs 97.2 GiB per GPU, budget 80 GiB", sample_prediction(12.4, 97.2)});
  plan::Strategy ulysses = sample_strategy("ds-ulysses", RingKind::Flat, BackwardMode::KvRing);
  ulysses.cp = 1;
  ulysses.inner = 1;
  ulysses.ulysses = 16;
  p.alternatives.push_back({ulysses, false, "not applicable: 8 KV heads do not split 16 ways", plan::Prediction{}});
  // As the planner writes them, the chosen family's best is among the alternatives too.
  p.alternatives.push_back({p.strategy, true, "", p.predicted});
  return p;
}

}  // namespace burst::test
