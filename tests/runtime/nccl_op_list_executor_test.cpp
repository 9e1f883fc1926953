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
#include "runtime/comm/comm_errors.hpp"
#include "runtime/schedule/nccl_group_assembler.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;
using burst::test::usp_plan;

namespace {

// One rank of an in-process job that records every send and receive it is asked to post, in
// order, and then posts it as the loopback backend does. Beside, it assembles the transfers into
// the rank's NCCL groups as the NCCL backend would (NcclGroupAssembler, which throws on a
// transfer outside the op list), and notes every wait on a transfer whose group is not ready
// yet: under NCCL that group would never have been issued, and the wait would hang.
class RecordingCommunicator final : public LoopbackCommunicator {
 public:
  RecordingCommunicator(std::shared_ptr<LoopbackHub> hub, int rank, const NcclOpLists& lists)
      : LoopbackCommunicator(std::move(hub), rank, CommOptions{10}),
        assembler_(rank, lists.of(rank, NcclPhase::Forward), lists.of(rank, NcclPhase::Backward)) {}
  [[nodiscard]] const std::vector<Envelope>& posted() const { return posted_; }
  [[nodiscard]] const std::vector<std::string>& early_waits() const { return early_waits_; }
  [[nodiscard]] const NcclGroupAssembler& assembler() const { return assembler_; }

  void begin_pass(AttentionPass pass) override { assembler_.begin(pass); }

 protected:
  struct Tracked final : Request::State {
    Tracked(std::unique_ptr<Request::State> inner_, std::size_t group_) : inner(std::move(inner_)), group(group_) {}
    std::unique_ptr<Request::State> inner;  // the loopback's (none for an eager send)
    std::size_t group;
  };

  std::unique_ptr<Request::State> post_send(ConstBuffer data, const Envelope& e) override {
    posted_.push_back(e);
    const std::size_t group = assembler_.post(e).group;
    return std::make_unique<Tracked>(LoopbackCommunicator::post_send(data, e), group);
  }
  std::unique_ptr<Request::State> post_recv(MutBuffer data, const Envelope& e) override {
    posted_.push_back(e);
    const std::size_t group = assembler_.post(e).group;
    return std::make_unique<Tracked>(LoopbackCommunicator::post_recv(data, e), group);
  }
  bool test(Request::State& state, const Envelope& e) override {
    auto* tracked = dynamic_cast<Tracked*>(&state);
    if (tracked == nullptr) return LoopbackCommunicator::test(state, e);
    if (!assembler_.ready(tracked->group)) {
      early_waits_.push_back(fmt::format("{}: {}", describe(e), assembler_.incomplete(tracked->group)));
    }
    return tracked->inner == nullptr || LoopbackCommunicator::test(*tracked->inner, e);
  }

 private:
  NcclGroupAssembler assembler_;
  std::vector<Envelope> posted_;
  std::vector<std::string> early_waits_;
};

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
  for (const Envelope& e : posted) out[{e.channel, e.level, e.peer, e.operation == Operation::Send}].push_back({e.step, e.bytes()});
  return out;
}

Streams streams_of(const NcclOpList& list) {
  Streams out;
  for (const NcclGroup& g : list) {
    for (const NcclOp& op : g.ops) {
      out[{op.channel, g.comm.level, op.peer, op.direction == NcclDirection::Send}].push_back({op.envelope_step, op.bytes});
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
        const Tensor q = filled(q_shape, 0.3f), k = filled(kv_shape, 0.7f), v = filled(kv_shape, 0.2f), d_o = filled(q_shape, 0.9f);
        CpuAttentionKernels kernels(KernelOptions{32, 32, 1});
        DistributedAttention attention(schedule, comm, q_shape, kv_shape, AttentionExecution{precision_of(plan), true, &kernels, nullptr});
        const RingForward out = attention.forward(q.view(), k.view(), v.view());
        const std::size_t forward_posts = comm.posted().size();
        (void)attention.backward(plan.strategy.backward, q.view(), k.view(), v.view(), out.o.view(), out.lse, d_o.view());
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
      out += fmt::format("\n  {} ({}) {} rank {}:", to_string(channel), to_string(level), is_send ? "to" : "from", peer);
      for (const Posted& m : messages) out += fmt::format(" step {} {} B;", m.step, m.bytes);
    }
    return out;
  }
};
}  // namespace Catch

TEST_CASE("the op lists are what the executor posts: rings, double rings, Ulysses, both backward modes, bf16", "[nccl]") {
  struct Case {
    int world, ulysses, inner;
    Layout layout;
    const char* mask;
    const char* dtype;
  };
  const std::vector<Case> cases{
      {4, 1, 4, Layout::Contiguous, "causal", "fp32"},  // flat ring, most hops skipped
      {8, 1, 2, Layout::Zigzag, "full", "bf16"},       // double ring 2 x 4, the query pack as bytes
      {8, 2, 2, Layout::Striped, "sliding:5", "bf16"},  // Ulysses groups of 2 around a double ring 2 x 2
      {4, 4, 1, Layout::Contiguous, "causal", "fp32"},  // Ulysses only (ds-ulysses): no ring
  };
  for (const Case& c : cases) {
    for (const BackwardMode mode : {BackwardMode::QRing, BackwardMode::KvRing}) {
      INFO(fmt::format("{} ranks, ulysses {}, inner {}, {}, {}, {}, {}", c.world, c.ulysses, c.inner, to_string(c.layout), c.mask,
                       c.dtype, to_string(mode)));
      const std::int64_t seq = 2 * layout_multiple(c.layout, c.world / c.ulysses) * c.ulysses;
      plan::Plan p = usp_plan(c.world, c.ulysses, c.inner, c.layout, mode, c.mask, 8, 4, 8, seq);  // 8 heads, 4 KV heads
      p.job.dtype = c.dtype;
      if (std::string(c.dtype) == "bf16") p.strategy.dq_bytes = 2;  // dQ in bf16, dK,dV in fp32
      compare(p, seq);
    }
  }
}
