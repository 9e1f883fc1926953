// Communicators over subgroups of a loopback job's ranks: a 4-rank job split into tensor-parallel
// pairs {0, 1}, {2, 3} and ZeRO groups {0, 2}, {1, 3}, both in use at once and interleaved as a
// training step would, each collective against its definition, reductions added in member order
// (the same bits on every member and as the loopback's own), posted collectives complete at
// posting, point-to-point peers translated to the parent's ranks, bad member lists refused, and
// a late member's timeout naming this rank in the group and in the parent.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/comm/loopback_communicator.hpp"
#include "runtime/comm/subgroup_communicator.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/loopback_job.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

// Bitwise equality of two float vectors (== would call -0 and 0 equal, NaN unequal).
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Rank r's contribution in a 4-member sum whose result tells the order of addition: in member
// order ((1e8 + 1) - 1e8) + 1 = 1 (1e8 + 1 rounds to 1e8 in fp32); reversed, or pairwise, 0.
float order_probe(int member) {
  constexpr float kValues[] = {1e8f, 1.0f, -1e8f, 1.0f};
  return kValues[member];
}

}  // namespace

TEST_CASE("subgroups of a loopback job: TP pairs and ZeRO groups, interleaved, give each collective's result") {
  constexpr int kRanks = 4;
  const auto errors = test::on_every_rank(kRanks, [](Communicator& world) {
    const int r = world.rank();
    SubgroupCommunicator tp(world, {r - r % 2, r - r % 2 + 1});  // consecutive ranks: a node's TP pair
    SubgroupCommunicator zero(world, {r % 2, r % 2 + 2});        // one TP index across the replicas
    test::rank_expect(tp.size() == 2 && tp.rank() == r % 2, "the TP rank is the place in the pair");
    test::rank_expect(zero.size() == 2 && zero.rank() == r / 2, "the ZeRO rank is the place in the group");
    test::rank_expect(tp.local_rank() == world.local_rank() && tp.local_size() == world.local_size(),
                      "the node-local rank and size are the parent's");
    test::rank_expect(!tp.reads_device_memory(), "host buffers only");
    test::rank_expect(tp.options().timeout_s == world.options().timeout_s, "the parent's timeout");
    test::rank_expect(zero.parent_rank(1) == r % 2 + 2, "member 1 of the ZeRO group is rank r % 2 + 2");

    tp.barrier();
    zero.barrier();

    // allgather: member order, each member's block at its index.
    const std::vector<std::int64_t> mine{10 * r, 10 * r + 1};
    std::vector<std::int64_t> tp_all(4, -1), zero_all(4, -1);
    tp.allgather(mine, tp_all);
    zero.allgather(mine, zero_all);
    const std::int64_t pair = r - r % 2, column = r % 2;
    test::rank_expect(tp_all == std::vector<std::int64_t>{10 * pair, 10 * pair + 1, 10 * pair + 10, 10 * pair + 11},
                      "the TP allgather in member order");
    test::rank_expect(
        zero_all == std::vector<std::int64_t>{10 * column, 10 * column + 1, 10 * column + 20, 10 * column + 21},
        "the ZeRO allgather in member order");

    // reduce_scatter (Sum, fp32): member m ends with the sum of everyone's m-th share.
    std::vector<float> spread(6);
    for (std::size_t i = 0; i < spread.size(); ++i) spread[i] = static_cast<float>(r) + 0.5f * static_cast<float>(i);
    std::vector<float> share(3);
    zero.reduce_scatter(spread, share, ReduceOp::Sum);
    for (std::size_t i = 0; i < 3; ++i) {
      const float index = static_cast<float>(3 * zero.rank()) + static_cast<float>(i);
      test::rank_expect(share[i] == static_cast<float>(2 * column + 2) + index, "the ZeRO reduce_scatter share");
    }
    tp.reduce_scatter(spread, share, ReduceOp::Sum);
    for (std::size_t i = 0; i < 3; ++i) {
      const float index = static_cast<float>(3 * tp.rank()) + static_cast<float>(i);
      test::rank_expect(share[i] == static_cast<float>(2 * pair + 1) + index, "the TP reduce_scatter share");
    }

    // allreduce of 5 elements over 2 members (blocks of 3 and 2): Sum on TP, Max on ZeRO.
    std::vector<float> sums(5);
    for (std::size_t i = 0; i < sums.size(); ++i) sums[i] = static_cast<float>(r) * static_cast<float>(i + 1);
    tp.allreduce(sums, ReduceOp::Sum);
    for (std::size_t i = 0; i < sums.size(); ++i) {
      test::rank_expect(sums[i] == static_cast<float>(2 * pair + 1) * static_cast<float>(i + 1),
                        "the TP allreduce sum");
    }
    std::vector<std::int64_t> most{r, -r, 7 * r % 5, 0, 100 - r};
    zero.allreduce(most, ReduceOp::Max);
    test::rank_expect(most == std::vector<std::int64_t>{column + 2, -column,
                                                        std::max<std::int64_t>(7 * column % 5, 7 * (column + 2) % 5), 0,
                                                        100 - column},
                      "the ZeRO allreduce max");
    std::vector<double> one{static_cast<double>(r)};  // fewer elements than members: an empty block
    tp.allreduce(one, ReduceOp::Sum);
    test::rank_expect(one[0] == static_cast<double>(2 * pair + 1), "a one-element allreduce");

    // gather_to_root: member 0 gets every block; member 1's buffer is left alone.
    std::vector<float> gathered(4, -1.0f);
    zero.gather_to_root(std::vector<float>{static_cast<float>(r), static_cast<float>(r * r)}, gathered);
    if (zero.rank() == 0) {
      const auto c = static_cast<float>(column), d = static_cast<float>(column + 2);
      test::rank_expect(gathered == std::vector<float>{c, c * c, d, d * d}, "the gather at member 0");
    } else {
      test::rank_expect(gathered == std::vector<float>(4, -1.0f), "nothing written off the root");
    }

    // broadcast from member 1 of the pair.
    std::vector<std::byte> id(3, std::byte{static_cast<unsigned char>(r)});
    tp.broadcast(id, 1);
    test::rank_expect(id == std::vector<std::byte>(3, std::byte{static_cast<unsigned char>(pair + 1)}),
                      "the pair's member 1's bytes");

    // Posted collectives are complete at posting; waiting does nothing.
    std::vector<std::int64_t> posted_all(4, -1);
    Request gather = zero.iallgather(mine, posted_all);
    test::rank_expect(!gather.pending(), "a subgroup's posted allgather is complete at posting");
    zero.wait(gather);
    test::rank_expect(posted_all == zero_all, "the posted allgather's result");
    std::vector<float> posted_share(3);
    Request scatter = tp.ireduce_scatter(spread, posted_share, ReduceOp::Sum);
    test::rank_expect(!scatter.pending(), "a subgroup's posted reduce_scatter is complete at posting");
    tp.wait(scatter);
    test::rank_expect(posted_share == share, "the posted reduce_scatter's result");

    // Point-to-point: the peer is a member, sent to its parent rank.
    const std::vector<float> block{static_cast<float>(r), 0.25f};
    std::vector<float> incoming(2);
    Request transfers[] = {zero.irecv(incoming, 1 - zero.rank(), Channel::KvRing, 3, RingLevel::Inter),
                           zero.isend(block, 1 - zero.rank(), Channel::KvRing, 3, RingLevel::Inter)};
    zero.wait_all(transfers);
    test::rank_expect(incoming == std::vector<float>{static_cast<float>((r + 2) % 4), 0.25f},
                      "the block of the other ZeRO member");
    // And that is the parent's message from that rank: a parent receive would match it too.
    world.isend(block, (r + 2) % 4, Channel::QRing, 1, RingLevel::Flat);
    Request on_parent = zero.irecv(incoming, 1 - zero.rank(), Channel::QRing, 1, RingLevel::Flat);
    zero.wait(on_parent);
    test::rank_expect(incoming == std::vector<float>{static_cast<float>((r + 2) % 4), 0.25f},
                      "a parent message received through the subgroup");
    test::rank_expect(zero.bytes_sent(Channel::KvRing, RingLevel::Inter) == 2 * sizeof(float),
                      "the subgroup counts its own sends");
    test::rank_expect(world.bytes_sent(Channel::KvRing) == 0 && world.bytes_sent(Channel::Collective) == 0,
                      "the parent's counters do not see the subgroup's messages");
    test::rank_expect(tp.bytes_sent(Channel::Collective) > 0, "the subgroup counts its collectives");
    tp.barrier();
    zero.barrier();
  });
  CHECK(errors == std::vector<std::string>(kRanks));
}

