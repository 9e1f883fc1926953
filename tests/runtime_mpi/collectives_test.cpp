// The typed collectives over every rank: allreduce (sum and max, fp32, fp64 and integers),
// allgather, reduce_scatter (ZeRO's gradient shard), gather_to_root (checking a distributed
// result against a single-rank reference), and the group all-to-all of the Ulysses split;
// plus bf16 messages counted at 2 bytes an element; and the same collectives over subgroups of
// the ranks (SubgroupCommunicator: tensor-parallel pairs, ZeRO groups of one rank parity).
#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/bf16.hpp"
#include "runtime/comm/mpi_communicator.hpp"
#include "runtime/comm/subgroup_communicator.hpp"
#include "tests/support/error_text.hpp"

using namespace burst::rt;

TEST_CASE("allreduce adds every rank's values in place") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  // Rank r contributes r + i at index i: the sum is p(p-1)/2 + p i (exact in float).
  std::vector<float> data(17);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r + static_cast<int>(i));
  comm->allreduce(data, ReduceOp::Sum);
  for (std::size_t i = 0; i < data.size(); ++i) {
    CHECK(data[i] == static_cast<float>(p * (p - 1) / 2 + p * static_cast<int>(i)));
  }
  // 64-bit integers stay exact past float's 24 bits.
  std::vector<std::uint64_t> big{(std::uint64_t{1} << 40) + static_cast<std::uint64_t>(r)};
  comm->allreduce(big, ReduceOp::Sum);
  CHECK(big[0] == (static_cast<std::uint64_t>(p) << 40) + static_cast<std::uint64_t>(p * (p - 1) / 2));
}

TEST_CASE("allreduce max finds the largest value of every slot") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  std::vector<double> data{static_cast<double>(r), -static_cast<double>(r)};
  comm->allreduce(data, ReduceOp::Max);
  CHECK(data[0] == p - 1);
  CHECK(data[1] == 0);
}

TEST_CASE("allgather gives every rank every rank's block in rank order") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  const std::vector<std::int64_t> mine{10 * r, 10 * r + 1};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(p));
  comm->allgather(mine, all);
  for (int q = 0; q < p; ++q) {
    CHECK(all[2 * static_cast<std::size_t>(q)] == 10 * q);
    CHECK(all[2 * static_cast<std::size_t>(q) + 1] == 10 * q + 1);
  }
}

TEST_CASE("reduce_scatter leaves rank r the sum of everyone's r-th share") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  constexpr std::size_t share = 3;
  std::vector<float> all(share * static_cast<std::size_t>(p));
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<float>(i) + static_cast<float>(r);
  std::vector<float> mine(share);
  comm->reduce_scatter(all, mine, ReduceOp::Sum);
  for (std::size_t i = 0; i < share; ++i) {
    const auto index = static_cast<float>(static_cast<std::size_t>(r) * share + i);
    CHECK(mine[i] == static_cast<float>(p) * index + static_cast<float>(p * (p - 1) / 2));
  }
}

TEST_CASE("gather_to_root puts rank r's block at offset r * n on rank 0") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  constexpr std::size_t n = 5;
  std::vector<float> mine(n);
  for (std::size_t i = 0; i < n; ++i) mine[i] = static_cast<float>(100 * r + static_cast<int>(i));
  std::vector<float> all(r == 0 ? n * static_cast<std::size_t>(p) : 0);
  comm->gather_to_root(mine, all);
  if (r == 0) {
    for (int q = 0; q < p; ++q) {
      for (std::size_t i = 0; i < n; ++i)
        CHECK(all[static_cast<std::size_t>(q) * n + i] == static_cast<float>(100 * q + static_cast<int>(i)));
    }
  }
  comm->barrier();
}

TEST_CASE("gather_to_root at the root checks the size of its buffer") {
  auto comm = make_mpi_communicator({20});
  if (comm->rank() != 0) return;
  std::vector<float> mine(2), all(3);
  CHECK(burst::test::error_text([&] { comm->gather_to_root(mine, all); }) ==
        fmt::format("rank 0: gather_to_root: output holds 3 elements (valid: {} elements ({} ranks, 2 each); hint: "
                    "every rank contributes the same count)",
                    2 * comm->size(), comm->size()));
}

