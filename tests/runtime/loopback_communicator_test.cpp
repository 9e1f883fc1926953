// The in-process communicators. One rank (what the executor's tests run on without mpirun):
// sends to self reach the matching receive (posted before or after), collectives are
// identities, and a receive nothing was sent for fails with the same timeout error an MPI rank
// gives. Several ranks as threads: a ring of transfers, every collective against its
// definition, MPI's matching order, and a mismatched collective reported on every rank.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <span>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "runtime/comm/loopback_communicator.hpp"
#include "tests/support/error_text.hpp"
#include "tests/support/loopback_job.hpp"

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
  // An all-to-all of one leaves this rank's own block to the caller and sends nothing.
  const std::vector<int> me{0};
  std::vector<float> out{-1, -1};
  comm->all_to_all(grads, out, me, Channel::Ulysses, 0, RingLevel::Flat);
  CHECK(out == std::vector<float>{-1, -1});
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

using test::on_every_rank;

TEST_CASE("loopback ranks pass blocks around a ring, posted in any order") {
  constexpr int kRanks = 5, kSteps = 4;
  std::vector<std::vector<float>> seen(kRanks);
  const auto errors = on_every_rank(kRanks, [&](Communicator& comm) {
    test::rank_expect(comm.size() == kRanks, "comm.size() == kRanks");
    test::rank_expect(comm.local_rank() == comm.rank(), "comm.local_rank() == comm.rank()");
    const int me = comm.rank(), next = (me + 1) % kRanks, prev = (me + kRanks - 1) % kRanks;
    std::vector<float> block{static_cast<float>(me), static_cast<float>(10 * me)};
    for (int step = 0; step < kSteps; ++step) {
      std::vector<float> incoming(2);
      // Odd ranks post the receive first, even ranks the send: matching must not care.
      Request recv, send;
      if (me % 2 == 1) recv = comm.irecv(incoming, prev, Channel::KvRing, step, RingLevel::Flat);
      send = comm.isend(block, next, Channel::KvRing, step, RingLevel::Flat);
      if (me % 2 == 0) recv = comm.irecv(incoming, prev, Channel::KvRing, step, RingLevel::Flat);
      comm.wait(send);
      comm.wait(recv);
      block = incoming;
      seen[static_cast<std::size_t>(me)].push_back(block[0]);
    }
    test::rank_expect(comm.bytes_sent(Channel::KvRing) == kSteps * 2 * sizeof(float),
                      "comm.bytes_sent(Channel::KvRing) == kSteps * 2 * sizeof(float)");
  });
  for (int r = 0; r < kRanks; ++r) {
    INFO("rank " << r);
    CHECK(errors[static_cast<std::size_t>(r)].empty());
    for (int s = 0; s < kSteps; ++s) {  // after step s a rank holds the block of rank r - s - 1
      CHECK(seen[static_cast<std::size_t>(r)][static_cast<std::size_t>(s)] ==
            static_cast<float>((r - s - 1 + 2 * kRanks) % kRanks));
    }
  }
}

TEST_CASE("two messages with one tag are received in the order they were sent, as MPI matches") {
  const auto errors = on_every_rank(2, [](Communicator& comm) {
    if (comm.rank() == 0) {
      const std::vector<std::int64_t> first{1}, second{2};
      Request a = comm.isend(first, 1, Channel::QRing, 3, RingLevel::Intra);
      Request b = comm.isend(second, 1, Channel::QRing, 3, RingLevel::Intra);
      comm.wait(a);
      comm.wait(b);
    } else {
      std::vector<std::int64_t> x(1), y(1);
      Request a = comm.irecv(x, 0, Channel::QRing, 3, RingLevel::Intra);
      Request b = comm.irecv(y, 0, Channel::QRing, 3, RingLevel::Intra);
      comm.wait(b);
      comm.wait(a);
      test::rank_expect(x[0] == 1, "x[0] == 1");
      test::rank_expect(y[0] == 2, "y[0] == 2");
    }
  });
  CHECK(errors == std::vector<std::string>(2));
}

