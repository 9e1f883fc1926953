// The NCCL op lists (runtime/schedule/nccl_op_list.hpp): a few lists spelled out, so the format
// is pinned down; then every rank's lists for every plan the planner can make (every preset x
// family x 8, 64 and 1024 ranks) and for the golden plans, through the checker
// (nccl_op_check.hpp): pairs agree, nothing deadlocks under NCCL's ordering rules, nothing is
// forwarded before it arrives.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "common/token_sets.hpp"
#include "planner/plan_builder.hpp"
#include "planner/search/candidates.hpp"
#include "runtime/executor/attention_run.hpp"
#include "runtime/schedule/detail/nccl_op_check.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "simulator/attention/ring.hpp"
#include "simulator/models/model.hpp"
#include "simulator/training/training.hpp"
#include "tests/support/ring_plan.hpp"
#include "topologies/presets.hpp"

using namespace burst;
using namespace burst::rt;
using burst::test::ring_plan;
using burst::test::usp_plan;

namespace {

constexpr NcclComm kReadFlat{NcclRing::Read, RingLevel::Flat};

NcclOp send(int peer, std::size_t bytes, DType dtype, Channel channel, int block, int envelope_step, bool forwards) {
  return {NcclDirection::Send, peer, bytes, dtype, channel, block, envelope_step, forwards};
}
NcclOp recv(int peer, std::size_t bytes, DType dtype, Channel channel, int block, int envelope_step) {
  return {NcclDirection::Recv, peer, bytes, dtype, channel, block, envelope_step, false};
}

// The plan `burst plan --strategy family` would write on `topology`, for the family's preset
// (no search: the op lists depend on the strategy and the rings only), or nothing where the
// family cannot run there (heads a Ulysses degree does not split, ...).
std::optional<plan::Plan> preset_plan(const std::string& family, const topo::Topology& t, const sim::TrainingJob& job) {
  const sim::TrainingStrategy s = sim::training_preset(family, job, t);
  if (!sim::check_training(job, s, t).empty()) return std::nullopt;
  plan::Plan p;
  p.job.model = job.model;
  p.job.seq = job.seq;
  p.job.mask = job.mask;
  p.strategy = planner::plan_strategy(s, t);
  for (int g = 0; g < t.gpu_count(); ++g) p.ranks.push_back({g, t.node_of(g), t.local_of(g)});
  for (const sim::RingOrder& r : sim::ring_orders(sim::ring_geometry(s.attention, sim::world_of(t)))) {
    p.rings.push_back({r.level, r.member, r.order});
  }
  return p;
}

// What the op lists depend on: the plan without its rank placement and backward mode.
std::string op_list_key(plan::Plan plan) {
  for (plan::RankPlacement& r : plan.ranks) r.node = r.local = 0;
  plan.strategy.backward = BackwardMode::QRing;
  return plan::to_json(plan).dump();
}

// A dry run's length: two tokens per layout chunk, enough for the block structure.
std::int64_t dry_run_seq(const plan::Plan& p) {
  return 2 * layout_multiple(p.strategy.layout, p.strategy.cp) * p.strategy.ulysses;
}

// Each ring step's transfers on one communicator are one group: no (communicator, step) twice.
std::vector<std::string> split_steps(const std::vector<NcclOpList>& lists) {
  std::vector<std::string> problems;
  for (std::size_t r = 0; r < lists.size(); ++r) {
    int last_step = 0;
    for (const NcclGroup& g : lists[r]) last_step = std::max(last_step, g.step);
    // seen[comm * (last_step + 2) + step + 1]: the warm-up's step is -1
    std::vector<bool> seen(static_cast<std::size_t>(kNcclCommCount * (last_step + 2)));
    for (const NcclGroup& g : lists[r]) {
      const auto slot = static_cast<std::size_t>(comm_index(g.comm) * (last_step + 2) + g.step + 1);
      if (seen[slot])
        problems.push_back(fmt::format("rank {}: two groups on the {} at step {}", r, to_string(g.comm), g.step));
      seen[slot] = true;
    }
  }
  return problems;
}

// Every rank's lists through the checker: the warm-up, the forward and the backward in each
// mode, each phase alone (a layer's phases follow one another; each pairs up on its own, so
// each must finish on its own; the forward does not depend on the backward mode). Above 64
// ranks only the plan's own backward mode: the 1024-rank lists hold a million messages each.
void check_plan(plan::Plan plan, std::int64_t seq) {
  const BackwardMode own = plan.strategy.backward;
  for (const BackwardMode mode : {BackwardMode::QRing, BackwardMode::KvRing}) {
    if (plan.ranks.size() > 64 && mode != own) continue;
    plan.strategy.backward = mode;
    const NcclOpLists lists(plan, seq);
    INFO(to_string(mode) << " backward");
    for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
      if (phase == NcclPhase::Forward && mode != own) continue;
      INFO(to_string(phase));
      const std::vector<NcclOpList> all = lists.all(phase);
      CHECK(check_nccl_op_lists(all) == std::vector<std::string>{});
      CHECK(split_steps(all) == std::vector<std::string>{});
    }
  }
}

}  // namespace