TEST_CASE("subgroup reductions add in member order: the same bits on every member and as the loopback's") {
  constexpr int kRanks = 4;
  std::vector<std::vector<float>> sub_sums(kRanks), world_sums(kRanks), sub_shares(kRanks), world_shares(kRanks);
  const auto errors = test::on_every_rank(kRanks, [&](Communicator& world) {
    const int r = world.rank();
    const auto me = static_cast<std::size_t>(r);
    SubgroupCommunicator all(world, {0, 1, 2, 3});
    // allreduce of 7 (blocks of 2, 2, 2, 1) and of 2 (two empty blocks) elements.
    for (const std::size_t count : {std::size_t{7}, std::size_t{2}}) {
      std::vector<float> data(count, order_probe(r));
      std::vector<float> reference = data;
      all.allreduce(data, ReduceOp::Sum);
      world.allreduce(reference, ReduceOp::Sum);
      test::rank_expect(data == std::vector<float>(count, 1.0f), "((1e8 + 1) - 1e8) + 1 = 1, the member-order sum");
      sub_sums[me].insert(sub_sums[me].end(), data.begin(), data.end());
      world_sums[me].insert(world_sums[me].end(), reference.begin(), reference.end());
    }
    std::vector<float> spread(8);
    for (std::size_t i = 0; i < spread.size(); ++i) spread[i] = order_probe(r) * static_cast<float>(i % 3 + 1);
    sub_shares[me].resize(2);
    world_shares[me].resize(2);
    all.reduce_scatter(spread, sub_shares[me], ReduceOp::Sum);
    world.reduce_scatter(spread, world_shares[me], ReduceOp::Sum);
  });
  CHECK(errors == std::vector<std::string>(kRanks));
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    const auto me = static_cast<std::size_t>(r);
    CHECK(same_bits(sub_sums[me], sub_sums[0]));
    CHECK(same_bits(sub_sums[me], world_sums[me]));
    CHECK(same_bits(sub_shares[me], world_shares[me]));
  }
}