TEST_CASE("loopback collectives give what their definitions say, the same bits on every rank") {
  constexpr int kRanks = 4;
  const auto errors = on_every_rank(kRanks, [](Communicator& comm) {
    const int r = comm.rank();
    comm.barrier();
    std::vector<float> sum{0.1f * static_cast<float>(r + 1), static_cast<float>(r)};
    comm.allreduce(sum, ReduceOp::Sum);
    test::rank_expect(sum[0] == ((0.1f + 0.2f) + 0.3f) + 0.4f,
                      "the sum added in rank order");  // the same on every rank
    test::rank_expect(sum[1] == 6.0f, "sum[1] == 6.0f");
    std::vector<std::int64_t> most{r * 7 % 5};
    comm.allreduce(most, ReduceOp::Max);
    test::rank_expect(most[0] == 4, "the max of 0, 2, 4, 1 is 4");
    const std::vector<double> mine{static_cast<double>(r), static_cast<double>(-r)};
    std::vector<double> all(2 * kRanks);
    comm.allgather(mine, all);
    for (int x = 0; x < kRanks; ++x)
      test::rank_expect(all[static_cast<std::size_t>(2 * x + 1)] == -x, "allgather in rank order");
    std::vector<std::int32_t> spread(kRanks);
    std::iota(spread.begin(), spread.end(), 10 * r);  // rank r: 10r, 10r+1, ...
    std::vector<std::int32_t> share(1);
    comm.reduce_scatter(spread, share, ReduceOp::Sum);
    test::rank_expect(share[0] == 10 * (0 + 1 + 2 + 3) + kRanks * r, "share[0] == 10 * (0 + 1 + 2 + 3) + kRanks * r");
    std::vector<std::uint64_t> gathered(kRanks, 99);
    comm.gather_to_root(std::vector<std::uint64_t>{static_cast<std::uint64_t>(r * r)}, gathered);
    if (r == 0)
      test::rank_expect(gathered == std::vector<std::uint64_t>{0, 1, 4, 9},
                        "gathered == std::vector<std::uint64_t>{0, 1, 4, 9}");
    if (r != 0) test::rank_expect(gathered == std::vector<std::uint64_t>(kRanks, 99), "untouched off the root");
    std::vector<std::byte> id(4, std::byte{static_cast<unsigned char>(r)});
    comm.broadcast(id, 2);
    test::rank_expect(id == std::vector<std::byte>(4, std::byte{2}), "id == std::vector<std::byte>(4, std::byte{2})");
  });
  CHECK(errors == std::vector<std::string>(kRanks));
}

TEST_CASE("ranks that call different collectives all fail, naming both calls") {
  const auto errors = on_every_rank(
      2,
      [](Communicator& comm) {
        std::vector<float> x(3);
        if (comm.rank() == 0) {
          comm.allreduce(x, ReduceOp::Sum);
        } else {
          comm.barrier();
        }
      },
      2);
  for (const std::string& e : errors) {
    CHECK(e.find("collective #1 of the job: rank") != std::string::npos);
    CHECK(e.find("allreduce of 3 x fp32") != std::string::npos);
    CHECK(e.find("barrier of 0 x bytes") != std::string::npos);
  }
}

TEST_CASE("a loopback job needs a rank") {
  CHECK_THROWS_WITH(make_loopback_communicators(0), Catch::Contains("at least 1"));
}