TEST_CASE("a 4-rank flat ring's forward, spelled out: each step's receive and send in one group", "[nccl]") {
  // Full mask, contiguous layout: block b travels b -> b+1 -> b+2 -> b+3, a hop per step. Ring
  // rank 1 receives block 0 and sends its own at step 0, then forwards what it received.
  const plan::Plan p = ring_plan(4, 4, Layout::Contiguous, BackwardMode::KvRing, "full", 2, 2, 4, 8);
  const std::size_t kv = 2 * (2 * 2 * 4) * 4;  // K and V of 2 tokens x 2 heads x 4 dims, fp32
  const auto kv_send = [&](int peer, int block, int use, bool forwards) {
    return send(peer, kv, DType::F32, Channel::KvRing, block, use, forwards);
  };
  const auto kv_recv = [&](int peer, int block, int use) {
    return recv(peer, kv, DType::F32, Channel::KvRing, block, use);
  };
  const NcclOpList want{
      {kReadFlat, 0, {kv_recv(0, 0, 1), kv_send(2, 1, 1, false)}},
      {kReadFlat, 1, {kv_send(2, 0, 2, true), kv_recv(0, 3, 2)}},
      {kReadFlat, 2, {kv_recv(0, 2, 3), kv_send(2, 3, 3, true)}},
  };
  CHECK(nccl_op_list(p, 1, 8, NcclPhase::Forward) == want);
  // The warm-up: one element each way with the ring neighbours on both communicators the plan
  // uses (the K,V-ring backward's dK,dV travel the same way as K,V).
  const NcclOp up = send(2, 4, DType::F32, Channel::Collective, -1, -1, false);
  const NcclOp down = recv(0, 4, DType::F32, Channel::Collective, -1, -1);
  const NcclOpList warm{{kReadFlat, -1, {down, up}}, {{NcclRing::Accumulator, RingLevel::Flat}, -1, {down, up}}};
  CHECK(nccl_op_list(p, 1, 8, NcclPhase::WarmUp) == warm);
}

TEST_CASE("the K,V-ring backward: dK,dV follow their block one step behind and return home", "[nccl]") {
  const plan::Plan p = ring_plan(4, 4, Layout::Contiguous, BackwardMode::KvRing, "full", 2, 2, 4, 8);
  const NcclOpList list = nccl_op_list(p, 1, 8, NcclPhase::Backward);
  // Step 0: rank 1 computes with its own block and starts its accumulator; it receives block
  // 0's accumulator from rank 0 (which started it) and uses it at step 1.
  const NcclComm acc{NcclRing::Accumulator, RingLevel::Flat};
  const std::size_t dkv = 2 * (2 * 2 * 4) * 4;
  REQUIRE(list.size() == 7);  // steps 0..2 read and accumulator groups, step 3 the last accumulator hop
  CHECK(list[1] == NcclGroup{acc,
                             0,
                             {recv(0, dkv, DType::F32, Channel::DkvRing, 0, 1),
                              send(2, dkv, DType::F32, Channel::DkvRing, 1, 1, false)}});
  // Step 3: rank 1's own accumulator comes home from rank 0, the last of its contributors, and
  // block 2's, summed over ranks 2, 3, 0 and 1, leaves for home (use step 4: after the ring).
  CHECK(list[6] == NcclGroup{acc,
                             3,
                             {recv(0, dkv, DType::F32, Channel::DkvRing, 1, 4),
                              send(2, dkv, DType::F32, Channel::DkvRing, 2, 4, true)}});
}

