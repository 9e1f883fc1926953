// One copy of an attention layer standing for all of them (simulator/detail/attention/copies.hpp): where
// the tensor-parallel copies and data-parallel replicas share no link, the reduced simulation's
// figures are the full simulation's; where they share one, every copy is simulated and the reason
// is given.
#include <catch2/catch.hpp>

#include "simulator/layer_simulation.hpp"
#include "tests/support/phase_figures.hpp"

using namespace burst;
using namespace burst::sim;

namespace {

using test::nodes_of;
using test::same_phase;

AttentionShape shape_of(int tp, int dp) { return test::attention_shape(tp, dp, 64 * 1024); }

LayerSimulation simulate(const AttentionShape& shape, const char* family, const topo::Topology& t, bool reduce,
                         const char* engine = "event") {
  LayerSimOptions options;
  options.reduce_copies = reduce;
  options.engine = engine;
  return simulate_attention_layer(shape, Mask{}, strategy_preset(family, shape, t), t, options);
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
