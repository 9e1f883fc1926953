// The NCCL backend's grouping, on a hand-made op list: groups become ready whole and in list
// order however their transfers are posted; a transfer outside the list, a wrong size, and a
// pass begun before the last one's groups are complete are errors that say which op.
#include <catch2/catch.hpp>

#include "runtime/schedule/nccl_group_assembler.hpp"

using namespace burst::rt;

namespace {

NcclOp op(NcclDirection direction, int peer, int step, std::size_t bytes) {
  return NcclOp{direction, peer, bytes, DType::BF16, Channel::KvRing, peer, step, false};
}

Envelope envelope(Operation operation, int peer, int step, std::size_t bytes) {
  return Envelope{operation, peer, Channel::KvRing, step, RingLevel::Flat, bytes / 2, DType::BF16};
}

// Rank 1 of a 3-rank ring: at steps 1 and 2 it receives from rank 0 and sends to rank 2.
NcclOpList ring_list() {
  const NcclComm read{NcclRing::Read, RingLevel::Flat};
  return {NcclGroup{read, 1, {op(NcclDirection::Recv, 0, 1, 64), op(NcclDirection::Send, 2, 1, 64)}},
          NcclGroup{read, 2, {op(NcclDirection::Recv, 0, 2, 64), op(NcclDirection::Send, 2, 2, 64)}}};
}

}  // namespace

TEST_CASE("groups are ready whole and in list order, whatever order their transfers come in") {
  NcclGroupAssembler a(1, ring_list(), {});
  a.begin(AttentionPass::Forward);
  CHECK(a.post(envelope(Operation::Send, 2, 2, 64)).group == 1);  // the later group first
  CHECK(a.take_ready().empty());
  CHECK(a.post(envelope(Operation::Recv, 0, 2, 64)).group == 1);
  CHECK(a.take_ready().empty());  // complete, but group 0 is not
  CHECK(a.incomplete(1).find("waits for an earlier one: the read ring (flat) group at step 1 still misses: recv") !=
        std::string::npos);
  CHECK(a.post(envelope(Operation::Send, 2, 1, 64)).op == 1);
  CHECK_FALSE(a.ready(0));
  CHECK(a.post(envelope(Operation::Recv, 0, 1, 64)).op == 0);
  CHECK(a.take_ready() == std::vector<std::size_t>{0, 1});
  CHECK(a.ready(1));
  CHECK(a.take_ready().empty());  // each group once
}

TEST_CASE("a transfer the op list does not hold, or of another size, is an error naming it") {
  NcclGroupAssembler a(1, ring_list(), {});
  a.begin(AttentionPass::Forward);
  CHECK_THROWS_WITH(a.post(envelope(Operation::Send, 0, 1, 64)),
                    Catch::Contains("rank 1: NCCL forward pass: message to rank 0 on the kv ring at step 1") &&
                        Catch::Contains("not in this rank's op list"));
  CHECK_THROWS_WITH(a.post(envelope(Operation::Recv, 0, 1, 32)),
                    Catch::Contains("32 bytes") && Catch::Contains("64 bytes, as the op list says"));
  (void)a.post(envelope(Operation::Recv, 0, 1, 64));
  CHECK_THROWS_WITH(a.post(envelope(Operation::Recv, 0, 1, 64)), Catch::Contains("or posted twice"));
}

TEST_CASE("a pass begun before the last one's groups are complete is an error naming what is missing") {
  NcclGroupAssembler a(1, ring_list(), {});
  a.begin(AttentionPass::Forward);
  (void)a.post(envelope(Operation::Recv, 0, 1, 64));
  CHECK_THROWS_WITH(
      a.begin(AttentionPass::Backward),
      Catch::Contains("a backward pass begins while the read ring (flat) group at step 1 still misses: send "
                      "kv block 2 to rank 2"));
}