TEST_CASE("Ulysses groups around a ring: one all-to-all group per tensor, bf16 beside fp32 lse", "[nccl]") {
  // 4 ranks: Ulysses groups {0, 1} and {2, 3} around a flat ring of 2. Rank 0 holds 4 of its
  // group's 8 tokens, all 4 heads (2 KV heads), and trades half of each with rank 1.
  plan::Plan p = usp_plan(4, 2, 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 2, 8, 16);
  p.job.dtype = "bf16";
  const NcclOpList list = nccl_op_list(p, 0, 16, NcclPhase::Forward);
  const NcclComm ulysses{NcclRing::Ulysses, RingLevel::Flat};
  const auto trade = [&](UlyssesTensor t, std::size_t bytes, DType dtype) {
    const int step = static_cast<int>(t);
    return NcclGroup{ulysses,
                     step,
                     {recv(1, bytes, dtype, Channel::Ulysses, step, step),
                      send(1, bytes, dtype, Channel::Ulysses, step, step, false)}};
  };
  REQUIRE(list.size() >= 5);
  CHECK(list[0] == trade(UlyssesTensor::Q, 4 * 4 * 8 / 2 * 2, DType::BF16));
  CHECK(list[1] == trade(UlyssesTensor::K, 4 * 2 * 8 / 2 * 2, DType::BF16));
  CHECK(list[2] == trade(UlyssesTensor::V, 4 * 2 * 8 / 2 * 2, DType::BF16));
  CHECK(list[list.size() - 2] == trade(UlyssesTensor::O, 4 * 4 * 8 / 2 * 2, DType::BF16));
  CHECK(list[list.size() - 1] == trade(UlyssesTensor::Lse, 4 * 4 / 2 * 4, DType::F32));
  // The query pack mixes bf16 Q, dO and fp32 D, lse: it travels as bytes.
  const NcclOpList backward = nccl_op_list(p, 0, 16, NcclPhase::Backward);
  const auto pack =
      std::find_if(backward.begin(), backward.end(), [](const NcclGroup& g) { return g.comm == kReadFlat; });
  REQUIRE(pack != backward.end());
  CHECK(pack->ops.front().dtype == DType::Bytes);
  CHECK(pack->ops.front().bytes == 2 * (8 * 2 * 8) * 2 + 2 * (8 * 2) * 4);  // Q, dO of 8 tokens x 2 heads x 8; D, lse
}

TEST_CASE("one rank's list is that rank's entry of every rank's lists; a rank outside the plan is refused", "[nccl]") {
  const plan::Plan p = usp_plan(8, 2, 2, Layout::Striped, BackwardMode::QRing, "causal", 4, 2, 8, 32);
  const NcclOpLists lists(p, 32);
  for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
    const auto all = lists.all(phase);
    REQUIRE(all.size() == 8);
    for (int r = 0; r < 8; ++r) CHECK(nccl_op_list(p, r, 32, phase) == all[static_cast<std::size_t>(r)]);
  }
  CHECK_THROWS_WITH(lists.of(8, NcclPhase::Forward), Catch::Contains("world rank 8 is not a rank of the plan"));
}

