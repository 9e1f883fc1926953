// The NCCL op lists say what the executor really sends. Every rank of a plan runs
// DistributedAttention (the Ulysses all-to-alls, the ring, both backward modes) as a thread of
// this process, on a loopback communicator that also records every send and receive it is
// asked to post, in order. Per rank and phase, the recorded messages and
// the rank's op list must agree stream by stream: for each (channel, level, peer, direction),
// the same messages (step, bytes) in the same order, which is the order NCCL would pair them in.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/token_sets.hpp"
#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/executor/distributed_attention.hpp"
#include "runtime/executor/detail/host_attention.hpp"
#include "runtime/comm/comm_errors.hpp"
#include "runtime/schedule/nccl_group_assembler.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "tests/support/recording_communicator.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;
using burst::test::RecordingCommunicator;
using burst::test::usp_plan;

namespace {

// What both sides say about a message: its stream and, within it, its step and size.
struct Posted {
  int step = 0;
  std::size_t bytes = 0;
  friend bool operator==(const Posted&, const Posted&) = default;
};
using Stream = std::tuple<Channel, RingLevel, int, bool>;  // channel, level, peer, is a send
using Streams = std::map<Stream, std::vector<Posted>>;

Streams streams_of(std::span<const Envelope> posted) {
  Streams out;
  for (const Envelope& e : posted)
    out[{e.channel, e.level, e.peer, e.operation == Operation::Send}].push_back({e.step, e.bytes()});
  return out;
}

Streams streams_of(const NcclOpList& list) {
  Streams out;
  for (const NcclGroup& g : list) {
    for (const NcclOp& op : g.ops) {
      out[{op.channel, g.comm.level, op.peer, op.direction == NcclDirection::Send}].push_back(
          {op.envelope_step, op.bytes});
    }
  }
  return out;
}

// Inputs of any value: only the traffic is compared.
Tensor filled(Shape shape, float scale) {
  Tensor t(shape);
  float x = scale;
  for (float& v : t.values()) v = (x = x * 0.618f + 0.1f, x - 0.5f);
  return t;
}

struct Recorded {
  std::vector<Envelope> forward, backward;
  std::vector<std::string> early_waits;  // waits NCCL could not complete
  bool backward_groups_all_ready = false;
};

// Every rank of `plan` runs its forward and backward as a thread; what each rank posted.
std::vector<Recorded> run_threads(const plan::Plan& plan, std::int64_t seq, const NcclOpLists& lists) {
  const RingSchedule schedule(plan, seq);
  const int world = static_cast<int>(plan.ranks.size());
  const ModelSpec& m = plan.job.model;
  const auto hub = make_loopback_hub(world);
  std::vector<Recorded> recorded(static_cast<std::size_t>(world));
  std::vector<std::string> failures(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int w = 0; w < world; ++w) {
    threads.emplace_back([&, w] {
      try {
        RecordingCommunicator comm(hub, w, lists);
        const auto rows = static_cast<std::int64_t>(schedule.rank_positions(w).size());
        const Shape q_shape{rows, m.heads, m.head_dim}, kv_shape{rows, m.kv_heads, m.head_dim};
        const Tensor q = filled(q_shape, 0.3f), k = filled(kv_shape, 0.7f), v = filled(kv_shape, 0.2f),
                     d_o = filled(q_shape, 0.9f);
        CpuAttentionKernels kernels(KernelOptions{32, 32, 1});
        DistributedAttention attention(schedule, comm, q_shape, kv_shape,
                                       AttentionExecution{precision_of(plan), true, &kernels, nullptr});
        HostAttention tensors(attention, q.view(), k.view(), v.view(), d_o.view());
        (void)tensors.forward();
        const std::size_t forward_posts = comm.posted().size();
        (void)tensors.backward(plan.strategy.backward);
        Recorded& mine = recorded[static_cast<std::size_t>(w)];
        mine.forward.assign(comm.posted().begin(), comm.posted().begin() + static_cast<std::ptrdiff_t>(forward_posts));
        mine.backward.assign(comm.posted().begin() + static_cast<std::ptrdiff_t>(forward_posts), comm.posted().end());
        mine.early_waits = comm.early_waits();
        const NcclOpList backward = lists.of(w, NcclPhase::Backward);
        mine.backward_groups_all_ready = backward.empty() || comm.assembler().ready(backward.size() - 1);
      } catch (const std::exception& e) {
        failures[static_cast<std::size_t>(w)] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int w = 0; w < world; ++w) {
    INFO("rank " << w);
    REQUIRE(failures[static_cast<std::size_t>(w)].empty());
  }
  return recorded;
}

void compare(const plan::Plan& plan, std::int64_t seq) {
  const NcclOpLists lists(plan, seq);
  const std::vector<Recorded> recorded = run_threads(plan, seq, lists);
  for (int w = 0; w < static_cast<int>(recorded.size()); ++w) {
    INFO("rank " << w);
    const Recorded& r = recorded[static_cast<std::size_t>(w)];
    CHECK(streams_of(lists.of(w, NcclPhase::Forward)) == streams_of(r.forward));
    CHECK(streams_of(lists.of(w, NcclPhase::Backward)) == streams_of(r.backward));
    CHECK(r.early_waits == std::vector<std::string>{});  // every wait is on an issued group
    CHECK(r.backward_groups_all_ready);                  // and every group was issued
  }
}

}  // namespace

namespace Catch {
template <>
struct StringMaker<Streams> {
  static std::string convert(const Streams& streams) {
    std::string out;
    for (const auto& [key, messages] : streams) {
      const auto& [channel, level, peer, is_send] = key;
      out +=
          fmt::format("\n  {} ({}) {} rank {}:", to_string(channel), to_string(level), is_send ? "to" : "from", peer);
      for (const Posted& m : messages) out += fmt::format(" step {} {} B;", m.step, m.bytes);
    }
    return out;
  }
};
}  // namespace Catch

TEST_CASE("the op lists are what the executor posts: rings, double rings, Ulysses, both backward modes, bf16",
          "[nccl]") {
  struct Case {
    int world, ulysses, inner;
    Layout layout;
    const char* mask;
    const char* dtype;
  };
  const std::vector<Case> cases{
      {4, 1, 4, Layout::Contiguous, "causal", "fp32"},  // flat ring, most hops skipped
      {8, 1, 2, Layout::Zigzag, "full", "bf16"},        // double ring 2 x 4, the query pack as bytes
      {8, 2, 2, Layout::Striped, "sliding:5", "bf16"},  // Ulysses groups of 2 around a double ring 2 x 2
      {4, 4, 1, Layout::Contiguous, "causal", "fp32"},  // Ulysses only (ds-ulysses): no ring
  };
  for (const Case& c : cases) {
    for (const BackwardMode mode : {BackwardMode::QRing, BackwardMode::KvRing}) {
      INFO(fmt::format("{} ranks, ulysses {}, inner {}, {}, {}, {}, {}", c.world, c.ulysses, c.inner,
                       to_string(c.layout), c.mask, c.dtype, to_string(mode)));
      const std::int64_t seq = 2 * layout_multiple(c.layout, c.world / c.ulysses) * c.ulysses;
      plan::Plan p =
          usp_plan(c.world, c.ulysses, c.inner, c.layout, mode, c.mask, 8, 4, 8, seq);  // 8 heads, 4 KV heads
      p.job.dtype = c.dtype;
      if (std::string(c.dtype) == "bf16") p.strategy.dq_bytes = 2;  // dQ in bf16, dK,dV in fp32
      compare(p, seq);
    }
  }
}
