// Ulysses and Ulysses x ring (USP) attention on every rank of the job, checked against the
// single-rank reference: ds-ulysses (no ring), burst-usp (flat ring across groups) and
// loongtrain-usp (double ring across groups), every layout x backward mode x mask, MHA and GQA;
// the all-to-all's and the rings' bytes against their closed forms; and the plans the runtime
// must refuse, by field.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/token_sets.hpp"
#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/executor/attention_run.hpp"
#include "tests/support/checked_run.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using burst::test::checking;
using burst::test::usp_plan;

namespace {

struct Shape {
  int ulysses, inner;  // inner == ring size: a flat ring
};

// Every (Ulysses degree, ring) this job's size allows: U = world (ds-ulysses), U = 2 with a flat
// ring, and with a double ring when the ring has at least 4 ranks.
std::vector<Shape> shapes(int world) {
  std::vector<Shape> out{{world, 1}};
  if (world >= 4) out.push_back({2, world / 2});
  if (world >= 8) out.push_back({2, 2});
  return out;
}

}  // namespace

TEST_CASE("Ulysses and USP attention match the single-rank reference for every layout, backward and mask") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  int runs = 0;
  for (const Shape shape : shapes(world)) {
    const int ring = world / shape.ulysses;
    for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
      const std::int64_t seq = 6 * layout_multiple(layout, ring) * shape.ulysses;  // 6 or 12 rows a member
      for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
        for (const std::string mask : {"full", "causal", "sliding:5", "document:7"}) {
          // MHA, and GQA with two query heads per KV head; the KV heads split over the group.
          for (const auto& [heads, kv_heads] : std::vector<std::pair<int, int>>{{world, world}, {2 * world, world}}) {
            const plan::Plan p =
                usp_plan(world, shape.ulysses, shape.inner, layout, backward, mask, heads, kv_heads, 8, seq);
            const auto report = rt::run_attention(p, *comm, checking());
            if (comm->rank() != 0) continue;
            INFO(fmt::format("{} ranks, ulysses {}, inner {}, {}, {}, {}, {} heads / {} KV", world, shape.ulysses,
                             shape.inner, to_string(layout), to_string(backward), mask, heads, kv_heads));
            INFO(report->to_json()["check"].dump());
            CHECK(report->check->passed);
            CHECK(report->messages.sent.forward == report->messages.received.forward);
            CHECK(report->messages.sent.backward == report->messages.received.backward);
            ++runs;
          }
        }
      }
    }
  }
  if (comm->rank() == 0) CHECK(runs == 48 * static_cast<int>(shapes(world).size()));
}

TEST_CASE("the all-to-all and the rings of USP move the closed-form bytes") {
  // Full mask, U-member groups around a flat ring of R = P / U, c tokens per ring rank, r = c / U
  // rows a rank, H = KV heads, d, fp32 (4 bytes). Per rank, to each of its U - 1 peers:
  //   forward all-to-all   r (H/U) d for each of Q, K, V, O, plus r (H/U) lse
  //   backward all-to-all  the same for Q, K, V, O, dO, lse and dQ, dK, dV
  // and on the ring, of H/U heads: forward K,V blocks of 2 c (H/U) d.
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  if (world < 4) return;
  const double u = 2, ring = world / 2, c = 8, h = world, d = 16, r = c / u, hl = h / u;
  const plan::Plan p = usp_plan(world, 2, world / 2, Layout::Zigzag, BackwardMode::KvRing, "full", world, world, 16,
                                static_cast<std::int64_t>(c * ring));
  const auto report = rt::run_attention(p, *comm, {});
  if (comm->rank() != 0) return;
  const double block = r * hl * d;
  CHECK(report->comm_bytes.ulysses.forward == Approx(4 * (u - 1) * (4 * block + r * hl)));
  CHECK(report->comm_bytes.ulysses.backward == Approx(4 * (u - 1) * (8 * block + r * hl)));
  CHECK(report->comm_bytes.total.forward == Approx(4 * (ring - 1) * 2 * c * hl * d));
  // K,V ring backward: hops of K,V and R hops of dK,dV.
  CHECK(report->comm_bytes.total.backward == Approx(4 * ((ring - 1) + ring) * 2 * c * hl * d));
}

TEST_CASE("USP plans the runtime cannot run are refused naming the field") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  if (world < 4) return;
  const std::int64_t seq = 8 * world;
  // A degree that does not split the KV heads.
  const plan::Plan few_heads =
      usp_plan(world, 2, world / 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 1, 8, seq);
  CHECK_THAT(
      test::error_text([&] { (void)rt::run_attention(few_heads, *comm, checking()); }),
      Catch::Contains("plan:/strategy/ulysses: Ulysses degree 2 does not divide the model's 4 heads and 1 KV heads"));
  // Rings that do not cover the world once: member 1's ring repeats member 0's ranks.
  plan::Plan crossed = usp_plan(world, 2, world / 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 4, 8, seq);
  crossed.rings[1].order = crossed.rings[0].order;
  CHECK_THAT(test::error_text([&] { (void)rt::run_attention(crossed, *comm, checking()); }),
             Catch::Contains(
                 "plan:/rings: world rank 0 is out of range or in the rings twice (Ulysses member 1, ring rank 0)"));
  // A length the groups cannot split.
  const plan::Plan odd =
      usp_plan(world, 2, world / 2, Layout::Contiguous, BackwardMode::QRing, "causal", 4, 4, 8, world / 2 * 3);
  CHECK_THAT(test::error_text([&] { (void)rt::run_attention(odd, *comm, checking()); }),
             Catch::Contains(fmt::format("needs a multiple of {}", world)));
}
