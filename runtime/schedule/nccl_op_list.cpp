// Building every rank's NCCL groups from the ring schedule (see nccl_op_list.hpp).
#include "runtime/schedule/nccl_op_list.hpp"

#include <algorithm>
#include <array>
#include <set>

#include <fmt/format.h>

#include "common/error.hpp"
#include "runtime/schedule/wire_format.hpp"

namespace burst::rt {
namespace {

constexpr std::array<RingLevel, kRingLevelCount> kLevels{RingLevel::Flat, RingLevel::Intra, RingLevel::Inter};
constexpr std::size_t kWarmUpBytes = 4;  // one fp32 element

// What NCCL is told a message holds: its parts' dtype when they share one, bytes otherwise
// (the query pack mixes bf16 Q, dO with fp32 D, lse).
DType message_dtype(const WireFormat& wire) {
  const DType first = wire.parts().front().dtype;
  const bool uniform =
      std::all_of(wire.parts().begin(), wire.parts().end(), [&](const WirePart& p) { return p.dtype == first; });
  return uniform ? first : DType::Bytes;
}

std::string_view tensor_name(int tensor) {
  static constexpr std::array<std::string_view, 9> kNames{"q", "k", "v", "o", "lse", "do", "dq", "dk", "dv"};
  return tensor >= 0 && tensor < static_cast<int>(kNames.size()) ? kNames[static_cast<std::size_t>(tensor)] : "tensor";
}

// Every ring rank's hops (those it sends or receives), by send step and, within a step, in
// the schedule's order: the order RingPass posts them in (a stable counting sort per rank).
std::vector<std::vector<Hop>> by_ring_rank(const std::vector<Hop>& hops, int ring) {
  std::vector<std::vector<Hop>> out(static_cast<std::size_t>(ring));
  for (const Hop& h : hops) {
    out[static_cast<std::size_t>(h.src)].push_back(h);
    out[static_cast<std::size_t>(h.dst)].push_back(h);
  }
  std::vector<std::size_t> first_of_step(static_cast<std::size_t>(ring) + 1);
  std::vector<Hop> sorted;
  for (std::vector<Hop>& list : out) {
    std::fill(first_of_step.begin(), first_of_step.end(), 0);
    for (const Hop& h : list) ++first_of_step[static_cast<std::size_t>(h.send_step) + 1];
    for (std::size_t s = 1; s < first_of_step.size(); ++s) first_of_step[s] += first_of_step[s - 1];
    sorted.resize(list.size());
    for (const Hop& h : list) sorted[first_of_step[static_cast<std::size_t>(h.send_step)]++] = h;
    list.swap(sorted);
  }
  return out;
}

}  // namespace

std::string_view to_string(NcclPhase phase) {
  switch (phase) {
    case NcclPhase::WarmUp: return "warm-up";
    case NcclPhase::Forward: return "forward";
    case NcclPhase::Backward: return "backward";
  }
  return "unknown phase";
}

int comm_index(NcclComm comm) { return static_cast<int>(comm.ring) * kRingLevelCount + static_cast<int>(comm.level); }

std::string to_string(NcclComm comm) {
  const char* ring = comm.ring == NcclRing::Read          ? "read ring"
                     : comm.ring == NcclRing::Accumulator ? "accumulator ring"
                                                          : "ulysses group";
  return fmt::format("{} ({})", ring, to_string(comm.level));
}

std::string describe_payload(const NcclOp& op) {
  switch (op.channel) {
    case Channel::KvRing: return fmt::format("kv block {}", op.block);
    case Channel::QRing: return fmt::format("query pack of block {}", op.block);
    case Channel::DqRing: return fmt::format("dq accumulator of block {}", op.block);
    case Channel::DkvRing: return fmt::format("dkv accumulator of block {}", op.block);
    case Channel::Ulysses: return fmt::format("ulysses {}", tensor_name(op.block));
    case Channel::Collective: return "warm-up";
  }
  return "unknown payload";
}

NcclOpLists::NcclOpLists(const plan::Plan& plan, std::int64_t seq, int context)
    : schedule_(plan, seq, context),
      world_(static_cast<int>(plan.ranks.size())),
      backward_mode_(plan.strategy.backward),
      precision_(precision_of(plan)) {
  const ModelSpec& m = plan.job.model;
  const std::int64_t u = schedule_.ulysses(), c = seq / schedule_.ring_size();
  const int tp = std::max(1, plan.strategy.tp), heads = m.heads / tp, kv_heads = m.kv_heads / tp;  // a TP rank's
  q_local_ = {c / u, heads, m.head_dim};
  kv_local_ = {c / u, kv_heads, m.head_dim};
  q_ring_ = {c, heads / u, m.head_dim};
  kv_ring_ = {c, kv_heads / u, m.head_dim};
  forward_hops_ = hops_of(NcclPhase::Forward);
  backward_hops_ = hops_of(NcclPhase::Backward);
}

// The phase's payloads (as detail/ring_attention.cpp sends them) and its hops by ring rank.
NcclOpLists::PhaseHops NcclOpLists::hops_of(NcclPhase phase) const {
  const auto message = [](const WireFormat& wire) { return Message{wire.bytes(), message_dtype(wire)}; };
  PhaseHops out;
  Travel travel = Travel::KeysAndValues;
  out.payload = message(kv_block_wire(kv_ring_, precision_.activations));
  if (phase == NcclPhase::Backward && backward_mode_ == BackwardMode::QRing) {
    travel = Travel::Queries;
    out.read_channel = Channel::QRing;
    out.payload = message(query_pack_wire(q_ring_, precision_.activations));
    out.accumulator = message(WireFormat::uniform(static_cast<std::size_t>(q_ring_.elements()), precision_.dq));
  } else if (phase == NcclPhase::Backward) {
    out.accumulator_channel = Channel::DkvRing;
    out.accumulator = message(WireFormat::uniform(2 * static_cast<std::size_t>(kv_ring_.elements()), precision_.dkv));
  }
  const int ring = schedule_.ring_size();
  out.reads = by_ring_rank(schedule_.read_hops(travel), ring);
  out.accumulators.resize(static_cast<std::size_t>(ring));
  if (out.accumulator.bytes == 0) return out;
  out.accumulators = by_ring_rank(schedule_.accumulator_hops(travel), ring);
  // Within a step, an accumulator's receives come first: RingPass posts them before the step
  // computes and its send after.
  for (int k = 0; k < ring; ++k) {
    auto& list = out.accumulators[static_cast<std::size_t>(k)];
    for (auto first = list.begin(); first != list.end();) {
      const auto last = std::find_if(first, list.end(), [&](const Hop& h) { return h.send_step != first->send_step; });
      std::stable_partition(first, last, [k](const Hop& h) { return h.dst == k; });
      first = last;
    }
  }
  out.first_contributor.assign(static_cast<std::size_t>(ring), -1);
  for (int b = 0; b < ring; ++b) {
    for (int s = 0; s < ring && out.first_contributor[static_cast<std::size_t>(b)] < 0; ++s) {
      if (schedule_.holder_needs(travel, b, s))
        out.first_contributor[static_cast<std::size_t>(b)] = schedule_.holder(travel, b, s);
    }
  }
  return out;
}

// Step by step, the read groups then the accumulator groups, one per level that has hops.
void NcclOpLists::add_ring(int world_rank, const PhaseHops& hops, NcclOpList& out) const {
  const int me = schedule_.ring_rank(world_rank), member = schedule_.member(world_rank);
  const auto& reads = hops.reads[static_cast<std::size_t>(me)];
  const auto& accumulators = hops.accumulators[static_cast<std::size_t>(me)];
  const auto op = [&](const Hop& h, Message message, Channel channel, bool forwards) {
    const bool send = h.src == me;
    return NcclOp{send ? NcclDirection::Send : NcclDirection::Recv,
                  schedule_.world_rank(send ? h.dst : h.src, member),
                  message.bytes,
                  message.dtype,
                  channel,
                  h.block,
                  h.use_step,
                  send && forwards};
  };
  // One group per level that has hops among list[first, last) (all of one send step), in list order.
  const auto add_groups = [&](NcclRing ring, const std::vector<Hop>& list, std::size_t first, std::size_t last,
                              auto make) {
    const auto begin = list.begin() + static_cast<std::ptrdiff_t>(first),
               end = list.begin() + static_cast<std::ptrdiff_t>(last);
    for (const RingLevel level : kLevels) {
      const auto count = std::count_if(begin, end, [&](const Hop& h) { return h.level == level; });
      if (count == 0) continue;
      NcclGroup& group = out.emplace_back(NcclGroup{{ring, level}, begin->send_step, {}});
      group.ops.reserve(static_cast<std::size_t>(count));
      for (auto h = begin; h != end; ++h) {
        if (h->level == level) group.ops.push_back(make(*h));
      }
    }
  };
  std::size_t r = 0, a = 0;
  while (r < reads.size() || a < accumulators.size()) {
    const int step = std::min(r < reads.size() ? reads[r].send_step : schedule_.ring_size(),
                              a < accumulators.size() ? accumulators[a].send_step : schedule_.ring_size());
    std::size_t r_end = r, a_end = a;
    while (r_end < reads.size() && reads[r_end].send_step == step) ++r_end;
    while (a_end < accumulators.size() && accumulators[a_end].send_step == step) ++a_end;
    if (r_end > r) {
      add_groups(NcclRing::Read, reads, r, r_end,
                 [&](const Hop& h) { return op(h, hops.payload, hops.read_channel, h.src != h.block); });
    }
    if (a_end > a) {
      add_groups(NcclRing::Accumulator, accumulators, a, a_end, [&](const Hop& h) {
        return op(h, hops.accumulator, hops.accumulator_channel,
                  h.src != hops.first_contributor[static_cast<std::size_t>(h.block)]);
      });
    }
    r = r_end;
    a = a_end;
  }
}

// One all-to-all group per tensor, the pairs in Communicator::all_to_all's rotating order.
void NcclOpLists::add_ulysses(int world_rank, std::initializer_list<UlyssesTensor> tensors, NcclOpList& out) const {
  const int u = schedule_.ulysses();
  if (u == 1) return;
  const std::vector<int> group = schedule_.group(schedule_.ring_rank(world_rank));
  const int mine = schedule_.member(world_rank);
  for (const UlyssesTensor tensor : tensors) {
    const bool keys = tensor == UlyssesTensor::K || tensor == UlyssesTensor::V || tensor == UlyssesTensor::DK ||
                      tensor == UlyssesTensor::DV;
    const bool lse = tensor == UlyssesTensor::Lse;
    const DType dtype = lse ? DType::F32 : precision_.activations;
    const Shape local = lse ? Shape{q_local_.tokens, q_local_.heads, 1} : keys ? kv_local_ : q_local_;
    const std::size_t bytes = static_cast<std::size_t>(local.elements() / u) * dtype_size(dtype);
    const int step = static_cast<int>(tensor);
    NcclGroup g{{NcclRing::Ulysses, schedule_.ulysses_level()}, step, {}};
    for (int x = 1; x < u; ++x) {
      const int from = group[static_cast<std::size_t>((mine + u - x) % u)],
                to = group[static_cast<std::size_t>((mine + x) % u)];
      g.ops.push_back({NcclDirection::Recv, from, bytes, dtype, Channel::Ulysses, step, step, false});
      g.ops.push_back({NcclDirection::Send, to, bytes, dtype, Channel::Ulysses, step, step, false});
    }
    out.push_back(std::move(g));
  }
}

// Every communicator the rank's forward and backward use, a one-element exchange with each
// peer it meets there, both directions in one group.
NcclOpList NcclOpLists::warm_up(int world_rank) const {
  const int me = schedule_.ring_rank(world_rank), member = schedule_.member(world_rank);
  std::array<std::set<int>, kNcclCommCount> sends, receives;
  const auto meet = [&](NcclRing ring, const std::vector<Hop>& hops) {
    for (const Hop& h : hops) {
      const auto c = static_cast<std::size_t>(comm_index({ring, h.level}));
      if (h.src == me) {
        sends[c].insert(schedule_.world_rank(h.dst, member));
      } else {
        receives[c].insert(schedule_.world_rank(h.src, member));
      }
    }
  };
  for (const PhaseHops* hops : {&forward_hops_, &backward_hops_}) {
    meet(NcclRing::Read, hops->reads[static_cast<std::size_t>(me)]);
    meet(NcclRing::Accumulator, hops->accumulators[static_cast<std::size_t>(me)]);
  }
  const auto ulysses = static_cast<std::size_t>(comm_index({NcclRing::Ulysses, schedule_.ulysses_level()}));
  for (const int peer : schedule_.group(me)) {
    if (peer == world_rank) continue;
    sends[ulysses].insert(peer);
    receives[ulysses].insert(peer);
  }
  NcclOpList out;
  for (const NcclRing ring : {NcclRing::Read, NcclRing::Accumulator, NcclRing::Ulysses}) {
    for (const RingLevel level : kLevels) {
      const NcclComm comm{ring, level};
      const auto c = static_cast<std::size_t>(comm_index(comm));
      const auto exchange = [](NcclDirection direction, int peer) {
        return NcclOp{direction, peer, kWarmUpBytes, DType::F32, Channel::Collective, -1, -1, false};
      };
      NcclGroup g{comm, -1, {}};
      for (const int peer : receives[c]) g.ops.push_back(exchange(NcclDirection::Recv, peer));
      for (const int peer : sends[c]) g.ops.push_back(exchange(NcclDirection::Send, peer));
      if (!g.ops.empty()) out.push_back(std::move(g));
    }
  }
  return out;
}

NcclOpList NcclOpLists::list(int world_rank, NcclPhase phase) const {
  if (phase == NcclPhase::WarmUp) return warm_up(world_rank);
  NcclOpList out;
  if (phase == NcclPhase::Forward) {
    add_ulysses(world_rank, {UlyssesTensor::Q, UlyssesTensor::K, UlyssesTensor::V}, out);
    add_ring(world_rank, forward_hops_, out);
    add_ulysses(world_rank, {UlyssesTensor::O, UlyssesTensor::Lse}, out);
  } else {
    add_ulysses(
        world_rank,
        {UlyssesTensor::Q, UlyssesTensor::K, UlyssesTensor::V, UlyssesTensor::O, UlyssesTensor::DO, UlyssesTensor::Lse},
        out);
    add_ring(world_rank, backward_hops_, out);
    add_ulysses(world_rank, {UlyssesTensor::DQ, UlyssesTensor::DK, UlyssesTensor::DV}, out);
  }
  return out;
}

NcclOpList NcclOpLists::of(int world_rank, NcclPhase phase) const {
  if (world_rank < 0 || world_rank >= world_) {
    throw Error(Problem{"NCCL op list", fmt::format("world rank {} is not a rank of the plan", world_rank),
                        fmt::format("0 to {}", world_ - 1), ""});
  }
  if (!schedule_.holds(world_rank)) {
    throw Error(Problem{
        "NCCL op list",
        fmt::format("world rank {} is in another context-parallel group than {}", world_rank, schedule_.context()),
        "a rank of the group whose lists these are", ""});
  }
  return list(world_rank, phase);
}

std::vector<NcclOpList> NcclOpLists::all(NcclPhase phase) const {
  std::vector<NcclOpList> out(static_cast<std::size_t>(world_));
  for (int w = 0; w < world_; ++w) {
    if (schedule_.holds(w)) out[static_cast<std::size_t>(w)] = list(w, phase);
  }
  return out;
}

NcclOpList nccl_op_list(const plan::Plan& plan, int world_rank, std::int64_t seq, NcclPhase phase) {
  return NcclOpLists(plan, seq, RingSchedule::context_of(plan, world_rank)).of(world_rank, phase);
}

}  // namespace burst::rt
