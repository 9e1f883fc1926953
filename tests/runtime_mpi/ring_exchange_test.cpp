// Ring transfers over every rank, as the executor's ring steps make them: each rank sends to
// the next rank of the ring and receives from the previous, several channels and steps in
// flight at once. Payloads encode (sender, step, channel, index), so a receive that matched
// the wrong message shows which one it got.
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/comm/mpi_communicator.hpp"

using namespace burst::rt;

namespace {

constexpr CommOptions kTestOptions{20};

float encode(int sender, int step, Channel channel, std::size_t i) {
  return static_cast<float>(sender * 10000 + step * 1000 + static_cast<int>(channel) * 100 + static_cast<int>(i));
}

std::vector<float> payload(int sender, int step, Channel channel, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = encode(sender, step, channel, i);
  return v;
}

struct Ring {
  int rank, size, next, prev;
  explicit Ring(const Communicator& c)
      : rank(c.rank()), size(c.size()), next((c.rank() + 1) % c.size()), prev((c.rank() + c.size() - 1) % c.size()) {}
};

}  // namespace

TEST_CASE("a ring exchange of 3 steps with the kv and q rings in flight at once, double-buffered") {
  auto comm = make_mpi_communicator(kTestOptions);
  const Ring ring(*comm);
  // Different lengths per channel: a receive matched across channels would fail its size check.
  const std::size_t kv_n = 6, q_n = 4;
  constexpr int kSteps = 3;
  std::vector<std::vector<float>> kv_in(kSteps, std::vector<float>(kv_n)), q_in(kSteps, std::vector<float>(q_n));
  std::vector<std::vector<float>> kv_out, q_out;
  for (int s = 0; s < kSteps; ++s) {
    kv_out.push_back(payload(ring.rank, s, Channel::KvRing, kv_n));
    q_out.push_back(payload(ring.rank, s, Channel::QRing, q_n));
  }
  // Posts step s's four transfers (receive from prev, send to next, both channels).
  auto post = [&](int s) {
    std::vector<Request> r;
    r.push_back(comm->irecv(kv_in[s], ring.prev, Channel::KvRing, s, RingLevel::Flat));
    r.push_back(comm->irecv(q_in[s], ring.prev, Channel::QRing, s, RingLevel::Flat));
    r.push_back(comm->isend(kv_out[s], ring.next, Channel::KvRing, s, RingLevel::Flat));
    r.push_back(comm->isend(q_out[s], ring.next, Channel::QRing, s, RingLevel::Flat));
    return r;
  };
  auto in_flight = post(0);
  for (int s = 0; s < kSteps; ++s) {
    auto next_step = s + 1 < kSteps ? post(s + 1) : std::vector<Request>{};  // double buffering
    comm->wait_all(in_flight);
    CHECK(kv_in[s] == payload(ring.prev, s, Channel::KvRing, kv_n));
    CHECK(q_in[s] == payload(ring.prev, s, Channel::QRing, q_n));
    in_flight = std::move(next_step);
  }
}

TEST_CASE("receives posted for step 1 before step 0 still match by tag") {
  auto comm = make_mpi_communicator(kTestOptions);
  const Ring ring(*comm);
  std::vector<float> in0(3), in1(3);
  Request r1 = comm->irecv(in1, ring.prev, Channel::DqRing, 1, RingLevel::Flat);
  Request r0 = comm->irecv(in0, ring.prev, Channel::DqRing, 0, RingLevel::Flat);
  const auto out0 = payload(ring.rank, 0, Channel::DqRing, 3), out1 = payload(ring.rank, 1, Channel::DqRing, 3);
  Request s0 = comm->isend(out0, ring.next, Channel::DqRing, 0, RingLevel::Flat);
  Request s1 = comm->isend(out1, ring.next, Channel::DqRing, 1, RingLevel::Flat);
  comm->wait(r0);  // step 0 first, although it was posted last
  comm->wait(r1);
  comm->wait(s0);
  comm->wait(s1);
  CHECK(in0 == payload(ring.prev, 0, Channel::DqRing, 3));
  CHECK(in1 == payload(ring.prev, 1, Channel::DqRing, 3));
  CHECK_FALSE(r0.pending());
}

TEST_CASE("byte counters add up the bytes sent per ring level and per channel") {
  auto comm = make_mpi_communicator(kTestOptions);
  const Ring ring(*comm);
  // Each rank sends 3 floats intra on the kv ring, 5 inter on the q ring and 7 flat on the dq
  // ring, at two steps: per level 2 * n * 4 bytes.
  struct Leg {
    RingLevel level;
    Channel channel;
    std::size_t n;
  };
  const std::vector<Leg> legs{{RingLevel::Intra, Channel::KvRing, 3},
                              {RingLevel::Inter, Channel::QRing, 5},
                              {RingLevel::Flat, Channel::DqRing, 7}};
  std::vector<std::vector<float>> in, out;
  std::vector<Request> requests;
  for (int s = 0; s < 2; ++s) {
    for (const auto& leg : legs) {
      in.emplace_back(leg.n);
      out.push_back(payload(ring.rank, s, leg.channel, leg.n));
    }
  }
  for (int s = 0, k = 0; s < 2; ++s) {
    for (const auto& leg : legs) {
      requests.push_back(comm->irecv(in[k], ring.prev, leg.channel, s, leg.level));
      requests.push_back(comm->isend(out[k], ring.next, leg.channel, s, leg.level));
      ++k;
    }
  }
  comm->wait_all(requests);
  CHECK(comm->bytes_sent(RingLevel::Intra) == 2 * 3 * 4);
  CHECK(comm->bytes_sent(RingLevel::Inter) == 2 * 5 * 4);
  CHECK(comm->bytes_sent(RingLevel::Flat) == 2 * 7 * 4);
  CHECK(comm->bytes_sent(Channel::KvRing) == 2 * 3 * 4);
  CHECK(comm->bytes_sent(Channel::QRing) == 2 * 5 * 4);
  CHECK(comm->bytes_sent(Channel::DqRing) == 2 * 7 * 4);
  CHECK(comm->bytes_sent(Channel::Collective) == 0);
  // Collectives count the payload handed in, under the collective channel and the flat level.
  std::vector<float> grads(10, 1.0f);
  comm->allreduce(grads, ReduceOp::Sum);
  CHECK(comm->bytes_sent(Channel::Collective) == 10 * 4);
  CHECK(comm->bytes_sent(RingLevel::Flat) == 2 * 7 * 4 + 10 * 4);
  comm->reset_counters();
  CHECK(comm->bytes_sent(RingLevel::Intra) == 0);
  CHECK(comm->bytes_sent(Channel::Collective) == 0);
}
