// The one-rank communicator the executor's tests run on without mpirun: sends to self reach
// the matching receive (posted before or after), collectives are identities, and a receive
// nothing was sent for fails with the same timeout error an MPI rank gives.
#include <catch2/catch.hpp>

#include <chrono>
#include <vector>

#include "runtime/comm/self_communicator.hpp"
#include "tests/support/error_text.hpp"

using namespace burst;
using namespace burst::rt;

TEST_CASE("sends to self reach the receive of the same channel, step and level, in either order") {
  auto comm = make_self_communicator();
  CHECK(comm->rank() == 0);
  CHECK(comm->size() == 1);
  const std::vector<float> kv{1, 2, 3}, q{4, 5}, kv_next{6, 7, 8};
  std::vector<float> kv_in(3), q_in(2), kv_next_in(3);
  Request early = comm->irecv(q_in, 0, Channel::QRing, 0, RingLevel::Flat);  // before its send
  Request sends[] = {comm->isend(kv_next, 0, Channel::KvRing, 1, RingLevel::Flat),
                     comm->isend(kv, 0, Channel::KvRing, 0, RingLevel::Flat),
                     comm->isend(q, 0, Channel::QRing, 0, RingLevel::Flat)};
  comm->wait_all(sends);
  Request late[] = {comm->irecv(kv_in, 0, Channel::KvRing, 0, RingLevel::Flat),
                    comm->irecv(kv_next_in, 0, Channel::KvRing, 1, RingLevel::Flat)};
  comm->wait(early);
  comm->wait_all(late);
  CHECK(kv_in == kv);
  CHECK(q_in == q);
  CHECK(kv_next_in == kv_next);
  CHECK(comm->bytes_sent(Channel::KvRing) == 6 * sizeof(float));
  CHECK(comm->bytes_sent(Channel::QRing) == 2 * sizeof(float));
  CHECK(comm->bytes_sent(RingLevel::Flat) == 8 * sizeof(float));
  comm->reset_counters();
  CHECK(comm->bytes_sent(RingLevel::Flat) == 0);
}

TEST_CASE("collectives over one rank are identities") {
  auto comm = make_self_communicator();
  std::vector<float> grads{1.5f, -2.0f};
  comm->allreduce(grads, ReduceOp::Sum);
  CHECK(grads == std::vector<float>{1.5f, -2.0f});
  std::vector<float> all(2), shard(2);
  comm->gather_to_root(grads, all);
  CHECK(all == grads);
  comm->allgather(grads, all);
  CHECK(all == grads);
  comm->reduce_scatter(grads, shard, ReduceOp::Sum);
  CHECK(shard == grads);
  comm->barrier();
  CHECK(comm->bytes_sent(Channel::Collective) == 4 * 2 * sizeof(float));
  // An all-to-all of one is a copy and sends nothing.
  const std::vector<int> me{0};
  std::vector<float> out(2);
  comm->all_to_all(grads, out, me, Channel::Ulysses, 0, RingLevel::Flat);
  CHECK(out == grads);
  CHECK(comm->bytes_sent(Channel::Ulysses) == 0);
}

TEST_CASE("a receive nothing was sent for times out with the rank, peer, channel, step and direction") {
  auto comm = make_self_communicator({0.2});
  std::vector<float> block(4);
  Request request = comm->irecv(block, 0, Channel::KvRing, 2, RingLevel::Inter);
  const auto start = std::chrono::steady_clock::now();
  CHECK(test::error_text([&] { comm->wait(request); }) ==
        "rank 0: no message from rank 0 on the kv ring at step 2 within 0.2 s (hint: rank 0 failed, is stuck, "
        "or never sends on this channel, step and ring level (inter); a rank that is only slow needs a longer "
        "CommOptions::timeout_s)");
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(200));
  CHECK_FALSE(request.pending());
  // The cancelled receive is gone: a later send waits for a new receive instead.
  const std::vector<float> payload{9, 8, 7, 6};
  comm->isend(payload, 0, Channel::KvRing, 2, RingLevel::Inter);
  Request again = comm->irecv(block, 0, Channel::KvRing, 2, RingLevel::Inter);
  comm->wait(again);
  CHECK(block == payload);
}

TEST_CASE("bad transfers name the rank, the call and what is valid") {
  auto comm = make_self_communicator();
  std::vector<float> four(4);
  const std::vector<float> three(3);
  CHECK(test::error_text([&] { comm->isend(three, 1, Channel::QRing, -1, RingLevel::Flat); }) ==
        "rank 0: isend: peer 1 is not a rank of this communicator (valid: 0 to 0)\n"
        "rank 0: isend: step -1 is negative (valid: steps >= 0)");
  comm->isend(three, 0, Channel::DqRing, 0, RingLevel::Flat);
  Request short_message = comm->irecv(four, 0, Channel::DqRing, 0, RingLevel::Flat);
  CHECK(test::error_text([&] { comm->wait(short_message); }) ==
        "rank 0: message from rank 0 on the dq ring at step 0 has 12 bytes (valid: 16 bytes, the posted receive's "
        "4 fp32 elements; hint: both sides of a ring transfer must agree on the block shape)");
  std::vector<float> all(3);
  CHECK(test::error_text([&] { comm->gather_to_root(three, std::span<float>(all).first(2)); }) ==
        "rank 0: gather_to_root: output holds 2 elements (valid: 3 elements (1 ranks, 3 each); hint: every rank "
        "contributes the same count)");
  std::vector<double> wrong_type(3);
  CHECK(test::error_text([&] { comm->allgather(three, wrong_type); }) ==
        "rank 0: allgather: output is fp64, input fp32 (valid: the same dtype)");
}

TEST_CASE("ring levels use the plan's spellings") {
  for (auto level : {RingLevel::Flat, RingLevel::Intra, RingLevel::Inter}) {
    CHECK(parse_ring_level(to_string(level), "ring") == level);
  }
  CHECK(test::error_text([] { parse_ring_level("outer", "plan.json:/layers/0/ring"); }) ==
        "plan.json:/layers/0/ring: unknown ring level 'outer' (valid: flat, intra, inter; hint: flat is the single "
        "ring; intra and inter are the inner and outer rings of a double ring)");
}