namespace {

// A MessageCopy that copies on the host and records what the job asked of it: the GPU loopback's
// copy (runtime/cuda/device_message_copy.hpp) orders each message by its sender's and receiver's
// streams, so it must be told both, and which stream each rank queues on.
class RecordingCopy final : public MessageCopy {
 public:
  [[nodiscard]] bool reads_device_memory() const override { return true; }
  void copy(void* dst, const void* src, std::size_t bytes) override { host_message_copy(dst, src, bytes); }
  std::unique_ptr<KeptMessage> receive_posted(int to) override {
    calls.push_back(fmt::format("receive posted by {}", to));
    return nullptr;
  }
  void deliver(void* dst, int to, const void* src, int from, std::size_t bytes, KeptMessage* /*posted*/) override {
    calls.push_back(fmt::format("deliver {} -> {}, {} bytes", from, to, bytes));
    copy(dst, src, bytes);
  }
  std::unique_ptr<KeptMessage> keep(const void* src, int from, std::size_t bytes) override {
    calls.push_back(fmt::format("keep from {}, {} bytes", from, bytes));
    return MessageCopy::keep(src, from, bytes);
  }
  void deliver_kept(void* dst, int to, KeptMessage& message) override {
    calls.push_back(fmt::format("deliver kept -> {}, {} bytes", to, message.bytes));
    MessageCopy::deliver_kept(dst, to, message);
  }
  void use_stream(int rank, void* stream) override {
    calls.push_back(fmt::format("rank {} on stream {}", rank, stream));
  }
  std::vector<std::string> calls;
};

}  // namespace

TEST_CASE("the job's copy learns each message's sender and receiver, and each rank's stream") {
  const auto recording = std::make_shared<RecordingCopy>();
  auto comms = make_loopback_communicators(2, CommOptions{5}, recording);
  CHECK(comms[0]->reads_device_memory());
  int stream_of_rank1 = 0;
  comms[1]->use_device_stream(&stream_of_rank1);
  const std::vector<float> block{1, 2, 3, 4};
  std::vector<float> early(4), late(4);
  Request posted =
      comms[1]->irecv(early, 0, Channel::KvRing, 0, RingLevel::Flat);  // before its send: delivered at once
  comms[0]->isend(block, 1, Channel::KvRing, 0, RingLevel::Flat);
  comms[0]->isend(block, 1, Channel::KvRing, 1, RingLevel::Flat);  // before its receive: kept
  Request after = comms[1]->irecv(late, 0, Channel::KvRing, 1, RingLevel::Flat);
  comms[1]->wait(posted);
  comms[1]->wait(after);
  CHECK(early == block);
  CHECK(late == block);
  CHECK(recording->calls ==
        std::vector<std::string>{fmt::format("rank 1 on stream {}", static_cast<void*>(&stream_of_rank1)),
                                 "receive posted by 1", "deliver 0 -> 1, 16 bytes", "keep from 0, 16 bytes",
                                 "deliver kept -> 1, 16 bytes"});
}

namespace {

// A MessageCopy that runs fp32 sums "on the device" (here: on the host, from its kept copies),
// as the GPU loopback's does: the meeting point must hand it every rank's kept input and tell
// exactly one rank per collective that it is the last to read them.
class DeviceSums final : public MessageCopy {
 public:
  [[nodiscard]] bool reads_device_memory() const override { return true; }
  void copy(void* dst, const void* src, std::size_t bytes) override { host_message_copy(dst, src, bytes); }
  [[nodiscard]] bool collective_on_device(const Envelope& e, int rank, const void*, const void*) const override {
    return e.operation == Operation::Allreduce && (!split_ || rank == 0);
  }
  void collective_result(const Envelope& e, int, void* output, std::span<KeptMessage* const> inputs,
                         bool last) override {
    std::vector<float> sum(e.count, 0.0f);
    for (KeptMessage* k : inputs) {
      std::vector<float> x(e.count);
      MessageCopy::deliver_kept(x.data(), 0, *k);
      for (std::size_t i = 0; i < e.count; ++i) sum[i] += x[i];
    }
    std::memcpy(output, sum.data(), e.bytes());
    lasts += last ? 1 : 0;
    ++results;
  }
  bool split_ = false;  // rank 0 says device, the others host
  int results = 0, lasts = 0;
};

}  // namespace