TEST_CASE("data-parallel replicas: each replica's lists, merged over the world, are sound and stay inside it",
          "[nccl]") {
  // 4 replicas of Ulysses pairs around a double ring of 2 x 2: 32 ranks.
  const plan::Plan one = usp_plan(8, 2, 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 2, 8, 64);
  const plan::Plan p = test::data_parallel(one, 4, 4, 1);
  for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
    INFO(to_string(phase));
    std::vector<NcclOpList> world(32);
    for (int d = 0; d < 4; ++d) {
      const std::vector<NcclOpList> lists = NcclOpLists(p, 64, d).all(phase);
      REQUIRE(lists.size() == 32);
      for (int w = 0; w < 32; ++w) {
        const bool mine = w / 8 == d;
        CHECK(lists[static_cast<std::size_t>(w)].empty() == !mine);
        if (!mine) continue;
        for (const NcclGroup& g : lists[static_cast<std::size_t>(w)]) {
          for (const NcclOp& op : g.ops) CHECK(op.peer / 8 == d);  // nothing crosses replicas
        }
        CHECK(nccl_op_list(p, w, 64, phase) == lists[static_cast<std::size_t>(w)]);
        world[static_cast<std::size_t>(w)] = lists[static_cast<std::size_t>(w)];
      }
    }
    CHECK(check_nccl_op_lists(world) == std::vector<std::string>{});
    CHECK(split_steps(world) == std::vector<std::string>{});
  }
  CHECK_THROWS_WITH(NcclOpLists(p, 64, 1).of(3, NcclPhase::Forward),
                    Catch::Contains("world rank 3 is in another context-parallel group than 1"));
}

TEST_CASE(
    "tensor-parallel groups inside replicas: each context-parallel group's lists, merged, are sound and "
    "stay inside it",
    "[nccl]") {
  // 2 replicas of tensor-parallel pairs around Ulysses pairs around a ring of 2: 16 ranks, 4 groups.
  const plan::Plan one = usp_plan(4, 2, 2, Layout::Zigzag, BackwardMode::QRing, "causal", 4, 4, 8, 64);
  const plan::Plan p = test::data_parallel(test::tensor_parallel(one, 2), 2, 2, 1);
  for (const NcclPhase phase : {NcclPhase::WarmUp, NcclPhase::Forward, NcclPhase::Backward}) {
    INFO(to_string(phase));
    std::vector<NcclOpList> world(16);
    for (int g = 0; g < 4; ++g) {
      const std::vector<NcclOpList> lists = NcclOpLists(p, 64, g).all(phase);
      REQUIRE(lists.size() == 16);
      for (int w = 0; w < 16; ++w) {
        const bool mine = w / 8 == g / 2 && w % 2 == g % 2;  // its replica, its tensor-parallel rank
        CHECK(lists[static_cast<std::size_t>(w)].empty() == !mine);
        if (!mine) continue;
        for (const NcclGroup& group : lists[static_cast<std::size_t>(w)]) {
          for (const NcclOp& op : group.ops) CHECK((op.peer / 8 == g / 2 && op.peer % 2 == g % 2));
        }
        CHECK(nccl_op_list(p, w, 64, phase) == lists[static_cast<std::size_t>(w)]);
        world[static_cast<std::size_t>(w)] = lists[static_cast<std::size_t>(w)];
      }
    }
    CHECK(check_nccl_op_lists(world) == std::vector<std::string>{});
    CHECK(split_steps(world) == std::vector<std::string>{});
  }
  // A tensor-parallel rank carries heads / tp of the model's: its K,V blocks are half the size.
  const auto bytes = [](const plan::Plan& plan) {
    std::size_t sum = 0;
    for (const NcclGroup& group : nccl_op_list(plan, 0, 64, NcclPhase::Forward)) {
      for (const NcclOp& op : group.ops) sum += op.bytes;
    }
    return sum;
  };
  CHECK(2 * bytes(p) == bytes(one));
}