TEST_CASE("a subgroup of three members reduces a count it does not divide, and has subgroups of its own") {
  const auto errors = test::on_every_rank(4, [](Communicator& world) {
    const int r = world.rank();
    if (r == 2) return;  // not a member: takes no part
    SubgroupCommunicator group(world, {0, 1, 3});
    std::vector<std::int32_t> data{r, 2 * r, 3 * r, 4 * r, 5 * r};  // blocks of 2, 2, 1
    group.allreduce(data, ReduceOp::Sum);
    test::rank_expect(data == std::vector<std::int32_t>{4, 8, 12, 16, 20}, "the sum over ranks 0, 1, 3");
    std::vector<double> mine{static_cast<double>(r)}, all(3);
    group.allgather(mine, all);
    test::rank_expect(all == std::vector<double>{0, 1, 3}, "the allgather of the three");
    if (group.rank() != 1) {  // a subgroup of the subgroup: members 0 and 2, ranks 0 and 3
      SubgroupCommunicator ends(group, {0, 2});
      std::vector<std::int64_t> most{r};
      ends.allreduce(most, ReduceOp::Max);
      test::rank_expect(most[0] == 3 && ends.rank() == group.rank() / 2, "the max over ranks 0 and 3");
    }
    group.barrier();
  });
  CHECK(errors == std::vector<std::string>(4));
}

