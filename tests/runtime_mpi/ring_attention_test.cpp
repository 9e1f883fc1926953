// Distributed ring attention on every rank of the job, checked against the single-rank
// reference (run_attention's check, within 1e-4 in fp32): every layout x ring kind x backward
// mode x mask, multi-head and grouped-query, and the bytes each backward moves against the
// closed forms of docs/strategies.md ("Bytes").
#include <catch2/catch.hpp>

#include <string>

#include <fmt/format.h>

#include "common/token_sets.hpp"
#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/executor/attention_run.hpp"
#include "tests/support/checked_run.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using burst::test::checking;
using burst::test::ring_plan;

TEST_CASE("ring attention matches the single-rank reference for every layout, ring, backward and mask") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  std::vector<int> inners{world};
  if (world >= 4) inners.push_back(2);
  int runs = 0;
  for (const int inner : inners) {
    for (const Layout layout : {Layout::Contiguous, Layout::Zigzag, Layout::Striped}) {
      const std::int64_t seq = 6 * layout_multiple(layout, world);  // odd-sized tiles: 6 or 12 tokens per rank
      for (const BackwardMode backward : {BackwardMode::QRing, BackwardMode::KvRing}) {
        for (const std::string mask : {"full", "causal", "sliding:5", "document:7"}) {
          for (const auto& [heads, kv_heads] : std::vector<std::pair<int, int>>{{4, 4}, {4, 2}}) {
            const plan::Plan p = ring_plan(world, inner, layout, backward, mask, heads, kv_heads, 16, seq);
            const auto report = rt::run_attention(p, *comm, checking());
            if (comm->rank() != 0) continue;
            INFO(fmt::format("{} ranks, inner {}, {}, {}, {}, {} heads / {} KV", world, inner, to_string(layout),
                             to_string(backward), mask, heads, kv_heads));
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
  if (comm->rank() == 0) CHECK(runs == 48 * static_cast<int>(inners.size()));
}

TEST_CASE("the query-side backward moves about 0.75 of the K,V ring's bytes (MHA, d = 128)") {
  // Full mask, flat ring of P, c tokens per rank, H heads, fp32 (4 bytes) on the wire. Per rank:
  //   K,V ring  (P-1) hops of K,V (2 c H d) + P hops of dK,dV (2 c H d)   [P-1 steps, then home]
  //   Q ring    (P-1) hops of Q, dO (2 c H d) and D, lse (2 c H) + P hops of dQ (c H d)
  //   forward   (P-1) hops of K,V (2 c H d)
  const auto comm = rt::make_mpi_communicator({30});
  const double p = comm->size(), c = 4, h = 2, d = 128;
  const plan::Plan kv = ring_plan(comm->size(), comm->size(), Layout::Zigzag, BackwardMode::KvRing, "full", 2, 2, 128,
                                  static_cast<std::int64_t>(c * p));
  plan::Plan q = kv;
  q.strategy.backward = BackwardMode::QRing;
  const auto kv_report = rt::run_attention(kv, *comm, {});
  const auto q_report = rt::run_attention(q, *comm, {});
  if (comm->rank() != 0) return;
  const double kv_bytes = 4 * ((p - 1) * 2 * c * h * d + p * 2 * c * h * d);
  const double q_bytes = 4 * ((p - 1) * (2 * c * h * d + 2 * c * h) + p * c * h * d);
  CHECK(kv_report->comm_bytes.total.forward == Approx(4 * (p - 1) * 2 * c * h * d));
  CHECK(kv_report->comm_bytes.total.backward == Approx(kv_bytes));
  CHECK(q_report->comm_bytes.total.backward == Approx(q_bytes));
  // (3d + 2)/(4d) as P grows: 0.754 for d = 128; with P ranks the final hops weigh in.
  const double ratio = q_bytes / kv_bytes;
  CHECK(ratio == Approx(((p - 1) * (2 * d + 2) + p * d) / ((p - 1) * 2 * d + p * 2 * d)));
  CHECK(ratio < 0.76);
}

TEST_CASE("a length the layout cannot split and a plan for another rank count are clear errors") {
  const auto comm = rt::make_mpi_communicator({30});
  const int world = comm->size();
  const plan::Plan odd =
      ring_plan(world, world, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 4, 16, 2 * world * 3 + 1);
  CHECK_THAT(test::error_text([&] { (void)rt::run_attention(odd, *comm, checking()); }),
             Catch::Contains(
                 fmt::format("do not split evenly: zigzag on a ring of {} needs a multiple of {}", world, 2 * world)));
  const plan::Plan bigger =
      ring_plan(world * 2, world * 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 4, 16, 64 * world);
  CHECK(
      test::error_text([&] { (void)rt::run_attention(bigger, *comm, checking()); }) ==
      fmt::format("mpirun -np: the plan has {} ranks, this job has {} (valid: {} ranks; hint: start it with mpirun -np "
                  "{} burst run ... (add --oversubscribe on a small machine))",
                  2 * world, world, 2 * world, 2 * world));
}
