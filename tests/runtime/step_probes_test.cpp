// The calibration's probes of the training step outside matrix products and attention: the
// decoder layer's elementwise kernels (runtime/calibration/layer_speed.hpp), run on every rank at
// once, each timed run charged the work the caller counts for its tokens times the layers it
// repeats; and the AdamW step (runtime/calibration/optimizer_speed.hpp).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "runtime/calibration/layer_speed.hpp"
#include "runtime/calibration/optimizer_speed.hpp"
#include "tests/support/loopback_job.hpp"

using namespace burst;

TEST_CASE("the layer probe times every token count on every rank and charges it the caller's work") {
  constexpr int kRanks = 2;
  rt::LayerElementwiseOptions o;
  o.tokens = {16, 64};
  o.shape = {64, 2, 1, 32, 96};  // hidden, heads, KV heads, head dim, MLP width
  o.rounds = 2;
  o.tokens_per_run = 128;  // 8 layers of 16 tokens a run, 2 of 64
  std::vector<std::vector<rt::KernelSpeed>> by_rank(kRanks);
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    by_rank[static_cast<std::size_t>(comm.rank())] = rt::measure_layer_elementwise(
        comm, o, [](std::int64_t tokens) { return 1000.0 * static_cast<double>(tokens); });
  });
  for (const auto& e : errors) CHECK(e.empty());
  const std::vector<rt::KernelSpeed>& speeds = by_rank[0];
  REQUIRE(speeds.size() == 2u);
  for (const rt::KernelSpeed& s : speeds) {
    CHECK(s.kernel == "elementwise");
    CHECK(s.seconds > 0);
  }
  CHECK(speeds[0].block == 16);
  CHECK(speeds[0].flops == 8 * 1000.0 * 16);
  CHECK(speeds[1].block == 64);
  CHECK(speeds[1].flops == 2 * 1000.0 * 64);
  for (const rt::KernelSpeed& s : by_rank[1]) CHECK(s.seconds == 0);  // complete on rank 0 only
}

TEST_CASE("the optimizer probe gives rank 0 a positive AdamW rate, measured on every rank") {
  constexpr int kRanks = 2;
  std::vector<double> rates(kRanks, -1);
  const auto errors = test::on_every_rank(kRanks, [&](rt::Communicator& comm) {
    rates[static_cast<std::size_t>(comm.rank())] = rt::measure_optimizer_speed(comm, {4096, 2});
  });
  for (const auto& e : errors) CHECK(e.empty());
  CHECK(rates[0] > 0);
  CHECK(rates[1] == 0);  // complete on rank 0 only
}