TEST_CASE("bad member lists are refused, naming what is wrong") {
  auto comms = make_loopback_communicators(4);
  Communicator& rank1 = *comms[1];
  CHECK(test::error_text([&] { SubgroupCommunicator(rank1, {}); }) ==
        "rank 1: subgroup of ranks {}: no members (valid: parent ranks in increasing order, this rank among them; "
        "hint: each rank makes the communicator of the group it belongs to)");
  CHECK(test::error_text([&] {
          SubgroupCommunicator(rank1, {0, 2});
        }) ==
        "rank 1: subgroup of ranks {0, 2}: this rank (1) is not a member (valid: a list holding this rank; hint: "
        "each rank makes the communicator of the group it belongs to)");
  CHECK(test::error_text([&] {
          SubgroupCommunicator(rank1, {1, 1, 0});
        }) ==
        "rank 1: subgroup of ranks {1, 1, 0}: rank 1 follows rank 1 (valid: increasing ranks, each once; hint: the "
        "same sorted list on every member)\n"
        "rank 1: subgroup of ranks {1, 1, 0}: rank 0 follows rank 1 (valid: increasing ranks, each once; hint: the "
        "same sorted list on every member)");
  CHECK(test::error_text([&] {
          SubgroupCommunicator(rank1, {-1, 1, 4});
        }) ==
        "rank 1: subgroup of ranks {-1, 1, 4}: -1 is not a rank of the parent (valid: 0 to 3)\n"
        "rank 1: subgroup of ranks {-1, 1, 4}: 4 is not a rank of the parent (valid: 0 to 3)");
  SubgroupCommunicator pair(rank1, {1, 3});
  std::vector<float> block(2);
  CHECK(test::error_text([&] { pair.isend(block, 2, Channel::KvRing, 0, RingLevel::Flat); }) ==
        "rank 0: isend: peer 2 is not a rank of this communicator (valid: 0 to 1)");
}

TEST_CASE("a member that never comes fails the collective, naming this rank in the group and in the parent") {
  auto comms = make_loopback_communicators(4, CommOptions{0.2});
  SubgroupCommunicator pair(*comms[1], {1, 3});  // rank 3 never calls: one thread is enough
  std::vector<float> data(4, 1.0f);
  CHECK(test::error_text([&] { pair.allreduce(data, ReduceOp::Sum); }) ==
        "rank 0 (rank 1 of the parent): allreduce over the subgroup of ranks {1, 3} did not complete (hint: every "
        "member calls the subgroup's collectives in the same order)\n"
        "rank 1: no message from rank 3 on the collective channel at step 0 within 0.2 s (hint: rank 3 failed, is "
        "stuck, or never sends on this channel, step and ring level (flat); a rank that is only slow needs a longer "
        "CommOptions::timeout_s)");
}

TEST_CASE("bf16 reductions sum in fp32 and round once, on a subgroup as on the loopback") {
  // 1 + 3 x 2^-9 in one rounding is 1 + 2^-7 (0.75 of bf16's step at 1 rounds up); rounded after
  // each addition it would stay 1 (each 2^-9 is a quarter step and rounds away).
  constexpr float kOnce = 1.0f + 0.0078125f;
  const auto contribution = [](int r) { return to_bf16(r == 0 ? 1.0f : 0.001953125f); };
  const auto errors = test::on_every_rank(4, [&](Communicator& world) {
    const int r = world.rank();
    SubgroupCommunicator all(world, {0, 1, 2, 3});
    std::vector<Bf16> on_group(3, contribution(r)), on_world(3, contribution(r));
    all.allreduce(on_group, ReduceOp::Sum);
    world.allreduce(on_world, ReduceOp::Sum);
    std::vector<Bf16> spread(8, contribution(r)), share(2), world_share(2);
    all.reduce_scatter(spread, share, ReduceOp::Sum);
    world.reduce_scatter(spread, world_share, ReduceOp::Sum);
    for (const auto* values : {&on_group, &on_world, &share, &world_share}) {
      for (const Bf16 v : *values) test::rank_expect(to_float(v) == kOnce, "1 + 3 x 2^-9 rounded once: 1 + 2^-7");
    }
  });
  CHECK(errors == std::vector<std::string>(4));
}