TEST_CASE("all_to_all within pairs of ranks swaps blocks and counts bf16 at two bytes") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  if (p % 2 != 0) return;
  // Groups {0, 1}, {2, 3}, ...: block i of the send goes to group[i].
  const std::vector<int> group{r - r % 2, r - r % 2 + 1};
  std::vector<burst::Bf16> send(4), recv(4, burst::to_bf16(-1.0f));
  for (std::size_t i = 0; i < send.size(); ++i)
    send[i] = burst::to_bf16(static_cast<float>(10 * r + static_cast<int>(i)));
  comm->reset_counters();
  comm->all_to_all(send, recv, group, Channel::Ulysses, 0, RingLevel::Intra);
  for (int i = 0; i < 2; ++i) {
    const int from = group[static_cast<std::size_t>(i)];
    if (from == r) {  // this rank's own block is the caller's to place: untouched
      CHECK(burst::to_float(recv[2 * static_cast<std::size_t>(i)]) == -1.0f);
      continue;
    }
    const std::size_t mine = static_cast<std::size_t>(r % 2) * 2;
    CHECK(burst::to_float(recv[2 * static_cast<std::size_t>(i)]) ==
          static_cast<float>(10 * from + static_cast<int>(mine)));
    CHECK(burst::to_float(recv[2 * static_cast<std::size_t>(i) + 1]) ==
          static_cast<float>(10 * from + static_cast<int>(mine) + 1));
  }
  CHECK(comm->bytes_sent(Channel::Ulysses, RingLevel::Intra) == 2 * sizeof(burst::Bf16));  // one block to the one peer
  CHECK(comm->bytes_sent(Channel::Collective) == 0);
}

TEST_CASE("reductions of bf16 are refused with a hint") {
  auto comm = make_mpi_communicator({20});
  std::vector<burst::Bf16> data(2);
  CHECK(burst::test::error_text([&] { comm->allreduce(data, ReduceOp::Sum); }) ==
        fmt::format(
            "rank {}: allreduce: cannot reduce bf16 elements on this backend (valid: fp32, fp64, int32, int64, uint64; "
            "hint: "
            "reduce in fp32 and round afterwards)",
            comm->rank()));
}

TEST_CASE("broadcast gives every rank the root's bytes, and the node-local rank is a place on the node") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  const int root = p - 1;
  std::vector<std::int64_t> data{100 + r, 200 + r, 300 + r};
  comm->broadcast(data, root);
  CHECK(data == std::vector<std::int64_t>{100 + root, 200 + root, 300 + root});
  // mpiexec starts every rank of these tests on this one machine: local rank = rank.
  CHECK(comm->local_rank() == r);
  CHECK_THROWS_WITH(comm->broadcast(data, p), Catch::Contains("root " + std::to_string(p) + " is not a rank"));
}

TEST_CASE("subgroups of consecutive pairs and of one rank parity reduce, scatter and gather among themselves") {
  auto comm = make_mpi_communicator({20});
  const int p = comm->size(), r = comm->rank();
  if (p % 2 != 0) return;
  std::vector<int> parity;  // ranks r % 2, r % 2 + 2, ... (a single member at 2 ranks)
  for (int q = r % 2; q < p; q += 2) parity.push_back(q);
  const std::vector<int> pair{r - r % 2, r - r % 2 + 1};
  SubgroupCommunicator tp(*comm, pair), zero(*comm, parity);
  for (SubgroupCommunicator* group : {&tp, &zero, &tp}) {  // interleaved, as a training step uses them
    const std::vector<int>& members = group->members();
    const int n = group->size(), sum = std::accumulate(members.begin(), members.end(), 0);
    INFO("members " << fmt::format("{}", fmt::join(members, ", ")));
    CHECK(group->parent_rank(group->rank()) == r);
    // allreduce of 5 elements (n does not divide 5 but for n = 1): rank q adds q + i at index i.
    std::vector<float> data(5);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(r + static_cast<int>(i));
    group->allreduce(data, ReduceOp::Sum);
    for (std::size_t i = 0; i < data.size(); ++i) CHECK(data[i] == static_cast<float>(sum + n * static_cast<int>(i)));
    // reduce_scatter: member m gets the sum of everyone's m-th share of two.
    std::vector<float> all(2 * static_cast<std::size_t>(n)), mine(2);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<float>(100 * r + static_cast<int>(i));
    group->reduce_scatter(all, mine, ReduceOp::Sum);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      CHECK(mine[i] == static_cast<float>(100 * sum + n * (2 * group->rank() + static_cast<int>(i))));
    }
    // allgather: every member's rank, in member order.
    std::vector<std::int64_t> ranks(static_cast<std::size_t>(n), -1);
    group->allgather(std::vector<std::int64_t>{r}, ranks);
    CHECK(ranks == std::vector<std::int64_t>(members.begin(), members.end()));
  }
  comm->barrier();
}