TEST_CASE("every preset x family x 8, 64, 1024 ranks: sound NCCL op lists in both backward modes", "[nccl][scale]") {
  sim::TrainingJob job;
  job.model = sim::model_preset("burst-7b");  // MHA, 32 heads: Ulysses up to 8, burst picks the Q-ring backward
  job.seq = 1 << 20;
  job.mask = Mask{};                           // causal
  std::map<std::string, plan::Plan> distinct;  // by op_list_key: many presets make the same rings
  std::set<std::pair<std::string, int>> families_at;
  int expressible = 0, combinations = 0;
  for (const std::string& preset : topo::preset_names()) {
    const int per_node = topo::make_preset(preset).gpus_per_node();
    for (const int world : {8, 64, 1024}) {
      // `local` is this machine's CPU ranks over MPI, never an NCCL job: not 512 of its nodes.
      if (preset == "local" && world == 1024) continue;
      const topo::Topology t = topo::make_preset(preset, world / per_node);
      for (const std::string& family : sim::family_names()) {
        ++combinations;
        const auto plan = preset_plan(family, t, job);
        if (!plan) continue;
        ++expressible;
        families_at.insert({family, world});
        distinct.emplace(op_list_key(*plan), *plan);
      }
    }
  }
  // ds-ulysses puts all ranks in one group: 32 heads split 8 ways, not 64 or 1024.
  const auto presets = static_cast<int>(topo::preset_names().size()),
             families = static_cast<int>(sim::family_names().size());
  CHECK(combinations == (3 * presets - 1) * families);
  CHECK(expressible == combinations - (2 * presets - 1));
  CHECK(families_at.size() == static_cast<std::size_t>(3 * families - 2));
  for (const auto& [key, plan] : distinct) {
    INFO(plan.strategy.name << " on " << plan.ranks.size() << " ranks, " << to_string(plan.strategy.ring) << " ring "
                            << plan.strategy.inner << " x " << plan.strategy.outer << ", ulysses "
                            << plan.strategy.ulysses << ", " << to_string(plan.strategy.layout));
    check_plan(plan, dry_run_seq(plan));
  }
}

TEST_CASE("the golden plans' NCCL op lists are sound at their dry-run size", "[nccl]") {
  for (const char* name :
       {"a800x4-burst14b-1M", "a800x8-burst7b-2M", "h100x2-llama3-8b-512K-doc", "pcie8x2-qwen7b-256K-40GiB"}) {
    INFO(name);
    const plan::Plan golden = plan::read_plan(std::string(BURST_TEST_DATA) + "/plans/" + name + ".json");
    AttentionRunOptions dry;
    dry.dry_run = true;
    // The dry run's length, its mask scaled with it (a 64K document is 1/8 of 512K either way).
    const PreparedRun prepared = prepare_attention_run(golden, static_cast<int>(golden.ranks.size()), dry);
    check_plan(prepared.plan, prepared.seq);
  }
}

TEST_CASE("hop-skipping masks: a block's journey ends where no later holder needs it", "[nccl]") {
  // Contiguous causal rings skip most hops; sliding windows and documents skip more. The lists
  // stay sound and carry fewer messages than the full mask's.
  for (const std::string mask : {"causal", "sliding:3", "document:5"}) {
    for (const int inner : {8, 2}) {
      INFO(mask << ", inner " << inner);
      const plan::Plan p = ring_plan(8, inner, Layout::Contiguous, BackwardMode::QRing, mask, 2, 2, 4, 32);
      check_plan(p, 32);
      const auto count = [](const std::vector<NcclOpList>& lists) {
        std::size_t n = 0;
        for (const auto& list : lists) {
          for (const auto& g : list) n += g.ops.size();
        }
        return n;
      };
      const plan::Plan full = ring_plan(8, inner, Layout::Contiguous, BackwardMode::QRing, "full", 2, 2, 4, 32);
      CHECK(count(NcclOpLists(p, 32).all(NcclPhase::Forward)) < count(NcclOpLists(full, 32).all(NcclPhase::Forward)));
    }
  }
}