TEST_CASE("collectives the job's copy runs on the device get every rank's input and one last reader") {
  const auto sums = std::make_shared<DeviceSums>();
  const int ranks = 3;
  auto comms = make_loopback_communicators(ranks, CommOptions{5}, sums);
  std::vector<std::vector<float>> data(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r) {
    data[static_cast<std::size_t>(r)] = {static_cast<float>(r), 10.0f * static_cast<float>(r)};
    threads.emplace_back([&, r] {
      comms[static_cast<std::size_t>(r)]->allreduce(std::span<float>(data[static_cast<std::size_t>(r)]), ReduceOp::Sum);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const auto& d : data) CHECK(d == std::vector<float>{3.0f, 30.0f});
  CHECK(sums->results == ranks);
  CHECK(sums->lasts == 1);
  // Ranks that disagree on where a collective runs fail, all of them, naming both.
  sums->split_ = true;
  std::vector<std::string> errors(ranks);
  threads.clear();
  for (int r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      errors[static_cast<std::size_t>(r)] = test::error_text([&] {
        comms[static_cast<std::size_t>(r)]->allreduce(std::span<float>(data[static_cast<std::size_t>(r)]),
                                                      ReduceOp::Sum);
      });
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::string& e : errors) {
    CHECK(e.find("collective #2 of the job: rank") != std::string::npos);
    CHECK(e.find(" device memory") != std::string::npos);
    CHECK(e.find(" host memory") != std::string::npos);
  }
}

TEST_CASE("a loopback job's sub-jobs: each group's own collectives, the k-th list asked for its k-th job") {
  const auto errors = test::on_every_rank(4, [](Communicator& world) {
    auto& job = dynamic_cast<LoopbackCommunicator&>(world);
    const int r = world.rank();
    const std::vector<int> pair = r < 2 ? std::vector{0, 1} : std::vector{2, 3};
    // Two jobs of the same pair (a tensor-parallel group's activations and its state's), used in
    // opposite orders: their meeting points are their own, so neither takes the other's collective.
    const std::unique_ptr<Communicator> first = job.subjob(pair, nullptr), second = job.subjob(pair, nullptr);
    const std::unique_ptr<Communicator> stride =
        job.subjob(r % 2 == 0 ? std::vector{0, 2} : std::vector{1, 3}, nullptr);
    test::rank_expect(first->size() == 2 && first->rank() == r % 2, "rank r % 2 of a pair");
    test::rank_expect(stride->rank() == r / 2, "rank r / 2 of a stride-2 group");
    std::vector<std::int64_t> a{r}, b{10 * r}, c{100 * r};
    second->allreduce(std::span<std::int64_t>(b), ReduceOp::Sum);
    first->allreduce(std::span<std::int64_t>(a), ReduceOp::Sum);
    stride->allreduce(std::span<std::int64_t>(c), ReduceOp::Sum);
    const std::int64_t pair_sum = pair[0] + pair[1];
    test::rank_expect(a[0] == pair_sum && b[0] == 10 * pair_sum, "each pair's own sum, in each job");
    test::rank_expect(c[0] == 100 * (r % 2 == 0 ? 0 + 2 : 1 + 3), "the stride group's sum");
    std::vector<int> from_peer(1);
    Request receive = first->irecv(std::span<int>(from_peer), 1 - r % 2, Channel::KvRing, 0, RingLevel::Flat);
    const std::vector<int> mine{r};
    Request send = first->isend(std::span<const int>(mine), 1 - r % 2, Channel::KvRing, 0, RingLevel::Flat);
    first->wait(send);
    first->wait(receive);
    test::rank_expect(from_peer[0] == pair[static_cast<std::size_t>(1 - r % 2)],
                      "a point-to-point message in the pair");
    const std::string refused = test::error_text([&] { (void)job.subjob({(r + 1) % 4}, nullptr); });
    test::rank_expect(refused.find("is not a member") != std::string::npos,
                      "a list without this rank refused: " + refused);
  });
  CHECK(errors == std::vector<std::string>(4));
}
