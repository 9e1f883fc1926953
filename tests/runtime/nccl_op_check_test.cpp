// The NCCL op-list checker (runtime/schedule/detail/nccl_op_check.hpp) fails where NCCL would: a
// send and a receive that disagree in bytes or dtype, a send nobody receives, groups issued so
// that two ranks wait on each other (over two communicators, and the ungrouped send/receive
// pair), and a block forwarded in the group that receives it or before it. Each problem
// names the ranks, the communicator, the group and the step. Pairs that carry different
// payloads (posting order pairing the wrong blocks) are named too.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "runtime/schedule/detail/nccl_op_check.hpp"
#include "runtime/schedule/nccl_op_list.hpp"
#include "tests/support/ring_plan.hpp"

using namespace burst;
using namespace burst::rt;

namespace {

constexpr NcclComm kRead{NcclRing::Read, RingLevel::Flat};
constexpr NcclComm kAccumulator{NcclRing::Accumulator, RingLevel::Flat};

NcclOp send(int peer, int block = 0, std::size_t bytes = 64, DType dtype = DType::BF16, bool forwards = false) {
  return {NcclDirection::Send, peer, bytes, dtype, Channel::KvRing, block, 1, forwards};
}
NcclOp recv(int peer, int block = 0, std::size_t bytes = 64, DType dtype = DType::BF16) {
  return {NcclDirection::Recv, peer, bytes, dtype, Channel::KvRing, block, 1, false};
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace

TEST_CASE("a sound exchange passes: two ranks trade blocks in one group each", "[nccl]") {
  const std::vector<NcclOpList> lists{{{kRead, 0, {send(1, 0), recv(1, 1)}}}, {{kRead, 0, {recv(0, 0), send(0, 1)}}}};
  CHECK(check_nccl_op_lists(lists).empty());
}

TEST_CASE("a send and its receive that disagree in bytes or dtype are named", "[nccl]") {
  const std::vector<NcclOpList> bytes{{{kRead, 0, {send(1, 0, 128)}}}, {{kRead, 0, {recv(0, 0, 64)}}}};
  const std::string text = joined(check_nccl_op_lists(bytes));
  CHECK_THAT(text,
             Catch::Contains("read ring (flat): rank 0's send #1 to rank 1 (group 0 (read ring (flat), step 0): kv "
                             "block 0, 128 bytes bf16) meets rank 1's receive #1 from rank 0"));
  CHECK_THAT(text, Catch::Contains("64 bytes bf16): the bytes differ"));
  const std::vector<NcclOpList> dtypes{{{kRead, 0, {send(1, 0, 64, DType::BF16)}}},
                                       {{kRead, 0, {recv(0, 0, 64, DType::F32)}}}};
  CHECK_THAT(joined(check_nccl_op_lists(dtypes)), Catch::Contains("the dtypes differ"));
}

TEST_CASE("a send without its receive, and a receive on another communicator, have no partner", "[nccl]") {
  // Rank 1 receives the first of rank 0's two blocks only.
  const std::vector<NcclOpList> missing{{{kRead, 0, {send(1, 0)}}, {kRead, 1, {send(1, 1)}}},
                                        {{kRead, 0, {recv(0, 0)}}}};
  CHECK_THAT(
      joined(check_nccl_op_lists(missing)),
      Catch::Contains("read ring (flat): rank 0 sends 2 messages to rank 1, which posts only 1 matching receives: "
                      "send #2 (group 1 (read ring (flat), step 1): kv block 1, 64 bytes bf16) has no partner"));
  // NCCL matches per communicator: a receive on the accumulator ring never meets a read-ring send.
  const std::vector<NcclOpList> elsewhere{{{kRead, 0, {send(1)}}}, {{kAccumulator, 0, {recv(0)}}}};
  const std::string text = joined(check_nccl_op_lists(elsewhere));
  CHECK_THAT(text, Catch::Contains("read ring (flat): rank 0 sends 1 messages to rank 1, which posts only 0"));
  CHECK_THAT(text,
             Catch::Contains("accumulator ring (flat): rank 1 receives 1 messages from rank 0, which posts only 0"));
  const std::vector<NcclOpList> stranger{{{kRead, 0, {send(2)}}}, {}};
  CHECK_THAT(joined(check_nccl_op_lists(stranger)), Catch::Contains("names peer 2, not a rank of the job (2 ranks)"));
}

TEST_CASE("groups on two communicators issued in opposite orders deadlock, and the checker says who waits for whom",
          "[nccl]") {
  // Rank 0 issues its read-ring group first, rank 1 its accumulator-ring group first: each waits
  // in a group whose partner the other has not reached (NCCL #592, #1347).
  const std::vector<NcclOpList> lists{
      {{kRead, 0, {send(1)}}, {kAccumulator, 0, {recv(1)}}},
      {{kAccumulator, 0, {send(0)}}, {kRead, 0, {recv(0)}}},
  };
  const std::string text = joined(check_nccl_op_lists(lists));
  CHECK_THAT(text,
             Catch::Contains("no progress: rank 0 waits in its group 0 (read ring (flat), step 0) with its send of kv "
                             "block 0 to rank 1, whose partner is in rank 1's group 1 (read ring (flat), step 0), but "
                             "rank 1 waits in its group 0 (accumulator ring (flat), step 0)"));
  CHECK_THAT(text, Catch::Contains("no progress: rank 1 waits in its group 0 (accumulator ring (flat), step 0)"));
  CHECK_THAT(text, Catch::Contains("no progress: 2 of 2 ranks never finish their lists"));
}

TEST_CASE("an ungrouped send/receive pair deadlocks two ranks sending to each other", "[nccl]") {
  // Each rank sends first, in a group of its own: neither ever reaches the receive (NCCL #479).
  const std::vector<NcclOpList> ungrouped{{{kRead, 0, {send(1)}}, {kRead, 0, {recv(1)}}},
                                          {{kRead, 0, {send(0)}}, {kRead, 0, {recv(0)}}}};
  CHECK_THAT(joined(check_nccl_op_lists(ungrouped)), Catch::Contains("2 of 2 ranks never finish"));
  // The same messages grouped per step complete.
  const std::vector<NcclOpList> grouped{{{kRead, 0, {send(1), recv(1)}}}, {{kRead, 0, {send(0), recv(0)}}}};
  CHECK(check_nccl_op_lists(grouped).empty());
}

TEST_CASE("a real ring's lists, one rank's groups reordered: wrong blocks on one communicator, deadlock over two",
          "[nccl]") {
  const plan::Plan p = test::ring_plan(4, 4, Layout::Zigzag, BackwardMode::QRing, "full", 2, 2, 4, 16);
  const NcclOpLists lists(p, 16);
  std::vector<NcclOpList> forward = lists.all(NcclPhase::Forward);
  REQUIRE(check_nccl_op_lists(forward).empty());
  // Rank 2 issues step 1's read group before step 0's. On one communicator with equal sizes NCCL
  // does not notice: posting order pairs rank 1's block 1 with the receive meant for block 0.
  std::swap(forward[2][0], forward[2][1]);
  const std::string text = joined(check_nccl_op_lists(forward));
  CHECK_THAT(text,
             Catch::Contains("read ring (flat): rank 1's send #1 to rank 2 (group 0 (read ring (flat), step 0): kv "
                             "block 1, 256 bytes fp32) meets rank 2's receive #1 from rank 1 (group 0 (read ring "
                             "(flat), step 1): kv block 0, 256 bytes fp32): the payloads differ"));
  CHECK(text.find("no progress") == std::string::npos);
  // In the backward, rank 2 issues step 0's accumulator group before its read group: it waits on
  // the accumulator ring for peers that wait on the read ring for it.
  std::vector<NcclOpList> backward = lists.all(NcclPhase::Backward);
  REQUIRE(check_nccl_op_lists(backward).empty());
  REQUIRE(backward[2][0].comm.ring == NcclRing::Read);
  REQUIRE(backward[2][1].comm.ring == NcclRing::Accumulator);
  std::swap(backward[2][0], backward[2][1]);
  const std::string stuck = joined(check_nccl_op_lists(backward));
  CHECK_THAT(stuck, Catch::Contains("no progress: rank 2 waits in its group 0 (accumulator ring (flat), step 0)"));
  CHECK_THAT(stuck, Catch::Contains("ranks never finish their lists"));
}

TEST_CASE("a block forwarded in the group that receives it, or before, is a data race", "[nccl]") {
  // Rank 1 passes block 0 on to rank 2 in the very group that receives it from rank 0.
  const std::vector<NcclOpList> same{
      {{kRead, 0, {send(1, 0)}}},
      {{kRead, 0, {recv(0, 0), send(2, 0, 64, DType::BF16, true)}}},
      {{kRead, 0, {recv(1, 0)}}},
  };
  CHECK(joined(check_nccl_op_lists(same)) ==
        "rank 1 forwards kv block 0 to rank 2 in its group 0 (read ring (flat), step 0) in the same group that "
        "receives it "
        "(NCCL gives no order inside a group)\n");
  // Or a step before it arrives; or a block it never receives.
  const std::vector<NcclOpList> early{
      {{kRead, 1, {send(1, 0)}}},
      {{kRead, 0, {send(2, 0, 64, DType::BF16, true)}}, {kRead, 1, {recv(0, 0)}}},
      {{kRead, 0, {recv(1, 0)}}},
  };
  CHECK_THAT(joined(check_nccl_op_lists(early)),
             Catch::Contains("rank 1 forwards kv block 0 to rank 2 in its group 0 (read ring (flat), step 0) before it "
                             "receives it in its group 1 (read ring (flat), step 1)"));
  const std::vector<NcclOpList> never{{}, {{kRead, 0, {send(0, 3, 64, DType::BF16, true)}}}};
  CHECK_THAT(joined(check_nccl_op_lists(never)),
             Catch::Contains("forwards kv block 3 to rank 0 in its group 0 (read ring "
                             "(flat), step 0) but never receives it"));
  // A rank's own block needs no receive.
  const std::vector<NcclOpList> own{{{kRead, 0, {send(1, 0)}}}, {{kRead, 0, {recv(0, 0)}}}};
  CHECK(check_nccl_op_lists(own).empty());
}

TEST_CASE("problems are capped at 20 lines per kind with a count of the rest", "[nccl]") {
  NcclOpList sender, receiver;
  for (int i = 0; i < 30; ++i) {
    sender.push_back({kRead, i, {send(1, i, 128)}});
    receiver.push_back({kRead, i, {recv(0, i, 64)}});
  }
  const auto problems = check_nccl_op_lists(std::vector<NcclOpList>{sender, receiver});
  REQUIRE(problems.size() == 21);
  CHECK(problems.back() == "... and 10 more pairing problems");
}
