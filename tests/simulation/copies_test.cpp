// One copy of an attention layer standing for all of them (simulator/detail/attention/copies.hpp): where
// the tensor-parallel copies and data-parallel replicas share no link, the reduced simulation's
// figures are the full simulation's; where they share one, every copy is simulated and the reason
// is given.
#include <catch2/catch.hpp>

#include "simulator/layer_simulation.hpp"
#include "topologies/load.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

topo::Topology nodes_of(const char* preset, int nodes) {
  topo::LoadOptions options;
  options.nodes = nodes;
  return topo::load_topology(preset, options);
}

AttentionShape shape_of(int tp, int dp) {
  AttentionShape s;
  s.heads = 32 / tp;
  s.kv_heads = 8 / tp;
  s.head_dim = 128;
  s.seq = 64 * 1024;
  s.tensor_parallel = tp;
  s.data_parallel = dp;
  return s;
}

LayerSimulation simulate(const AttentionShape& shape, const char* family, const topo::Topology& t, bool reduce,
                         const char* engine = "event") {
  LayerSimOptions options;
  options.reduce_copies = reduce;
  options.engine = engine;
  return simulate_attention_layer(shape, Mask{}, strategy_preset(family, shape, t), t, options);
}

void same_phase(const PhaseFigures& a, const PhaseFigures& b) {
  CHECK(a.time_s == Approx(b.time_s).epsilon(1e-12));
  CHECK(a.compute_max_s == Approx(b.compute_max_s).epsilon(1e-12));
  CHECK(a.exposed_comm_s == Approx(b.exposed_comm_s).margin(1e-15).epsilon(1e-9));
  CHECK(a.imbalance == Approx(b.imbalance).epsilon(1e-12));
  CHECK(a.flops_total == Approx(b.flops_total).epsilon(1e-12));
  CHECK(a.bytes_per_rank == Approx(b.bytes_per_rank).epsilon(1e-12));
  CHECK(a.bytes_per_rank_max == Approx(b.bytes_per_rank_max).epsilon(1e-12));
  for (std::size_t k = 0; k < a.bytes_per_rank_by_class.size(); ++k)
    CHECK(a.bytes_per_rank_by_class[k] == Approx(b.bytes_per_rank_by_class[k]).epsilon(1e-12));
  for (std::size_t k = 0; k < a.link_bytes_per_rank.size(); ++k)
    CHECK(a.link_bytes_per_rank[k] == Approx(b.link_bytes_per_rank[k]).epsilon(1e-12));
}

}  // namespace

TEST_CASE("copies that share no link: one simulated gives the full simulation's figures", "[copies]") {
  const auto t = nodes_of("dgx-h100", 4);  // a NIC per GPU on rail-optimised leaves
  for (const auto& [tp, dp] : {std::pair{2, 2}, std::pair{1, 4}, std::pair{4, 1}, std::pair{2, 4}}) {
    for (const char* family : {"burst", "megatron-cp", "burst-usp"}) {
      for (const char* engine : {"event", "analytic"}) {
        INFO(family << " tp " << tp << " dp " << dp << " " << engine);
        const AttentionShape shape = shape_of(tp, dp);
        const LayerSimulation reduced = simulate(shape, family, t, true, engine);
        const LayerSimulation full = simulate(shape, family, t, false, engine);
        REQUIRE(reduced.not_applicable.empty());
        CHECK(reduced.copies == tp * dp);
        CHECK(reduced.copies_simulated == 1);
        CHECK(reduced.copies_note == "");
        CHECK(full.copies_simulated == tp * dp);
        CHECK(reduced.forward.tasks * static_cast<std::size_t>(tp * dp) == full.forward.tasks);
        same_phase(reduced.forward, full.forward);
        same_phase(reduced.backward, full.backward);
      }
    }
  }
}

TEST_CASE("copies that share a NIC are all simulated, and the reason says which link", "[copies]") {
  const auto t = nodes_of("a800-4hca", 2);  // two GPUs per HCA: tensor-parallel ranks 0 and 1 share it
  const AttentionShape shape = shape_of(2, 1);
  const LayerSimulation sim = simulate(shape, "megatron-cp", t, true);
  REQUIRE(sim.not_applicable.empty());
  CHECK(sim.copies == 2);
  CHECK(sim.copies_simulated == 2);
  CHECK_THAT(sim.copies_note, Catch::Contains("copies 0 and 1 both cross"));
  same_phase(sim.forward, simulate(shape, "megatron-cp", t, false).forward);
}
