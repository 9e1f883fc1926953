// The plan's precision on real ranks: bf16 tensors and bf16 or fp32 travelling accumulators.
//   - the bytes each ring level carries equal, to the byte, what the simulator's lowering of the
//     same plan sends (the simulator prices e = 2 bytes for K, V, Q, dO, 4 for D and lse, and
//     dq_bytes / dkv_bytes for the accumulators), for flat and double rings, with and without
//     Ulysses groups, every layout, both backward modes and several masks;
//   - every such run still matches the fp32 reference on the same bf16-rounded inputs within the
//     bf16 tolerance (max |error| / max |reference|);
//   - a plan field the runtime cannot honour is refused by its JSON pointer.
#include <catch2/catch.hpp>

#include <array>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/token_sets.hpp"
#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/executor/attention_run.hpp"
#include "planner/plan_traffic.hpp"
#include "tests/support/checked_run.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using burst::test::checking;

namespace {

plan::Plan bf16_plan(int world, int ulysses, int inner, Layout layout, BackwardMode backward, const std::string& mask,
                     int dq_bytes, int dkv_bytes) {
  const int ring = world / ulysses;
  const std::int64_t seq = 4 * layout_multiple(layout, ring) * ulysses;
  plan::Plan p = test::usp_plan(world, ulysses, inner, layout, backward, mask, 2 * ulysses, 2 * ulysses, 16, seq);
  p.job.dtype = "bf16";
  p.strategy.dq_bytes = dq_bytes;
  p.strategy.dkv_bytes = dkv_bytes;
  return p;
}

}  // namespace

TEST_CASE("bf16 plans send exactly the simulator's bytes on every ring level and match the reference") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  struct Shape {
    int ulysses, inner;
  };
  std::vector<Shape> shapes{{1, world}};
  if (world >= 4) shapes.insert(shapes.end(), {{1, 2}, {2, world / 2}});
  if (world >= 8) shapes.push_back({2, 2});
  const rt::AttentionRunOptions options = checking();
  int runs = 0;
  for (const Shape shape : shapes) {
    for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
      for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
        for (const std::string mask : {"full", "causal", "sliding:5", "document:6"}) {
          // bf16 accumulators on the mode's own ring, fp32 on the other (which it does not use).
          const plan::Plan p = bf16_plan(world, shape.ulysses, shape.inner, layout, backward, mask, 2, 4);
          const auto report = rt::run_attention(p, *comm, options);
          if (comm->rank() != 0) continue;
          INFO(fmt::format("{} ranks, ulysses {}, inner {}, {}, {}, {}", world, shape.ulysses, shape.inner,
                           to_string(layout), to_string(backward), mask));
          INFO(report->to_json()["check"].dump());
          CHECK(report->check->passed);
          const planner::RingTraffic simulated = planner::simulated_ring_traffic(
              p, {p.job.seq, p.job.model.heads, p.job.model.kv_heads, p.job.model.head_dim});
          for (int phase = 0; phase < 2; ++phase) {
            const rt::LevelBytes& measured =
                phase == 0 ? report->comm_bytes.by_level.forward : report->comm_bytes.by_level.backward;
            for (const auto& [level, name] : {std::pair{0, "flat"}, std::pair{1, "intra"}, std::pair{2, "inter"}}) {
              INFO(fmt::format("{} {}", phase == 0 ? "forward" : "backward", name));
              CHECK(measured[static_cast<std::size_t>(level)] ==
                    simulated[static_cast<std::size_t>(phase)][static_cast<std::size_t>(level)]);
            }
          }
          ++runs;
        }
      }
    }
  }
  if (comm->rank() == 0) CHECK(runs == 24 * static_cast<int>(shapes.size()));
}

TEST_CASE("bf16 accumulators halve the accumulator bytes of fp32 ones") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
    const auto half = rt::run_attention(bf16_plan(world, 1, world, Layout::Zigzag, backward, "full", 2, 2), *comm, {});
    const auto full = rt::run_attention(bf16_plan(world, 1, world, Layout::Zigzag, backward, "full", 4, 4), *comm, {});
    if (comm->rank() != 0) continue;
    // Full mask, flat ring of P, c tokens a rank, H heads of d: P accumulator hops a rank of
    // c H d (dQ) or 2 c H_kv d (dK, dV) elements, at 2 or 4 bytes each.
    const double p = world, c = 4.0 * 2 * world / world, h = 2, d = 16;
    const double elements = backward == BackwardMode::QRing ? c * h * d : 2 * c * h * d;
    CHECK(full->comm_bytes.total.backward - half->comm_bytes.total.backward == Approx(p * elements * 2));
  }
}

TEST_CASE("precision fields the runtime cannot honour are refused by their JSON pointer") {
  const auto comm = rt::make_mpi_communicator({30});
  plan::Plan p = bf16_plan(comm->size(), 1, comm->size(), Layout::Zigzag, BackwardMode::QRing, "causal", 2, 2);
  p.job.dtype = "fp16";
  p.strategy.dq_bytes = 1;
  p.strategy.dkv_bytes = 8;
  CHECK(test::error_text([&] { (void)rt::run_attention(p, *comm, {}); }) ==
        "plan:/job/dtype: 'fp16' has no path in the runtime (valid: bf16, fp32; hint: plan with --dtype bf16 (the "
        "default) or --dtype fp32)\n"
        "plan:/strategy/dq_bytes: 1 bytes per travelling gradient element (valid: 2 (bf16) or 4 (fp32); hint: the "
        "runtime accumulates in fp32 and sends bf16 or fp32)\n"
        "plan:/strategy/dkv_bytes: 8 bytes per travelling gradient element (valid: 2 (bf16) or 4 (fp32); hint: the "
        "runtime accumulates in fp32 and sends bf16 or fp32)");
}
